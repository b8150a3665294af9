"""The output digest's four sums in one pass over the tensor, as one Triton kernel (used on CUDA).

Why a kernel: every timed call's output is digested in the candidate's process by the trusted runner loop, and the
wall-clock bound lets a round take as long as the reference's round, digests included. A runner rewritten from
inside (attacker review 14) can digest in a cheaper way and spend what it saves on work outside its reported times.
The torch digest reduced float64 copies of each chunk and of its weights (~60 bytes moved per element): 1.6 ms per
64M-float output on an H200, ~12x relu2's honest kernel. This one reads each element once in its own dtype, draws
its +-1 weight from a hash of its position (no weight tensor to read) and accumulates in float64: about the cost of
reading the tensor, which no digest can avoid, so there is little left to save.

The weights are :func:`hashed_signs`, which the torch path uses on CUDA too (for NaN/inf outputs, and dtypes the
kernel does not read): on a GPU every path weights an element alike. (On CPU the torch path draws its weights from a
generator, cheaper there; the judge and the runner digest on the same device.)
"""

from __future__ import annotations

import torch

_M31 = 0x7FFFFFFF
#: Elements per program. Each program writes its four float64 partial sums; torch adds the partials (deterministic:
#: no atomics, so the judge's and the runner's digests of the same values agree exactly).
BLOCK = 4096
#: dtypes the kernel reads (anything else takes the torch path).
KERNEL_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.int16,
                 torch.int8, torch.uint8, torch.bool)


def hashed_signs(start: int, count: int, seed: int, device: torch.device) -> torch.Tensor:
    """+-1 (int8) for flat positions ``start .. start+count-1``: a hash of the position and ``seed``, the same on
    every device and in :func:`_digest_kernel`. Positions, not chunks, are hashed: weights that repeated per chunk
    let a tensor with two chunks swapped digest as the original (attacker review 15). All products stay below 2^63
    (31-bit values times 31-bit constants), so int64 arithmetic gives the same bits everywhere."""
    offs = torch.arange(start, start + count, dtype=torch.int64, device=device)
    return _signs(offs, seed & _M31)


def _signs(offs: torch.Tensor, s: int) -> torch.Tensor:
    """The hash of :func:`hashed_signs` on int64 positions; the kernel repeats it line for line (a Triton function
    cannot call this one), and ``tests/gym/test_digest_kernel.py`` holds the two to the same bits."""
    h = (offs & _M31) ^ (((offs >> 31) * 0x2545F491 + s) & _M31)
    h = ((h ^ (h >> 15)) * 0x2C1B3C6D) & _M31
    h = ((h ^ (h >> 12)) * 0x297A2D39) & _M31
    h = h ^ (h >> 15)
    return (((h >> 7) & 1) * 2 - 1).to(torch.int8)


_KERNEL = None


def _kernel():
    """The Triton kernel, compiled on first use (importing triton is left to the first CUDA digest)."""
    global _KERNEL
    if _KERNEL is None:
        import triton
        import triton.language as tl

        @triton.jit(do_not_specialize=["s"])  # the seed changes per evaluation: one compile serves them all
        def _digest_kernel(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.float64)
            h = (offs & 0x7FFFFFFF) ^ (((offs >> 31) * 0x2545F491 + s) & 0x7FFFFFFF)
            h = ((h ^ (h >> 15)) * 0x2C1B3C6D) & 0x7FFFFFFF
            h = ((h ^ (h >> 12)) * 0x297A2D39) & 0x7FFFFFFF
            h = h ^ (h >> 15)
            w = (((h >> 7) & 1) * 2 - 1).to(tl.float64)
            w = tl.where(mask, w, 0.0)
            tl.store(out_ptr + pid * 4 + 0, tl.sum(x, axis=0))
            tl.store(out_ptr + pid * 4 + 1, tl.sum(x * w, axis=0))
            tl.store(out_ptr + pid * 4 + 2, tl.sum(tl.abs(x), axis=0))
            tl.store(out_ptr + pid * 4 + 3, tl.sum(x * x, axis=0))

        _KERNEL = _digest_kernel
    return _KERNEL


def warm_up(device: torch.device) -> None:
    """Compile the kernel for float32 outputs of both size classes Triton specialises on (a multiple of 16 elements
    or not) before any evaluation needs it: a compile is ~1 s of host work (sm_90 target, on a 2-core CPU host), in
    every runner process (each has a private Triton cache). Called by a runner at start-up, before any candidate
    exists; a failure here only leaves the compile to the first digest."""
    for numel in (4096, 4097):
        fused_sums(torch.ones(numel, device=device), 0)
    torch.cuda.synchronize(device)


def fused_sums(flat: torch.Tensor, seed: int) -> torch.Tensor:
    """Sum, +-1-weighted sum (:func:`hashed_signs`), sum of absolute values and sum of squares of a contiguous 1-D
    tensor whose dtype is in :data:`KERNEL_DTYPES`, in float64, on the tensor's device, not synchronised. Right only
    when every element is finite (a finite sum of absolute values shows it)."""
    flat = flat.contiguous()
    n = flat.numel()
    if n == 0:
        return torch.zeros(4, dtype=torch.float64, device=flat.device)
    blocks = -(-n // BLOCK)
    partials = torch.empty((blocks, 4), dtype=torch.float64, device=flat.device)
    _kernel()[(blocks,)](flat, partials, n, seed & _M31, BLOCK=BLOCK, num_warps=8)
    return partials.sum(0)
