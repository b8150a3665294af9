"""The lean RL loop for mini2: drk.train's episodes and :func:`drk.train.step.score_batch`, TRL's GRPO loss, no TRL
(issue 12, item 5).

Why a lean loop: TRL's ``GRPOTrainer`` costs seconds per step in setup, data collation and accelerate plumbing,
while a mini2 step (a ~100k-parameter model, a few hundred 5-token replies, verdicts from a table) takes a
fraction of a second; item 6 needs hundreds of runs (variants x >= 5 seeds). The issue allows a lean loop "only if
it calls the same drk.rl functions and a test shows it applies the same advantages as the trainer on the same
batch". Each step here is the trainer's step with the model calls swapped:

1. **roll out** with :func:`drk.train.rollout.run_episodes` (the trainer's episode code; :mod:`drk.mini2.env`
   plugs the verdict table into its ``env`` seam): ``group_size`` episodes per task, one
   :class:`~drk.train.rollout.Trajectory` per row, built as the trainer builds them;
2. **score** the rows under the trained weights (no grad), TRL's layout: prompts left-padded, completions
   right-padded, temperature-scaled log-probs: the trainer's ``_train_logps``;
3. :func:`drk.train.step.score_batch` (the trainer calls the same function): rewards (Eq. 1/8), keep masks
   (PRS, MRS, filters), drk.rl advantages, per-token tensors, metrics;
4. **update** once with TRL's GRPO loss (``loss_type="dapo"``, the RLConfig default): per token
   ``-min(r A, clip(r, 1 - clip_low, 1 + clip_high) A)`` with ``r = exp(logp - logp_old)``, summed over the
   loss mask and divided by its token count (TRL's ``num_items_in_batch``), where ``A`` and the mask are
   ``score_batch``'s ``token_advantages`` and ``loss_mask`` unchanged (what the trainer writes into TRL's
   ``advantages``/``tool_mask``); AdamW, constant lr, grad-norm clip, as ``RLConfig.to_grpo_config`` sets TRL.
   One update per batch, so ``r = 1`` at the update and the objective is REINFORCE with our advantages.

``tests/mini2/test_policy_rl.py`` checks step 3-4's claim against the trainer's own
``MultiTurnGRPOTrainer._generate_and_score_completions`` on one fixed batch.

Every variant is an :class:`~drk.train.config.RLConfig` (:func:`rl_config`: the base below plus a
:data:`VARIANTS` entry) and mini2's own knobs, :class:`Mini2Config`. The rollout/trainer mismatch MRS is for is
real here when asked for: ``rollout_dtype="bfloat16"`` samples from a bf16 copy of the fp32 weights, and
``rollout_lag=k`` from the weights of k updates ago.
"""

from __future__ import annotations

import copy
import json
import math
import time
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from drk.jsonl import append_jsonl
from drk.mini2.config import ROLLOUT_DTYPES, VARIANTS, Mini2Config, hacking_check, rl_config
from drk.mini2.env import Mini2Env, Mini2Format, episode_settings, play, resolve_tasks
from drk.mini2.policy import Policy
from drk.mini2.tasks import Task
from drk.mini2.verdicts import load_verdicts
from drk.train.config import RLConfig
from drk.train.rollout import Trajectory
from drk.train.step import BatchSignals, score_batch

# --- the loss ---------------------------------------------------------------------------------------------------


def grpo_loss(logps: torch.Tensor, old_logps: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor,
              *, clip_low: float, clip_high: float) -> tuple[torch.Tensor, dict[str, float]]:
    """TRL's GRPO loss with ``loss_type="dapo"`` (trl 1.16 ``GRPOTrainer._compute_loss``), token level.

    Args:
        logps: (B, C) per-token log-probs under the weights being trained (with grad).
        old_logps: (B, C) the same tokens scored before the update (no grad): the trainer's ``train_logps``.
        advantages: (B, C) :attr:`BatchSignals.token_advantages`.
        mask: (B, C) :attr:`BatchSignals.loss_mask` (TRL: ``completion_mask * tool_mask``; our completion mask is
            1 on every completion token, as TRL's for ``rollout_func`` rows, so the product is the loss mask).

    Returns:
        ``(loss, stats)``: ``sum(per_token_loss * mask) / max(sum(mask), 1)`` (TRL's ``num_items_in_batch``
        normaliser over one accumulation window = the whole batch here), and the clipped-token fractions.
    """
    ratio = torch.exp(logps - old_logps)
    clipped = torch.clamp(ratio, 1 - clip_low, 1 + clip_high)
    per_token = -torch.min(ratio * advantages, clipped * advantages)
    tokens = mask.sum().clamp(min=1.0)
    loss = (per_token * mask).sum() / tokens
    with torch.no_grad():
        low = ((ratio < 1 - clip_low) & (advantages < 0)).float()
        high = ((ratio > 1 + clip_high) & (advantages > 0)).float()
        stats = {"clip_ratio/low": float((low * mask).sum() / tokens),
                 "clip_ratio/high": float((high * mask).sum() / tokens)}
    return loss, stats


