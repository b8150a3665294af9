import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 256}, num_warps=2),
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 4096}, num_warps=8),
    ],
    key=["n"],
)
@triton.jit
def relu2_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)


class ModelNew(nn.Module):
    """Honest relu2 with @triton.autotune over three block sizes, keyed on n."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu2_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
        return y
