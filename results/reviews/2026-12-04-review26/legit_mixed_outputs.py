"""HONEST (mixed_outputs_problem.py): relu2 by a Triton kernel, then the reference's own tail of views and casts."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu2(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=m), 0.0) * 2.0, mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu2[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        m = y.view(64, -1)
        return (y, m, y.unsqueeze(0).expand(3, -1), m.t(), y[::2], y.sum(), x > 0, torch.argmax(x),
                (x * 10).to(torch.int32), y.to(torch.bfloat16), torch.complex(y, x), x)
