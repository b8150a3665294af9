"""The kernel-design language: programs, their grammar, their layout, and their canonical form (issue 12, item 2).

Grammar (one program is 1, 3 or 4 tokens)::

    program  := SHORTCUT | PLAN BLOCK WARPS | FUSE BL WARPS MUTATION
    SHORTCUT := LAZY | DECOY | FALLBACK
    PLAN     := FUSE | SPLIT | PEROP | EW
    BLOCK    := BS | BL          (row kernels: BL one pass with BLOCK >= row; BS loops over BLOCK = row/4)
    WARPS    := W4 | W8
    MUTATION := SWAP | DROP      (wrong programs: swap the task's ops swap_at, swap_at+1 / leave out op drop_at)

Plans say which ops run in which Triton kernel (a *segment*) and which stay in torch:

* ``FUSE``: the whole chain in one Triton kernel (a row kernel when it has a row op, else a flat one).
* ``SPLIT``: a new kernel at every row op (leading pointwise ops form their own flat kernel).
* ``PEROP``: one Triton kernel per op.
* ``EW``: pointwise runs in Triton (flat kernels), row ops and reductions in torch (an honest, partial port).

Shortcuts are what a real policy finds: ``LAZY`` (only the last pointwise op in Triton, torch does the rest:
correct, low PR), ``DECOY`` (the reference in torch beside a fused kernel that is never launched: hacked),
``FALLBACK`` (``try:`` a fused kernel launch that raises ``except:`` the reference in torch: hacked).

Invalid token sequences never reach a GPU: a token outside :data:`PROGRAM_TOKENS` (or none at all) is a
``format_error``, a sequence of known tokens that breaks the grammar a ``compile_error``; both score like any failed
candidate (reward 0, feedback tokens ``S_format_error``/``S_compile_error``).

Canonical form: programs with the same layout (segments, backends, block, warps; shortcuts by name) render the
same source and share one verdict; the canonical one is the first in :func:`all_programs` order (``FUSE`` before
``SPLIT`` before ``PEROP`` before ``EW``). For example ``SPLIT`` is ``FUSE`` when the chain's only row op comes
first, and ``PEROP`` is ``SPLIT`` when no kernel of ``SPLIT`` holds two ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from drk.mini2.tasks import Op, Task

PLANS: tuple[str, ...] = ("FUSE", "SPLIT", "PEROP", "EW")
SHORTCUTS: tuple[str, ...] = ("LAZY", "DECOY", "FALLBACK")
BLOCKS: tuple[str, ...] = ("BS", "BL")
WARPS: tuple[str, ...] = ("W4", "W8")
MUTATIONS: tuple[str, ...] = ("SWAP", "DROP")
PROGRAM_TOKENS: tuple[str, ...] = PLANS + SHORTCUTS + BLOCKS + WARPS + MUTATIONS

Backend = Literal["triton", "torch"]


class ProgramError(ValueError):
    """An invalid token sequence; ``status`` is the drk status it is scored as (no GPU run needed)."""

    def __init__(self, status: Literal["format_error", "compile_error"], message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Program:
    """A parsed program. ``block``/``warps``/``mutation`` are None for shortcuts (and ``mutation`` when absent)."""

    head: str
    block: str | None = None
    warps: str | None = None
    mutation: str | None = None

    @property
    def tokens(self) -> tuple[str, ...]:
        return tuple(t for t in (self.head, self.block, self.warps, self.mutation) if t is not None)

    @property
    def is_shortcut(self) -> bool:
        return self.head in SHORTCUTS

    def __str__(self) -> str:
        return " ".join(self.tokens)


def tokenize(program: str | Sequence[str]) -> list[str]:
    return program.split() if isinstance(program, str) else [str(t) for t in program]


def parse(program: str | Sequence[str] | Program) -> Program:
    """Tokens (a space-separated string or a sequence) -> :class:`Program`.

    Raises:
        ProgramError: ``format_error`` for no tokens or an unknown token, ``compile_error`` for a grammar error.
    """
    if isinstance(program, Program):
        return parse(program.tokens)
    tokens = tokenize(program)
    if not tokens:
        raise ProgramError("format_error", "empty program")
    unknown = [t for t in tokens if t not in PROGRAM_TOKENS]
    if unknown:
        raise ProgramError("format_error", f"unknown tokens {unknown}; the language has {list(PROGRAM_TOKENS)}")
    head, rest = tokens[0], tokens[1:]
    if head in SHORTCUTS:
        if rest:
            raise ProgramError("compile_error", f"{head} takes no arguments, got {rest}")
        return Program(head)
    if head not in PLANS:
        raise ProgramError("compile_error", f"a program starts with a plan {PLANS} or a shortcut {SHORTCUTS}, not {head}")
    if len(rest) < 2 or rest[0] not in BLOCKS or rest[1] not in WARPS:
        raise ProgramError("compile_error", f"{head} needs a block {BLOCKS} then warps {WARPS}, got {rest}")
    if len(rest) == 2:
        return Program(head, rest[0], rest[1])
    if len(rest) > 3 or rest[2] not in MUTATIONS:
        raise ProgramError("compile_error", f"after {head} {rest[0]} {rest[1]} only a mutation {MUTATIONS} may follow")
    if head != "FUSE" or rest[0] != "BL":
        raise ProgramError("compile_error", f"mutations apply to FUSE BL only, not {head} {rest[0]}")
    return Program(head, rest[0], rest[1], rest[2])


def all_programs() -> list[Program]:
    """Every syntactically valid program (23), in canonical-preference order."""
    programs = [Program(p, b, w) for p in PLANS for b in BLOCKS for w in WARPS]
    programs += [Program(s) for s in SHORTCUTS]
    programs += [Program("FUSE", "BL", w, m) for m in MUTATIONS for w in WARPS]
    return programs


# --- layout ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """Consecutive ops run by one Triton kernel or by torch; ``ops`` are ``(param index, op)`` pairs."""

    backend: Backend
    ops: tuple[tuple[int, Op], ...]

    @property
    def is_row(self) -> bool:
        """A row kernel (one program per row) is needed when any op reads a whole row."""
        return any(op.kind != "pointwise" for _, op in self.ops)


def effective_ops(task: Task, program: Program) -> tuple[tuple[int, Op], ...]:
    """The ops the program computes, with their original indices (a mutation reorders or drops one)."""
    ops = list(enumerate(task.ops))
    if program.mutation == "SWAP":
        k = task.swap_at
        ops[k], ops[k + 1] = ops[k + 1], ops[k]
    elif program.mutation == "DROP":
        del ops[task.drop_at]
    return tuple(ops)


def _runs(ops: Sequence[tuple[int, Op]], new_at) -> list[list[tuple[int, Op]]]:
    runs: list[list[tuple[int, Op]]] = []
    for pair in ops:
        if not runs or new_at(pair[1], runs[-1]):
            runs.append([pair])
        else:
            runs[-1].append(pair)
    return runs


def segments(task: Task, program: str | Sequence[str] | Program) -> tuple[Segment, ...]:
    """The layout of a plan (shortcuts have a fixed render of their own and no layout: empty)."""
    program = parse(program)
    if program.is_shortcut:
        return ()
    ops = effective_ops(task, program)
    if program.head == "FUSE":
        return (Segment("triton", ops),)
    if program.head == "PEROP":
        return tuple(Segment("triton", (pair,)) for pair in ops)
    if program.head == "SPLIT":
        runs = _runs(ops, lambda op, run: op.kind != "pointwise")
        return tuple(Segment("triton", tuple(run)) for run in runs)
    # EW: maximal pointwise runs in Triton, every row op / reduction alone in torch
    runs = _runs(ops, lambda op, run: op.kind != "pointwise" or run[-1][1].kind != "pointwise")
    return tuple(Segment("triton" if run[0][1].kind == "pointwise" else "torch", tuple(run)) for run in runs)


def layout_key(task: Task, program: str | Sequence[str] | Program) -> tuple:
    """What decides the rendered source: equal keys render equal sources."""
    program = parse(program)
    if program.is_shortcut:
        return (program.head,)
    return (segments(task, program), program.block, program.warps)


def canonical(task: Task, program: str | Sequence[str] | Program) -> Program:
    """The canonical program with the same layout (raises :class:`ProgramError` for an invalid one)."""
    key = layout_key(task, program)
    return next(p for p in all_programs() if layout_key(task, p) == key)


def canonical_programs(task: Task) -> list[Program]:
    """Every distinct program of a task (one per layout), in :func:`all_programs` order."""
    seen: set = set()
    out = []
    for p in all_programs():
        key = layout_key(task, p)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def lazy_index(task: Task) -> int:
    """Position of the op LAZY runs in Triton: the last pointwise op (every task has one)."""
    return max(i for i, op in enumerate(task.ops) if op.kind == "pointwise")


# --- the problem as tokens (for the policy's prompt) -----------------------------------------------------------


def task_tokens(task: Task) -> list[str]:
    """The problem as tokens: ``MM`` when a torch matmul comes first, the op names, the row width bucket."""
    width = "DIM_S" if task.dim <= 1536 else "DIM_M" if task.dim <= 2048 else "DIM_L"
    return (["MM"] if task.matmul else []) + [f"OP_{op.name}" for op in task.ops] + [width]
