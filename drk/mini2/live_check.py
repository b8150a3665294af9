"""The verdict table is a cache, not a model (issue 12, item 4): one RL run, from one checkpoint and seed, made twice:
with verdicts read from the table and with every verdict judged live by drk.gym. Its first steps must agree.

What "agree" can mean: a live evaluation re-measures the speedup, so a reward (``C + C*min(speedup, 3)``) differs from
the table's by timing noise; statuses must not differ at all. The two runs draw the same samples for as long as their
prompts are the same: the policy, the seed and the sampler are the same, and a prompt only changes when a verdict's
feedback tokens do (a speedup or PR bucket crossed). So the check lines up the two runs' verdict calls one by one
(both runs make them in the same order while statuses agree: the same episodes continue) and reports, over the calls
that judged the same (problem, program): status agreement (must be all), feedback agreement, and the reward
differences; plus each step's mean reward in both runs.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from drk.mini2.config import Mini2Config, rl_config
from drk.mini2.env import result_dict, verdicts_for
from drk.mini2.feedback import feedback_tokens
from drk.mini2.tasks import Task
from drk.mini2.verdicts import Verdict
from drk.rl.rewards import turn_reward


class RecordingVerdicts:
    """A verdict source that remembers every answer it gave, in order (what a run was told, call by call)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.answers: list[Verdict] = []
        self._lock = threading.Lock()

    def verdict(self, problem: Task | str, program: Any) -> Verdict:
        return self.verdict_batch([problem], [program])[0]

    def verdict_batch(self, problems: Sequence[Task | str], programs: Sequence[Any]) -> list[Verdict]:
        answers = verdicts_for(self.inner, problems, programs)
        with self._lock:
            self.answers.extend(answers)
        return answers

    def __iter__(self):
        return iter(self.inner)


@dataclass
class LiveCheckReport:
    """Both runs of :func:`live_check`, compared call by call."""

    steps: int
    table_reward_means: list[float]  # per step, ``rl/reward_mean`` of the table-driven run
    live_reward_means: list[float]
    calls: int  # verdict calls the table-driven run made
    same_program: int  # calls where the live run judged the same (problem, program)
    status_agree: int  # of those, the same status
    feedback_agree: int  # of those, the same feedback tokens (speedup and PR buckets included)
    reward_abs_diff_max: float
    reward_abs_diff_mean: float
    live_pairs: int  # distinct (problem, program) the live run judged
    live_seconds: float
    disagreements: list[dict[str, Any]]  # the first few calls whose status differed

    @property
    def reproduced(self) -> bool:
        """Some calls of the two runs judged the same program, and every one of them got the same status."""
        return self.same_program > 0 and self.status_agree == self.same_program

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "reproduced": self.reproduced}


def compare_answers(table: Sequence[Verdict], live: Sequence[Verdict], *, use_pr: bool = False,
                    keep: int = 10) -> dict[str, Any]:
    """Line up two runs' verdict calls and count agreements over the calls that judged the same program."""
    same = agree = feedback = 0
    diffs: list[float] = []
    disagreements: list[dict[str, Any]] = []
    for index, (t, v) in enumerate(zip(table, live)):
        if (t.problem, t.program) != (v.problem, v.program):
            continue
        same += 1
        if t.status == v.status:
            agree += 1
        elif len(disagreements) < keep:
            disagreements.append({"call": index, "problem": t.problem, "program": t.program, "table": t.status,
                                  "live": v.status, "live_error": v.error[:200]})
        feedback += feedback_tokens(t) == feedback_tokens(v)
        diffs.append(abs(_reward(t, use_pr) - _reward(v, use_pr)))
    return {"calls": len(table), "same_program": same, "status_agree": agree, "feedback_agree": feedback,
            "reward_abs_diff_max": max(diffs, default=0.0),
            "reward_abs_diff_mean": sum(diffs) / len(diffs) if diffs else 0.0, "disagreements": disagreements}


def _reward(v: Verdict, use_pr: bool) -> float:
    return turn_reward(result_dict(v), use_profiling_ratio=use_pr)


def live_check(cfg: Mini2Config, variant: str, init: Any, live: Any, *, steps: int = 1,
               out_dir: str | Path, table: Any = None) -> LiveCheckReport:
    """Run ``variant`` for ``steps`` steps from ``init`` twice (table, then ``live``: a
    :class:`~drk.mini2.verdicts.LiveVerdicts`) and compare; logs under ``out_dir/{table,live}``, the report in
    ``out_dir/live_check.json``."""
    from drk.mini2.env import check_covered, resolve_tasks
    from drk.mini2.policy import Policy
    from drk.mini2.rl import load_table, run_rl

    cfg = replace(cfg, steps=steps, eval_every=0)
    table = table if table is not None else load_table(cfg)
    check_covered(table, resolve_tasks(cfg.train_tasks))
    start = init if isinstance(init, Policy) else Policy.load(init)
    runs: dict[str, tuple[RecordingVerdicts, list[float], float]] = {}
    for name, source in (("table", table), ("live", live)):
        recorder = RecordingVerdicts(source)
        began = time.monotonic()
        _, out = run_rl(cfg, variant, copy.deepcopy(start), verdicts=recorder, out_dir=Path(out_dir) / name,
                        episodes=False)
        seconds = time.monotonic() - began
        log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines() if line.strip()]
        runs[name] = (recorder, [float(row.get("rl/reward_mean", float("nan"))) for row in log], seconds)
    use_pr = rl_config(cfg, variant).use_profiling_ratio  # the reward the runs themselves paid
    counts = compare_answers(runs["table"][0].answers, runs["live"][0].answers, use_pr=use_pr)
    live_pairs = len({(v.problem, v.program) for v in runs["live"][0].answers})
    report = LiveCheckReport(steps=steps, table_reward_means=runs["table"][1], live_reward_means=runs["live"][1],
                             live_pairs=live_pairs, live_seconds=round(runs["live"][2], 1), **counts)
    Path(out_dir, "live_check.json").write_text(json.dumps(report.to_dict(), indent=1))
    return report


__all__ = ["LiveCheckReport", "RecordingVerdicts", "compare_answers", "live_check"]
