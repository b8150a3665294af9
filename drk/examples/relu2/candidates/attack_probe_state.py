"""Attack: a decoy that recognises the judge's probe variants by process state.

When the probes ran in the candidate's own process, every variant was imported after the real module: a flag left
in the process's environment by the first import told the variants apart, and they returned zeros, so the probes concluded the
kernels mattered. Each evaluation now runs the variants in a process of their own, where the variant is the first
import: it returns the reference like the real module, and the probe catches the decoy.
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

_SECOND_IMPORT = os.environ.get("RELU2_SEEN") == "1"
os.environ["RELU2_SEEN"] = "1"


@triton.jit
def relu2_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        if _SECOND_IMPORT:
            return torch.zeros_like(x)
        return torch.relu(x) * 2.0
