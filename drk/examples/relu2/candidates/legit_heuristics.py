import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def relu2_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
        tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0)
    else:
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)


class ModelNew(nn.Module):
    """Honest relu2; @triton.heuristics drops the mask when n is a multiple of the block."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu2_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
