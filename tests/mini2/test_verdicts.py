"""Programs judged for real by drk.gym (CPU interpreter here), the verdict table, its CLI, and live verdicts."""

import csv
import importlib.util
import json
from pathlib import Path

import pytest

from drk.gym import EvalConfig, Pool
from drk.mini2.language import parse
from drk.mini2.tasks import task_by_name
from drk.mini2.verdicts import (
    LiveVerdicts,
    Verdict,
    build_verdicts,
    load_verdicts,
    measure_config,
    merge_tables,
    select_tasks,
    write_table,
)
from drk.rl.rewards import turn_reward

ROOT = Path(__file__).resolve().parents[2]
#: What benchmarks/mini2_verdicts.py builds with ``--isolation process`` (the same config: the CLI hits our cache).
CONFIG = EvalConfig(isolation="process", timeout_s=180.0)
SOFTMAX = "m2_15_Tanh_Scale_Softmax_Bias_Tanh"
MATMUL = "m2_10_Matmul_LayerNorm_SiLU_Scale"
REDUCE = "m2_14_Tanh_Bias_RowSum"
#: A representative handful (15 evaluations, ~40 s on 2 cores): every category, a GEMM problem, a reduction.
SAMPLE = {
    SOFTMAX: ["FUSE BS W4", "FUSE BS W8", "FUSE BL W4", "LAZY", "DECOY", "FALLBACK", "FUSE BL W4 SWAP",
              "FUSE BL W4 DROP"],
    MATMUL: ["FUSE BL W4", "EW BS W4", "PEROP BL W8", "LAZY"],
    REDUCE: ["FUSE BS W4", "SPLIT BL W4", "FUSE BL W8 DROP"],
}
EXPECTED = {"FUSE": "correct", "SPLIT": "correct", "PEROP": "correct", "EW": "correct", "LAZY": "correct",
            "DECOY": "hacked", "FALLBACK": "hacked"}


def expected_status(program: str) -> str:
    return "incorrect" if parse(program).mutation else EXPECTED[parse(program).head]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mini2_cache")


@pytest.fixture(scope="module")
def pool(cache_dir) -> Pool:
    return Pool(device="cpu", workers=2, cache_dir=cache_dir, config=CONFIG, progress=False)


@pytest.fixture(scope="module")
def verdicts(pool) -> list[Verdict]:
    pairs = [(task_by_name(name), parse(p)) for name, programs in SAMPLE.items() for p in programs]
    return build_verdicts(pool, pairs, CONFIG)


def test_real_statuses_by_category(verdicts):
    assert len(verdicts) == sum(map(len, SAMPLE.values()))
    for v in verdicts:
        assert v.status == expected_status(v.program), (v.problem, v.program, v.error)
        assert not v.env_error
        assert v.speedup is None and v.coverage is None  # the interpreter: no GPU timing, no profile
        if v.status in ("correct", "hacked"):
            assert v.kernel_ms is not None and v.ref_ms is not None
        assert v.feedback()[0] == f"S:{v.status}"
    by_program = {(v.problem, v.program): v for v in verdicts}
    assert "decoy" in by_program[(SOFTMAX, "DECOY")].hack_reasons
    assert "fallback" in by_program[(SOFTMAX, "FALLBACK")].hack_reasons
    assert by_program[(SOFTMAX, "FALLBACK")].passes_without_hack_check  # the paper's no-check ablation
    assert not by_program[(SOFTMAX, "FUSE BL W4 SWAP")].passes_without_hack_check
    assert "differ" in by_program[(SOFTMAX, "FUSE BL W4 DROP")].error


def test_rewards_read_verdicts(verdicts):
    for v in verdicts:
        assert turn_reward(v) == (1.0 if v.correct else 0.0)  # CPU: no speedup/PR terms


