"""Triton solution: Frobenius-norm normalization rescaled to unit RMS.

Partial sums of squares, a one-program finalize, then a scaling pass.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sumsq_partial_kernel(x_ptr, partial_ptr, n_elements, iters_per_program, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for i in range(0, iters_per_program):
        offs = (pid.to(tl.int64) * iters_per_program + i) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0).to(tl.float32)
        acc += x * x
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def norm_finalize_kernel(partial_ptr, norm_ptr, n_partials, n_elements, BLOCK_P: tl.constexpr):
    offs = tl.arange(0, BLOCK_P)
    p = tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    # ||x||_F / sqrt(numel) = sqrt(mean(x^2))
    tl.store(norm_ptr, tl.sqrt(tl.sum(p, axis=0) / n_elements))


@triton.jit
def scale_kernel(x_ptr, norm_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    inv = 1.0 / tl.load(norm_ptr)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n = x.numel()
        BLOCK_SIZE = 4096 if n >= 4096 * 1024 else 1024
        n_blocks = triton.cdiv(n, BLOCK_SIZE)
        n_partials = min(n_blocks, 1024)
        iters = triton.cdiv(n_blocks, n_partials)
        n_partials = triton.cdiv(n_blocks, iters)
        partials = torch.empty(n_partials, dtype=torch.float32, device=x.device)
        norm = torch.empty(1, dtype=torch.float32, device=x.device)
        sumsq_partial_kernel[(n_partials,)](x, partials, n, iters, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
        norm_finalize_kernel[(1,)](partials, norm, n_partials, n, BLOCK_P=triton.next_power_of_2(n_partials))
        out = torch.empty_like(x)
        scale_kernel[(n_blocks,)](x, norm, out, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
        return out
