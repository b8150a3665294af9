"""The mini Dr. Kernel experiment: a small LM, a cold start on our suite, and the paper's RL ablations on one GPU.

Stages (each a function here and a ``python -m drk.mini`` sub-command; all write under ``MiniConfig.out_dir``
except the committed results under ``MiniConfig.results_dir``):

1. ``data``: first attempts of every kind (:mod:`drk.mini.data`) judged by ``drk.gym`` -> ``sft_data.jsonl``.
2. ``policy``: a byte-level BPE tokenizer trained on the suite, its solutions and the cold-start transcripts,
   and a small Qwen2-shaped causal LM built from a config (:func:`drk.models.build_tiny_model`).
3. ``sft``: TRL's SFT trainer on the trajectories (``drk.train.sft``), assistant tokens only.
4. ``rl``: one run of ``drk.train`` per ablation (:data:`TRAINING_RUNS` labels) from the SFT
   checkpoint on the training problems, stopped by a step count or a wall-clock budget; its ``log.jsonl`` is
   copied to ``results_dir/train/<variant>/seed<k>/`` (the layout ``drk.figures.build`` reads), then the final
   policy answers the held-out problems (``results_dir/heldout/<variant>_seed<k>.jsonl``, drk.eval records).

The full-size path is the same code with ``model`` a hub id (e.g. a Qwen3 checkpoint) and the paper's RLConfig
(``configs/rl_qwen3_8b_paper.yaml``); only the scale differs.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from drk.jsonl import read_jsonl
from drk.mini.data import DEFAULT_MIX

#: Training problems: short single ops and fused chains; four of them have a lazy solution.
TRAIN_PROBLEMS: tuple[str, ...] = (
    "L1/01_ReLU", "L1/04_SiLU", "L1/05_Sigmoid", "L1/06_Tanh", "L1/08_ELU", "L1/12_Add", "L1/13_Mul",
    "L1/21_Softmax", "L1/24_RMSNorm", "L1/26_L2Normalize", "L1/36_MSELoss",
    "L2/12_Swish_ResidualAdd", "L2/13_GELU_Tanh_BiasAdd", "L2/14_RMSNorm_Scale_Residual", "L2/19_LayerNorm_GELU",
    "L2/20_Add_LayerNorm", "L2/01_Matmul_Bias_ReLU",
)
#: Held out from the cold start and RL: the policy never sees these problems or their solutions.
HELDOUT_PROBLEMS: tuple[str, ...] = (
    "L1/02_GELU_Tanh", "L1/03_GELU_Erf", "L1/10_HardSigmoid", "L1/27_FrobeniusNorm", "L2/16_AvgPool_Sigmoid_Sum",
    "L2/02_Matmul_GELU",
)
#: The RL ablations: label -> (estimator, ``drk.train.RLConfig`` overrides on top of :func:`rl_config`'s base).
#: The labels are the method names ``drk.figures.build`` draws (Fig 4: trloo/grpo/single_turn/gamma0/
#: no_hack_check; Figs 5/7: trloo/mrs/pr/prs_soft; Fig 9: prs_soft/prs_hard and pr, which is "no PRS").
TRAINING_RUNS: dict[str, tuple[str, dict]] = {
    "trloo": ("trloo", {}),
    "grpo": ("grpo", {}),
    "single_turn": ("trloo", {"max_turns": 1}),  # trained on one turn per episode (evaluated on more)
    "gamma0": ("trloo", {"gamma": 0.0}),
    "no_hack_check": ("trloo", {"eval_config": {"hacking_check": False}}),
    "mrs": ("trloo", {"mrs": True}),
    "pr": ("trloo", {"mrs": True, "use_profiling_ratio": True}),
    "prs_soft": ("trloo", {"mrs": True, "use_profiling_ratio": True, "prs": "soft"}),
    "prs_hard": ("trloo", {"mrs": True, "use_profiling_ratio": True, "prs": "hard"}),
}
#: The ablations run by default: all of them.
DEFAULT_VARIANTS: tuple[str, ...] = tuple(TRAINING_RUNS)


@dataclass
class MiniConfig:
    """Every knob of the mini experiment, validated; the defaults are what the committed results used."""

    out_dir: str = "runs/mini"  # checkpoints, caches, raw logs (not committed)
    results_dir: str = "results/mini"  # the small files we commit: data set, logs, held-out records
    device: str = "auto"
    seed: int = 0
    suite: str = "drk:all"  # the drk.gym.load_problems spec both problem lists are picked from
    train_problems: tuple[str, ...] = TRAIN_PROBLEMS
    heldout_problems: tuple[str, ...] = HELDOUT_PROBLEMS
    trajectories_per_problem: int = 8
    mix: dict = field(default_factory=lambda: dict(DEFAULT_MIX))
    # policy: built from a config (None), or an existing checkpoint: a hub id or directory, e.g. "Qwen/Qwen3-8B"
    # (the full-size path: the same stages, with the policy stage skipped)
    model: str | None = None
    lora: bool = False  # RL trains a LoRA adapter (PEFT) instead of all weights
    vocab_size: int = 2048
    hidden_size: int = 256
    num_layers: int = 4
    num_heads: int = 4
    # cold start
    sft_epochs: float = 30.0
    sft_learning_rate: float = 1e-3
    sft_batch_size: int = 8
    sft_max_length: int = 4096  # tokens per trajectory (longer ones are truncated)
    sft_logging_steps: int = 5
    # RL (drk.train.RLConfig fields; the variant's overrides go on top)
    rl_steps: int = 40
    rl_minutes: float = 3.0  # wall-clock budget per run; whichever of steps/minutes comes first
    prompts_per_step: int = 6
    rollouts_per_prompt: int = 4
    max_turns: int = 2
    max_reply_tokens: int = 1024
    max_context_tokens: int = 4096
    max_micro_batch_size: int = 8  # micro-batch cap; the RL micro-batch is its gcd with a step's trajectories
    rl_learning_rate: float = 5e-5
    temperature: float = 1.0  # sampling temperature of the rollouts and the held-out evaluation (the paper: 1.0)
    # environment (drk.gym.EvalConfig fields of every stage)
    timing_trials: int = 30  # per evaluation (drk.gym's default is 100: a smaller budget for many small runs)
    timeout_s: int = 120  # per evaluation
    env_workers: int = 2
    # held-out evaluation
    heldout_samples: int = 4
    heldout_top_p: float = 0.95  # the paper's evaluation setting

    def __post_init__(self) -> None:
        from drk.device import DEVICES
        from drk.mini.data import KINDS

        self.train_problems, self.heldout_problems = tuple(self.train_problems), tuple(self.heldout_problems)
        if self.device not in DEVICES:
            raise ValueError(f"device={self.device!r}: must be one of {list(DEVICES)}")
        counts = ("trajectories_per_problem", "vocab_size", "hidden_size", "num_layers", "num_heads",
                  "sft_batch_size", "sft_max_length", "sft_logging_steps", "rl_steps", "prompts_per_step",
                  "rollouts_per_prompt", "max_turns", "max_reply_tokens", "max_context_tokens",
                  "max_micro_batch_size", "timing_trials", "env_workers", "heldout_samples")
        bad = [name for name in counts if not (isinstance(getattr(self, name), int) and getattr(self, name) >= 1)]
        positive = ("sft_epochs", "sft_learning_rate", "rl_minutes", "rl_learning_rate", "temperature", "timeout_s")
        bad += [name for name in positive if not getattr(self, name) > 0]
        if bad:
            raise ValueError(f"MiniConfig fields {bad} must be > 0 (counts: whole numbers >= 1)")
        if not 0 < self.heldout_top_p <= 1:
            raise ValueError(f"heldout_top_p={self.heldout_top_p}: must be in (0, 1]")
        if self.max_reply_tokens >= self.max_context_tokens:
            raise ValueError("max_reply_tokens must be < max_context_tokens (the prompt needs room too)")
        if unknown := sorted(set(self.mix) - set(KINDS)):
            raise ValueError(f"mix: unknown kinds {unknown}; the kinds are {list(KINDS)}")
        if any(w < 0 for w in self.mix.values()) or not sum(self.mix.values()) > 0:
            raise ValueError(f"mix={self.mix}: shares must be >= 0 and not all 0")
        if overlap := sorted(set(self.train_problems) & set(self.heldout_problems)):
            raise ValueError(f"bad split: overlap {overlap} between train_problems and heldout_problems")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MiniConfig:
        """Build from a dict (e.g. the saved ``config.json``); unknown keys are an error."""
        from drk.gym.config import check_known_keys

        return cls(**check_known_keys(cls, data))

    def path(self, *parts: str) -> Path:
        return Path(self.out_dir).joinpath(*parts)

    def results(self, *parts: str) -> Path:
        return Path(self.results_dir).joinpath(*parts)

    @property
    def dtype(self) -> str:
        """fp32 for the small from-scratch policy (exact rollout/trainer log-prob agreement); otherwise ``"auto"``
        (:func:`drk.device.resolve_dtype`: bf16 on CUDA)."""
        return "float32" if self.model is None else "auto"

    @property
    def micro_batch_size(self) -> int:
        """Trajectories per forward/backward: ``gcd(max_micro_batch_size, prompts_per_step x rollouts_per_prompt)``
        (``drk.train.RLConfig`` needs a divisor of the step's batch)."""
        return math.gcd(self.max_micro_batch_size, self.prompts_per_step * self.rollouts_per_prompt)


def load_split(cfg: MiniConfig) -> tuple[list, list]:
    """The training and held-out ``Problem`` lists (they must not overlap)."""
    from drk.gym import load_problems

    by_key = {p.key: p for p in load_problems(cfg.suite)}
    missing = [k for k in (*cfg.train_problems, *cfg.heldout_problems) if k not in by_key]
    if missing:
        raise ValueError(f"bad split: unknown problems {missing} (not in {cfg.suite})")
    return [by_key[k] for k in cfg.train_problems], [by_key[k] for k in cfg.heldout_problems]


def env_settings(cfg: MiniConfig) -> dict[str, Any]:
    """The experiment's ``EvalConfig`` fields (timing budget cut to ``timing_trials``), for data, RL and held-out."""
    return {"timing_trials": cfg.timing_trials, "timeout_s": cfg.timeout_s}


def eval_config(cfg: MiniConfig, overrides: dict | None = None):
    """The environment settings of the experiment as an ``EvalConfig`` (``overrides`` on top)."""
    from drk.gym import EvalConfig

    return EvalConfig.from_dict({**env_settings(cfg), **(overrides or {})})


# --- 1. data ---------------------------------------------------------------------------------------------------


def make_data(cfg: MiniConfig) -> Path:
    """Judge every first attempt with drk.gym and write ``results_dir/sft_data.jsonl``; returns its path."""
    from drk.chat import PromptFormat
    from drk.gym import Pool
    from drk.mini.data import build_trajectories, write_trajectories
    from drk.models import train_tiny_tokenizer

    train, _ = load_split(cfg)
    pool = Pool(device=cfg.device, config=eval_config(cfg), cache_dir=str(cfg.path("env_cache")), progress=False)
    chat = PromptFormat(train_tiny_tokenizer())  # only its chat rendering is used: messages are tokenizer-free
    trajectories = build_trajectories(train, pool.map, chat, per_problem=cfg.trajectories_per_problem,
                                      mix=cfg.mix, seed=cfg.seed)
    return write_trajectories(trajectories, cfg.results("sft_data.jsonl"))


# --- 2. policy -------------------------------------------------------------------------------------------------


def make_policy(cfg: MiniConfig) -> Path:
    """Train the tokenizer on the suite + solutions + cold-start transcripts; build the model; return its dir.

    With ``cfg.model`` set (an existing checkpoint) there is nothing to build: that checkpoint is returned.
    """
    if cfg.model is not None:
        return Path(cfg.model)
    from drk.gym import load_problems
    from drk.models import build_tiny_model, train_tiny_tokenizer
    from drk.problems import solution_source

    texts = []
    for problem in load_problems(cfg.suite):
        texts.append(problem.source)
        texts += [s for s in (solution_source(problem, "fused"), solution_source(problem, "lazy")) if s]
    data = cfg.results("sft_data.jsonl")
    if data.is_file():
        texts += [m["content"] for row in read_jsonl(data) for m in row["messages"]]
    tokenizer = train_tiny_tokenizer(texts, vocab_size=cfg.vocab_size)
    return build_tiny_model(cfg.path("init_model"), seed=cfg.seed, tokenizer=tokenizer,
                            hidden_size=cfg.hidden_size, num_layers=cfg.num_layers, num_heads=cfg.num_heads)


# --- 3. cold start ---------------------------------------------------------------------------------------------


def run_sft(cfg: MiniConfig) -> Path:
    """Supervised cold start from ``init_model`` on ``sft_data.jsonl``; returns the checkpoint directory."""
    from drk.train.sft import SFTRunConfig, sft

    if cfg.model is None and not cfg.path("init_model", "config.json").is_file():
        make_policy(cfg)
    run = SFTRunConfig(model=cfg.model or str(cfg.path("init_model")), data=str(cfg.results("sft_data.jsonl")),
                       out_dir=str(cfg.path("sft")), epochs=cfg.sft_epochs, learning_rate=cfg.sft_learning_rate,
                       micro_batch_size=cfg.sft_batch_size, max_length=cfg.sft_max_length, device=cfg.device,
                       dtype=cfg.dtype, seed=cfg.seed, logging_steps=cfg.sft_logging_steps)
    checkpoint = sft(run)
    shutil.copy(cfg.path("sft", "log.jsonl"), cfg.results("sft_log.jsonl"))
    return checkpoint


# --- 4. RL -----------------------------------------------------------------------------------------------------


def rl_config(cfg: MiniConfig, variant: str, seed: int):
    """The ``drk.train.RLConfig`` of one ablation run (the variant's TRAINING_RUNS overrides on top)."""
    from drk.train.config import RLConfig

    if variant not in TRAINING_RUNS:
        raise ValueError(f"unknown variant {variant!r}; known: {sorted(TRAINING_RUNS)}")
    estimator, overrides = TRAINING_RUNS[variant]
    profile = bool(overrides.get("use_profiling_ratio") or overrides.get("prs", "off") != "off")
    env = {**env_settings(cfg), "profile": profile, **overrides.get("eval_config", {})}
    base = dict(model=str(cfg.path("sft", "checkpoint-final")), problems=cfg.suite, lora=cfg.lora,
                prompts_per_step=cfg.prompts_per_step, rollouts_per_prompt=cfg.rollouts_per_prompt,
                max_turns=cfg.max_turns, max_reply_tokens=cfg.max_reply_tokens,
                max_context_tokens=cfg.max_context_tokens, temperature=cfg.temperature,
                steps=cfg.rl_steps, learning_rate=cfg.rl_learning_rate, dtype=cfg.dtype,
                micro_batch_size=cfg.micro_batch_size,
                device=cfg.device, env_workers=cfg.env_workers, env_cache_dir=str(cfg.path("env_cache")),
                out_dir=str(cfg.path("rl", variant, f"seed{seed}")), seed=seed, estimator=estimator)
    run = RLConfig.from_dict({**base, **{k: v for k, v in overrides.items() if k != "eval_config"},
                              "eval_config": env})
    if run.prs != "off" and run.resolved_device() == "cpu":
        run.prs_on_missing = "keep"  # no profiles on CPU: PRS is inert there (a pipeline check, not the method)
    return run


def time_budget(minutes: float):
    """A ``transformers`` callback that ends training once ``minutes`` have passed (checked after each step)."""
    from transformers import TrainerCallback

    class TimeBudget(TrainerCallback):
        def __init__(self) -> None:
            self.deadline = time.monotonic() + 60 * minutes

        def on_step_end(self, args, state, control, **kwargs):
            if time.monotonic() > self.deadline:
                control.should_training_stop = True
            return control

    return TimeBudget()


def run_variant(cfg: MiniConfig, variant: str, seed: int = 0) -> Path:
    """One RL run + its held-out evaluation; returns the committed log's path."""
    from drk.train.api import train

    train_set, heldout = load_split(cfg)
    run = rl_config(cfg, variant, seed)
    log = Path(run.out_dir) / "log.jsonl"
    if log.exists():
        log.unlink()  # a re-run starts a fresh log
    result = train(run, problems=train_set, callbacks=[time_budget(cfg.rl_minutes)])
    target = cfg.results("train", variant, f"seed{seed}", "log.jsonl")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(result.log_path, target)
    evaluate_heldout(cfg, result.checkpoint, heldout, f"{variant}_seed{seed}", run)
    return target


def evaluate_heldout(cfg: MiniConfig, checkpoint: Path, problems: list, label: str, run) -> Path:
    """The policy at ``checkpoint`` answers each held-out problem ``heldout_samples`` times over its turns."""
    from drk.eval.policies import HFPolicy
    from drk.eval.runner import EvalRunConfig, evaluate_policy

    base, adapter = (run.model, str(checkpoint)) if run.lora else (str(checkpoint), None)
    policy = HFPolicy(base, adapter=adapter, device=run.resolved_device(), dtype=run.dtype,
                      batch_size=len(problems) * cfg.heldout_samples, seed=cfg.seed)
    out = cfg.results("heldout", f"{label}.jsonl")
    settings = EvalRunConfig(samples=cfg.heldout_samples, turns=run.max_turns, temperature=cfg.temperature,
                             top_p=cfg.heldout_top_p, max_new_tokens=cfg.max_reply_tokens,
                             eval_config=eval_config(cfg, run.eval_config), device=run.resolved_device())
    evaluate_policy(policy, problems, settings, out_path=out)
    return out


def run_variants(cfg: MiniConfig, variants: list[str], seeds: list[int], parallel: int, config_path: Path) -> int:
    """Run ``variants x seeds`` as separate processes, ``parallel`` at a time; returns how many failed.

    Each run is its own ``python -m drk.mini rl`` process (a failure loses only that run; its stderr is kept in
    ``out_dir/rl/<variant>/seed<k>.log``). Timings of all of them share the host-wide per-GPU lock.
    """
    jobs = [(v, s) for s in seeds for v in variants]
    running: list[tuple[str, int, subprocess.Popen, Any]] = []
    failed = 0
    while jobs or running:
        while jobs and len(running) < parallel:
            variant, seed = jobs.pop(0)
            log = cfg.path("rl", variant, f"seed{seed}.log")
            log.parent.mkdir(parents=True, exist_ok=True)
            cmd = [sys.executable, "-m", "drk.mini", "rl", "--config", str(config_path), "--variant", variant,
                   "--seed", str(seed)]
            out = open(log, "w")  # noqa: SIM115 - closed when the run ends, below
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                    env={**os.environ, "PYTHONUNBUFFERED": "1"})
            running.append((variant, seed, proc, out))
        time.sleep(2)
        for item in list(running):
            variant, seed, proc, out = item
            if proc.poll() is not None:
                running.remove(item)
                out.close()
                failed += proc.returncode != 0
                print(f"[drk.mini] {variant} seed {seed}: exit {proc.returncode}", flush=True)
    return failed


