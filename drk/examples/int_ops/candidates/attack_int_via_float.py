"""Attack (attacker review 20): integer arithmetic routed through float32, exact only up to 2**24 in magnitude.

A realistic bug, not a contrived one: the kernel loads its int32 input, converts it to float32 and back, then
computes ``3 * x + 1``, so every odd value beyond 2**24 comes back off by one (96 % of random int32 values wrong).
While the hidden sets' integers reached at most ~2**24 (``rounds.INTEGER_REACH``), it was ``correct`` 3 of 3; the
sign-flipped set now reaches a quarter of the dtype's range in every evaluation: ``incorrect``.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_through_float(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    tl.store(y_ptr + offs, x.to(tl.int32) * 3 + 1, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        affine_through_float[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
