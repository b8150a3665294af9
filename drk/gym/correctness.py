"""Correctness: seeded input sets, output flattening, tolerant comparison, allocator poisoning.

Every function here is captured by the sandbox before the candidate is imported, so a candidate that
replaces ``torch.allclose`` later changes nothing we call (and is flagged ``tamper`` besides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

_allclose = torch.allclose
_isclose = torch.isclose
_equal = torch.equal


def make_inputs(module: Any, seed: int, device: torch.device) -> list[Any]:
    """Fresh inputs from the problem's ``get_inputs()`` under ``seed``, created on ``device``.

    ``get_inputs()`` runs under ``torch.device(device)``, so ``torch.randn(...)`` draws directly on the GPU: drawing
    hundreds of megabytes on the CPU and copying them over would dominate an evaluation's time.
    """
    torch.manual_seed(seed)
    with torch.device(device):
        inputs = module.get_inputs()
    return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]


def clone_all(values: list[Any]) -> list[Any]:
    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in values]


def flatten_outputs(out: Any) -> list[Any]:
    """Tensors (and scalars) of a forward's output, in order; nested tuples/lists are flattened."""
    if isinstance(out, (tuple, list)):
        return [leaf for item in out for leaf in flatten_outputs(item)]
    if isinstance(out, torch.Tensor):
        return [out.detach()]
    return [out]


@dataclass
class Comparison:
    ok: bool
    max_abs_err: float | None
    message: str


def compare_outputs(expected: list[Any], got: list[Any], atol: float, rtol: float) -> Comparison:
    """Compare flattened outputs with ``allclose``; NaN never passes. Says where the largest error is."""
    if len(expected) != len(got):
        return Comparison(False, None, f"expected {len(expected)} output tensors, got {len(got)}")
    worst = 0.0
    for index, (exp, out) in enumerate(zip(expected, got)):
        if not isinstance(exp, torch.Tensor):
            if not isinstance(out, torch.Tensor) and exp == out:
                continue
            return Comparison(False, None, f"output {index}: expected {exp!r}, got {type(out).__name__}")
        if not isinstance(out, torch.Tensor):
            return Comparison(False, None, f"output {index}: expected a tensor, got {type(out).__name__}")
        if tuple(out.shape) != tuple(exp.shape):
            return Comparison(False, None, f"output {index}: shape {tuple(out.shape)}, expected {tuple(exp.shape)}")
        if out.dtype != exp.dtype:
            return Comparison(False, None, f"output {index}: dtype {out.dtype}, expected {exp.dtype} (the reference's)")
        # Compared where they live (a GPU does this in microseconds; 64M elements on a CPU take seconds).
        exp_f, out_f = exp.to(torch.float64), out.detach().to(device=exp.device, dtype=torch.float64)
        diff = (exp_f - out_f).abs()
        diff = torch.where(torch.isnan(out_f) & ~torch.isnan(exp_f), torch.full_like(diff, float("inf")), diff)
        err = float(diff.max()) if diff.numel() else 0.0
        worst = max(worst, err)
        if not _allclose(out_f, exp_f, atol=atol, rtol=rtol, equal_nan=True):
            bad = ~_isclose(out_f, exp_f, atol=atol, rtol=rtol, equal_nan=True)
            flat = int(torch.argmax(torch.where(bad, diff, torch.zeros_like(diff))))
            where = tuple(int(i) for i in _unravel(flat, tuple(exp.shape)))
            where = where if where else ()
            return Comparison(
                False,
                err,
                f"output {index}: {int(bad.sum())}/{bad.numel()} elements differ (atol={atol}, rtol={rtol}); "
                f"max abs error {err:.4g} at index {where}: got {out_f[where].item():.6g}, "
                f"expected {exp_f[where].item():.6g}",
            )
    return Comparison(True, worst, "")


def _unravel(flat: int, shape: tuple[int, ...]) -> list[int]:
    index = []
    for dim in reversed(shape):
        index.append(flat % dim if dim else 0)
        flat = flat // dim if dim else 0
    return list(reversed(index))


def inputs_unchanged(before: list[Any], after: list[Any]) -> bool:
    """True when every input tensor still equals its copy taken before the candidate ran."""
    return all(
        _equal(b, a) or (b.is_floating_point() and bool(torch.isnan(b).all() and torch.isnan(a).all()))
        if isinstance(b, torch.Tensor)
        else True
        for b, a in zip(before, after)
    )


def poison_like(expected: list[Any]) -> None:
    """:func:`poison_allocator` sized and placed for outputs like ``expected`` (the largest one, its device)."""
    tensors = [x for x in expected if isinstance(x, torch.Tensor)]
    if tensors:
        poison_allocator(tensors[0].device, max(x.numel() for x in tensors))


def poison_allocator(device: torch.device, numel: int) -> None:
    """Leave a NaN-filled block of ``numel`` floats in the allocator's cache.

    A candidate that returns ``torch.empty(...)`` without writing it may receive this block (or a freed
    reference output, which is what the paper's "memory reuse" hack relies on); poisoning makes such unwritten
    outputs NaN, so they fail the comparison instead of passing by luck.
    """
    if numel > 0:
        block = torch.empty(numel, device=device, dtype=torch.float32)
        block.fill_(float("nan"))
        del block
