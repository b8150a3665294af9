import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_rows_kernel(x_ptr, y_ptr, M, N, scale, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_N)
    r_ok = rows < M
    mask = r_ok[:, None] & (cols[None, :] < N)
    v = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=float("-inf")) * scale
    m = tl.where(r_ok, tl.max(v, axis=1), 0.0)
    e = tl.exp(v - m[:, None])
    s = tl.where(r_ok, tl.sum(e, axis=1), 1.0)
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], e / s[:, None], mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-2, -1)).contiguous()
        S = scores.shape[-1]
        probs = scores  # softmax in place
        rows = scores.numel() // S
        BLOCK_N = triton.next_power_of_2(S)
        BLOCK_R = max(2, min(16, 8192 // BLOCK_N))
        _softmax_rows_kernel[(triton.cdiv(rows, BLOCK_R),)](
            scores, probs, rows, S, 1.0 / math.sqrt(q.shape[-1]), BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N)
        return torch.matmul(probs, v)
