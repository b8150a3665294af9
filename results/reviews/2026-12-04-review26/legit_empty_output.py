"""HONEST (outliers_problem.py): relu2 by a Triton kernel; the outliers as the reference selects them (an empty
tensor here). torch gives every empty tensor data_ptr() == 0, and `direct_reads.tensor_at` refuses ptr 0 as
"malformed" before it looks at numel."""
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
        return y, x[x.abs() > 1e6]
