import torch
import torch.nn as nn
import triton
import triton.language as tl


class Relu2Kernels:
    """Kernels kept as class attributes."""

    @staticmethod
    @triton.jit
    def relu2(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)


class ModelNew(nn.Module):
    """Honest relu2; the kernel is a staticmethod of a helper class."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        Relu2Kernels.relu2[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
