"""Triton solution: row-wise scaled L2 normalization (row reduction pass, then a scaling pass)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def l2_normalize_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, scale, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    cols = tl.arange(0, BLOCK_SIZE)
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    inv = scale / tl.sqrt(tl.sum(acc, axis=0))
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + offs, x * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        out = torch.empty_like(x)
        BLOCK_SIZE = min(triton.next_power_of_2(n_cols), 4096)
        l2_normalize_kernel[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), self.scale,
                                       BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
        return out
