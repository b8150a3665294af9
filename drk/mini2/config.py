"""mini2 run settings: :class:`Mini2Config` (everything that is not an RLConfig field) and the variants of item 6,
each an :class:`~drk.train.config.RLConfig` (:func:`rl_config`) plus mini2 overrides (:data:`VARIANTS`).

Keeping RL hyperparameters in ``RLConfig`` (the trainer's own validated config) means a mini2 variant is stated in
the same words as a full-size run (``estimator``, ``gamma``, ``max_turns``, ``use_profiling_ratio``, ``prs``,
``mrs``, ``eval_config.hacking_check``), and the lean loop reads exactly the fields the trainer would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from drk.mini2.policy import PolicyShape
from drk.mini2.sft import DEFAULT_MIX, FIRST_KINDS, halve_shortcuts
from drk.train.config import RLConfig

#: Item 6's variants: name -> (RLConfig overrides, Mini2Config overrides), on top of :func:`rl_config`'s base.
#: ``single_turn`` keeps the number of samples: ``group_size x max_turns`` one-turn episodes per task.
VARIANTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "trloo": ({}, {}),
    "grpo": ({"estimator": "grpo"}, {}),
    "grpo_rescaled": ({"estimator": "grpo_rescaled"}, {}),
    "single_turn": ({"max_turns": 1}, {"single_turn_samples": True}),
    "gamma0": ({"gamma": 0.0}, {}),
    "no_hack_check": ({"eval_config": {"hacking_check": False}}, {}),
    "pr": ({"use_profiling_ratio": True}, {}),
    "prs_soft": ({"use_profiling_ratio": True, "prs": "soft"}, {}),
    "prs_hard": ({"use_profiling_ratio": True, "prs": "hard"}, {}),
    "mrs_bf16": ({"mrs": True}, {"rollout_dtype": "bfloat16"}),  # MRS against a real mismatch
    "no_mrs_bf16": ({"mrs": False}, {"rollout_dtype": "bfloat16"}),  # the same mismatch, not rejected
    "mrs": ({"mrs": True}, {}),  # MRS without a mismatch (fp32 both sides: should reject ~nothing)
    "mrs_stale": ({"mrs": True}, {"rollout_lag": 1}),  # rollouts from the weights one update old
    # PLAN.md's control: GRPO on single-turn episodes, every group of size N = 3G, to pair with ``single_turn``
    "single_turn_grpo": ({"estimator": "grpo", "max_turns": 1}, {"single_turn_samples": True}),
}
ROLLOUT_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}

#: PLAN.md's settings: name -> Mini2Config overrides, computed from the base config (the sensitivity setting halves
#: the base mix's shortcut first attempts). Every claim is run in each setting with the same seeds.
SETTINGS: dict[str, Callable[[Mini2Config], dict[str, Any]]] = {
    "main": lambda cfg: {},
    "sensitivity": lambda cfg: {"group_size": 4, "temperature": 0.8, "sft_mix": halve_shortcuts(cfg.sft_mix)},
}


@dataclass
class Mini2Config:
    """Everything of a mini2 run that is not an RLConfig field, validated. Defaults: the real split (train 0-29,
    held out 30-37), which needs the full verdict table; with the partial one pass tasks it covers."""

    table: str = "results/mini2/verdicts.csv"
    check_sources: bool = True  # refuse a table measured on other problem/render sources
    train_tasks: str = "train"  # drk.mini2.verdicts.select_tasks spec: "train", "0-9", names...
    heldout_tasks: str = "heldout"
    # the table the held-out evaluation reads ("": ``table``). Another one judges the same policies by other
    # verdicts without touching training, e.g. the held-out rows measured against torch.compile (Table 2's row)
    heldout_table: str = ""
    out_dir: str = "runs/mini2"
    seed: int = 0
    threads: int = 1  # torch CPU threads: 1 is fastest at this size on a shared machine
    # policy
    hidden_size: int = 64
    num_layers: int = 2
    num_heads: int = 4
    # cold start
    sft_per_task: int = 16
    sft_epochs: int = 20
    sft_learning_rate: float = 3e-3
    sft_batch_size: int = 32
    sft_mix: dict = field(default_factory=lambda: dict(DEFAULT_MIX))  # first-attempt kinds of the demonstrations
    # RL (the RLConfig base of every variant)
    steps: int = 100
    group_size: int = 8  # rollouts per task (RLConfig.rollouts_per_prompt)
    prompts_per_step: int | None = None  # tasks per step (None: every training task)
    max_turns: int = 3
    stop_on_correct: bool = True  # an episode ends at its first correct turn (groups shrink: N_t varies)
    learning_rate: float = 1e-3
    temperature: float = 1.0
    single_turn_samples: bool = False  # with max_turns=1: group_size x base max_turns rollouts per task
    rollout_dtype: str = "float32"  # bfloat16: sample from a bf16 copy (the MRS mismatch)
    rollout_lag: int = 0  # sample from the weights of this many updates ago (stale rollouts)
    rl_overrides: dict = field(default_factory=dict)  # any other RLConfig fields, e.g. {"clip_high": 0.2}
    # held-out evaluation
    eval_samples: int = 8
    eval_turns: int = 5  # more turns than training: sequential test-time scaling
    eval_context: str = "vanilla"  # or best_w
    eval_window: int = 2
    eval_greedy: bool = False
    eval_temperature: float = 1.0
    # periodic held-out evaluation during RL (PLAN.md's primary endpoint averages the points in the last 20 %)
    eval_every: int = 5  # evaluate at step 0, every eval_every steps and the last step; 0: never during RL

    def __post_init__(self) -> None:
        for name in ("train_tasks", "heldout_tasks"):  # ``--set heldout_tasks=12`` arrives as an int
            if isinstance(getattr(self, name), int) and not isinstance(getattr(self, name), bool):
                setattr(self, name, str(getattr(self, name)))
        counts = ("threads", "hidden_size", "num_layers", "num_heads", "sft_per_task", "sft_epochs", "sft_batch_size",
                  "steps", "group_size", "max_turns", "eval_samples", "eval_turns", "eval_window")
        bad = [n for n in counts if not (isinstance(getattr(self, n), int) and getattr(self, n) >= 1)]
        bad += [n for n in ("sft_learning_rate", "learning_rate", "temperature", "eval_temperature")
                if not getattr(self, n) > 0]
        if bad:
            raise ValueError(f"Mini2Config fields {bad} must be > 0 (counts: whole numbers >= 1)")
        if self.group_size < 2:
            raise ValueError("group_size must be >= 2: a group baseline needs two rollouts")
        if self.prompts_per_step is not None and self.prompts_per_step < 1:
            raise ValueError("prompts_per_step must be >= 1 or None (every training task)")
        if self.rollout_dtype not in ROLLOUT_DTYPES:
            raise ValueError(f"rollout_dtype={self.rollout_dtype!r}: one of {list(ROLLOUT_DTYPES)}")
        if not isinstance(self.rollout_lag, int) or self.rollout_lag < 0:
            raise ValueError("rollout_lag must be an int >= 0")
        if not isinstance(self.eval_every, int) or self.eval_every < 0:
            raise ValueError(f"eval_every={self.eval_every!r}: an int >= 0 (0: no held-out evaluation during RL)")
        if self.eval_context not in ("vanilla", "best_w"):
            raise ValueError(f"eval_context={self.eval_context!r}: vanilla or best_w")
        PolicyShape(self.hidden_size, self.num_layers, self.num_heads)  # validates the shape
        if set(self.sft_mix) - set(FIRST_KINDS) or any(v < 0 for v in self.sft_mix.values()) \
                or not sum(self.sft_mix.values()) > 0:
            raise ValueError(f"sft_mix={self.sft_mix}: shares >= 0, not all 0, of the kinds {FIRST_KINDS}")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Mini2Config:
        from drk.gym.config import check_known_keys

        return cls(**check_known_keys(cls, data))

    def with_setting(self, setting: str) -> Mini2Config:
        """This config with the overrides of one of PLAN.md's :data:`SETTINGS`."""
        if setting not in SETTINGS:
            raise ValueError(f"unknown setting {setting!r}; known: {sorted(SETTINGS)}")
        return Mini2Config.from_dict({**asdict(self), **SETTINGS[setting](self)})

    def with_variant(self, variant: str) -> Mini2Config:
        """This config with the variant's mini2 overrides."""
        _, mini = _variant(variant)
        return Mini2Config.from_dict({**asdict(self), **mini})

    @property
    def shape(self) -> PolicyShape:
        return PolicyShape(self.hidden_size, self.num_layers, self.num_heads)


