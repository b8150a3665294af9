"""RL core: turn-level returns, group advantages, turn rewards, rejection sampling, the authors' loss filters
(pure numpy functions). Every mask here is a *keep* mask: True = the row takes gradient.

The trainer, the evaluation and the figures all call these; none of them touches a model or a GPU.
"""

from drk.rl.advantages import ESTIMATORS, LEVELS, compute_advantages, dense_advantages, turn_returns
from drk.rl.filters import FLAT_GROUP_MIN_STD, after_success_keep_mask, flat_group_keep_mask
from drk.rl.rejection import MRSConfig, MRSDiagnostics, PRSConfig, mrs_mask, prs_keep_mask, prs_keep_prob
from drk.rl.rewards import turn_reward, turn_rewards

__all__ = [
    "ESTIMATORS",
    "FLAT_GROUP_MIN_STD",
    "LEVELS",
    "MRSConfig",
    "MRSDiagnostics",
    "PRSConfig",
    "after_success_keep_mask",
    "compute_advantages",
    "dense_advantages",
    "flat_group_keep_mask",
    "mrs_mask",
    "prs_keep_mask",
    "prs_keep_prob",
    "turn_returns",
    "turn_reward",
    "turn_rewards",
]
