"""score_batch, the RL step as a pure function: hand-built trajectories in, signals out (no model, no TRL)."""

import math
import sys

import numpy as np
import pytest
import torch

from drk.rl import compute_advantages
from drk.train.config import RLConfig
from drk.train.rollout import Trajectory, Turn
from drk.train.step import episode_return, score_batch

OK = {"status": "correct", "correct": True, "hacked": False, "speedup": 2.0, "coverage": 0.9}
LAZY = {"status": "correct", "correct": True, "hacked": False, "speedup": 1.0, "coverage": 0.05}
BAD = {"status": "compile_error", "correct": False, "hacked": False, "speedup": None, "coverage": None}
OOM = {"status": "runtime_error", "correct": False, "hacked": False, "env_error": True}


class P:
    name = "p"


def trajectory(row, prompt_id, results, reply_len=2, feedback_len=1, logprob=-0.5):
    """Turns of ``reply_len`` reply tokens separated by ``feedback_len`` feedback tokens."""
    tr = Trajectory(prompt_id=prompt_id, traj_id=row, problem=P(), prompt_ids=[1])
    for k, result in enumerate(results, start=1):
        if k > 1:
            tr.completion_ids += [9] * feedback_len
            tr.env_mask += [0] * feedback_len
            tr.logprobs += [0.0] * feedback_len
        start = len(tr.completion_ids)
        tr.completion_ids += [5] * reply_len
        tr.env_mask += [1] * reply_len
        tr.logprobs += [logprob] * reply_len
        tr.turns.append(Turn(turn=k, reply="", start=start, end=len(tr.completion_ids), result=result))
    return tr


def batch():
    """Prompt 0: three rollouts (success after a failure, two failures; one of two turns); prompt 1: two rollouts."""
    return [trajectory(0, 0, [BAD, OK]), trajectory(1, 0, [BAD, BAD]), trajectory(2, 0, [BAD]),
            trajectory(3, 1, [LAZY]), trajectory(4, 1, [OK])]


def train_logps(trajs, width=8, value=-0.5):
    return torch.full((len(trajs), width), value)


def config(**overrides):
    return RLConfig(**{"device": "cpu", **overrides})


def test_rewards_advantages_and_tensors_follow_the_table():
    trajs = batch()
    signals = score_batch(trajs, train_logps(trajs), config(), step=1)
    table = signals.table
    assert table["row"].tolist() == [0, 0, 1, 1, 2, 3, 4] and table["turn"].tolist() == [1, 2, 1, 2, 1, 1, 1]
    assert table["reward"].tolist() == [0, 3, 0, 0, 0, 2, 3]  # Eq. 1: 1 + min(speedup, 3)
    assert signals.keep.all()  # PRS and MRS off, no filters, no environment failure
    want = compute_advantages(table["reward"], table["prompt_id"], table["traj_id"], table["turn"])
    np.testing.assert_allclose(signals.advantages, want)
    # prompt 1, turn 1: TRLOO 2 - 3 = -1 and 3 - 2 = +1; the reply tokens carry them, feedback and padding do not
    assert signals.token_advantages.shape == (5, 8)
    assert signals.token_advantages[3].tolist() == [-1, -1, 0, 0, 0, 0, 0, 0]
    assert signals.loss_mask[0].tolist() == [1, 1, 0, 1, 1, 0, 0, 0]
    assert [r["advantage"] for r in signals.records] == pytest.approx(want.tolist())
    assert {r["step"] for r in signals.records} == {1}


def test_rejections_share_one_keep_convention_and_leave_baselines_alone():
    trajs = batch()
    trajs.append(trajectory(5, 1, [OOM]))
    cfg = config(prs="hard", prs_tau=0.3, mask_failures_after_success=True, drop_flat_groups=True)
    signals = score_batch(trajs, train_logps(trajs), cfg, step=3)
    table = signals.table
    lazy = table["coverage"] < 0.3
    np.testing.assert_array_equal(signals.keep_prs, ~lazy)  # hard PRS drops the lazy kernel only
    assert signals.keep_filters["flat_group"].all()  # both prompts have different last-turn rewards
    assert signals.keep_filters["after_success"].all()  # no failure follows a success here
    np.testing.assert_array_equal(signals.keep, ~lazy & ~table["env_error"])
    judged = ~table["env_error"]  # the unjudged sample is not in any baseline: as if it had not been sampled
    want = compute_advantages(table["reward"][judged], table["prompt_id"][judged], table["traj_id"][judged],
                              table["turn"][judged], keep=signals.keep[judged])
    np.testing.assert_allclose(signals.advantages[judged], want)
    assert signals.advantages[lazy].tolist() == [0.0] and signals.advantages[table["env_error"]].tolist() == [0.0]
    assert signals.loss_mask[3].sum() == 0 and signals.loss_mask[5].sum() == 0
    assert signals.metrics["rl/prs_masked_frac"] == pytest.approx(1 / 8)
    assert signals.metrics["gym/env_error_rate"] == pytest.approx(1 / 8)
    assert signals.metrics["rl/kept_frac"] == pytest.approx(6 / 8)


