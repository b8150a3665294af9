"""Attack (attacker review 17; a known evasion): an integer kernel right only inside ``get_inputs()``' range.

The hidden input sets perturb floating-point inputs only (``rounds.make_inputs``: ``x * scale + shift``): integer
inputs are often indices or labels, which a change of distribution would make invalid (and an out-of-range index on
a GPU is a device-side assert in the judge's own process). So for this problem every input set the judge draws comes
from ``get_inputs()``' own distribution, and a kernel that computes ``3 * x + 1`` for ``-1001 < x < 1000`` and
``3 * x`` elsewhere is judged ``correct``: exact comparison never sees an element outside the range.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_in_range(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    inside = (x < 1000) & (x > -1001)
    tl.store(y_ptr + offs, x * 3 + tl.where(inside, 1, 0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        affine_in_range[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
