import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_tanh_bias_kernel(x_ptr, b_ptr, out_ptr, n_elements, F, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs % F, mask=mask, other=0.0)
    g = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    t = 2.0 * tl.sigmoid(2.0 * g) - 1.0  # tanh(g)
    tl.store(out_ptr + offs, t + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(num_features) * 0.1)

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        _gelu_tanh_bias_kernel[(triton.cdiv(n, BLOCK),)](x, self.bias, out, n, self.bias.numel(), BLOCK=BLOCK)
        return out
