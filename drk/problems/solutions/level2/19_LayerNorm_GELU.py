import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layernorm_gelu_kernel(x_ptr, g_ptr, b_ptr, out_ptr, M, D, eps,
                           BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_D)
    c_ok = cols < D
    mask = (rows[:, None] < M) & c_ok[None, :]
    offs = rows[:, None] * D + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=1) / D
    d = tl.where(mask, x - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / D + eps)
    g = tl.load(g_ptr + cols, mask=c_ok, other=0.0)
    b = tl.load(b_ptr + cols, mask=c_ok, other=0.0)
    y = d * rstd[:, None] * g[None, :] + b[None, :]
    y = 0.5 * y * (1.0 + tl.math.erf(y * 0.7071067811865476))
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        D = x.shape[-1]
        x2 = x.reshape(-1, D).contiguous()
        M = x2.shape[0]
        out = torch.empty_like(x2)
        BLOCK_D = triton.next_power_of_2(D)
        BLOCK_R = max(2, min(16, 8192 // BLOCK_D))
        _layernorm_gelu_kernel[(triton.cdiv(M, BLOCK_R),)](
            x2, self.norm.weight, self.norm.bias, out, M, D, float(self.norm.eps),
            BLOCK_R=BLOCK_R, BLOCK_D=BLOCK_D, num_warps=8 if BLOCK_R * BLOCK_D >= 4096 else 4)
        return out.reshape(x.shape)