# --- one step ---------------------------------------------------------------------------------------------------


@dataclass
class StepOutput:
    """What one step did: the batch, ``score_batch``'s signals, and exactly the tensors handed to the loss."""

    step: int
    trajectories: list[Trajectory]
    signals: BatchSignals
    train_logps: torch.Tensor
    loss_advantages: torch.Tensor  # the tensor object grpo_loss received (is signals.token_advantages)
    loss_mask: torch.Tensor  # likewise (is signals.loss_mask)
    metrics: dict[str, float]


def completion_logps(policy: Policy, trajs: list[Trajectory], *, grad: bool = False) -> torch.Tensor:
    return policy.completion_logps([t.prompt_ids for t in trajs], [t.completion_ids for t in trajs], grad=grad)


def records(trajs: list[Trajectory], step: int | None = None) -> list[dict[str, Any]]:
    """One drk.metrics record per (trajectory, turn). ``hacked`` is the hack *evidence* (the table's verdict with
    the check on), whatever the run's hacking check: a hack is never fast, also in the no-check ablation."""
    out = []
    for tr in trajs:
        for t in tr.turns:
            r = t.result
            out.append({"step": step, "problem": tr.problem.name, "sample": tr.traj_id, "turn": t.turn,
                        "program": r.get("program", t.reply), "status": r["status"],
                        "correct": bool(r["correct"]) and not r.get("judged_hacked", False),
                        "hacked": bool(r.get("judged_hacked") or r.get("hacked") or r.get("hack_reasons")),
                        "speedup": r.get("speedup"), "coverage": r.get("coverage")})
    return out


def honest_metrics(trajs: list[Trajectory], max_turns: int) -> dict[str, float]:
    """Fast@p by turn t with hack evidence (``mini2/fast@p/turn{t}``: the share of episodes with a fast, honest
    turn among turns <= t; an episode that stopped earlier keeps its best), hack-evidence rate, group sizes.

    drk.train's ``gym/fast@p/turn{t}`` scores each episode's answer *at* turn t (an episode that stopped at a
    success counts as a miss there) and trusts the run's ``hacked``; these are the numbers to compare variants by.
    """
    from drk.metrics import fast_p

    recs = records(trajs)
    out: dict[str, float] = {}
    for t in range(1, max_turns + 1):
        for p in (1.0, 1.2):
            out[f"mini2/fast@{p:g}/turn{t}"] = fast_p(recs, p, turn=t, best_of_history=True)
    sizes = [sum(1 for tr in trajs if tr.prompt_id == pid and len(tr.turns) >= t)
             for pid in {tr.prompt_id for tr in trajs} for t in range(1, max_turns + 1)]
    sizes = [n for n in sizes if n > 0]
    out["mini2/group_size_mean"] = float(np.mean(sizes))
    out["mini2/singleton_group_frac"] = float(np.mean([n == 1 for n in sizes]))
    out["mini2/hack_evidence_rate"] = float(np.mean([r["hacked"] for r in recs]))
    return out


