import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _swish_center_rows_kernel(x_ptr, y_ptr, M, N, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    v = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
    v = v * tl.sigmoid(v)
    mean = tl.sum(tl.where(mask, v, 0.0), axis=1) / N
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], v - mean[:, None], mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        h = F.linear(x, self.linear.weight, self.linear.bias).contiguous()
        M, N = h.shape
        y = h  # the Triton pass works in place on the torch result
        BLOCK_N = triton.next_power_of_2(N)
        BLOCK_R = max(2, min(16, 8192 // BLOCK_N))
        _swish_center_rows_kernel[(triton.cdiv(M, BLOCK_R),)](h, y, M, N, BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N)
        return y
