import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _scale_softmax_rows_kernel(x_ptr, y_ptr, M, N, scale, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
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
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        h = F.linear(x, self.linear.weight, self.linear.bias).contiguous()
        M, N = h.shape
        y = h  # the Triton pass works in place on the torch result
        BLOCK_N = triton.next_power_of_2(N)
        BLOCK_R = max(2, min(16, 8192 // BLOCK_N))
        _scale_softmax_rows_kernel[(triton.cdiv(M, BLOCK_R),)](
            h, y, M, N, float(self.scale), BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N)
        return y
