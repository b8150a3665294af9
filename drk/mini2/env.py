"""Multi-turn mini2 episodes over a verdict source, played by drk.train's own episode code (issue 12, item 5).

An episode is what :func:`drk.train.rollout.run_episodes` (the trainer's rollout) plays, with two mini2 pieces
plugged into its seams:

- :class:`Mini2Format`, the ``fmt`` argument: the prompt is ``<bos>`` + :func:`drk.mini2.task_tokens`, the
  feedback after a turn is its 4 feedback tokens (:mod:`drk.mini2.feedback`), ``<end>`` ends a reply.
- :class:`Mini2Env`, the ``env`` argument: ``(tasks, replies) -> result dicts``; each reply (program tokens as
  text) is judged by a verdict source (a :class:`~drk.mini2.verdicts.VerdictTable` or
  :class:`~drk.mini2.verdicts.LiveVerdicts`) and condensed into the fields :func:`drk.rl.turn_reward` and
  :func:`drk.train.samples.turn_table` read (``status, correct, hacked, hack_reasons, speedup, coverage``) plus
  the ``feedback`` text.

So a mini2 trajectory is a :class:`drk.train.rollout.Trajectory` built exactly as the trainer builds one: a row
``prompt | reply_1 | feedback_1 | reply_2 | ...`` with ``env_mask`` 0 on feedback and each turn's token span.

**Success.** An episode ends after ``max_turns`` turns or, with ``stop_on_correct`` (mini2's default), after its
first turn the environment calls correct: the trainer's rule, so turn groups shrink (sizes ``N_t`` down to 1),
which is where TRLOO and GRPO differ beyond a constant. "Correct" is the environment's verdict: with the hacking
check off (``hacking_check=False``, the paper's ablation) a DECOY/FALLBACK that passed correctness and timing is
correct, scored by its measured speedup, and ends the episode; ``hack_reasons`` still carries the evidence, so
Fast@p (which never counts a hack as fast) can be computed honestly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from drk.mini2.feedback import feedback_tokens
from drk.mini2.language import canonical_programs
from drk.mini2.policy import Mini2Tokenizer
from drk.mini2.tasks import Task
from drk.mini2.verdicts import Verdict, VerdictTable, select_tasks
from drk.train.rollout import EpisodeSettings, Trajectory, run_episodes


class VerdictSource(Protocol):
    def verdict(self, problem: Task | str, program: Any) -> Verdict: ...


def verdicts_for(source: VerdictSource, problems: Sequence[Task | str], programs: Sequence[Any]) -> list[Verdict]:
    """One verdict per (problem, program): the source's ``verdict_batch`` where it has one (a live judge judges a
    batch's new pairs side by side), else one ``verdict`` call each."""
    batch = getattr(source, "verdict_batch", None)
    if batch is not None:
        return batch(problems, programs)
    return [source.verdict(t, p) for t, p in zip(problems, programs, strict=True)]


@dataclass
class Mini2Format:
    """The prompt/feedback rendering :func:`drk.train.rollout.run_episodes` calls (``drk.chat.PromptFormat``'s
    seam: ``tokenizer``, ``feedback_ids``, ``_encode``), over mini2's word-level vocabulary."""

    tokenizer: Mini2Tokenizer

    def prompt_ids(self, task: Task) -> list[int]:
        from drk.mini2.language import task_tokens

        return [self.tokenizer.bos_token_id, *self.tokenizer.encode(task_tokens(task))]

    def feedback_ids(self, feedback: str, *, reply_ids: list[int] | None = None) -> list[int]:
        return self.tokenizer.encode(feedback)

    def _encode(self, text: str) -> list[int]:  # scripted replies (run_episodes' replay path)
        return self.tokenizer.encode(text)


def result_dict(v: Verdict, *, hacking_check: bool = True) -> dict[str, Any]:
    """A verdict as the environment's result: what rewards, the sample table, metrics and feedback read.

    With ``hacking_check`` off a hacked verdict that was measured (``passes_without_hack_check``) is reported as
    the judge would report it under ``EvalConfig(hacking_check=False)``: ``correct``, not ``hacked``, its reasons
    kept as evidence (``hack_reasons``), and the feedback says ``S:correct``.
    """
    status, correct, hacked = v.status, v.correct, v.hacked
    if not hacking_check and v.hacked and v.passes_without_hack_check:
        status, correct, hacked = "correct", True, False
    fields = {"status": status, "speedup": v.speedup, "coverage": v.coverage, "top_kernel": v.top_kernel,
              "top_own": v.top_own}
    return {
        **fields, "problem": v.problem, "program": v.program, "correct": correct, "hacked": hacked,
        "hack_reasons": list(v.hack_reasons) or (["hacked"] if v.hacked else []),
        "judged_hacked": v.hacked,  # the table's verdict with the check on, whatever the run's setting
        "env_error": v.env_error, "feedback": " ".join(feedback_tokens(fields)),
    }