class Trainer:
    """A lean RL run: the policy, its optimizer and rollout engine, one :meth:`step` at a time.

    Args:
        cfg: mini2 settings (with the variant's mini2 overrides already applied: :meth:`Mini2Config.with_variant`).
        config: the variant's RLConfig (:func:`rl_config`).
        policy: the starting policy (the SFT checkpoint); trained in place.
        verdicts: the verdict source (a table, or live).
        tasks: the training tasks (a step plays ``config.prompts_per_step`` of them).
        reference: a frozen policy to measure KL from (the SFT policy); None: not logged.
    """

    def __init__(self, cfg: Mini2Config, config: RLConfig, policy: Policy, verdicts, tasks: list[Task], *,
                 reference: Policy | None = None, log_dir: str | Path | None = None,
                 log_episodes: bool = True) -> None:
        if config.prompts_per_step > len(tasks):
            raise ValueError(f"prompts_per_step={config.prompts_per_step} > {len(tasks)} training tasks")
        self.cfg, self.config, self.policy, self.tasks, self.reference = cfg, config, policy, tasks, reference
        self.fmt = Mini2Format(policy.tokenizer)
        self.env = Mini2Env(verdicts, hacking_check=hacking_check(config))
        self.settings = episode_settings(config.max_turns, config.stop_on_correct, config.max_reply_tokens,
                                         config.max_context_tokens)
        policy.temperature, policy.max_reply_tokens = config.temperature, config.max_reply_tokens
        self.optimizer = torch.optim.AdamW(policy.model.parameters(), lr=config.learning_rate,
                                           weight_decay=config.weight_decay)
        self._history: deque[dict[str, torch.Tensor]] = deque(maxlen=cfg.rollout_lag + 1)
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.log_episodes = log_episodes  # episodes.jsonl: every training turn (large: ~10 MB per 100 steps)
        self.step_count = 0

    def step_tasks(self, step: int) -> list[Task]:
        """The tasks of step ``step``: all of them, or ``prompts_per_step`` drawn with ``(seed, step)``."""
        n = self.config.prompts_per_step
        if n == len(self.tasks):
            return list(self.tasks)
        pick = np.random.default_rng([self.config.seed, step, 1]).choice(len(self.tasks), size=n, replace=False)
        return [self.tasks[i] for i in sorted(pick)]

    def rollout_policy(self) -> Policy:
        """The sampler: the trained policy itself, or a frozen copy in ``rollout_dtype`` of the weights
        ``rollout_lag`` updates old (the real mismatch MRS is for)."""
        if self.cfg.rollout_dtype == "float32" and self.cfg.rollout_lag == 0:
            return self.policy
        self._history.append({k: v.detach().clone() for k, v in self.policy.model.state_dict().items()})
        sampler = self.policy.sampling_copy(ROLLOUT_DTYPES[self.cfg.rollout_dtype])
        if self.cfg.rollout_lag:
            sampler.model.load_state_dict(self._history[0])  # the oldest kept: lag updates ago (fewer at start)
        return sampler

    def play(self, step: int) -> list[Trajectory]:
        sampler = self.rollout_policy()
        sampler.seed(self.config.seed, step)
        return play(self.step_tasks(step), self.config.rollouts_per_prompt, generate=sampler.generate,
                    env=self.env, fmt=self.fmt, settings=self.settings)

    def step(self, trajectories: list[Trajectory] | None = None) -> StepOutput:
        """One RL step (1-based ``step``): roll out (unless ``trajectories`` are given), score, update once."""
        step = self.step_count + 1
        t0 = time.perf_counter()
        trajs = trajectories if trajectories is not None else self.play(step)
        t_roll = time.perf_counter()
        self.policy.model.eval()  # no dropout in this model; eval for symmetry with the sampler
        train_logps = completion_logps(self.policy, trajs)  # the trainer's _train_logps (no grad)
        signals = score_batch(trajs, train_logps, self.config, step)
        adv, mask = signals.token_advantages, signals.loss_mask  # handed to the loss unchanged
        self.policy.model.train()
        logps = completion_logps(self.policy, trajs, grad=True)
        loss, clip = grpo_loss(logps, train_logps, adv, mask, clip_low=self.config.clip_low,
                               clip_high=self.config.clip_high)
        self.optimizer.zero_grad()
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.policy.model.parameters(), self.config.max_grad_norm)
        self.optimizer.step()
        self.policy.model.eval()
        metrics = {"step": step, "loss": float(loss.detach()), "grad_norm": float(grad_norm), **clip,
                   **_finite(signals.metrics), **honest_metrics(trajs, self.config.max_turns),
                   "time/rollout_s": t_roll - t0}
        if self.reference is not None:
            metrics["mini2/kl_ref"] = kl_k3(self.reference, trajs, train_logps, mask)
        metrics["time/step_s"] = time.perf_counter() - t0
        self.step_count = step
        if self.log_dir is not None:
            append_jsonl(self.log_dir / "log.jsonl", [metrics])
            if self.log_episodes:
                append_jsonl(self.log_dir / "episodes.jsonl", signals.records)
        return StepOutput(step, trajs, signals, train_logps, adv, mask, metrics)