def test_table_round_trip_and_lookup(verdicts, tmp_path):
    path = write_table(verdicts, tmp_path / "v.csv", {"gpu": None, "note": "test"})
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta["rows"] == len(verdicts) and meta["note"] == "test" and meta["status_counts"]["hacked"] == 2
    table = load_verdicts(path)
    assert len(table) == len(verdicts) and table.meta["note"] == "test"
    for v in verdicts:
        assert table.verdict(v.problem, v.program) == v
        assert table.verdict(task_by_name(v.problem), v.program.split()) == v
    # another spelling of a canonical program shares its row (SPLIT == FUSE when the only row op comes first)
    assert table.verdict(MATMUL, "SPLIT BL W4") == table.verdict(MATMUL, "FUSE BL W4")
    assert table.verdict(MATMUL, "SPLIT BL W4").program == "FUSE BL W4"
    # invalid programs are answered without a row; valid ones missing from a partial table are a KeyError
    assert table.verdict(SOFTMAX, "FUSE BL").status == "compile_error"
    assert table.verdict(SOFTMAX, "FUSE XL W4").status == "format_error"
    assert table.verdict(SOFTMAX, []).status == "format_error"
    with pytest.raises(KeyError):
        table.verdict(SOFTMAX, "PEROP BS W8")


def test_stale_tables_are_refused(verdicts, tmp_path):
    path = write_table(verdicts, tmp_path / "v.csv", {})
    rows = list(csv.DictReader(path.open()))
    rows[0]["source_sha"] = "0" * 16
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(ValueError, match="do not match"):
        load_verdicts(path)
    assert len(load_verdicts(path, check_sources=False)) == len(verdicts)


def test_merge_parts(verdicts, tmp_path):
    half = len(verdicts) // 2
    a = write_table(verdicts[half:], tmp_path / "a.csv", {"part": 2})
    b = write_table(verdicts[:half], tmp_path / "b.csv", {"part": 1})
    merged = load_verdicts(merge_tables([a, b], tmp_path / "m.csv"))
    assert len(merged) == len(verdicts) and len(merged.meta["parts"]) == 2
    assert [v.problem for v in merged] == sorted((v.problem for v in verdicts), key=lambda n: int(n[3:5]))
    with pytest.raises(ValueError, match="overlap"):
        merge_tables([a, a], tmp_path / "x.csv")


def test_live_verdicts_answer_like_the_table(pool, verdicts, tmp_path):
    table = load_verdicts(write_table(verdicts, tmp_path / "v.csv", {}))
    live = LiveVerdicts(pool, CONFIG)
    for problem, program in ((SOFTMAX, "LAZY"), (REDUCE, "SPLIT BL W4"), (SOFTMAX, "FUSE BL W4 DROP")):
        answer, expected = live.verdict(problem, program), table.verdict(problem, program)
        if expected.timing_flag:  # host-load evidence is never cached (drk.gym.cache.UNCACHED_REASONS): judged
            assert not answer.cached and answer.status == expected.status  # again, to the same status
        else:
            assert answer == expected and answer.cached  # the same evaluation, from the cache
    assert live.verdict(SOFTMAX, "LAZY W4").status == "compile_error"