def save_config(cfg: MiniConfig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(cfg), indent=2))
    return path


def run_all(cfg: MiniConfig, *, variants: list[str] | None = None, seeds: list[int] | None = None,
            parallel: int = 1, skip: tuple[str, ...] = ()) -> int:
    """Every stage in order (``skip`` names stages whose outputs exist: data, policy, sft); returns failed runs.

    Raises:
        ValueError: an unknown variant, before anything runs.
    """
    unknown = sorted(set(variants or ()) - set(TRAINING_RUNS))
    if unknown:
        raise ValueError(f"unknown variants {unknown}; known: {sorted(TRAINING_RUNS)}")
    start = time.monotonic()
    for stage, fn in (("data", make_data), ("policy", make_policy), ("sft", run_sft)):
        if stage not in skip:
            print(f"[drk.mini] {stage} -> {fn(cfg)} ({time.monotonic() - start:.0f} s)", flush=True)
    variants, seeds = list(variants or DEFAULT_VARIANTS), list(seeds or [0])
    failed = run_variants(cfg, variants, seeds, parallel, save_config(cfg, cfg.results("config.json")))
    print(f"[drk.mini] RL: {len(variants) * len(seeds) - failed} runs ok, {failed} failed "
          f"({time.monotonic() - start:.0f} s)", flush=True)
    return failed



def rerun_for_figures(out_dir: str | Path, *, minutes: float = 3.0, parallel: int = 9) -> Path:
    """Run the whole experiment again on this machine's GPU for the figures (notebook 05's ``rerun_mini``).

    Checkpoints go to ``<out_dir>/mini_runs``, the logs the figures read to ``<out_dir>/mini`` (returned), so the
    committed ``results/mini`` stay as they are.

    Raises:
        RuntimeError: no GPU (the committed logs are plotted without one), or a run failed.
    """
    from drk.device import cuda_available

    if not cuda_available():
        raise RuntimeError("rerun_mini needs a GPU (the committed logs are plotted without one)")
    cfg = MiniConfig(out_dir=str(Path(out_dir) / "mini_runs"), results_dir=str(Path(out_dir) / "mini"),
                     device="cuda", rl_minutes=minutes)
    failed = run_all(cfg, parallel=parallel)
    if failed:
        raise RuntimeError(f"{failed} mini run(s) failed; their logs are in {cfg.path('rl')}")
    return Path(cfg.results_dir)