class Mini2Env:
    """``(tasks, replies) -> results``: the ``env`` of :func:`drk.train.rollout.run_episodes` over a verdict source.

    Args:
        verdicts: a :class:`~drk.mini2.verdicts.VerdictTable` (microseconds) or
            :class:`~drk.mini2.verdicts.LiveVerdicts` (the real judge).
        hacking_check: the run's ``EvalConfig.hacking_check`` (``RLConfig.eval_config``); see :func:`result_dict`.
    """

    def __init__(self, verdicts: VerdictSource, *, hacking_check: bool = True) -> None:
        self.verdicts, self.hacking_check = verdicts, hacking_check
        self.calls = 0

    def __call__(self, problems: Sequence[Task], replies: Sequence[str]) -> list[dict[str, Any]]:
        self.calls += len(replies)
        return [result_dict(v, hacking_check=self.hacking_check) for v in verdicts_for(self.verdicts, problems, replies)]


def check_covered(verdicts: VerdictSource, tasks: Sequence[Task]) -> None:
    """Raise a clear error when a task has no verdict for some canonical program (e.g. the partial table holds
    problems 0-12 only): better now than as a KeyError in the middle of a run."""
    missing = []
    for task in tasks:
        try:
            for program in canonical_programs(task):
                verdicts.verdict(task, program)
        except KeyError:
            missing.append(f"{task.index} ({task.name})")
    if missing:
        have = sorted({v.problem for v in verdicts}) if isinstance(verdicts, VerdictTable) else []
        raise ValueError(f"the verdict table has no (complete) verdicts for problems {missing}; it covers "
                         f"{len(have)} problems{': ' + ', '.join(h[:5] for h in have) if have else ''}. Pick "
                         "tasks it covers (e.g. train_tasks='0-9', heldout_tasks='10-12' for the partial table) "
                         "or build the full table (benchmarks/mini2_verdicts.py)")


def resolve_tasks(spec: str, verdicts: VerdictSource | None = None) -> list[Task]:
    """Tasks by :func:`drk.mini2.verdicts.select_tasks` spec (``train``, ``heldout``, ``0-9``, names), checked
    against the verdict source when one is given."""
    chosen = select_tasks(spec)
    if not chosen:
        raise ValueError(f"task spec {spec!r} selects no task")
    if len({t.index for t in chosen}) != len(chosen):
        raise ValueError(f"task spec {spec!r} names a task twice")
    if isinstance(verdicts, VerdictTable):  # a live source answers everything (and judging it all costs a GPU)
        check_covered(verdicts, chosen)
    return chosen


def new_trajectories(tasks: Sequence[Task], group_size: int, fmt: Mini2Format) -> list[Trajectory]:
    """``group_size`` empty trajectories per task, as the trainer makes them: ``prompt_id`` = the task's index
    (the group key), ``traj_id`` = the row, task by task."""
    trajs = []
    for task in tasks:
        for _ in range(group_size):
            trajs.append(Trajectory(prompt_id=task.index, traj_id=len(trajs), problem=task,
                                    prompt_ids=fmt.prompt_ids(task)))
    return trajs


def play(tasks: Sequence[Task], group_size: int, *, generate, env: Mini2Env, fmt: Mini2Format,
         settings: EpisodeSettings) -> list[Trajectory]:
    """Play ``group_size`` episodes per task with :func:`drk.train.rollout.run_episodes` (the trainer's code)."""
    return run_episodes(new_trajectories(tasks, group_size, fmt), generate=generate, env=env, fmt=fmt,
                        settings=settings)


def episode_settings(max_turns: int, stop_on_correct: bool, max_reply_tokens: int = 5,
                     max_context_tokens: int = 128) -> EpisodeSettings:
    """Episode limits; a reply is at most 4 program tokens + ``<end>``, and a 9-token prompt plus T turns of
    5 + 4 tokens fits the default context for T <= 13."""
    return EpisodeSettings(max_turns=max_turns, max_reply_tokens=max_reply_tokens,
                           max_context_tokens=max_context_tokens, stop_on_correct=stop_on_correct)
