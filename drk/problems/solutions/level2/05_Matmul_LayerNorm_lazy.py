import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _layernorm_rows_kernel(x_ptr, g_ptr, beta_ptr, y_ptr, M, N, eps, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_N)
    c_ok = cols < N
    mask = (rows[:, None] < M) & c_ok[None, :]
    v = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
    mean = tl.sum(v, axis=1) / N
    d = tl.where(mask, v - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / N + eps)
    g = tl.load(g_ptr + cols, mask=c_ok, other=0.0)
    beta = tl.load(beta_ptr + cols, mask=c_ok, other=0.0)
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], d * rstd[:, None] * g[None, :] + beta[None, :], mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x):
        h = F.linear(x, self.linear.weight, self.linear.bias).contiguous()
        M, N = h.shape
        y = h  # the Triton pass works in place on the torch result
        BLOCK_N = triton.next_power_of_2(N)
        BLOCK_R = max(2, min(16, 8192 // BLOCK_N))
        _layernorm_rows_kernel[(triton.cdiv(M, BLOCK_R),)](
            h, self.norm.weight, self.norm.bias, y, M, N, float(self.norm.eps), BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N)
        return y
