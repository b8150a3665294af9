"""Triton solution: MSE loss as a two-stage reduction (per-program partial sums, then a one-program finalize)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sq_diff_partial_kernel(a_ptr, b_ptr, partial_ptr, n_elements, iters_per_program, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for i in range(0, iters_per_program):
        offs = (pid.to(tl.int64) * iters_per_program + i) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n_elements
        a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        d = a - b
        acc += d * d
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def finalize_mean_kernel(partial_ptr, out_ptr, n_partials, n_elements, BLOCK_P: tl.constexpr):
    offs = tl.arange(0, BLOCK_P)
    p = tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(p, axis=0) / n_elements)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        a = predictions.contiguous()
        b = targets.contiguous()
        n = a.numel()
        BLOCK_SIZE = 4096 if n >= 4096 * 1024 else 1024
        n_blocks = triton.cdiv(n, BLOCK_SIZE)
        n_partials = min(n_blocks, 1024)
        iters = triton.cdiv(n_blocks, n_partials)
        n_partials = triton.cdiv(n_blocks, iters)
        partials = torch.empty(n_partials, dtype=torch.float32, device=a.device)
        sq_diff_partial_kernel[(n_partials,)](a, b, partials, n, iters, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
        out = torch.empty((), dtype=torch.float32, device=a.device)
        finalize_mean_kernel[(1,)](partials, out, n_partials, n, BLOCK_P=triton.next_power_of_2(n_partials))
        return out
