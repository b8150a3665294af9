"""Attack (found by the attacker review, issue 11): a decoy whose import outlasts the probes' own time limit.

Importing takes 16 s. The probes used to get max(10 s, timeout_s / 4) of their own (15 s under the tests' 60 s
limit) and read a probe that ran out of it as "the kernels mattered": this decoy was judged correct. The probes now
share the candidate's time limit and a probe out of time is the candidate's timeout, so the probe runs and catches
the decoy.
"""
import time

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


time.sleep(16)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0