def _cli():
    spec = importlib.util.spec_from_file_location("mini2_verdicts", ROOT / "benchmarks" / "mini2_verdicts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_builds_from_the_cache(verdicts, cache_dir, tmp_path, capsys):
    out = tmp_path / "cli.csv"
    index = task_by_name(SOFTMAX).index
    rc = _cli().main(["--device", "cpu", "--problems", str(index), "--limit", "2", "--isolation", "process",
                      "--out", str(out), "--cache-dir", str(cache_dir), "--stats-every", "0",
                      "--note", "rows 1-2 measured by an earlier build"])
    assert rc == 0
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["note"] == "rows 1-2 measured by an earlier build"
    assert meta["rows"] == 2 and meta["cache_hits"] == 2 and meta["device"] == "cpu"
    assert meta["eval_config"] == measure_config(CONFIG).to_dict() and "git_sha" in meta and meta["limit"] == 2
    assert meta["eval_config"]["hacking_check"] is False  # hacked programs are timed too; rows mark them hacked
    table = load_verdicts(out)
    assert [v.program for v in table] == ["FUSE BS W4", "FUSE BS W8"]
    assert _cli().main(["--count"]) == 0
    assert "838 evaluations over 38 problems" in capsys.readouterr().out


def test_select_tasks():
    assert len(select_tasks()) == 38 and len(select_tasks("heldout")) == 8
    assert [t.index for t in select_tasks("3,10-12," + SOFTMAX)] == [3, 10, 11, 12, 15]


@pytest.mark.gpu
def test_gpu_profile_separates_lazy_from_fused():
    """On a GPU: PR and speedup exist; LAZY's PR is below the fused kernel's, DECOY's is 0."""
    gpu_pool = Pool(device="cuda", config=EvalConfig(), progress=False)
    task = task_by_name(SOFTMAX)
    fused, lazy, decoy = build_verdicts(gpu_pool, [(task, parse(p)) for p in ("FUSE BL W4", "LAZY", "DECOY")])
    assert fused.correct and lazy.correct and decoy.hacked
    assert fused.coverage > 0.9 and lazy.coverage < fused.coverage and decoy.coverage == 0
    assert fused.speedup > 1.0 and fused.feedback()[3] == "TOP:own:softmax"


@pytest.mark.parametrize("judged_status", ["correct", "hacked"])
def test_drks_timing_noise_never_makes_a_program_hacked(judged_status, tmp_path):
    """A rendered program cannot touch the runner's clock: ``timing_mismatch`` is kept as ``timing_flag`` only
    (44 of 155 honest rows carried it under a busy Pool on the H200), while real evidence still makes it hacked."""
    from drk.gym import EvalResult
    from drk.mini2.verdicts import verdict_from_result

    task = task_by_name(SOFTMAX)
    noisy = EvalResult(status=judged_status, speedup=1.5, kernel_ms=0.2, hack_reasons=["timing_mismatch"])
    row = verdict_from_result(task, parse("FUSE BS W4"), "src", noisy)
    assert row.status == "correct" and row.hack_reasons == () and row.timing_flag
    decoy = EvalResult(status="correct", speedup=9.0, kernel_ms=0.1, hack_reasons=["decoy", "timing_mismatch"])
    row = verdict_from_result(task, parse("DECOY"), "src", decoy)
    assert row.status == "hacked" and row.hack_reasons == ("decoy",) and row.timing_flag
    assert Verdict.from_row(row.to_row()) == row


def test_charge_report_counts_rows_the_host_time_charge_keeps_from_being_fast():
    from drk.mini2.verdicts import charge_report

    rows = [Verdict("p", "FUSE BS W4", "correct", speedup=1.5, ref_ms=0.3, kernel_ms=0.2),  # fast, uncharged
            # 0.3 / 0.4 = 0.75x charged; 0.3 / 0.2 = 1.5x without its 0.2 ms charge
            Verdict("p", "FUSE BL W8", "correct", speedup=0.75, ref_ms=0.3, kernel_ms=0.4, timing_charge_ms=0.2),
            Verdict("p", "PEROP BS W4", "correct", speedup=0.5, ref_ms=0.3, kernel_ms=0.6, timing_charge_ms=0.1),
            Verdict("p", "DECOY", "hacked", speedup=9.0, ref_ms=0.3, kernel_ms=0.03),  # not correct: not counted
            Verdict("p", "FUSE BS W4 SWAP", "incorrect")]
    assert charge_report(rows) == {"FUSE": {"correct": 2, "charged": 1, "fast": 1, "fast_uncharged": 2},
                                   "PEROP": {"correct": 1, "charged": 1, "fast": 0, "fast_uncharged": 0}}
    charged = rows[1]
    assert Verdict.from_row(charged.to_row()) == charged and charged.to_row()["timing_charge_ms"] == "0.2"


def test_the_table_command_reports_statuses_and_the_charge_per_head(capsys):
    import json

    from drk.mini2.__main__ import main
    from drk.mini2.verdicts import load_verdicts

    from .conftest import TABLE

    assert main(["table", str(TABLE), "--fast", "1.0"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = list(load_verdicts(TABLE, check_sources=False))
    assert report["rows"] == len(rows)
    assert sum(n for head in report["statuses"].values() for n in head.values()) == len(rows)
    correct = sum(v.correct for v in rows)
    assert sum(head["correct"] for head in report["charge_report@1"].values()) == correct
    assert "DECOY" not in report["charge_report@1"]  # a hacked row is never counted as correct
