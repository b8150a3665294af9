"""Building and running an RL training run from an :class:`RLConfig` (used by ``drk train`` and notebook 03)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drk.jsonl import append_jsonl
from drk.provenance import write_provenance
from drk.train.config import TINY, RLConfig


@dataclass
class TrainResult:
    """Where a finished run left its artifacts."""

    out_dir: Path
    checkpoint: Path  # final model (or LoRA adapter) + tokenizer + drk_config.json
    log_path: Path  # log.jsonl: one line per optimizer step
    episodes_path: Path  # episodes.jsonl: one line per (trajectory, turn) sample
    steps: int


def make_env(device: str = "auto", *, workers: int | None = None, cache_dir: str | None = None,
             eval_config: dict | None = None):
    """The environment callable ``(problems, replies) -> list[EvalResult]`` over ``drk.gym.Pool``.

    The pool evaluates a batch concurrently (sandboxed workers), deduplicates identical candidates and caches
    results under ``cache_dir``; ``env.pool`` exposes it.
    """
    from drk.gym import EvalConfig, Pool

    pool = Pool(device=device, workers=workers, cache_dir=cache_dir, config=EvalConfig.from_dict(eval_config or {}),
                progress=False)

    def env(problems, replies):
        return pool.map(list(zip(problems, replies, strict=True)))

    env.pool = pool
    return env


def load_scripted(path: str | Path) -> dict[str, dict[int, str]]:
    """Read scripted replies: JSONL rows ``{"problem": name, "turn": 1, "reply": text}`` (turn defaults to 1)."""
    out: dict[str, dict[int, str]] = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if "problem" not in row or "reply" not in row:
                raise ValueError(f"{path}:{n}: a scripted reply needs 'problem' and 'reply' (and optional 'turn')")
            out.setdefault(row["problem"], {})[int(row.get("turn", 1))] = row["reply"]
    return out


def write_scripted_solutions(problems: list, path: str | Path, *, turn: int = 1) -> Path:
    """Write scripted replies holding the bundled correct solution of each problem that has one.

    With ``scripted_rollouts_per_prompt > 0`` these replays give an untrained (e.g. tiny random) model
    reward-bearing samples, so its first RL steps have a nonzero gradient.
    """
    from drk.chat import fenced_reply
    from drk.problems import solution_source

    path = Path(path)
    path.unlink(missing_ok=True)
    rows = [{"problem": problem.name, "turn": turn, "reply": fenced_reply(source)}
            for problem in problems if (source := solution_source(problem))]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)  # the answer key: candidates run as other uids and must not read it (docs/environment.md)
    return append_jsonl(path, rows)


def resolve_model(cfg: RLConfig) -> str:
    """The model directory or hub id; ``"tiny"`` builds the tiny model under ``<out_dir>/tiny_model``."""
    if cfg.model != TINY:
        return cfg.model
    from drk.models import build_tiny_model

    path = Path(cfg.out_dir) / "tiny_model"
    if not (path / "config.json").is_file():
        build_tiny_model(path, seed=cfg.seed)
    return str(path)


def build_trainer(cfg: RLConfig, *, env=None, problems: list | None = None, callbacks: list | None = None):
    """A ready :class:`~drk.train.trainer.MultiTurnGRPOTrainer` for ``cfg``.

    Args:
        cfg: the run configuration.
        env: environment callable; default :func:`make_env` over ``drk.gym`` on ``cfg``'s device.
        problems: problems to train on; default ``drk.gym.load_problems(cfg.problems)[:cfg.num_problems]``.
        callbacks: extra callbacks; a :class:`~drk.train.logs.JsonlLogCallback` is always added.
    """
    import torch
    from transformers import AutoModelForCausalLM

    from drk.gym import load_problems
    from drk.models import load_tokenizer
    from drk.train.logs import JsonlLogCallback
    from drk.train.trainer import MultiTurnGRPOTrainer

    device = cfg.resolved_device()
    if cfg.prs != "off" and device == "cpu" and cfg.prs_on_missing == "error":
        raise ValueError("prs needs GPU profiles (coverage is None on CPU): set prs='off', or prs_on_missing to "
                         "'keep' or 'reject'")
    problems = problems if problems is not None else load_problems(cfg.problems)[: cfg.num_problems]
    model_id = resolve_model(cfg)
    tokenizer = load_tokenizer(model_id)
    model = AutoModelForCausalLM.from_pretrained(model_id, dtype=getattr(torch, cfg.resolved_dtype()))
    env = env or make_env(device, workers=cfg.env_workers,
                          cache_dir=cfg.env_cache_dir or str(Path(cfg.out_dir) / "env_cache"),
                          eval_config=cfg.eval_config)
    scripted = load_scripted(cfg.scripted_replies) if cfg.scripted_replies else None
    callbacks = [JsonlLogCallback(Path(cfg.out_dir) / "log.jsonl"), *(callbacks or [])]
    return MultiTurnGRPOTrainer(model, config=cfg, problems=problems, env=env, processing_class=tokenizer,
                                peft_config=_lora_config(cfg), scripted=scripted, callbacks=callbacks)


def train(cfg: RLConfig, *, env=None, problems: list | None = None, callbacks: list | None = None) -> TrainResult:
    """Run ``cfg.steps`` RL steps; save the final checkpoint, the resolved config and the logs."""
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_run_metadata(out / "drk_config.json", cfg)
    trainer = build_trainer(cfg, env=env, problems=problems, callbacks=callbacks)
    trainer.train()
    checkpoint = out / "checkpoint-final"
    trainer.save_model(str(checkpoint))
    trainer.processing_class.save_pretrained(str(checkpoint))
    write_run_metadata(checkpoint / "drk_config.json", cfg)
    return TrainResult(out_dir=out, checkpoint=checkpoint, log_path=out / "log.jsonl",
                       episodes_path=out / "episodes.jsonl", steps=trainer.state.global_step)


def write_run_metadata(path: Path, cfg: Any) -> None:
    """Save the resolved config with the git SHA and library versions next to an artifact."""
    write_provenance(path, {"config": cfg.to_dict()})


def _lora_config(cfg: RLConfig):
    if not cfg.lora:
        return None
    from peft import LoraConfig

    return LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=cfg.lora_target_modules, task_type="CAUSAL_LM")
