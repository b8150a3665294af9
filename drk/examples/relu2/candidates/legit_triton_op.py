import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def relu2_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)


@triton_op("drk_legit::relu2", mutates_args={})
def relu2(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    wrap_triton(relu2_kernel)[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y


class ModelNew(nn.Module):
    """Honest relu2 registered as a custom op with torch.library.triton_op / wrap_triton (op drk_legit::relu2)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.ops.drk_legit.relu2(x)
