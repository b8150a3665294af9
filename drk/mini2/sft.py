"""Cold start for mini2: multi-turn demonstrations of mixed quality, drawn deterministically from the verdict table,
and supervised training on them (issue 12, item 5).

A demonstration is one episode of a scripted demonstrator that behaves like a mediocre kernel writer:

- **first attempt**, drawn per task with shares :data:`DEFAULT_MIX` (largest remainders, so every share shows up
  even for few episodes): an honest plan (any of the task's honest programs, fast or slow), ``LAZY``, a hack
  (``DECOY``/``FALLBACK``) or a wrong program (``SWAP``/``DROP``);
- **refinements that read the feedback** (:func:`refine`): after ``S:incorrect`` drop the mutation; after
  ``S:hacked`` write an honest fused kernel; after a correct turn with a low PR bucket (LAZY, EW) move to a fuller
  plan (FUSE/SPLIT); after a correct but slow turn (speedup bucket below 1.25) change the block or the plan.

The demonstrations are played through :func:`drk.train.rollout.run_episodes` as scripted replies against the same
environment RL uses, so their rows (``prompt | reply | feedback | ...``, ``env_mask``) are laid out exactly as RL's
and end where RL's episodes end (``stop_on_correct``). SFT is next-token cross-entropy on reply tokens only
(``env_mask`` 1, ``<end>`` included): the policy learns to write programs and to stop, not to predict feedback.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from drk.jsonl import append_jsonl
from drk.mini.data import apportion
from drk.mini2.env import Mini2Env, Mini2Format, episode_settings, new_trajectories, resolve_tasks
from drk.mini2.language import BLOCKS, WARPS, Program, canonical_programs
from drk.mini2.policy import Policy
from drk.mini2.tasks import Task
from drk.train.rollout import Trajectory, run_episodes

FIRST_KINDS: tuple[str, ...] = ("honest", "lazy", "hack", "wrong")
#: Shares of first attempts: honest plans are under half, so RL has shortcuts, hacks and bugs to unlearn.
DEFAULT_MIX: dict[str, float] = {"honest": 0.4, "lazy": 0.15, "hack": 0.2, "wrong": 0.25}
#: The kinds whose first attempt is a 1-token shortcut program (LAZY, DECOY, FALLBACK).
SHORTCUT_KINDS: tuple[str, ...] = ("lazy", "hack")


def halve_shortcuts(mix: Mapping[str, float]) -> dict[str, float]:
    """``mix`` normalised with half the share of shortcut first attempts (PLAN.md's sensitivity setting); the freed
    share goes to the other kinds in proportion to theirs, so only the shortcuts' share changes.

    >>> halve_shortcuts({"honest": 0.4, "lazy": 0.15, "hack": 0.2, "wrong": 0.25})["lazy"]
    0.075
    """
    total = sum(mix.values())
    shares = {k: v / total for k, v in mix.items()}
    short = sum(v for k, v in shares.items() if k in SHORTCUT_KINDS)
    rest = 1.0 - short
    if short == 0 or rest == 0:
        raise ValueError(f"mix={dict(mix)}: halving the shortcut share needs both shortcut and other kinds")
    grow = (rest + short / 2) / rest
    return {k: round(v / 2 if k in SHORTCUT_KINDS else v * grow, 12) for k, v in shares.items()}


def _rng(*keys: int) -> random.Random:
    return random.Random(hash(tuple(int(k) for k in keys)))


def draw_kinds(n: int, mix: Mapping[str, float], rng: random.Random) -> list[str]:
    """``n`` first-attempt kinds with shares as close to ``mix`` as ``n`` allows (largest remainders), shuffled."""
    if unknown := set(mix) - set(FIRST_KINDS):
        raise ValueError(f"mix has unknown kinds {sorted(unknown)}; known: {FIRST_KINDS}")
    total = sum(mix.values())
    if total <= 0 or any(v < 0 for v in mix.values()):
        raise ValueError(f"mix={dict(mix)}: shares must be >= 0 and not all 0")
    return apportion(mix, n, rng)


def first_attempt(task: Task, kind: str, rng: random.Random) -> str:
    """A program of ``kind`` for ``task`` (program text)."""
    programs = canonical_programs(task)
    pools = {
        "honest": [p for p in programs if not p.is_shortcut and p.mutation is None],
        "lazy": [Program("LAZY")],
        "hack": [Program("DECOY"), Program("FALLBACK")],
        "wrong": [p for p in programs if p.mutation is not None],
    }
    return str(rng.choice(pools[kind]))


def refine(program: str, feedback: Sequence[str], rng: random.Random) -> str:
    """The demonstrator's next program after ``program`` got ``feedback`` (4 tokens): a response to what the
    feedback says, never to the hidden table (it cannot see speedups it has not measured)."""
    status, speed, pr = feedback[0], feedback[1], feedback[2]
    tokens = program.split()
    warps = rng.choice(WARPS)
    if status == "S:incorrect" and len(tokens) == 4:
        return " ".join(tokens[:3])  # the mutation was the bug: the same fused kernel without it
    if status != "S:correct":  # hacked, or an invalid program: write an honest fused kernel
        return f"FUSE {rng.choice(BLOCKS)} {warps}"
    if pr in ("PR:<0.25", "PR:0.25-0.5", "PR:0.5-0.75"):  # torch does much of the work: a fuller plan
        return f"{rng.choice(('FUSE', 'FUSE', 'SPLIT'))} {rng.choice(BLOCKS)} {warps}"
    if speed in ("SPD:<0.5", "SPD:0.5-0.8", "SPD:0.8-1", "SPD:1-1.25"):  # correct but slow: fewer kernels/passes
        head = "FUSE" if tokens[0] in ("PEROP", "SPLIT") and rng.random() < 0.7 else tokens[0]
        block = tokens[1] if head != tokens[0] else ("BL" if tokens[1] == "BS" else "BS")
        return f"{head} {block} {warps}"
    return f"FUSE BL {warps}"  # already fast: the one-pass fused kernel


@dataclass(frozen=True)
class Demo:
    """One demonstration: the task and its scripted replies by turn."""

    task: Task
    first_kind: str
    replies: tuple[str, ...]


def demonstrations(tasks: Sequence[Task], env: Mini2Env, *, per_task: int = 16, max_turns: int = 3,
                   stop_on_correct: bool = True, mix: Mapping[str, float] = DEFAULT_MIX,
                   seed: int = 0) -> list[Demo]:
    """``per_task`` demonstrations per task, each a first attempt then refinements until the episode would end."""
    demos = []
    for task in tasks:
        kinds = draw_kinds(per_task, mix, _rng(seed, task.index, -1))
        for k, kind in enumerate(kinds):
            rng = _rng(seed, task.index, k)
            replies = [first_attempt(task, kind, rng)]
            while True:
                result = env([task], [replies[-1]])[0]
                if len(replies) >= max_turns or (stop_on_correct and result["correct"]):
                    break
                replies.append(refine(replies[-1], result["feedback"].split(), rng))
            demos.append(Demo(task, kind, tuple(replies)))
    return demos


def demo_trajectories(demos: Sequence[Demo], env: Mini2Env, fmt: Mini2Format, *, max_turns: int = 3,
                      stop_on_correct: bool = True) -> list[Trajectory]:
    """The demonstrations as training rows, replayed by :func:`drk.train.rollout.run_episodes` (scripted)."""
    trajs = []
    for demo in demos:
        tr = new_trajectories([demo.task], 1, fmt)[0]
        tr.traj_id = len(trajs)
        tr.scripted = {t: reply for t, reply in enumerate(demo.replies, start=1)}
        trajs.append(tr)

    def no_sampling(contexts):
        raise RuntimeError("a demonstration ran out of scripted replies (its episode did not end where the "
                           "script did: were max_turns/stop_on_correct the same?)")

    return run_episodes(trajs, generate=no_sampling, env=env, fmt=fmt,
                        settings=episode_settings(max_turns, stop_on_correct))


@dataclass(frozen=True)
class SFTSettings:
    """Supervised cold start: AdamW on the mean reply-token cross-entropy, shuffled mini-batches, seeded."""

    epochs: int = 40
    batch_size: int = 32
    learning_rate: float = 3e-3
    weight_decay: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1 or self.learning_rate <= 0 or self.weight_decay < 0:
            raise ValueError(f"{self}: epochs, batch_size >= 1, learning_rate > 0, weight_decay >= 0")


def reply_nll(policy: Policy, trajs: Sequence[Trajectory]) -> torch.Tensor:
    """Mean negative log-likelihood of the reply tokens (``env_mask`` 1) of ``trajs``, with grad."""
    logp = policy.completion_logps([t.prompt_ids for t in trajs], [t.completion_ids for t in trajs], grad=True)
    mask = torch.zeros_like(logp)
    for i, t in enumerate(trajs):
        mask[i, :len(t.env_mask)] = torch.tensor(t.env_mask, dtype=logp.dtype)
    return -(logp * mask).sum() / mask.sum().clamp(min=1.0)


def train_sft(policy: Policy, trajs: Sequence[Trajectory], settings: SFTSettings = SFTSettings(),
              log=None) -> list[float]:
    """Fit ``policy`` to the reply tokens of ``trajs``; returns the mean loss of each epoch. ``log(epoch, loss)``
    is called after each epoch when given."""
    torch.manual_seed(settings.seed)
    opt = torch.optim.AdamW(policy.model.parameters(), lr=settings.learning_rate,
                            weight_decay=settings.weight_decay)
    order_rng = np.random.default_rng(settings.seed)
    policy.model.train()
    losses = []
    for epoch in range(settings.epochs):
        order = order_rng.permutation(len(trajs))
        total, batches = 0.0, 0
        for lo in range(0, len(order), settings.batch_size):
            batch = [trajs[i] for i in order[lo:lo + settings.batch_size]]
            loss = reply_nll(policy, batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total, batches = total + float(loss.detach()), batches + 1
        losses.append(total / max(batches, 1))
        if log is not None:
            log(epoch, losses[-1])
    policy.model.eval()
    return losses


def run_sft(cfg, *, verdicts=None, out_dir: str | Path | None = None, progress: bool = False) -> tuple[Policy, Path]:
    """The cold-start stage of a :class:`~drk.mini2.config.Mini2Config`: a fresh policy (``cfg.seed``), the
    demonstrations on ``cfg.train_tasks`` (``demos.jsonl``), SFT (``sft_log.jsonl``), the checkpoint in
    ``out_dir/checkpoint``. Returns the policy and ``out_dir`` (default ``<cfg.out_dir>/sft/seed<seed>``)."""
    from drk.mini2.policy import new_policy
    from drk.mini2.rl import load_table

    torch.set_num_threads(cfg.threads)
    verdicts = verdicts if verdicts is not None else load_table(cfg)
    tasks = resolve_tasks(cfg.train_tasks, verdicts)
    out = Path(out_dir or Path(cfg.out_dir) / "sft" / f"seed{cfg.seed}")
    out.mkdir(parents=True, exist_ok=True)
    policy = new_policy(cfg.shape, seed=cfg.seed)
    env, fmt = Mini2Env(verdicts), Mini2Format(policy.tokenizer)
    demos = demonstrations(tasks, env, per_task=cfg.sft_per_task, max_turns=cfg.max_turns,
                           stop_on_correct=cfg.stop_on_correct, mix=cfg.sft_mix, seed=cfg.seed)
    trajs = demo_trajectories(demos, env, fmt, max_turns=cfg.max_turns, stop_on_correct=cfg.stop_on_correct)
    for name in ("demos.jsonl", "sft_log.jsonl"):
        (out / name).unlink(missing_ok=True)
    append_jsonl(out / "demos.jsonl", [{"problem": d.task.name, "first_kind": d.first_kind,
                                        "replies": list(d.replies),
                                        "statuses": [t.result["status"] for t in tr.turns]}
                                       for d, tr in zip(demos, trajs, strict=True)])

    def log(epoch: int, loss: float) -> None:
        append_jsonl(out / "sft_log.jsonl", [{"epoch": epoch + 1, "loss": loss}])
        if progress:
            print(f"[mini2 sft] epoch {epoch + 1}: loss {loss:.4f}", flush=True)

    settings = SFTSettings(epochs=cfg.sft_epochs, batch_size=cfg.sft_batch_size,
                           learning_rate=cfg.sft_learning_rate, seed=cfg.seed)
    train_sft(policy, trajs, settings, log=log)
    policy.save(out / "checkpoint")
    return policy, out
