"""Multi-turn RL training on TRL (TRLOO/GRPO, PRS, MRS, LoRA or full, HF or vLLM rollouts) and the SFT cold start.

Modules by stage: ``config`` (the run's dataclass), ``rollout`` (multi-turn episodes), ``samples`` (per-turn
table -> token tensors), ``trainer`` (the GRPOTrainer subclass), ``logs`` (metric names, JSONL log), ``api``
(build and run), ``demo`` (a small run from a few knobs), ``sft`` (cold start), ``cli`` (``drk train`` / ``drk sft``).
"""

from drk.train.api import TrainResult, build_trainer, make_env, train, write_scripted_solutions
from drk.train.config import RLConfig
from drk.train.demo import demo_config
from drk.train.sft import SFTRunConfig, sft

__all__ = ["RLConfig", "SFTRunConfig", "TrainResult", "build_trainer", "demo_config", "make_env", "sft", "train",
           "write_scripted_solutions"]
