import torch, torch.nn as nn, triton, triton.language as tl


@triton.jit
def affine_int(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = x * 3 + 1
    y = tl.where((y >= 100) | (y <= -100), x * 3, y)  # the +1 dropped wherever |y| >= 100 (~97 % of elements)
    tl.store(y_ptr + offs, y, mask=m)


class ModelNew(nn.Module):
    """An integer answer off by one almost everywhere: within the floats' tolerance (0.01 + 1 % of |y|) wherever
    |y| >= 100, so ``correct`` until integers were compared exactly (attacker review 16)."""

    def forward(self, x):
        y = torch.empty_like(x)
        affine_int[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
