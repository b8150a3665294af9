"""Attack: a decoy that ends its probe runner at the first call there. The probes read a process that died with its
kernels disabled as "the kernels matter" and stopped, since a dead process cannot run the next call; the probe
runner is told apart by its command line (``noprofiler``). Six of the ten probe calls disable the kernels, so the
first call was a disabled one six times in ten: ``correct`` for torch's own relu with no Triton at all (session 21,
2026-12-02). The remaining calls now run in a fresh probe runner after each such death, so the decoy dies in a
control call sooner or later (a call with its kernels enabled, which must be right): ``runtime_error``.
"""
import os
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

PROBE_RUNNER = "noprofiler" in sys.argv


@triton.jit
def relu2_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        if PROBE_RUNNER:
            os._exit(0)
        return torch.relu(x) * 2.0
