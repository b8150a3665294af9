"""The per-turn sample table and its scatter onto tokens (hand-computable cases)."""

import numpy as np

from drk.train.rollout import Trajectory, Turn
from drk.train.samples import episode_records, token_tensors, turn_table


class P:
    name = "p"


def traj(row, prompt_id, spans, results, env_mask):
    tr = Trajectory(prompt_id=prompt_id, traj_id=row, problem=P(), prompt_ids=[1, 2])
    tr.completion_ids = [5] * len(env_mask)
    tr.env_mask = env_mask
    tr.logprobs = [0.0] * len(env_mask)
    tr.turns = [Turn(turn=k + 1, reply="", start=s, end=e, result=r) for k, ((s, e), r) in
                enumerate(zip(spans, results, strict=True))]
    return tr


OK = {"status": "correct", "correct": True, "hacked": False, "speedup": 2.0, "coverage": 0.5}
BAD = {"status": "compile_error", "correct": False, "hacked": False, "speedup": None, "coverage": None}
HACK = {"status": "hacked", "correct": True, "hacked": True, "speedup": 2.0, "coverage": 0.9}


def batch():
    # row 0: reply [0,2), feedback [2,4), reply [4,5); row 1: one reply [0,3)
    return [traj(0, 7, [(0, 2), (4, 5)], [BAD, OK], [1, 1, 0, 0, 1]), traj(1, 7, [(0, 3)], [HACK], [1, 1, 1])]


def test_turn_table_rewards_and_ids():
    t = turn_table(batch())
    assert t["row"].tolist() == [0, 0, 1] and t["turn"].tolist() == [1, 2, 1]
    assert t["reward"].tolist() == [0.0, 3.0, 0.0]  # Eq. 1: 1 + min(2, 3); hacked scores 0
    assert t["correct"].tolist() == [False, True, False]
    t8 = turn_table(batch(), use_profiling_ratio=True, scale=0.5)
    assert t8["reward"].tolist() == [0.0, 1.75, 0.0]  # 0.5 * (1 + 2 + 0.5)


def test_token_tensors_scatter_and_mask():
    trajs = batch()
    t = turn_table(trajs)
    adv, mask = token_tensors(trajs, t, np.array([-1.0, 2.0, 0.5]), np.array([True, True, False]), width=6)
    assert adv[0].tolist() == [-1, -1, 0, 0, 2, 0]
    assert mask[0].tolist() == [1, 1, 0, 0, 1, 0]  # feedback tokens and padding: no loss
    assert adv[1].tolist() == [0.5, 0.5, 0.5, 0, 0, 0]
    assert mask[1].tolist() == [0, 0, 0, 0, 0, 0]  # rejected sample: out of the loss


def test_episode_records_are_metric_ready():
    trajs = batch()
    t = turn_table(trajs)
    recs = episode_records(t, np.zeros(3), np.ones(3, bool), np.ones(3, bool), step=4)
    assert recs[1]["speedup"] == 2.0 and recs[0]["speedup"] is None and recs[2]["hacked"]
    from drk.metrics import fast_p

    # Two samples; only sample 0 reached turn 2, correct at 2x: a sample without turn 2 counts as a miss.
    assert fast_p(recs, 1.2, turn=2) == 0.5
