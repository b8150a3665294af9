import torch, torch.nn as nn, triton, triton.language as tl
@triton.jit
def affine_int(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, x * 3 + 1, mask=m)
class ModelNew(nn.Module):
    """3 * x + 1 on int32 in one Triton kernel."""
    def __init__(self):
        super().__init__()
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        affine_int[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
