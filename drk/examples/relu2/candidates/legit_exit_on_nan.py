"""Legitimate: an honest Triton relu2 that ends its process when its output holds a NaN (a guard some production
code keeps). With its kernels disabled the output is the judge's NaN poison, so its probe runner dies in every
disabled call; each death counts as "the kernels matter" for that call, and the remaining calls run in a fresh probe
runner (session 21): ``correct``, with up to six probe runners started.
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu2_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu2_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        if torch.isnan(y).any():
            os._exit(3)
        return y
