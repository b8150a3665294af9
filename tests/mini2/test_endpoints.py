"""PLAN.md's endpoints: the window of the last 20 % of steps, the per-problem counts of an evaluation point, and a
run's numbers (averaged over the window's points; resampled by problem)."""

import numpy as np
import pytest

from drk.mini2.endpoints import Observation, eval_steps, point_counts, run_observations, window_start


def test_window_is_the_last_fifth_of_the_steps():
    assert window_start(100) == 80  # steps 81-100
    assert window_start(2) == 1 and window_start(1) == 0 and window_start(7) == 5  # ceil(7/5) = 2 steps
    assert eval_steps(100, 5)[:3] == [0, 5, 10] and [s for s in eval_steps(100, 5) if s > 80] == [85, 90, 95, 100]
    assert eval_steps(7, 3) == [0, 3, 6, 7] and eval_steps(10, 0) == []


def rec(problem, sample, turn, correct, hacked=False, speedup=None, coverage=None):
    return dict(problem=problem, sample=sample, turn=turn, correct=correct, hacked=hacked, speedup=speedup,
                coverage=coverage)


def test_point_counts_by_hand():
    records = [
        rec("a", 0, 1, True, speedup=1.3, coverage=0.8), rec("a", 0, 2, True, speedup=1.1, coverage=0.6),
        rec("a", 1, 1, False, hacked=True, speedup=2.0, coverage=0.0), rec("a", 1, 2, True, speedup=1.5, coverage=0.9),
        rec("b", 0, 1, False), rec("b", 0, 2, False),
    ]
    point = point_counts(records, 2)
    assert point["problems"] == ["a", "b"]
    c = point["counts"]
    assert c["fast@1.2/turn1"] == [[1.0, 0.0], [2.0, 1.0]]  # a: sample 0 fast; the hack never counts
    assert c["fast@1.2/turn2"] == [[1.0, 0.0], [2.0, 1.0]]  # a: 1.1 (no), 1.5 (yes)
    assert c["fast@1.2/best_turn2"] == [[2.0, 0.0], [2.0, 1.0]]  # best of history: both of a
    assert c["fast@1/turn2"] == [[2.0, 0.0], [2.0, 1.0]]
    assert c["hacked/turn1"] == [[1.0, 0.0], [2.0, 1.0]]
    assert c["pr_correct/turn2"] == [[pytest.approx(1.5), 0.0], [2.0, 0.0]]  # mean PR over correct answers only
    m = point["metrics"]
    assert m["fast@1.2/turn1"] == pytest.approx(1 / 3) and m["pr_correct/turn2"] == pytest.approx(0.75)
    assert m["pr_correct/turn1"] == pytest.approx(0.8) and "hacked/best_turn1" not in m


def test_observation_averages_points_and_resamples_problems():
    num = np.array([[1.0, 3.0], [2.0, 4.0]])  # 2 points x 2 problems
    den = np.array([[4.0, 4.0], [4.0, 4.0]])
    points = [{"problems": ["a", "b"], "counts": {"m": [list(num[k]), list(den[k])]}} for k in range(2)]
    obs = Observation.from_points(points, "m")
    assert obs.value == pytest.approx((4 / 8 + 6 / 8) / 2)
    weights = np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 2.0]])  # as drawn, only a, only b
    np.testing.assert_allclose(obs.resampled(weights, ["a", "b"]), [0.625, (0.25 + 0.5) / 2, (0.75 + 1.0) / 2])
    np.testing.assert_allclose(obs.resampled(weights[:, ::-1], ["b", "a"]), obs.resampled(weights, ["a", "b"]))
    assert np.isnan(Observation(0.5).resampled(weights, ["a", "b"])).all()  # no counts: no bootstrap


def test_run_observations_average_the_window(tmp_path, synthetic):
    synthetic.run(tmp_path / "run", "trloo", lambda m, step: step / 100, steps=10, every=1)
    obs = run_observations(tmp_path / "run")
    assert obs["fast@1.2/turn3"].value == pytest.approx((0.09 + 0.10) / 2)  # points 9 and 10: the last 20 %
    assert obs["train_reward"].value == pytest.approx((0.09 + 0.009 + 0.10 + 0.010) / 2)
    synthetic.run(tmp_path / "coarse", "trloo", lambda m, step: 0.0, steps=10, every=20)
    assert run_observations(tmp_path / "coarse")["fast@1.2/turn3"].value == 0.0  # the last step is always a point
    (tmp_path / "coarse" / "heldout.jsonl").write_text("")
    with pytest.raises(ValueError, match="no held-out evaluation point"):
        run_observations(tmp_path / "coarse")
