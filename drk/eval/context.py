"""The conversation a policy sees: the task, then all earlier turns ("vanilla") or the best ``w`` ("best_w").

The words are :mod:`drk.chat`'s (the trainer's), so an evaluated policy sees what it was trained on.

Context management (paper, sequential test-time scaling): the full history is kept outside the prompt and only
the ``w`` highest-reward turns (reward of Eq. 1) go back in, in their original order. With ``w = 4`` the first
five turns see their whole history, exactly as the authors' script (5 turns, then one turn at a time on the
best-4 window).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from drk import chat

#: Valid ``context`` choices of :func:`drk.eval.runner.evaluate_policy`.
CONTEXTS: tuple[str, ...] = ("vanilla", "best_w")


def task_messages(problem) -> list[dict[str, str]]:
    """System and first user message for ``problem`` (a ``drk.gym.Problem``), in the trainer's words (drk.chat)."""
    return [{"role": "system", "content": chat.SYSTEM_PROMPT},
            {"role": "user", "content": chat.first_user_message(problem.source)}]


@dataclass(frozen=True)
class Turn:
    """One past turn of an episode as the policy may see it again."""

    turn: int
    reply: str
    feedback: str
    reward: float


def select_window(history: Sequence[Turn], window: int) -> list[Turn]:
    """The ``window`` highest-reward turns, ties broken towards later turns, returned in turn order.

    >>> h = [Turn(1, "a", "", 0.0), Turn(2, "b", "", 2.0), Turn(3, "c", "", 0.0)]
    >>> [t.turn for t in select_window(h, 2)]
    [2, 3]
    """
    if window < 1:
        raise ValueError(f"window={window}: must be >= 1")
    best = sorted(history, key=lambda t: (t.reward, t.turn), reverse=True)[:window]
    return sorted(best, key=lambda t: t.turn)


def build_messages(task: list[dict[str, str]], history: Sequence[Turn], *, context: str = "vanilla",
                   window: int = 4) -> list[dict[str, str]]:
    """The conversation for the next turn: the task, then (reply, feedback) pairs of the visible past turns."""
    if context not in CONTEXTS:
        raise ValueError(f"context={context!r}: choose one of {CONTEXTS}")
    visible = list(history) if context == "vanilla" else select_window(history, window)
    messages = list(task)
    for past in visible:
        messages.append({"role": "assistant", "content": past.reply})
        messages.append({"role": "user", "content": chat.feedback_user_message(past.feedback)})
    return messages
