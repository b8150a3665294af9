"""Held-out evaluation of a mini2 policy: k episodes per task, T turns, Fast@p per turn (issue 12, item 5).

Each episode is a sequential test-time-scaling run (STTS): T turns, usually more than training used, each turn
seeing the task and a context of past turns built by :func:`drk.eval.context.select_window`'s rules:

- ``vanilla``: every past (reply, feedback) pair, in order: the training layout, so the first ``max_turns`` turns
  are exactly what RL trained on;
- ``best_w``: only the ``w`` highest-reward past turns (Eq. 1 reward, ties to later turns), in turn order: the
  paper's context management, which keeps the context short however many turns run.

The judge is always the real verdict with the hacking check on (a hack is never correct here, whatever the run
trained with), and the records are :mod:`drk.metrics` records, so Fast@p never counts a hack as fast.
:func:`summary` gives Fast@p at each turn (the answer at turn t) and by each turn (best of turns <= t), with
problem-clustered bootstrap CIs (:func:`drk.metrics.summarize`). Episodes continue after a correct turn unless
``stop_on_correct`` (then only the best-of-history numbers are meaningful).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from drk.eval.context import CONTEXTS, Turn, select_window
from drk.jsonl import append_jsonl
from drk.mini2.env import Mini2Env, Mini2Format
from drk.mini2.policy import Policy
from drk.mini2.tasks import Task
from drk.rl import turn_reward

FAST_PS: tuple[float, ...] = (1.0, 1.2, 1.5, 2.0)


@dataclass(frozen=True)
class EvalSettings:
    """``samples`` episodes per task of ``turns`` turns; ``greedy`` takes the argmax (then one sample suffices)."""

    samples: int = 8
    turns: int = 5
    context: str = "vanilla"
    window: int = 2
    greedy: bool = False
    temperature: float = 1.0
    stop_on_correct: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        if self.context not in CONTEXTS:
            raise ValueError(f"context={self.context!r}: one of {CONTEXTS}")
        if min(self.samples, self.turns, self.window) < 1 or self.temperature <= 0:
            raise ValueError(f"{self}: samples, turns, window >= 1 and temperature > 0")


@dataclass
class _Episode:
    task: Task
    sample: int
    prompt: list[int]
    history: list[Turn]
    reply_ids: dict[int, list[int]]  # turn -> the reply's ids as generated
    feedback_ids: dict[int, list[int]]
    done: bool = False

    def context(self, context: str, window: int) -> list[int]:
        visible = self.history if context == "vanilla" else select_window(self.history, window)
        ids = list(self.prompt)
        for past in visible:
            ids += self.reply_ids[past.turn] + self.feedback_ids[past.turn]
        return ids


def evaluate(policy: Policy, tasks: Sequence[Task], verdicts, settings: EvalSettings = EvalSettings(),
             ) -> list[dict[str, Any]]:
    """Play ``settings.samples`` episodes per task; one drk.metrics record per (episode, turn)."""
    sampler = Policy(policy.model, policy.tokenizer, temperature=settings.temperature,
                     max_reply_tokens=policy.max_reply_tokens, greedy=settings.greedy)
    sampler.seed(settings.seed, 7919)
    fmt, env = Mini2Format(policy.tokenizer), Mini2Env(verdicts, hacking_check=True)
    episodes = [_Episode(task, k, fmt.prompt_ids(task), [], {}, {}) for task in tasks for k in range(settings.samples)]
    out: list[dict[str, Any]] = []
    for t in range(1, settings.turns + 1):
        active = [e for e in episodes if not e.done]
        if not active:
            break
        contexts = [e.context(settings.context, settings.window) for e in active]
        ids, _ = sampler.generate(contexts)
        replies = [policy.tokenizer.decode(r, skip_special_tokens=True) for r in ids]
        results = env([e.task for e in active], replies)
        for e, reply, rid, res, ctx in zip(active, replies, ids, results, contexts, strict=True):
            reward = turn_reward(res)
            e.history.append(Turn(turn=t, reply=reply, feedback=res["feedback"], reward=reward))
            e.reply_ids[t], e.feedback_ids[t] = list(rid), fmt.feedback_ids(res["feedback"])
            e.done = settings.stop_on_correct and bool(res["correct"])
            out.append({"problem": e.task.name, "sample": e.sample, "turn": t, "program": reply,
                        "status": res["status"], "correct": bool(res["correct"]), "hacked": bool(res["hacked"]),
                        "speedup": res["speedup"], "coverage": res["coverage"], "reward": reward,
                        "feedback": res["feedback"], "context_tokens": len(ctx)})
    return out


def summary(records: list[dict[str, Any]], ps: Sequence[float] = FAST_PS, n_boot: int = 200,
            seed: int = 0) -> pd.DataFrame:
    """:func:`drk.metrics.summarize` of the records: ``eval/fast@p/turn{t}`` (the answer at turn t) and
    ``eval/fast@p/best_turn{t}`` (the best of turns <= t), correct and hacked rates, with bootstrap CIs."""
    from drk.metrics import summarize

    return summarize(records, ps=ps, n_boot=n_boot, seed=seed)


def fast_by_turn(frame: pd.DataFrame, p: float = 1.2, mode: str = "best") -> list[float]:
    """Fast@p per turn from a :func:`summary` frame (``mode`` ``best``: by turn t; ``last``: at turn t)."""
    rows = frame[(frame["kind"] == "fast@p") & (frame["p"] == p) & (frame["mode"] == mode)].sort_values("turn")
    return rows["value"].tolist()


def run_eval(policy: Policy | str | Path, tasks: Sequence[Task], verdicts, settings: EvalSettings,
             out_dir: str | Path, label: str = "eval") -> pd.DataFrame:
    """Evaluate and write ``<label>_records.jsonl``, ``<label>_summary.csv`` and ``<label>_settings.json``."""
    import json

    if not isinstance(policy, Policy):
        policy = Policy.load(policy)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    recs = evaluate(policy, tasks, verdicts, settings)
    (out / f"{label}_records.jsonl").unlink(missing_ok=True)
    append_jsonl(out / f"{label}_records.jsonl", recs)
    frame = summary(recs, seed=settings.seed)
    frame.to_csv(out / f"{label}_summary.csv", index=False)
    (out / f"{label}_settings.json").write_text(json.dumps({**asdict(settings),
                                                            "tasks": [t.name for t in tasks]}, indent=1))
    return frame
