"""An honest relu2 kernel whose runner claims, in its `profile` answer, that the profiled output is a float32 tensor
of 2**45 elements with stride 0 at the real output's address.

`direct_reads.SandboxMemory.read` with `sampled` accepts any claimed numel above rounds.SAMPLE_ELEMENTS when the
reference's output is that large, and `tensor_at` bounds the *span* read (1 element here: stride 0) but then
materialises the claimed shape (`as_strided(...).contiguous()`): the judge itself allocates numel x 4 bytes.
2**45 elements (128 TiB) fail at once (no memory used; shows the error path); a size the host can give (e.g. 2**32,
16 GiB) would be allocated and filled in the judge. Needs a problem whose CPU output exceeds 65,536 elements
(relu2_big_problem.py: relu2 with CPU N = 2**17).
"""
import os
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

_RUNNER = sys.modules["__main__"].Runner
_profile = _RUNNER.op_profile
HUGE = 1 << 45  # 128 TiB of float32: fails at once (attack_where_stride0_1gib.py: 2**28, allocated)


def op_profile(self, req):
    header, blobs = _profile(self, req)
    where = header.get("where")
    if where and where[0] and "ptr" in where[0][0]:
        where[0][0] = {"ptr": where[0][0]["ptr"], "strides": [0], "shape": [HUGE], "dtype": "float32"}
    return header, blobs


_RUNNER.op_profile = op_profile


@triton.jit
def relu2(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu2[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        return y
