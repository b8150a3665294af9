"""Correctness: seeded input sets, output flattening, tolerant comparison, allocator poisoning.

Every function here is captured by the sandbox before the candidate is imported, so a candidate that
replaces ``torch.allclose`` later changes nothing we call (and is flagged ``tamper`` besides).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

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


@dataclass
class Moved:
    """The elements of a call's outputs that its sparse hidden set moved: where the reference's outputs differ from
    the same call's without the outliers (:func:`moved_elements`). A hidden set's atol is scaled by how much larger
    (or more sensitive to rounding) its outputs are; for a sparse set that holds only where its outliers reach. Scaled
    for every element, a kernel wrong only at the outliers passed a timed call's digest, whose bound sums the
    elements' tolerances (attacker review 23, F2); the other elements are held to ``unmoved_atol``, the seeded
    trials' own.

    Per output: a flat bool mask (None: not a tensor, or an integer one: compared exactly anyway; ``masks`` None:
    not kept, see :func:`moved_elements`), how many elements it marks, their absolute sum in the reference's output
    and the output's size (what a digest's bound needs, taken when the masks are made so that a timed round does no
    extra work)."""

    masks: list[torch.Tensor | None] | None
    counts: list[int]
    abs_sums: list[float]
    numels: list[int]
    unmoved_atol: float


def moved_elements(before: list[Any], after: list[Any], unmoved_atol: float, keep: str | None = "host") -> Moved:
    """:class:`Moved` for outputs ``after`` of a call whose outputs without its sparse perturbation are ``before``.
    An element counts as moved when the two differ at all (NaN equal to NaN): a reference whose rounding varies from
    call to call marks more elements, which only widens the tolerance. An output whose shape or dtype changed is
    moved everywhere. ``keep``: where the masks stay (``"host"`` or ``"device"``, the outputs'), or None: only the
    counts and sums (a timed call's digests need no more; a mask for its element-wise check is made if it is picked,
    rather than 64 MB per call copied to the host for every one)."""
    masks: list[torch.Tensor | None] = []
    counts: list[int] = []
    abs_sums: list[float] = []
    numels: list[int] = []
    for b, a in zip(before, after):
        if not (isinstance(a, torch.Tensor) and (a.is_floating_point() or a.is_complex())):
            masks.append(None)
            counts.append(0)
            abs_sums.append(0.0)
            numels.append(a.numel() if isinstance(a, torch.Tensor) else 0)
            continue
        a = a.detach()
        if a.is_complex():
            a = torch.view_as_real(a.resolve_conj())
            b = torch.view_as_real(b.detach().resolve_conj()) if isinstance(b, torch.Tensor) and b.is_complex() else b
        if isinstance(b, torch.Tensor) and b.shape == a.shape and b.dtype == a.dtype:
            b = b.detach().to(a.device)
            mask = (a != b) & ~(torch.isnan(a) & torch.isnan(b))
        else:
            mask = torch.ones_like(a, dtype=torch.bool)
        counts.append(int(mask.sum()))
        # over the moved elements only: a float64 copy of the whole output was 512 MB at a level-1 problem's size
        abs_sums.append(float(a[mask].to(torch.float64).abs_().nan_to_num_(posinf=0.0).sum()))
        numels.append(mask.numel())
        masks.append(mask.reshape(-1).cpu() if keep == "host" else mask.reshape(-1))
    return Moved(masks if keep else None, counts, abs_sums, numels, unmoved_atol)


#: Elements compared at once: float64 temporaries of this many elements (128 MiB each) rather than of the whole
#: output (for a 128M-element output, five of 1 GiB each: they counted in every evaluation's GPU footprint, and
#: failed, an uncharged env_error, when a candidate held the GPU's memory).
COMPARE_CHUNK = 2**24


def tolerance_for(value: torch.Tensor, atol: float, rtol: float) -> tuple[float, float]:
    """``(atol, rtol)`` for comparing ``value``: as given for floating-point and complex tensors, ``(0, 0)`` for
    integer and boolean ones. An index, a count or a mask has no rounding error to forgive: with the floats'
    tolerance an argmax off by one past index 100 and an integer affine map off by one past |y| = 100 were
    ``correct`` (attacker review 16)."""
    return (atol, rtol) if value.is_floating_point() or value.is_complex() else (0.0, 0.0)


def compare_outputs(expected: list[Any], got: list[Any], atol: float, rtol: float,
                    chunk: int = COMPARE_CHUNK, moved: Moved | None = None) -> Comparison:
    """Compare flattened outputs with ``allclose``; NaN never passes. Says where the largest error is. With
    ``moved`` (a sparse hidden set's), ``atol`` holds at the elements it marks and ``moved.unmoved_atol`` elsewhere.

    Compared where they live (a GPU does this in microseconds; 64M elements on a CPU take seconds), ``chunk``
    elements at a time; on the CPU if the GPU has no memory left for it (the verdict must not depend on how much
    memory a candidate or a neighbour holds).
    """
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
        if exp.is_complex():  # compared as (real, imaginary) pairs: a cast to float64 keeps only the real part, and
            # wrong imaginary parts passed (attacker review 13); the index then says which of the two
            exp, out = torch.view_as_real(exp.resolve_conj()), torch.view_as_real(out.detach().resolve_conj())
        tol = tolerance_for(exp, atol, rtol)  # integers and booleans exactly
        mask = moved.masks[index] if moved is not None and moved.masks and index < len(moved.masks) else None
        strict = (min(moved.unmoved_atol, tol[0]), mask) if mask is not None and mask.numel() == exp.numel() else None
        try:
            stats = _tensor_stats(exp, out.detach(), *tol, chunk, strict)
        except torch.OutOfMemoryError:  # once more in host memory (a second failure there is the judge's own)
            if exp.is_cuda:
                torch.cuda.empty_cache()
            stats = _tensor_stats(exp.cpu(), out.detach().cpu(), *tol, chunk, strict)
        err, bad, first_worst = stats
        worst = max(worst, err)
        if bad:
            flat, got_value, expected_value = first_worst
            where = tuple(int(i) for i in _unravel(flat, tuple(exp.shape)))  # (..., 0 real / 1 imaginary) if complex
            return Comparison(
                False,
                err,
                f"output {index}: {bad}/{exp.numel()} elements differ (atol={tol[0]}, rtol={tol[1]}); "
                f"max abs error {err:.4g} at index {where}: got {_shown(got_value)}, expected {_shown(expected_value)}",
            )
    return Comparison(True, worst, "")


def near_zero(value: torch.Tensor, atol: float, rtol: float, chunk: int = COMPARE_CHUNK) -> bool:
    """Whether all-zero outputs would pass as ``value`` (``allclose(zeros, value)`` in float64): a probe whose
    right answer is ~0 shows nothing about a disabled kernel. Asked ``chunk`` elements at a time: whole float64
    copies (the zeros, the value, ``allclose``'s temporaries) added ~5 GB to a judge's peak for a 512 MB output (H200,
    2026-12-04), held by every evaluation of a level-1 elementwise problem at the memory gate."""
    if value.is_complex():  # both parts (a cast to float64 keeps only the real one: an imaginary answer was ~0)
        value = torch.view_as_real(value.resolve_conj())
    flat = value.reshape(-1)
    for start in range(0, flat.numel(), max(int(chunk), 1)):
        part = flat[start:start + chunk].to(torch.float64)
        if not bool(torch.allclose(torch.zeros_like(part), part, atol=atol, rtol=rtol)):
            return False
    return True


def _shown(value: float | int) -> str:
    return str(value) if isinstance(value, int) else f"{value:.6g}"


def _tensor_stats(exp: torch.Tensor, out: torch.Tensor, atol: float, rtol: float, chunk: int,
                  strict: tuple[float, torch.Tensor] | None = None
                  ) -> tuple[float, int, tuple[int, float | int, float | int] | None]:
    """Over ``chunk``-element pieces, in float64 on ``exp``'s device: the largest absolute error (a NaN where the
    reference has none counts as infinite), how many elements fail ``isclose``, and the failing element with the
    largest error (flat index, got, expected; the first such). ``strict``: ``(atol, mask)``, a smaller atol for the
    elements the flat mask leaves unmarked (:class:`Moved`)."""
    exp_flat, out_flat = exp.reshape(-1), out.reshape(-1)
    exact = not (exp.is_floating_point() or exp.is_complex())  # integers and booleans: compared in their own dtype
    err, bad, best, first_worst = 0.0, 0, -1.0, None
    for start in range(0, exp_flat.numel(), max(int(chunk), 1)):
        exp_f = exp_flat[start:start + chunk].to(torch.float64)
        out_f = out_flat[start:start + chunk].to(device=exp.device, dtype=torch.float64)
        diff = (exp_f - out_f).abs()
        diff = torch.where(torch.isnan(out_f) & ~torch.isnan(exp_f), torch.full_like(diff, float("inf")), diff)
        if exact:
            # float64 holds integers exactly only below 2**53: int64 values 2**60 and 2**60 + 1 compared equal there
            # (attacker review 19); an unequal pair that rounds alike is still an error (of at least 1)
            failing = exp_flat[start:start + chunk] != out_flat[start:start + chunk].to(exp.device)
            diff = torch.where(failing, torch.clamp(diff, min=1.0), diff)
        if diff.numel():
            largest = float(diff.max())
            if not math.isnan(err) and (math.isnan(largest) or largest > err):
                err = largest  # NaN (the reference's own) stays the answer, as a whole-tensor max says
        if not exact:
            failing = ~_isclose(out_f, exp_f, atol=atol, rtol=rtol, equal_nan=True)
            if strict is not None:
                unmoved = ~strict[1][start:start + chunk].to(exp.device)
                failing |= unmoved & ~_isclose(out_f, exp_f, atol=strict[0], rtol=rtol, equal_nan=True)
        count = int(failing.sum())
        if count:
            bad += count
            masked = torch.where(failing, diff, torch.zeros_like(diff))
            local = int(torch.argmax(masked))
            value = float(masked[local])
            value = math.inf if math.isnan(value) else value  # argmax ranks NaN first, as a whole-tensor one did
            if value > best:
                pair = (out_flat[start + local], exp_flat[start + local]) if exact else (out_f[local], exp_f[local])
                # integers as themselves: "got -5.80947e+06, expected -5.80947e+06" hid an answer off by one
                got, want = (int(v) if exact else float(v) for v in pair)
                best, first_worst = value, (start + local, got, want)
    return err, bad, first_worst


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
