"""Honest for multi_alias_problem.py: relu2 in Triton, written into the real half of an interleaved (x, y) buffer so
that the complex output is a view of the same memory as outputs 1 and 2 (strided: y = buf[:, 1])."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu2_pairs(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + 2 * offs, x, mask=m)
    tl.store(out_ptr + 2 * offs + 1, tl.maximum(x, 0.0) * 2.0, mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        n = x.numel()
        buf = torch.empty(n, 2, dtype=x.dtype)
        relu2_pairs[(triton.cdiv(n, 1024),)](x, buf, n, BLOCK=1024)
        y = buf[:, 1]
        return x, y, y, x > 0, torch.view_as_complex(buf)
