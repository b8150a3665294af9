"""Decoy (attacker review 13): tells a disabled probe call from its own model's reference count (the probe runner
kept every disabled call's model alive in Runner.disabled_models, before attacker review 13: one reference more than a control call's model)."""
import sys
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

_MIN = [10**9]

class ModelNew(nn.Module):
    def forward(self, x):
        if torch.autograd.profiler._is_profiler_enabled:
            return torch.relu(x) * 2.0
        rc = sys.getrefcount(self)
        _MIN[0] = min(_MIN[0], rc)
        if rc > _MIN[0]:
            return torch.zeros_like(x)
        return torch.relu(x) * 2.0
