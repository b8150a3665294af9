"""Fast@p and friends: hand-computed cases, best-of-history, missing turns, bootstrap CIs."""

import doctest
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import drk.metrics
from drk.metrics import (
    bootstrap_ci,
    compile_rate,
    correct_rate,
    fast_p,
    hacking_ratio,
    profiling_ratio_summary,
    select_turns,
    summarize,
)


def rec(problem, sample, turn, status, speedup=None, coverage=None):
    return dict(
        problem=problem,
        sample=sample,
        turn=turn,
        status=status,
        correct=status == "correct",
        hacked=status == "hacked",
        speedup=speedup,
        coverage=coverage,
    )


@pytest.fixture
def records():
    # 2 problems x 2 samples x 3 turns
    return [
        # a/0: compile error, then 1.5x, then regresses to 1.1x
        rec("a", 0, 1, "compile_error"),
        rec("a", 0, 2, "correct", 1.5, 0.8),
        rec("a", 0, 3, "correct", 1.1, 0.2),
        # a/1: 2.5x at turn 1, then a hack (fast but flagged), then incorrect
        rec("a", 1, 1, "correct", 2.5, 0.9),
        rec("a", 1, 2, "hacked", 9.0, 0.0),
        rec("a", 1, 3, "incorrect"),
        # b/0: slow but correct throughout
        rec("b", 0, 1, "correct", 0.8, 0.5),
        rec("b", 0, 2, "correct", 0.9, 0.5),
        rec("b", 0, 3, "correct", 1.0, 0.5),
        # b/1: never compiles
        rec("b", 1, 1, "format_error"),
        rec("b", 1, 2, "compile_error"),
        rec("b", 1, 3, "compile_error"),
    ]


def test_doctests():
    assert doctest.testmod(drk.metrics).failed == 0


@pytest.mark.parametrize(
    ("p", "turn", "best", "expected"),
    [
        (1.0, 3, False, 2 / 4),  # a/0 1.1x, b/0 1.0x
        (1.2, 3, False, 0 / 4),
        (1.0, 1, False, 1 / 4),  # a/1 2.5x; b/0 0.8x is slower
        (1.2, 2, False, 1 / 4),  # a/0 1.5x; a/1's 9x is hacked
        (2.0, 2, False, 0 / 4),
        (1.2, 3, True, 2 / 4),  # best of history: a/0 turn 2 (1.5x), a/1 turn 1 (2.5x)
        (2.0, 3, True, 1 / 4),
        (1.0, 3, True, 3 / 4),
        (1.2, 1, True, 1 / 4),  # best up to turn 1 only
        (1.0, None, False, 2 / 4),  # None = last turn
        (1.5, None, True, 2 / 4),
    ],
)
def test_fast_p_hand_cases(records, p, turn, best, expected):
    assert fast_p(records, p, turn=turn, best_of_history=best) == pytest.approx(expected)


def test_hacked_never_counts_even_if_marked_correct():
    r = [dict(problem="x", sample=0, turn=1, correct=True, hacked=True, speedup=5.0)]
    assert fast_p(r, 1.0) == 0.0 and correct_rate(r) == 0.0 and hacking_ratio(r) == 1.0


def test_cpu_speedup_none_is_never_fast():
    r = [dict(problem="x", sample=0, turn=1, correct=True, hacked=False, speedup=None)]
    assert fast_p(r, 1.0) == 0.0 and correct_rate(r) == 1.0


def test_missing_turn_counts_as_a_miss():
    r = [rec("a", 0, 1, "correct", 3.0), rec("a", 1, 1, "correct", 3.0), rec("a", 1, 2, "correct", 3.0)]
    assert fast_p(r, 1.2, turn=2) == 0.5  # a/0 stopped after turn 1: no answer at turn 2
    assert fast_p(r, 1.2, turn=2, best_of_history=True) == 1.0
    assert select_turns(r, 2).set_index("sample").loc[0, "status"] == "missing"


def test_rates(records):
    assert correct_rate(records, turn=3) == pytest.approx(2 / 4)
    assert correct_rate(records, turn=3, best_of_history=True) == pytest.approx(3 / 4)
    assert compile_rate(records, turn=1) == pytest.approx(2 / 4)
    assert compile_rate(records, turn=3) == pytest.approx(3 / 4)
    assert hacking_ratio(records) == pytest.approx(1 / 12)  # training view: every turn is a sample
    assert hacking_ratio(records, turn=2) == pytest.approx(1 / 4)


def test_compile_rate_needs_status():
    with pytest.raises(ValueError, match="status"):
        compile_rate([dict(problem="x", sample=0, turn=1, correct=True, hacked=False, speedup=1.0)])


def test_profiling_ratio_summary(records):
    s = profiling_ratio_summary(records)
    # correct turns: PR 0.8, 0.2, 0.9, 0.5, 0.5, 0.5
    assert s["n"] == 6
    assert s["mean"] == pytest.approx(np.mean([0.8, 0.2, 0.9, 0.5, 0.5, 0.5]))
    assert s["median"] == pytest.approx(0.5)
    assert s["frac_below_tau"] == pytest.approx(1 / 6)
    assert profiling_ratio_summary(records[9:])["n"] == 0


def test_inputs_dataframe_and_objects(records):
    df = pd.DataFrame(records)
    objs = [SimpleNamespace(to_dict=lambda r=r: r) for r in records]
    for data in (df, objs):
        assert fast_p(data, 1.2, turn=3, best_of_history=True) == pytest.approx(2 / 4)


def test_duplicates_and_bad_turn_raise(records):
    with pytest.raises(ValueError, match="repeat"):
        fast_p(records + [records[0]], 1.0)
    with pytest.raises(ValueError, match="turn="):
        fast_p(records, 1.0, turn="last")


def test_empty_is_nan():
    assert np.isnan(fast_p([], 1.0))


def test_bootstrap_ci_contains_point_and_is_seeded():
    rng = np.random.default_rng(0)
    values = rng.random(200) < 0.3
    clusters = np.repeat(np.arange(25), 8)
    mean, lo, hi = bootstrap_ci(values, clusters, seed=1)
    assert mean == pytest.approx(values.mean())
    assert lo <= mean <= hi and hi - lo < 0.3
    assert bootstrap_ci(values, clusters, seed=1) == (mean, lo, hi)
    _, lo2, hi2 = bootstrap_ci(
        np.tile(values, 16), np.tile(clusters, 16) + 25 * np.repeat(np.arange(16), 200)
    )
    assert hi2 - lo2 < hi - lo  # more clusters, narrower interval


def test_bootstrap_ci_degenerate_and_errors():
    assert bootstrap_ci(np.ones(10)) == (1.0, 1.0, 1.0)
    assert all(np.isnan(bootstrap_ci([])))
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([1.0, np.nan])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([1.0], confidence=95)


def test_summarize(records):
    df = summarize(records, n_boot=200)
    row = df.set_index("metric").loc["eval/fast@1.2/best_turn3"]
    assert row["value"] == pytest.approx(0.5) and row["ci_lo"] <= row["value"] <= row["ci_hi"]
    assert {
        "eval/fast@1/turn1",
        "eval/hacked/turn2",
        "eval/compiled/turn3",
        "eval/correct/best_turn2",
    } <= set(df["metric"])
    assert len(df) == 3 * (4 + 3) + 3 * (4 + 1)
    assert (df["ci_lo"] <= df["value"] + 1e-12).all() and (df["value"] <= df["ci_hi"] + 1e-12).all()