def kl_k3(reference: Policy, trajs: list[Trajectory], logps: torch.Tensor, mask: torch.Tensor) -> float:
    """KL(policy || reference) per reply token, k3 estimator on the sampled tokens (Schulman's), over ``mask``."""
    with torch.no_grad():
        ref = completion_logps(reference, trajs)
        d = ref - logps
        k3 = torch.exp(d) - d - 1
        return float((k3 * mask).sum() / mask.sum().clamp(min=1.0))


def _finite(metrics: dict[str, float]) -> dict[str, float | None]:
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in metrics.items()}


# --- whole runs -------------------------------------------------------------------------------------------------


def load_table(cfg: Mini2Config):
    """The run's verdict table (``cfg.table``), source-checked unless ``cfg.check_sources`` is off."""
    return load_verdicts(cfg.table, check_sources=cfg.check_sources)


def heldout_table(cfg: Mini2Config, verdicts):
    """The verdicts the held-out evaluation reads: ``cfg.heldout_table`` when set (loaded like ``cfg.table``),
    else ``verdicts``, the training table."""
    return load_verdicts(cfg.heldout_table, check_sources=cfg.check_sources) if cfg.heldout_table else verdicts


def run_rl(cfg: Mini2Config, variant: str, init: str | Path | Policy, *, verdicts=None,
           out_dir: str | Path | None = None, progress: bool = False, episodes: bool = True) -> tuple[Policy, Path]:
    """One variant's run from ``init`` (an SFT checkpoint directory or a Policy, copied): ``cfg.steps`` steps,
    logged to ``out_dir/log.jsonl`` (one line per step) and, with ``episodes``, ``episodes.jsonl``; with
    ``cfg.eval_every`` the held-out evaluation points of :mod:`drk.mini2.endpoints` (step 0, every ``eval_every``
    steps, the last) go to ``heldout.jsonl``; the final policy is saved to ``out_dir/final``. Returns the policy
    and ``out_dir``."""
    from drk.mini2.endpoints import eval_steps, heldout_point

    torch.set_num_threads(cfg.threads)
    cfg = cfg.with_variant(variant)
    verdicts = verdicts if verdicts is not None else load_table(cfg)
    tasks = resolve_tasks(cfg.train_tasks, verdicts)
    heldout_verdicts = heldout_table(cfg, verdicts)
    heldout = resolve_tasks(cfg.heldout_tasks, heldout_verdicts) if cfg.eval_every else []
    config = rl_config(cfg, variant, prompts_per_step=cfg.prompts_per_step or len(tasks))
    out = Path(out_dir or Path(cfg.out_dir) / "rl" / variant / f"seed{cfg.seed}")
    out.mkdir(parents=True, exist_ok=True)
    for name in ("log.jsonl", "episodes.jsonl", "heldout.jsonl"):
        (out / name).unlink(missing_ok=True)  # a re-run starts fresh logs
    (out / "config.json").write_text(json.dumps({"variant": variant, "mini2": asdict(cfg),
                                                 "rl": config.to_dict()}, indent=1, default=str))
    start = init if isinstance(init, Policy) else Policy.load(init)
    policy = Policy(copy.deepcopy(start.model), start.tokenizer, temperature=config.temperature,
                    generator=torch.Generator().manual_seed(cfg.seed))
    reference = policy.sampling_copy()
    trainer = Trainer(cfg, config, policy, verdicts, tasks, reference=reference, log_dir=out, log_episodes=episodes)
    points = set(eval_steps(config.steps, cfg.eval_every))
    for step in range(config.steps + 1):
        if step:
            m = trainer.step().metrics
            if progress:
                print(f"[mini2 rl {variant} s{cfg.seed}] step {m['step']}: reward {m.get('rl/reward_mean', 0):.3f} "
                      f"fast@1.2/turn1 {m.get('mini2/fast@1.2/turn1', float('nan')):.3f} "
                      f"hack {m['mini2/hack_evidence_rate']:.3f} ({m['time/step_s']:.2f} s)", flush=True)
        if step in points:  # after the step's update; its own sampler stream, so training is unchanged
            append_jsonl(out / "heldout.jsonl", [heldout_point(policy, heldout, heldout_verdicts, cfg, step)])
    policy.save(out / "final")
    return policy, out


__all__ = ["VARIANTS", "Mini2Config", "StepOutput", "Trainer", "completion_logps", "grpo_loss", "honest_metrics",
           "heldout_table", "kl_k3", "load_table", "records", "rl_config", "run_rl"]
