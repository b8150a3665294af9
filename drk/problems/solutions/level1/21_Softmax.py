"""Triton solution: softmax over the last dimension (online max/sum pass, then a normalize pass)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    cols = tl.arange(0, BLOCK_SIZE)
    # pass 1: running maximum and running sum of exp(x - max)
    m_i = tl.full([], float("-inf"), tl.float32)
    l_i = tl.full([], 0.0, tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m_i, tl.max(x, axis=0))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m_i = m_new
    inv_l = 1.0 / l_i
    # pass 2: write the normalized values
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(out_row + offs, tl.exp(x - m_i) * inv_l, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.contiguous().view(-1, shape[-1])
        n_rows, n_cols = x2.shape
        out = torch.empty_like(x2)
        BLOCK_SIZE = min(triton.next_power_of_2(n_cols), 4096)
        softmax_kernel[(n_rows,)](x2, out, n_cols, x2.stride(0), out.stride(0),
                                  BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
        return out.view(shape)
