"""Attack (attacker review 19): an integer kernel wrong only for values the hidden sets never drew.

Session 28's first integer sets were ``x * k`` (``k`` 2..8, or -1/-2) and ``x + s`` / ``2x + s`` with a positive
shift under twice the largest magnitude: every value they made beyond -1950..4100 was a multiple of 2, 3, 5 or 7 (and
none beyond +-8000). This kernel computes ``3 * x`` instead of ``3 * x + 1`` exactly for values outside -1950..4100
that share no factor with 210, which is 23 % of random int32 values: ``correct`` 5 of 5. The sets now add
``(i + o) mod |k|`` along the tensor (every residue class), and the sign-flipped set always reaches far
(``rounds.perturb_integers``): ``incorrect``.
"""
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_except_far_coprime(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    far = (x < -1950) | (x > 4100)
    coprime = ((x % 2) != 0) & ((x % 3) != 0) & ((x % 5) != 0) & ((x % 7) != 0)
    tl.store(y_ptr + offs, x * 3 + tl.where(far & coprime, 0, 1), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        import torch

        y = torch.empty_like(x)
        n = x.numel()
        affine_except_far_coprime[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