def test_an_unjudged_turn_takes_its_whole_trajectory_out_of_the_baselines_and_returns():
    """An env_error turn has no reward: its 0 once counted as a failure in its group's mean (three equal correct
    answers beside one env_error got +0.667 each instead of 0) and in its earlier turns' reward-to-go (attacker
    review, 2026-12-02)."""
    same = [trajectory(i, 0, [OK]) for i in range(3)] + [trajectory(3, 0, [OOM])]
    signals = score_batch(same, train_logps(same), config(), step=1)
    assert signals.advantages.tolist() == [0.0, 0.0, 0.0, 0.0] and signals.keep.tolist() == [True] * 3 + [False]
    # two equal two-turn trajectories, the environment failing on the second's second turn: its first turn is
    # out too (its return is unknown), and the first trajectory's turns are alone in their groups
    two = [trajectory(0, 0, [BAD, OK]), trajectory(1, 0, [BAD, OOM])]
    signals = score_batch(two, train_logps(two), config(), step=1)
    assert signals.keep.tolist() == [True, True, False, False]
    lone = compute_advantages(np.array([0.0, 3.0]), np.array([0, 0]), np.array([0, 0]), np.array([1, 2]))
    np.testing.assert_allclose(signals.advantages, [*lone, 0.0, 0.0])
    everything_failed = [trajectory(0, 0, [OOM])]
    assert score_batch(everything_failed, train_logps(everything_failed), config(), step=1).advantages.tolist() == [0.0]


def test_filters_are_logged_when_off_and_applied_when_on():
    trajs = [trajectory(0, 0, [OK, BAD]), trajectory(1, 0, [BAD, OK]), trajectory(2, 1, [BAD]),
             trajectory(3, 1, [BAD])]
    off = score_batch(trajs, train_logps(trajs), config(), step=1)
    assert off.keep.all()
    assert off.metrics["rl/flat_group_masked_frac"] == pytest.approx(2 / 6)  # prompt 1: both end at 0
    assert off.metrics["rl/after_success_masked_frac"] == pytest.approx(1 / 6)  # the failure after a success
    on = score_batch(trajs, train_logps(trajs), config(drop_flat_groups=True, mask_failures_after_success=True),
                     step=1)
    np.testing.assert_array_equal(on.keep, on.keep_filters["flat_group"] & on.keep_filters["after_success"])
    assert on.keep.tolist() == [True, False, True, True, False, False]


def test_mrs_diagnostics_and_the_kl_are_one_computation():
    trajs = batch()
    logps = train_logps(trajs, value=-0.5)
    logps[0] += 0.01  # the trainer disagrees with the sampler on row 0
    signals = score_batch(trajs, logps, config(mrs=True), step=1)
    assert not signals.keep_mrs[signals.table["row"] == 0].any() and signals.keep_mrs[signals.table["row"] != 0].all()
    mrs, metrics = signals.mrs, signals.metrics
    assert metrics["rollout/kl_k1"] == mrs.kl_k1 and metrics["rollout/kl_k3"] == mrs.kl_k3
    assert mrs.kl_k1 == pytest.approx(-0.01 * 4 / mrs.num_tokens)
    assert metrics["rollout/ppl_rollout"] == pytest.approx(math.exp(0.5))


def test_prs_draws_are_seeded_by_the_step():
    trajs = [trajectory(i, 0, [LAZY | {"coverage": 0.35}]) for i in range(40)]
    cfg = config(prs="soft", prs_tau=0.3, prs_s=0.1)
    first, again = (score_batch(trajs, train_logps(trajs), cfg, step=2) for _ in range(2))
    np.testing.assert_array_equal(first.keep_prs, again.keep_prs)
    assert 0 < first.keep_prs.mean() < 1  # kept with probability 0.5
    other = score_batch(trajs, train_logps(trajs), cfg, step=3)
    assert not np.array_equal(first.keep_prs, other.keep_prs)


def test_empty_batch_and_episode_return():
    trajs = [Trajectory(prompt_id=0, traj_id=0, problem=P(), prompt_ids=[1])]
    signals = score_batch(trajs, train_logps(trajs), config(), step=1)
    assert signals.records == [] and signals.mrs is None and signals.metrics == {"rl/samples": 0.0}
    assert episode_return([None] * 5, batch(), config()) == [3.0, 0.0, 0.0, 2.0, 3.0]
    assert episode_return([None], [trajectory(0, 0, [OK])], config(reward_scale=0.5)) == [1.5]


def test_no_trl_needed():
    """score_batch and everything it calls import without TRL (it is the trainer's adapter that needs it)."""
    import subprocess

    code = ("import sys; sys.modules['trl'] = None; from drk.train.step import score_batch; "
            "import drk.train.logs; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr
