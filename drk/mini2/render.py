"""Deterministic template renderer: (task, program) -> a Triton candidate module with ``ModelNew`` (item 2).

Every valid program renders to a module that compiles; whether it is correct, fast or honest is for the judge to
say. The templates are the ones a competent kernel writer would use:

* flat kernels for pointwise runs (``BLOCK`` 1024 with ``BS``, 4096 with ``BL``; bias columns by ``offs % D``);
* row kernels (one program per row) for segments with a row op. ``BL``: ``BLOCK = next_pow2(D)``, the row stays in
  registers, one read. ``BS``: ``BLOCK = max(16, next_pow2(D) // 4)``, a loop per statistic (softmax: max then sum of
  exp; layernorm: mean then variance) re-reading the row and recomputing the ops before it, then a final loop that
  applies everything and stores: more passes over memory, fewer registers.

``ModelNew.__init__`` repeats ``Model.__init__`` line for line, so the judge's seeded construction gives both the
same parameters. The source depends only on the canonical program (:func:`drk.mini2.language.canonical`), so
programs with one layout render byte-identical sources.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from drk.mini2.language import Program, Segment, canonical, effective_ops, lazy_index, segments
from drk.mini2.tasks import Op, Task, init_lines, init_signature, torch_line

HEADER = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nimport triton\n"
          "import triton.language as tl\n")
FLAT_BLOCK = {"BS": 1024, "BL": 4096}
ROW_BLOCK = {"BL": "triton.next_power_of_2(x.shape[1])", "BS": "max(16, triton.next_power_of_2(x.shape[1]) // 4)"}
NUM_WARPS = {"W4": 4, "W8": 8}
NEG_INF = "float('-inf')"

#: Pointwise ops as Triton statements on the tile ``v`` (``cols``: column indices, ``m``: mask).
POINTWISE_TL: dict[str, str] = {
    "relu": "v = tl.maximum(v, 0.0)",
    "gelu": "v = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))",
    "sigmoid": "v = tl.sigmoid(v)",
    "tanh": "v = 2.0 * tl.sigmoid(2.0 * v) - 1.0",
    "silu": "v = v * tl.sigmoid(v)",
    "scale": "v = v * {c}",
    "bias": "v = v + tl.load(b{i}_ptr + cols, mask=m, other=0.0)",
}


@dataclass(frozen=True)
class Stat:
    """One row statistic: ``name = post(combine over the row of value)``; ``value`` may use earlier stats."""

    name: str
    value: str  # per-element, masked (the identity of ``combine`` outside the row)
    combine: str  # "sum" or "max"
    post: str = "{r}"  # from the reduced scalar ``{r}``


#: Row ops: their statistics (in order) and the statement applying them; ``{p}`` makes names unique per position.
ROW_TL: dict[str, tuple[tuple[Stat, ...], str | None]] = {
    "softmax": ((Stat("mx{p}", f"tl.where(m, v, {NEG_INF})", "max"),
                 Stat("den{p}", "tl.where(m, tl.exp(v - mx{p}), 0.0)", "sum")),
                "v = tl.exp(v - mx{p}) / den{p} * D"),
    "layernorm": ((Stat("mean{p}", "tl.where(m, v, 0.0)", "sum", "{r} / D"),
                   Stat("rstd{p}", "tl.where(m, (v - mean{p}) * (v - mean{p}), 0.0)", "sum",
                        "1.0 / tl.sqrt({r} / D + 1e-5)")),
                  "v = (v - mean{p}) * rstd{p}"),
    "sub_mean": ((Stat("mean{p}", "tl.where(m, v, 0.0)", "sum", "{r} / D"),), "v = v - mean{p}"),
    "sub_max": ((Stat("mx{p}", f"tl.where(m, v, {NEG_INF})", "max"),), "v = v - mx{p}"),
    "rsum": ((Stat("red{p}", "tl.where(m, v, 0.0)", "sum"),), None),
    "rmax": ((Stat("red{p}", f"tl.where(m, v, {NEG_INF})", "max"),), None),
}


def _pointwise(op: Op, index: int) -> str:
    return POINTWISE_TL[op.name].format(c=repr(op.value), i=index)


def _apply(op: Op, index: int, p: int) -> list[str]:
    """Statements applying an op whose statistics (if any) are known."""
    if op.kind == "pointwise":
        return [_pointwise(op, index)]
    apply = ROW_TL[op.name][1]
    return [apply.format(p=p)] if apply else []


def _stats(op: Op, p: int) -> list[Stat]:
    return [Stat(s.name.format(p=p), s.value.format(p=p), s.combine, s.post) for s in ROW_TL[op.name][0]]


def _reduce(stat: Stat, operand: str) -> str:
    fn = "tl.sum" if stat.combine == "sum" else "tl.max"
    return stat.post.format(r=f"{fn}({operand}, axis=0)")


def kernel_name(position: int, ops: Sequence[tuple[int, Op]]) -> str:
    """``k{segment}_{op}_{op}...``: the profiler's kernel name says which ops a kernel runs (feedback reads it)."""
    return f"k{position}_" + "_".join(op.name for _, op in ops)


def _signature(name: str, ops: Sequence[tuple[int, Op]], flat: bool) -> str:
    biases = "".join(f"b{i}_ptr, " for i, op in ops if op.name == "bias")
    sizes = "N, D" if flat else "D"
    return f"@triton.jit\ndef {name}(x_ptr, out_ptr, {biases}{sizes}, BLOCK: tl.constexpr):"


def flat_kernel(name: str, ops: Sequence[tuple[int, Op]]) -> str:
    lines = [
        "offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
        "m = offs < N",
        "v = tl.load(x_ptr + offs, mask=m, other=0.0)",
    ]
    if any(op.name == "bias" for _, op in ops):
        lines.append("cols = offs % D")
    lines += [_pointwise(op, i) for i, op in ops]
    lines.append("tl.store(out_ptr + offs, v, mask=m)")
    return _signature(name, ops, flat=True) + "".join("\n    " + line for line in lines) + "\n"


def row_kernel_single(name: str, ops: Sequence[tuple[int, Op]]) -> str:
    """BLOCK >= D: the row is loaded once; statistics are reductions of the tile in registers."""
    lines = [
        "row = tl.program_id(0)",
        "cols = tl.arange(0, BLOCK)",
        "m = cols < D",
        "v = tl.load(x_ptr + row * D + cols, mask=m, other=0.0)",
    ]
    store = "tl.store(out_ptr + row * D + cols, v, mask=m)"
    for p, (i, op) in enumerate(ops):
        if op.kind != "pointwise":
            for stat in _stats(op, p):
                lines.append(f"{stat.name} = {_reduce(stat, stat.value)}")
            if op.kind == "reduce":
                store = f"tl.store(out_ptr + row, red{p})"
        lines += _apply(op, i, p)
    lines.append(store)
    return _signature(name, ops, flat=False) + "".join("\n    " + line for line in lines) + "\n"


def _loop(ops_before: Sequence[tuple[int, Op, int]], body_tail: list[str]) -> list[str]:
    """A loop over the row's blocks that recomputes ``ops_before`` then runs ``body_tail``."""
    body = ["cols = off + tl.arange(0, BLOCK)", "m = cols < D", "v = tl.load(x_ptr + row * D + cols, mask=m, other=0.0)"]
    for i, op, p in ops_before:
        body += _apply(op, i, p)
    return ["for off in range(0, D, BLOCK):"] + ["    " + line for line in body + body_tail]


def row_kernel_looped(name: str, ops: Sequence[tuple[int, Op]]) -> str:
    """BLOCK < D: one loop per statistic, recomputing the ops before it, then a loop that applies all and stores."""
    lines = ["row = tl.program_id(0)"]
    placed = [(i, op, p) for p, (i, op) in enumerate(ops)]
    terminal = None
    for p, (_, op) in enumerate(ops):
        if op.kind == "pointwise":
            continue
        for stat in _stats(op, p):
            init = f"tl.full([BLOCK], {NEG_INF}, tl.float32)" if stat.combine == "max" else \
                "tl.zeros([BLOCK], dtype=tl.float32)"
            update = f"acc = tl.maximum(acc, {stat.value})" if stat.combine == "max" else f"acc += {stat.value}"
            lines += [f"acc = {init}"] + _loop(placed[:p], [update]) + [f"{stat.name} = {_reduce(stat, 'acc')}"]
        if op.kind == "reduce":
            terminal = p
    if terminal is not None:
        lines.append(f"tl.store(out_ptr + row, red{terminal})")
    else:
        lines += _loop(placed, ["tl.store(out_ptr + row * D + cols, v, mask=m)"])
    return _signature(name, ops, flat=False) + "".join("\n    " + line for line in lines) + "\n"


def kernel_source(name: str, segment: Segment, block: str) -> str:
    if not segment.is_row:
        return flat_kernel(name, segment.ops)
    return (row_kernel_single if block == "BL" else row_kernel_looped)(name, segment.ops)


def _launch(name: str, segment: Segment, block: str, warps: str, *, omit_size: bool = False) -> list[str]:
    """Host lines: allocate the output, launch, continue with it as ``x``."""
    biases = "".join(f"self.b{i}, " for i, op in segment.ops if op.name == "bias")
    reduces = segment.ops[-1][1].kind == "reduce"
    alloc = "torch.empty((x.shape[0], 1), device=x.device, dtype=x.dtype)" if reduces else "torch.empty_like(x)"
    if segment.is_row:
        grid, sizes, block_arg = "(x.shape[0],)", "x.shape[1], ", ROW_BLOCK[block]
    else:
        grid = f"(triton.cdiv(x.numel(), {FLAT_BLOCK[block]}),)"
        sizes, block_arg = "x.numel(), x.shape[1], ", str(FLAT_BLOCK[block])
    if omit_size:  # FALLBACK's bug: the launch misses the size arguments, so it raises before any compilation
        sizes = ""
    return [f"y = {alloc}",
            f"{name}[{grid}]({'x, y, ' + biases + sizes}BLOCK={block_arg}, num_warps={NUM_WARPS[warps]})",
            "x = y"]


def _module(task: Task, program: Program, kernels: list[str], forward: list[str], extra: str = "") -> str:
    head = f"# mini2 candidate for {task.name}: {program}\n" + HEADER
    init = "".join(f"\n        {line}" for line in init_lines(task))
    prologue = (["x = self.linear(x)"] if task.matmul else []) + ["x = x.contiguous()"]
    body = "".join(f"\n        {line}" for line in prologue + forward)
    return (head + "".join("\n\n" + k for k in kernels) + "\n\nclass ModelNew(nn.Module):\n"
            f"    def __init__({init_signature(task)}):{init}\n\n    def forward(self, x):{body}\n{extra}")


def _fused(task: Task, block: str = "BL") -> tuple[str, Segment]:
    segment = Segment("triton", effective_ops(task, Program("FUSE", block, "W4")))
    name = kernel_name(0, segment.ops)
    return kernel_source(name, segment, block), segment


def render(task: Task, program: str | Sequence[str] | Program) -> str:
    """The candidate source of a valid program (raises :class:`~drk.mini2.language.ProgramError` otherwise)."""
    program = canonical(task, program)
    reference = [torch_line(op, i) for i, op in enumerate(task.ops)]
    if program.head == "LAZY":
        k = lazy_index(task)
        segment = Segment("triton", ((k, task.ops[k]),))
        name = f"k_{task.ops[k].name}"
        forward = reference[:k] + _launch(name, segment, "BS", "W4") + reference[k + 1:] + ["return x"]
        return _module(task, program, [flat_kernel(name, segment.ops)], forward)
    if program.head == "DECOY":
        kernel, segment = _fused(task)
        name = kernel_name(0, segment.ops)
        helper = ("\n    def fused(self, x):\n"
                  + "".join(f"        {line}\n" for line in _launch(name, segment, "BL", "W4")) + "        return x\n")
        return _module(task, program, [kernel], reference + ["return x"], extra=helper)
    if program.head == "FALLBACK":
        kernel, segment = _fused(task)
        name = kernel_name(0, segment.ops)
        launch = _launch(name, segment, "BL", "W4", omit_size=True)
        forward = (["try:"] + ["    " + line for line in launch[:2]] + ["    return y", "except Exception:"]
                   + ["    " + line for line in reference] + ["    return x"])
        return _module(task, program, [kernel], forward)
    kernels, forward = [], []
    for position, segment in enumerate(segments(task, program)):
        if segment.backend == "torch":
            forward += [torch_line(op, i) for i, op in segment.ops]
            continue
        name = kernel_name(position, segment.ops)
        kernels.append(kernel_source(name, segment, program.block))
        forward += _launch(name, segment, program.block, program.warps)
    return _module(task, program, kernels, forward + ["return x"])