def _variant(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    if name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; known: {sorted(VARIANTS)}")
    return VARIANTS[name]


def rl_config(cfg: Mini2Config, variant: str = "trloo", *, prompts_per_step: int | None = None) -> RLConfig:
    """The :class:`~drk.train.config.RLConfig` of ``variant``: mini2's base, ``cfg.rl_overrides``, the variant's.

    ``prompts_per_step`` is the number of tasks a step plays (default ``cfg.prompts_per_step``, else 1: pass the
    training set's size).
    """
    overrides, mini = _variant(variant)
    n_prompts = prompts_per_step or cfg.prompts_per_step or 1
    base = dict(model="mini2", problems=f"mini2:{cfg.train_tasks}", device="cpu", dtype="float32",
                max_turns=cfg.max_turns, prompts_per_step=n_prompts, rollouts_per_prompt=cfg.group_size,
                max_reply_tokens=5, max_context_tokens=128, stop_on_correct=cfg.stop_on_correct,
                temperature=cfg.temperature, steps=cfg.steps, learning_rate=cfg.learning_rate, seed=cfg.seed,
                out_dir=cfg.out_dir)
    merged = {**base, **cfg.rl_overrides, **overrides}
    if merged["max_turns"] == 1 and (cfg.single_turn_samples or mini.get("single_turn_samples")):
        merged["rollouts_per_prompt"] = cfg.group_size * cfg.max_turns  # as many samples as T-turn episodes
    merged["micro_batch_size"] = merged["prompts_per_step"] * merged["rollouts_per_prompt"]  # one micro-batch
    return RLConfig.from_dict(merged)


def hacking_check(config: RLConfig) -> bool:
    """The run's ``EvalConfig.hacking_check`` (``RLConfig.eval_config``; on unless switched off)."""
    return bool(config.eval_config.get("hacking_check", True))
