"""Mini Dr. Kernel: the paper's training findings, scaled down to a small LM on one GPU (issue 7).

``python -m drk.mini all`` builds the cold-start data, the policy, runs SFT and every RL ablation, and writes the
small result files under ``results/mini`` that the reproduction notebooks plot. See ``results/mini/README.md``.
"""

from drk.mini.data import DEFAULT_MIX, KINDS, build_trajectories, first_attempts, wrong_source
from drk.mini.experiment import (
    DEFAULT_VARIANTS,
    HELDOUT_PROBLEMS,
    TRAIN_PROBLEMS,
    TRAINING_RUNS,
    MiniConfig,
    load_split,
    make_data,
    make_policy,
    rerun_for_figures,
    rl_config,
    run_all,
    run_sft,
    run_variant,
    run_variants,
)

__all__ = [
    "DEFAULT_MIX", "DEFAULT_VARIANTS", "HELDOUT_PROBLEMS", "KINDS", "TRAIN_PROBLEMS", "TRAINING_RUNS",
    "MiniConfig",
    "build_trajectories", "first_attempts", "load_split", "make_data", "make_policy", "rerun_for_figures", "rl_config", "run_all", "run_sft",
    "run_variant", "run_variants", "wrong_source",
]
