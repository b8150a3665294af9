"""Synthetic KernelBench-format problems: chains of 3-5 row-wise ops on a 2-D tensor (issue 12, item 1).

Every problem is a real reference module (``Model``, ``get_inputs``, ``get_init_inputs``, ``CPU_SIZES``) that
:class:`drk.gym.Problem` loads and the judge runs. The chain is drawn deterministically from a hash of the problem
index (no RNG state, no Python-version dependence), then checked numerically (float64, fixed inputs) so that

* every op matters (dropping any one changes the output far beyond the judge's tolerance: no redundant op that a
  "missing op" program would get away with),
* the designated wrong variants really are wrong (``swap_at``: the first adjacent pair whose swap changes the output;
  ``drop_at``: the first pointwise op),
* the output separates two random input sets and zeros at both the CPU and the GPU row length (drk's
  input-sensitivity rule, ``tests/problems/test_input_sensitivity.py``).

A draw that fails a check is redrawn with the next attempt number. ``TASKS`` are the 38 problems: indices 0-29
train, 30-37 held out (a fixed split by index; the draws are i.i.d., so this is a random split).

GPU sizes keep the reference memory-bound at 0.05-1 ms on an H200 (4M-17M fp32 elements, a 1024-wide ``nn.Linear``
in front for a quarter of the problems); ``CPU_SIZES`` (5 x 40, not a power of two) keeps the interpreter fast.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

#: Pointwise ops without parameters.
UNARY: tuple[str, ...] = ("relu", "gelu", "sigmoid", "tanh", "silu")
#: Pointwise ops with a parameter: a literal scalar (``scale``) or a per-column ``nn.Parameter`` (``bias``).
AFFINE: tuple[str, ...] = ("scale", "bias")
#: Ops that need a whole row and give a row back (statistics broadcast back over the row).
ROW: tuple[str, ...] = ("softmax", "layernorm", "sub_mean", "sub_max")
#: Terminal row reductions (``keepdim``): only ever the last op.
REDUCE: tuple[str, ...] = ("rsum", "rmax")
POINTWISE: tuple[str, ...] = UNARY + AFFINE
ALL_OPS: tuple[str, ...] = POINTWISE + ROW + REDUCE
#: Scale constants (negative ones make relu and scale not commute).
SCALES: tuple[float, ...] = (0.5, 1.7, 2.5, -0.8, -1.5)

N_TASKS = 38
N_TRAIN = 30
CPU_ROWS, CPU_DIM, CPU_IN = 5, 40, 12
#: Numbers for the checks: a program is "wrong" only if it misses by this much (10x the judge's atol/rtol).
_WRONG_ATOL, _WRONG_RTOL = 0.1, 0.1
_JUDGE_TOL = 1e-2
GENERATOR_VERSION = 1


@dataclass(frozen=True)
class Op:
    """One op of a chain; ``value`` is the scale constant (``scale`` only)."""

    name: str
    value: float | None = None

    @property
    def kind(self) -> Literal["pointwise", "row", "reduce"]:
        if self.name in POINTWISE:
            return "pointwise"
        return "row" if self.name in ROW else "reduce"

    @property
    def label(self) -> str:
        """A CamelCase name for problem names and kernel names."""
        return {"relu": "ReLU", "gelu": "GELU", "silu": "SiLU", "sub_mean": "SubMean", "sub_max": "SubMax",
                "rsum": "RowSum", "rmax": "RowMax", "layernorm": "LayerNorm"}.get(self.name, self.name.capitalize())


@dataclass(frozen=True)
class Task:
    """One synthetic problem: an optional torch ``nn.Linear`` then a chain of ops, and its fixed wrong variants.

    ``ops[i]`` with name ``bias`` reads the parameter ``self.b{i}`` (created in op order, after the linear layer).
    """

    index: int
    ops: tuple[Op, ...]
    matmul: bool
    rows: int
    dim: int
    in_features: int | None
    swap_at: int
    drop_at: int
    attempt: int = 0

    @property
    def name(self) -> str:
        labels = (["Matmul"] if self.matmul else []) + [op.label for op in self.ops]
        return f"m2_{self.index:02d}_" + "_".join(labels)

    @property
    def split(self) -> Literal["train", "heldout"]:
        return "train" if self.index < N_TRAIN else "heldout"

    @property
    def source(self) -> str:
        return problem_source(self)

    def problem(self):
        """The :class:`drk.gym.Problem` (imported lazily: generating tasks needs no drk.gym)."""
        from drk.gym.problem import Problem

        return Problem.from_source(self.source, name=self.name)


# --- deterministic draws --------------------------------------------------------------------------------------


class _Draw:
    """Choices from SHA-256 of ``key/n``: the same on every machine and Python version."""

    def __init__(self, key: str) -> None:
        self.key, self.n = key, 0

    def below(self, k: int) -> int:
        self.n += 1
        digest = hashlib.sha256(f"{self.key}/{self.n}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % k

    def choice(self, seq: Sequence):
        return seq[self.below(len(seq))]


def _draw_chain(index: int, attempt: int) -> tuple[bool, int, int, int | None, tuple[Op, ...]]:
    d = _Draw(f"drk.mini2/v{GENERATOR_VERSION}/{index}/{attempt}")
    matmul = d.below(4) == 0
    length = 3 + d.below(3)
    ops: list[Op] = []
    for i in range(length):
        last = i == length - 1
        roll = d.below(12)
        if last and roll < 2:
            name = d.choice(REDUCE)
        elif roll < 5:
            name = d.choice(ROW)
        elif roll < 8:
            name = d.choice(AFFINE)
        else:
            name = d.choice(UNARY)
        ops.append(Op(name, d.choice(SCALES) if name == "scale" else None))
    if matmul:
        dim, rows, in_features = d.choice((1024, 2048)), 4096, 1024
    else:
        dim = d.choice((1024, 1536, 2048, 3072, 4096))
        rows, in_features = (4096 if dim >= 3072 else 8192), None
    return matmul, rows, dim, in_features, tuple(ops)


# --- reference semantics (the same as the generated module's forward) -----------------------------------------


def _torch_op(op: Op, index: int) -> Callable:
    import torch
    import torch.nn.functional as F

    table: dict[str, Callable] = {
        "relu": lambda x, p: torch.relu(x),
        "gelu": lambda x, p: F.gelu(x),
        "sigmoid": lambda x, p: torch.sigmoid(x),
        "tanh": lambda x, p: torch.tanh(x),
        "silu": lambda x, p: F.silu(x),
        "scale": lambda x, p: x * op.value,
        "bias": lambda x, p: x + p[f"b{index}"],
        "softmax": lambda x, p: torch.softmax(x, dim=-1) * x.shape[-1],
        "layernorm": lambda x, p: F.layer_norm(x, (x.shape[-1],)),
        "sub_mean": lambda x, p: x - x.mean(dim=-1, keepdim=True),
        "sub_max": lambda x, p: x - x.amax(dim=-1, keepdim=True),
        "rsum": lambda x, p: x.sum(dim=-1, keepdim=True),
        "rmax": lambda x, p: x.amax(dim=-1, keepdim=True),
    }
    return table[op.name]


def apply_chain(ops: Sequence[tuple[int, Op]], x, params: dict):
    """Apply ``(param index, op)`` pairs in order (the index names a bias's parameter)."""
    for index, op in ops:
        x = _torch_op(op, index)(x, params)
    return x


def _inputs(rows: int, dim: int, seed: int, dtype):
    """The problem's input distribution: random per-row scale and shift (so row statistics differ per row)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, dim, generator=g, dtype=dtype)
    return x * (0.5 + 2.0 * torch.rand(rows, 1, generator=g, dtype=dtype)) + (torch.rand(rows, 1, generator=g, dtype=dtype) - 0.5)


def _params(ops: Sequence[Op], dim: int, seed: int, dtype) -> dict:
    import torch

    g = torch.Generator().manual_seed(seed)
    return {f"b{i}": torch.randn(dim, generator=g, dtype=dtype) * 0.5 for i, op in enumerate(ops) if op.name == "bias"}


def _differs(a, b) -> bool:
    import torch

    return a.shape != b.shape or not torch.allclose(a, b, atol=_WRONG_ATOL, rtol=_WRONG_RTOL)


def _sensitive(out_a, out_b) -> bool:
    """drk's input-sensitivity rule: >= 1% of outputs differ between two input sets, and zeros do not pass."""
    import torch

    differ = 1 - torch.isclose(out_a, out_b, atol=_JUDGE_TOL, rtol=_JUDGE_TOL).double().mean().item()
    return differ >= 0.01 and not torch.allclose(torch.zeros_like(out_a), out_a, atol=_JUDGE_TOL, rtol=_JUDGE_TOL)


def _check(ops: tuple[Op, ...], gpu_dim: int) -> tuple[int, int] | None:
    """``(swap_at, drop_at)`` when the chain passes every check, else None (see the module docstring)."""
    import torch

    kinds = [op.kind for op in ops]
    n_row = sum(k != "pointwise" for k in kinds)
    if "pointwise" not in kinds or not 1 <= n_row <= 2 or "reduce" in kinds[:-1]:
        return None
    if any(a.name == b.name for a, b in zip(ops, ops[1:])):
        return None
    indexed = list(enumerate(ops))
    x = _inputs(16, CPU_DIM, 1, torch.float64)
    params = _params(ops, CPU_DIM, 2, torch.float64)
    full = apply_chain(indexed, x, params)
    if not torch.isfinite(full).all():
        return None
    for k in range(len(ops)):
        if not _differs(full, apply_chain(indexed[:k] + indexed[k + 1:], x, params)):
            return None  # op k is redundant
    swap_at = next((k for k in range(len(ops) - 1) if "reduce" not in kinds[k:k + 2]
                    and _differs(full, apply_chain(indexed[:k] + [indexed[k + 1], indexed[k]] + indexed[k + 2:],
                                                  x, params))), None)
    if swap_at is None:
        return None
    for rows, dim in ((CPU_ROWS, CPU_DIM), (8, gpu_dim)):
        p32 = _params(ops, dim, 3, torch.float32)
        a = apply_chain(indexed, _inputs(rows, dim, 4, torch.float32), p32)
        b = apply_chain(indexed, _inputs(rows, dim, 5, torch.float32), p32)
        if not _sensitive(a, b):
            return None
    drop_at = kinds.index("pointwise")
    return swap_at, drop_at


def make_task(index: int, max_attempts: int = 200) -> Task:
    """The problem with this index: the first draw (attempt 0, 1, ...) that passes the checks."""
    for attempt in range(max_attempts):
        matmul, rows, dim, in_features, ops = _draw_chain(index, attempt)
        checked = _check(ops, dim)
        if checked is not None:
            return Task(index, ops, matmul, rows, dim, in_features, *checked, attempt=attempt)
    raise RuntimeError(f"no valid chain for task {index} in {max_attempts} attempts")  # pragma: no cover


@lru_cache(maxsize=1)
def all_tasks() -> tuple[Task, ...]:
    """The 38 problems, by index (cached: generation runs small float64 checks)."""
    return tuple(make_task(i) for i in range(N_TASKS))


def tasks(split: Literal["train", "heldout", "all"] = "all") -> list[Task]:
    if split not in ("train", "heldout", "all"):
        raise ValueError(f"split={split!r}: choose train, heldout or all")
    return [t for t in all_tasks() if split == "all" or t.split == split]


def task_by_name(name: str) -> Task:
    for task in all_tasks():
        if task.name == name:
            return task
    raise KeyError(f"no mini2 task named {name!r}")


# --- the module source ----------------------------------------------------------------------------------------

#: The torch expression of each op in the reference's forward (``{c}``: scale constant, ``{i}``: op index).
TORCH_EXPR: dict[str, str] = {
    "relu": "torch.relu(x)",
    "gelu": "F.gelu(x)",
    "sigmoid": "torch.sigmoid(x)",
    "tanh": "torch.tanh(x)",
    "silu": "F.silu(x)",
    "scale": "x * {c}",
    "bias": "x + self.b{i}",
    "softmax": "torch.softmax(x, dim=-1) * x.shape[-1]",
    "layernorm": "F.layer_norm(x, (x.shape[-1],))",
    "sub_mean": "x - x.mean(dim=-1, keepdim=True)",
    "sub_max": "x - x.amax(dim=-1, keepdim=True)",
    "rsum": "x.sum(dim=-1, keepdim=True)",
    "rmax": "x.amax(dim=-1, keepdim=True)",
}


def torch_line(op: Op, index: int) -> str:
    """``x = <expr>``: the reference's statement for one op (shared with the renderer's torch segments)."""
    return "x = " + TORCH_EXPR[op.name].format(c=repr(op.value), i=index)


def init_lines(task: Task) -> list[str]:
    """``__init__`` body (shared by ``Model`` and every rendered ``ModelNew``, so parameters are identical)."""
    lines = ["super().__init__()"]
    if task.matmul:
        lines.append("self.linear = nn.Linear(in_features, dim)")
    lines += [f"self.b{i} = nn.Parameter(torch.randn(dim) * 0.5)" for i, op in enumerate(task.ops) if op.name == "bias"]
    return lines


def init_signature(task: Task) -> str:
    return "self, dim, in_features" if task.matmul else "self, dim"


def problem_source(task: Task) -> str:
    names = ", ".join(op.name if op.name != "scale" else f"scale({op.value})" for op in task.ops)
    doc = f"mini2 synthetic problem {task.index} ({task.split}): " + ("nn.Linear, then " if task.matmul else "") + names
    body = "\n".join("        " + line for line in init_lines(task))
    forward = ["        x = self.linear(x)"] if task.matmul else []
    forward += ["        " + torch_line(op, i) for i, op in enumerate(task.ops)]
    width = "IN" if task.matmul else "DIM"
    sizes = {"ROWS": CPU_ROWS, "DIM": CPU_DIM} | ({"IN": CPU_IN} if task.matmul else {})
    consts = f"ROWS = {task.rows}\nDIM = {task.dim}\n" + (f"IN = {task.in_features}\n" if task.matmul else "")
    init_args = "[DIM, IN]" if task.matmul else "[DIM]"
    return (
        f'"""{doc}."""\n'
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
        f"{consts}\nCPU_SIZES = {sizes!r}\n\n\n"
        "class Model(nn.Module):\n"
        f"    def __init__({init_signature(task)}):\n{body}\n\n"
        "    def forward(self, x):\n" + "\n".join(forward) + "\n        return x\n\n\n"
        "def get_inputs():\n"
        "    # random per-row scale and shift: row statistics differ per row and per input set\n"
        f"    x = torch.randn(ROWS, {width})\n"
        "    return [x * (0.5 + 2.0 * torch.rand(ROWS, 1)) + (torch.rand(ROWS, 1) - 0.5)]\n\n\n"
        f"def get_init_inputs():\n    return {init_args}\n"
    )
