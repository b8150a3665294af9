"""The RL training configuration: one validated dataclass with the paper's defaults.

Every field is documented once, beside it; the TRL ``GRPOConfig`` that actually drives the optimiser is derived
from it in one marked place (:meth:`RLConfig.to_grpo_config`). Unknown keys in a config file are an error.

Paper recipe (Dr. Kernel, Sec. 5): Qwen3-8B/14B-Base after an SFT cold start, 300 RL steps, 16 prompts x 16
rollouts x <= 3 turns, lr 1e-6 constant, clip 0.2 / 0.28, no KL, no entropy bonus, temperature 1.0, 8192
response tokens per turn, one update per batch (so the PPO ratio is 1: REINFORCE with TRLOO advantages).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from drk.device import DEVICES, DTYPES, resolve_device, resolve_dtype
from drk.gym.config import check_known_keys  # noqa: F401 - one helper for every config class (re-exported)
from drk.rl import ESTIMATORS, LEVELS

ROLLOUTS = ("hf", "vllm")
VLLM_MODES = ("colocate", "server")
PRS_MODES = ("off", "soft", "hard")
LOSS_TYPES = ("dapo", "bnpo", "grpo", "dr_grpo")
TINY = "tiny"


@dataclass
class RLConfig:
    """Multi-turn RL run (``drk train --config FILE``). Defaults are the paper's unless noted "ours"."""

    # --- model --------------------------------------------------------------------------------------------
    model: str = TINY  # hub id or directory ("Qwen/Qwen3-8B"); "tiny" builds drk.models' tiny model (ours)
    lora: bool = False  # train a LoRA adapter (PEFT) instead of all weights; the paper fine-tunes fully
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    lora_target_modules: str | list[str] = "all-linear"
    dtype: Literal["auto", "float32", "bfloat16"] = "auto"  # auto: bf16 on CUDA, fp32 on CPU
    gradient_checkpointing: bool = False
    prompt_format: Literal["auto", "chat", "plain"] = "auto"  # auto: chat iff the tokenizer has a template
    chat_template_kwargs: dict = field(default_factory=dict)  # e.g. {"enable_thinking": false} for Qwen3

    # --- data ---------------------------------------------------------------------------------------------
    problems: str = "drk:level1"  # drk.gym.load_problems spec: "drk:level1", "drk:all", a KernelBench dir
    num_problems: int | None = None  # keep the first N problems (None: all)
    scripted_replies: str | None = None  # JSONL of {"problem", "turn", "reply"}: replayed instead of sampled
    scripted_rollouts_per_prompt: int = 0  # how many rollouts of each scripted problem replay them (ours)

    # --- episodes -----------------------------------------------------------------------------------------
    max_turns: int = 3  # T: turns per episode; every turn is a training sample
    prompts_per_step: int = 16  # distinct problems per step
    rollouts_per_prompt: int = 16  # trajectories per problem (the group size N_1)
    max_reply_tokens: int = 8192  # generated tokens per turn
    max_context_tokens: int = 32768  # prompt + all turns; an episode ends early when the next turn won't fit
    stop_on_correct: bool = False  # end an episode at its first correct turn (ours; the paper keeps going)
    temperature: float = 1.0
    top_p: float = 1.0
    generation_chunk_size: int | None = None  # rows per generate call; env evaluates a chunk meanwhile (ours)

    # --- environment --------------------------------------------------------------------------------------
    device: Literal["auto", "cpu", "cuda"] = "auto"  # training and evaluation device
    env_workers: int | None = None  # evaluation processes (None: drk.gym's default)
    env_cache_dir: str | None = None  # evaluation cache (None: <out_dir>/env_cache)
    eval_config: dict = field(default_factory=dict)  # drk.gym.EvalConfig fields, e.g. {"timeout_s": 60}

    # --- reward and advantage -----------------------------------------------------------------------------
    use_profiling_ratio: bool = False  # Eq. 8: add C * PR to the Eq. 1 reward
    speedup_cap: float = 3.0  # the min(speedup, 3) of Eq. 1
    reward_scale: float = 1.0  # the authors' code uses 0.5
    estimator: Literal["trloo", "grpo", "grpo_std", "rloo"] = "trloo"  # Eq. 5 TRLOO; GRPO etc. for ablations
    gamma: float = 1.0  # turn-level return discount; 0 is the paper's "no future reward" ablation
    advantage_level: Literal["turn", "trajectory"] = "turn"  # trajectory: whole-episode ablation

    # --- rejection sampling -------------------------------------------------------------------------------
    prs: Literal["off", "soft", "hard"] = "off"  # Eq. 9 profiling-based rejection (needs GPU profiles)
    prs_tau: float = 0.3
    prs_s: float = 0.1
    prs_on_missing: Literal["error", "keep", "reject"] = "error"  # a correct turn without PR (CPU)
    mrs: bool = False  # Eq. 6 mismatch rejection; diagnostics are logged either way
    mrs_low: float = 0.999
    mrs_high: float = 1.001
    mrs_token_veto: float = 1e-4
    # The authors' code, not the paper's equations (off: the paper as written; drk.rl.filters explains both).
    drop_flat_groups: bool = False  # drop a prompt from the loss when its last-turn rewards have std < min_std
    flat_group_min_std: float = 1e-3  # that threshold (the authors' value); used only with drop_flat_groups
    mask_failures_after_success: bool = False  # turns with reward <= 0 after a turn with reward > 0: no gradient

    # --- optimisation -------------------------------------------------------------------------------------
    steps: int = 300  # optimizer steps = RL steps (one update per generated batch)
    learning_rate: float = 1e-6  # constant
    clip_low: float = 0.2  # PPO clip epsilon (inactive at ratio 1, kept for multi-update variants)
    clip_high: float = 0.28  # DAPO clip-higher epsilon
    kl_beta: float = 0.0  # no KL penalty
    loss_type: Literal["dapo", "bnpo", "grpo", "dr_grpo"] = "dapo"  # dapo: token mean over the batch (ours)
    micro_batch_size: int = 4  # trajectories per forward/backward; gradients accumulate over the batch
    max_grad_norm: float = 1.0
    weight_decay: float = 0.0

    # --- rollout engine -----------------------------------------------------------------------------------
    rollout: Literal["hf", "vllm"] = "hf"  # hf: transformers generate; vllm: TRL's vLLM (colocate/server)
    vllm_mode: Literal["colocate", "server"] = "colocate"
    vllm_server_base_url: str | None = None
    vllm_gpu_memory_utilization: float = 0.3
    vllm_importance_sampling: bool = False  # TRL's truncated IS on top (off: the paper rejects via MRS)
    vllm_kwargs: dict = field(default_factory=dict)  # extra vllm.LLM args (colocate), e.g. {"enforce_eager": true}

    # --- output -------------------------------------------------------------------------------------------
    out_dir: str = "runs/rl"
    seed: int = 0  # base seed: weights, sampling, PRS draws all derive from it
    save_steps: int | None = None  # also checkpoint every N steps (the final model is always saved)
    logging_steps: int = 1
    report_to: list[str] = field(default_factory=lambda: ["none"])  # TRL/transformers report_to
    log_completions: bool = False  # TRL's completion tables (parquet)

    def __post_init__(self) -> None:
        check_choice("estimator", self.estimator, ESTIMATORS)
        check_choice("rollout", self.rollout, ROLLOUTS)
        check_choice("vllm_mode", self.vllm_mode, VLLM_MODES)
        check_choice("prs", self.prs, PRS_MODES)
        check_choice("loss_type", self.loss_type, LOSS_TYPES)
        check_choice("device", self.device, DEVICES)
        check_choice("dtype", self.dtype, DTYPES)
        check_choice("prompt_format", self.prompt_format, ("auto", "chat", "plain"))
        check_choice("advantage_level", self.advantage_level, LEVELS)
        check_choice("prs_on_missing", self.prs_on_missing, ("error", "keep", "reject"))
        self._check_ranges()
        self._check_batch()
        self._check_filters()
        if self.rollout == "vllm" and self.vllm_mode == "server" and not self.vllm_server_base_url:
            raise ValueError("rollout='vllm', vllm_mode='server' needs vllm_server_base_url (e.g. http://host:8000)")
        if self.vllm_kwargs and not (self.rollout == "vllm" and self.vllm_mode == "colocate"):
            raise ValueError("vllm_kwargs apply to rollout='vllm' with vllm_mode='colocate' only; pass server "
                             "arguments on the vLLM server's command line")
        if self.scripted_rollouts_per_prompt and not self.scripted_replies:
            raise ValueError("scripted_rollouts_per_prompt > 0 needs scripted_replies (a JSONL file)")
        if isinstance(self.report_to, str):
            self.report_to = [self.report_to]

    def _check_ranges(self) -> None:
        positive = ("max_turns", "prompts_per_step", "rollouts_per_prompt", "max_reply_tokens", "steps",
                    "micro_batch_size", "max_context_tokens", "logging_steps", "lora_r")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)}: must be >= 1")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma={self.gamma}: must be in [0, 1] (1 = paper, 0 = per-turn ablation)")
        if self.learning_rate <= 0 or self.temperature <= 0 or not 0 < self.top_p <= 1:
            raise ValueError("learning_rate and temperature must be > 0 and top_p in (0, 1]")
        if self.clip_low < 0 or self.clip_high < 0 or self.kl_beta < 0:
            raise ValueError("clip_low, clip_high and kl_beta must be >= 0")
        if not 0 < self.mrs_low <= 1.0 <= self.mrs_high:
            raise ValueError(f"MRS window [{self.mrs_low}, {self.mrs_high}]: need 0 < low <= 1 <= high")
        if self.max_reply_tokens >= self.max_context_tokens:
            raise ValueError("max_reply_tokens must be < max_context_tokens (the prompt needs room too)")
        if self.num_problems is not None and self.num_problems < 1:
            raise ValueError("num_problems must be >= 1 or None (all)")
        if self.save_steps is not None and self.save_steps < 1:
            raise ValueError("save_steps must be >= 1 or None (final checkpoint only)")

    def _check_batch(self) -> None:
        if self.rollouts_per_prompt < 2:
            raise ValueError("rollouts_per_prompt must be >= 2: a group baseline needs at least two rollouts")
        if self.trajectories_per_step % self.micro_batch_size:
            raise ValueError(
                f"prompts_per_step * rollouts_per_prompt = {self.trajectories_per_step} must be divisible by "
                f"micro_batch_size={self.micro_batch_size}; pick a divisor such as "
                f"{_divisors(self.trajectories_per_step)}"
            )
        if self.scripted_rollouts_per_prompt > self.rollouts_per_prompt:
            raise ValueError("scripted_rollouts_per_prompt cannot exceed rollouts_per_prompt")

    def _check_filters(self) -> None:
        for name in ("drop_flat_groups", "mask_failures_after_success"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}={getattr(self, name)!r}: must be true or false")
        if not (isinstance(self.flat_group_min_std, (int, float)) and math.isfinite(self.flat_group_min_std)
                and self.flat_group_min_std > 0):
            raise ValueError(f"flat_group_min_std={self.flat_group_min_std!r}: must be finite and > 0 (the authors "
                             "use 1e-3); set drop_flat_groups=false to keep every group")

    # --- derived values (the one place they are computed) -------------------------------------------------
    @property
    def trajectories_per_step(self) -> int:
        return self.prompts_per_step * self.rollouts_per_prompt

    @property
    def grad_accum_steps(self) -> int:
        return self.trajectories_per_step // self.micro_batch_size

    def resolved_device(self) -> str:
        """``cpu`` or ``cuda`` (``auto`` picks CUDA when available; :func:`drk.device.resolve_device`)."""
        return resolve_device(self.device)

    def resolved_dtype(self) -> str:
        """``float32`` or ``bfloat16`` (``auto``: bf16 on CUDA; :func:`drk.device.resolve_dtype`)."""
        return resolve_dtype(self.dtype, self.resolved_device())

    def to_grpo_config(self):
        """The TRL ``GRPOConfig`` this run drives (pinned to trl 1.16).

        One generation batch = ``prompts_per_step x rollouts_per_prompt`` trajectories, cut into micro-batches
        whose gradients accumulate into one optimizer step: one update per batch, so the importance ratio is 1
        and the clipped objective reduces to REINFORCE with our advantages.
        """
        from trl import GRPOConfig

        on_cuda = self.resolved_device() == "cuda"
        bf16 = self.resolved_dtype() == "bfloat16"
        return GRPOConfig(
            output_dir=str(Path(self.out_dir) / "trainer"),
            seed=self.seed,
            max_steps=self.steps,
            learning_rate=self.learning_rate,
            lr_scheduler_type="constant",
            warmup_steps=0,
            weight_decay=self.weight_decay,
            max_grad_norm=self.max_grad_norm,
            per_device_train_batch_size=self.micro_batch_size,
            gradient_accumulation_steps=self.grad_accum_steps,
            num_generations=self.rollouts_per_prompt,
            num_iterations=1,
            max_completion_length=self.max_reply_tokens,
            temperature=self.temperature,
            top_p=self.top_p,
            epsilon=self.clip_low,
            epsilon_high=self.clip_high,
            beta=self.kl_beta,
            loss_type=self.loss_type,
            scale_rewards="none",
            use_cpu=not on_cuda,
            bf16=bf16,
            gradient_checkpointing=self.gradient_checkpointing,
            use_vllm=self.rollout == "vllm",
            vllm_mode=self.vllm_mode,
            vllm_server_base_url=self.vllm_server_base_url,
            vllm_gpu_memory_utilization=self.vllm_gpu_memory_utilization,
            vllm_max_model_length=self.max_context_tokens,
            vllm_importance_sampling_correction=self.vllm_importance_sampling,
            vllm_importance_sampling_mode="token_truncate",
            chat_template_kwargs=self.chat_template_kwargs or None,
            logging_steps=self.logging_steps,
            save_strategy="steps" if self.save_steps else "no",
            save_steps=self.save_steps or 500,
            report_to=self.report_to,
            log_completions=self.log_completions,
            remove_unused_columns=False,
            dataloader_num_workers=0,
        )

    # --- serialisation ------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RLConfig:
        """Build from a dict; unknown keys are an error listing the valid ones."""
        return cls(**check_known_keys(cls, data))

    @classmethod
    def from_file(cls, path: str | Path, overrides: dict[str, Any] | None = None) -> RLConfig:
        """Load a ``.yaml``/``.yml``/``.json`` config file, then apply ``overrides``."""
        return cls.from_dict({**load_config_file(path), **(overrides or {})})


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON mapping from ``path``."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"config file {str(path)!r} does not exist")
    text = path.read_text()
    if path.suffix in (".yaml", ".yml"):
        import yaml

        data = yaml.safe_load(text) or {}
    elif path.suffix == ".json":
        data = json.loads(text)
    else:
        raise ValueError(f"config file {str(path)!r}: use a .yaml, .yml or .json file")
    if not isinstance(data, dict):
        raise ValueError(f"config file {str(path)!r} must hold a mapping of field: value")
    return data


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``["steps=2", "lora=true"]`` -> ``{"steps": 2, "lora": True}`` (values parsed as YAML scalars)."""
    import yaml

    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"override {pair!r}: write KEY=VALUE, e.g. steps=2")
        key, value = pair.split("=", 1)
        out[key.strip()] = yaml.safe_load(value)
    return out


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    """Reject a value outside ``choices`` with a message listing them."""
    if value not in choices:
        raise ValueError(f"{name}={value!r}: must be one of {list(choices)}")


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0][:8]
