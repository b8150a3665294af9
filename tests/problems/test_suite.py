"""Every bundled problem loads, and every bundled solution passes the real environment on CPU."""

import pytest

from drk.gym import EvalConfig, Pool, load_problems
from drk.problems import solution_source

ALL = load_problems("drk:all")


def test_suite_size_and_levels():
    by_level = {level: [p for p in ALL if p.level == level] for level in (1, 2, 3)}
    assert len(ALL) >= 60
    assert all(by_level[level] for level in (1, 2, 3))
    assert len({p.key for p in ALL}) == len(ALL)
    assert all("CPU_SIZES" in p.source for p in ALL)
    assert sum(solution_source(p, "lazy") is not None for p in ALL) >= 8


def test_every_problem_has_a_solution():
    missing = [p.key for p in ALL if solution_source(p) is None]
    assert not missing


@pytest.fixture(scope="module")
def suite_results():
    pairs = [(p, solution_source(p, kind)) for p in ALL for kind in ("fused", "lazy") if solution_source(p, kind)]
    labels = [f"{p.key}:{kind}" for p in ALL for kind in ("fused", "lazy") if solution_source(p, kind)]
    results = Pool(device="cpu", config=EvalConfig(timeout_s=120), progress=False).map(pairs)
    return dict(zip(labels, results))


@pytest.mark.parametrize("level", [1, 2, 3])
def test_every_solution_is_correct_and_honest_on_cpu(suite_results, level):
    failures = {label: (r.status, r.hack_reasons, (r.error or "")[:300]) for label, r in suite_results.items()
                if label.startswith(f"L{level}/") and not r.correct}
    assert not failures
    assert all(r.triton_kernels for label, r in suite_results.items() if label.startswith(f"L{level}/"))


def test_shipped_gpu_results_cover_the_suite():
    from drk.problems import load_gpu_results

    frame = load_gpu_results()
    assert any("H200" in note for note in frame.attrs["notes"])
    assert set(frame.timing_policy) == {"drk", "authors"}
    keys = {p.key for p in load_problems("drk:all")}
    assert set(frame.label) <= keys
    for policy, rows in frame.groupby("timing_policy"):
        assert len(rows) >= 85 and (rows.status == "correct").all(), policy
        fused, lazy = rows[rows.kind == "fused"], rows[rows.kind == "lazy"]
        assert fused.coverage.median() > 0.9 > 0.1 > lazy.coverage.median()  # the PR separates fused from lazy


def test_timing_policy_fast_p_counts_each_solution_once_per_policy():
    import pandas as pd

    from drk.problems import timing_policy_fast_p

    frame = pd.DataFrame({
        "label": ["a", "b", "a", "b"], "kind": ["fused"] * 4, "level": [1, 2, 1, 2],
        "timing_policy": ["drk", "drk", "authors", "authors"], "correct": [True, True, True, False],
        "hacked": [False] * 4, "speedup": [1.1, 2.5, 1.3, None]})
    table = timing_policy_fast_p(frame, ps=(1.0, 1.2)).set_index(["timing_policy", "level"])
    assert table.loc[("drk", "all"), "Fast@1"] == 1.0 and table.loc[("drk", "all"), "Fast@1.2"] == 0.5
    assert table.loc[("authors", "all"), "Fast@1.2"] == 0.5 and table.loc[("authors", 2), "Fast@1"] == 0.0
    assert table.loc[("drk", 1), "n"] == 1
