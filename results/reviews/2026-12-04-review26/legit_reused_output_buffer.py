"""HONEST by KernelBench's rules (each call's output is right when the call returns): relu2 into one output buffer
the module keeps and returns on every call (as a CUDA-graph-style static output would). A later call of the same
round overwrites what an earlier call returned; the judge compares every call of a round after the round."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu2(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=m), 0.0) * 2.0, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = None

    def forward(self, x):
        if self.out is None or self.out.shape != x.shape:
            self.out = torch.empty_like(x)
        n = x.numel()
        relu2[(triton.cdiv(n, 1024),)](x, self.out, n, BLOCK=1024)
        return self.out
