"""Cold-start data for the mini experiment: multi-turn trajectories over the bundled suite, judged by drk.gym.

Each trajectory is one problem, a first attempt drawn from a mix of kinds, the environment's real feedback on it,
and a revised attempt (the fused solution). The kinds, so the policy starts with every behaviour RL must sort out:

- ``fused``: the bundled fused Triton solution (correct, usually fast, high profiling ratio);
- ``lazy``: the bundled lazy solution, where one exists (correct, a minor op in Triton: speedup ~1, low PR);
- ``wrong``: the fused solution with a bug planted in ``ModelNew.forward``'s return (``incorrect``);
- ``decoy``: the reference copied as ``ModelNew`` beside a Triton kernel that is never launched (a hack: ``hacked``
  with the check on, ``correct`` at speedup ~1 without it).
"""

from __future__ import annotations

import ast
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drk.chat import PromptFormat, fenced_reply
from drk.eval.replay import decoy_source
from drk.problems import solution_source

KINDS: tuple[str, ...] = ("fused", "lazy", "wrong", "decoy")

#: Share of first attempts of each kind (a problem without a lazy solution draws ``wrong`` instead).
DEFAULT_MIX: dict[str, float] = {"fused": 0.3, "lazy": 0.2, "wrong": 0.25, "decoy": 0.25}

#: The planted bugs of ``wrong`` attempts: the forward's return value is transformed like this.
_BUGS: tuple[str, ...] = ("({}) * 0.5", "({}) + 1.0", "-({})")


def wrong_source(source: str, bug: int = 0) -> str:
    """``source`` with ``ModelNew.forward``'s last ``return EXPR`` rewritten as one of :data:`_BUGS`.

    A textual edit of that one line (comments and layout elsewhere stay as written).

    Raises:
        ValueError: no single-line ``return`` in ``ModelNew.forward``.
    """
    tree = ast.parse(source)
    returns = [node for cls in tree.body if isinstance(cls, ast.ClassDef) and cls.name == "ModelNew"
               for fn in cls.body if isinstance(fn, ast.FunctionDef) and fn.name == "forward"
               for node in ast.walk(fn) if isinstance(node, ast.Return) and node.value is not None
               and node.value.lineno == node.value.end_lineno]
    if not returns:
        raise ValueError("no single-line `return` in ModelNew.forward to plant a bug in")
    node = returns[-1]
    lines = source.splitlines(keepends=True)
    line = lines[node.lineno - 1]
    expr = line[node.value.col_offset:node.value.end_col_offset]
    lines[node.lineno - 1] = line[:node.value.col_offset] + _BUGS[bug % len(_BUGS)].format(expr) + \
        line[node.value.end_col_offset:]
    return "".join(lines)


def first_attempts(problem: Any) -> dict[str, str]:
    """The module source of every kind available for ``problem`` (``lazy`` only where one is bundled)."""
    fused = solution_source(problem, "fused")
    if not fused:
        raise ValueError(f"problem {problem.key} has no bundled fused solution")
    attempts = {"fused": fused, "wrong": wrong_source(fused, bug=problem.level + len(problem.name)),
                "decoy": decoy_source(problem)}
    lazy = solution_source(problem, "lazy")
    if lazy:
        attempts["lazy"] = lazy
    return attempts


@dataclass
class Trajectory:
    """One cold-start conversation and what the environment said of its first attempt."""

    problem: str
    first_kind: str
    first_status: str
    messages: list[dict[str, str]]

    def to_json(self) -> str:
        return json.dumps({"problem": self.problem, "first_kind": self.first_kind, "first_status": self.first_status,
                           "messages": self.messages})


def draw_kinds(available: Sequence[str], n: int, mix: Mapping[str, float], rng: random.Random) -> list[str]:
    """``n`` first-attempt kinds for one problem: as close to ``mix`` as ``n`` allows, in random order.

    Kinds the problem lacks hand their share to ``wrong``; each kind gets ``round(share * n)`` slots (largest
    remainders fill the rest), so small ``n`` still covers the mix instead of leaving it to chance.
    """
    unknown = set(mix) - set(KINDS)
    if unknown:
        raise ValueError(f"mix has unknown kinds {sorted(unknown)}; known: {KINDS}")
    shares = {k: 0.0 for k in KINDS if k in available}
    for kind, share in mix.items():
        shares[kind if kind in shares else "wrong"] += share
    return apportion(shares, n, rng)


def apportion(shares: Mapping[str, float], n: int, rng: random.Random) -> list[str]:
    """``n`` labels whose counts follow ``shares`` as closely as ``n`` allows (each gets ``floor(share * n)``, the
    largest remainders fill the rest), in random order: a small ``n`` still covers the mix instead of leaving it to
    chance."""
    total = sum(shares.values())
    exact = {k: n * v / total for k, v in shares.items()}
    counts = {k: int(v) for k, v in exact.items()}
    for kind in sorted(exact, key=lambda k: exact[k] - counts[k], reverse=True)[: n - sum(counts.values())]:
        counts[kind] += 1
    kinds = [k for k, c in counts.items() for _ in range(c)]
    rng.shuffle(kinds)
    return kinds


def build_trajectories(problems: Sequence[Any], evaluate_batch: Callable[[list[tuple[Any, str]]], list],
                       prompt_format: PromptFormat, *, per_problem: int = 8,
                       mix: Mapping[str, float] = DEFAULT_MIX, seed: int = 0) -> list[Trajectory]:
    """Two-turn trajectories: a first attempt of a drawn kind, its real feedback, then the fused solution.

    Args:
        problems: bundled problems (each needs a fused solution).
        evaluate_batch: ``[(problem, reply)] -> [EvalResult]``, e.g. ``drk.gym.Pool(...).map``; every distinct
            attempt is evaluated once.
        prompt_format: renders the conversation exactly as the RL trainer will.
        per_problem: trajectories per problem.
        mix: share of first attempts per kind (:data:`DEFAULT_MIX`).
        seed: the draw of kinds.
    """
    rng = random.Random(seed)
    plan = []
    for problem in problems:
        attempts = first_attempts(problem)
        plan += [(problem, kind, attempts) for kind in draw_kinds(list(attempts), per_problem, mix, rng)]
    distinct = {(problem.key, kind): (problem, fenced_reply(attempts[kind])) for problem, kind, attempts in plan}
    keys = list(distinct)
    verdicts = dict(zip(keys, evaluate_batch([distinct[k] for k in keys]), strict=True))
    out = []
    for problem, kind, attempts in plan:
        result = verdicts[(problem.key, kind)]
        replies = [fenced_reply(attempts[kind]), fenced_reply(attempts["fused"])]
        messages = prompt_format.conversation(problem.source, replies, [result.feedback])
        out.append(Trajectory(problem.key, kind, result.status, messages))
    return out


def write_trajectories(trajectories: Sequence[Trajectory], path: str | Path) -> Path:
    """JSONL, one trajectory per line (``drk sft`` reads the ``messages``; the rest documents the mix)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(t.to_json() + "\n" for t in trajectories))
    return path
