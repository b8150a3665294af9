import torch
import torch.nn as nn
import triton
import triton.language as tl


def make_relu2_kernel():
    """Build the kernel inside a function (a factory, as code generators often do)."""

    @triton.jit
    def relu2(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)

    return relu2


class ModelNew(nn.Module):
    """Honest relu2; the kernel is made by a factory function, once, in __init__."""

    def __init__(self):
        super().__init__()
        self.kernel = make_relu2_kernel()

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        self.kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
