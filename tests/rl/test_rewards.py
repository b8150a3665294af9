"""Turn rewards (Eq. 1 / Eq. 8) from EvalResults, duck-typed objects and dicts."""

import doctest
from types import SimpleNamespace

import numpy as np
import pytest

import drk.rl.rewards
from drk.rl import turn_reward, turn_rewards


def res(correct=True, hacked=False, speedup=1.5, coverage=0.6):
    return dict(correct=correct, hacked=hacked, speedup=speedup, coverage=coverage)


def test_doctests():
    assert doctest.testmod(drk.rl.rewards).failed == 0


@pytest.mark.parametrize(
    ("result", "kwargs", "expected"),
    [
        (res(speedup=1.5), {}, 2.5),  # Eq. 1: 1 + 1.5
        (res(speedup=0.4), {}, 1.4),  # slower than the reference still earns correctness
        (res(speedup=7.0), {}, 4.0),  # cap at 3
        (res(speedup=7.0), dict(speedup_cap=None), 8.0),
        (res(speedup=7.0), dict(speedup_cap=2.0), 3.0),
        (res(speedup=1.5, coverage=0.6), dict(use_profiling_ratio=True), 3.1),  # Eq. 8: + PR
        (res(speedup=1.5, coverage=0.6), dict(use_profiling_ratio=True, scale=0.5), 1.55),  # authors' 0.5
        (res(correct=False), dict(use_profiling_ratio=True), 0.0),
        (res(hacked=True), dict(use_profiling_ratio=True), 0.0),  # hacked => 0 even if flagged correct
        (res(speedup=None, coverage=None), dict(use_profiling_ratio=True), 1.0),  # CPU: only correctness
        (res(correct=False, speedup=float("nan")), {}, 0.0),  # garbage on a failed turn is ignored
    ],
)
def test_turn_reward_cases(result, kwargs, expected):
    assert turn_reward(result, **kwargs) == pytest.approx(expected)


def test_accepts_objects_and_eval_results():
    obj = SimpleNamespace(correct=True, hacked=False, speedup=2.0, coverage=0.1)
    assert turn_reward(obj, use_profiling_ratio=True) == pytest.approx(3.1)
    result_mod = pytest.importorskip("drk.gym.result")
    ok = result_mod.EvalResult(status="correct", correct=True, speedup=1.2, coverage=0.9)
    hacked = result_mod.EvalResult(status="hacked", correct=False, hacked=True, speedup=5.0, coverage=0.0)
    assert turn_reward(ok, use_profiling_ratio=True) == pytest.approx(3.1)
    assert turn_reward(hacked) == 0.0


def test_turn_rewards_vector():
    out = turn_rewards([res(speedup=1.0), res(correct=False)], scale=0.5)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, [1.0, 0.0])


@pytest.mark.parametrize(
    ("result", "match"),
    [(res(speedup=float("nan")), "speedup"), (res(speedup=-1.0), "speedup"), (res(coverage=1.5), "coverage")],
)
def test_measurement_bugs_raise(result, match):
    with pytest.raises(ValueError, match=match):
        turn_reward(result, use_profiling_ratio=True)


def test_negative_cap_rejected():
    with pytest.raises(ValueError, match="speedup_cap"):
        turn_reward(res(), speedup_cap=-1)
