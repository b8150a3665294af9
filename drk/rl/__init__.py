"""RL core: turn-level returns, group advantages, turn rewards, rejection sampling (pure numpy functions).

The trainer, the evaluation and the figures all call these; none of them touches a model or a GPU.
"""

from drk.rl.advantages import ESTIMATORS, LEVELS, compute_advantages, dense_advantages, turn_returns
from drk.rl.rejection import MRSConfig, MRSDiagnostics, PRSConfig, mrs_mask, prs_keep_mask, prs_keep_prob
from drk.rl.rewards import turn_reward, turn_rewards

__all__ = [
    "ESTIMATORS",
    "LEVELS",
    "MRSConfig",
    "MRSDiagnostics",
    "PRSConfig",
    "compute_advantages",
    "dense_advantages",
    "mrs_mask",
    "prs_keep_mask",
    "prs_keep_prob",
    "turn_returns",
    "turn_reward",
    "turn_rewards",
]
