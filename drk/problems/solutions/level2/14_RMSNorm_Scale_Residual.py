import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rmsnorm_residual_kernel(x_ptr, r_ptr, w_ptr, out_ptr, M, D, eps,
                             BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_D)
    c_ok = cols < D
    mask = (rows[:, None] < M) & c_ok[None, :]
    offs = rows[:, None] * D + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    r = tl.load(r_ptr + offs, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=c_ok, other=0.0)
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / D + eps)
    tl.store(out_ptr + offs, x * inv[:, None] * w[None, :] + r, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x, residual):
        D = x.shape[-1]
        x2 = x.reshape(-1, D).contiguous()
        r2 = residual.reshape(-1, D).contiguous()
        M = x2.shape[0]
        out = torch.empty_like(x2)
        BLOCK_D = triton.next_power_of_2(D)
        BLOCK_R = max(2, min(16, 8192 // BLOCK_D))
        _rmsnorm_residual_kernel[(triton.cdiv(M, BLOCK_R),)](
            x2, r2, self.weight, out, M, D, float(self.eps),
            BLOCK_R=BLOCK_R, BLOCK_D=BLOCK_D, num_warps=8 if BLOCK_R * BLOCK_D >= 4096 else 4)
        return out.reshape(x.shape)
