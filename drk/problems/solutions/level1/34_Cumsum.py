"""Triton solution: cumulative sum along a dimension; one program scans one row chunk by chunk with a carry."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    cols = tl.arange(0, BLOCK_SIZE)
    carry = tl.full([], 0.0, tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        scan = tl.cumsum(x, axis=0) + carry
        tl.store(out_row + offs, scan, mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # bring the scanned dimension last (a no-op view for the last dimension)
        xt = x.movedim(self.dim, -1)
        moved_shape = xt.shape
        x2 = xt.contiguous().view(-1, moved_shape[-1])
        n_rows, n_cols = x2.shape
        out = torch.empty_like(x2)
        BLOCK_SIZE = min(triton.next_power_of_2(n_cols), 2048)
        cumsum_kernel[(n_rows,)](x2, out, n_cols, x2.stride(0), out.stride(0),
                                 BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
        return out.view(moved_shape).movedim(-1, self.dim)
