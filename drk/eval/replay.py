"""Replaying stored replies, so an evaluation can be re-scored (new environment, new config) without generating.

A replay file is JSONL with one object per reply: ``{"problem": key, "sample": int, "turn": int, "reply": str}``
(extra fields are ignored). The records written by :func:`drk.eval.runner.evaluate_policy` have these fields,
so an evaluation's output is itself a replay file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from drk.chat import fenced_reply
from drk.eval.policies import RequestMeta
from drk.jsonl import read_jsonl
from drk.problems import solution_source


class ReplayPolicy:
    """Answers each request with the stored reply for its (problem, sample, turn).

    Args:
        source: a JSONL path, or an iterable of dicts with ``problem, sample, turn, reply``.
        missing: ``"error"`` raises on a request with no stored reply; ``"empty"`` answers ``""`` (a format
            error in the environment), useful when replaying a run for more turns than it had.
    """

    def __init__(self, source: str | Path | Iterable[dict[str, Any]], *, missing: str = "error"):
        if missing not in ("error", "empty"):
            raise ValueError(f"missing={missing!r}: choose 'error' or 'empty'")
        rows = read_jsonl(source) if isinstance(source, (str, Path)) else list(source)
        self.replies = {(str(r["problem"]), int(r["sample"]), int(r["turn"])): str(r["reply"]) for r in rows}
        self.missing, self.origin = missing, str(source) if isinstance(source, (str, Path)) else "in-memory"

    def _lookup(self, key: tuple[str, int, int]) -> str:
        if key in self.replies:
            return self.replies[key]
        if self.missing == "empty":
            return ""
        have = sorted({k[0] for k in self.replies})[:5]
        raise KeyError(f"no stored reply for (problem, sample, turn)={key} in {self.origin}; it has problems "
                       f"{have}...; pass missing='empty' to score absent replies as format errors")

    def generate(self, messages_batch, *, n=1, temperature=1.0, top_p=0.95, max_new_tokens=8192,
                 meta: Sequence[RequestMeta] | None = None):
        if meta is None or len(meta) != len(messages_batch):
            raise ValueError("ReplayPolicy needs one RequestMeta per conversation (evaluate_policy passes them)")
        for m in meta:
            if len(m.samples) != n:
                raise ValueError(f"RequestMeta for {m.problem} lists {len(m.samples)} samples but n={n}")
        return [[self._lookup((m.problem, s, m.turn)) for s in m.samples] for m in meta]

    def describe(self) -> dict[str, Any]:
        return {"kind": "replay", "source": self.origin, "replies": len(self.replies)}


def decoy_source(problem: Any) -> str:
    """A decoy: the reference copied as ``ModelNew`` beside a Triton kernel that is never launched."""
    kernel = ("\n\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              "def _unused_kernel(x_ptr, n, BLOCK: tl.constexpr):\n"
              "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
              "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n")
    return problem.source.replace("class Model(", "class ModelNew(") + kernel


#: What a demo episode answers at turn 1 for samples 0 and 1 before the correct solution; later samples answer
#: the solution at every turn.
_WRONG_FIRST_TURNS = ("decoy", "syntax_error")


def solution_replies(problems: Sequence[Any], *, samples: int, turns: int) -> list[dict[str, Any]]:
    """Replay rows built from the bundled solutions, with a few wrong answers that the feedback then fixes.

    Sample 0 answers a decoy at turn 1 and sample 1 a syntax error; both then answer the solution. Every other
    (sample, turn) answers the solution. Used by the CPU notebook and tests (a stand-in for a model).
    """
    rows = []
    for problem in problems:
        solution = fenced_reply(solution_source(problem, required=True))
        for sample in range(samples):
            for turn in range(1, turns + 1):
                reply = solution
                if turn == 1 and sample < len(_WRONG_FIRST_TURNS):
                    kind = _WRONG_FIRST_TURNS[sample]
                    reply = fenced_reply(decoy_source(problem)) if kind == "decoy" else "```python\nclass ModelNew(:\n```"
                rows.append({"problem": problem.key, "sample": sample, "turn": turn, "reply": reply})
    return rows
