"""Legitimate: an honest Triton relu2 whose kernel also writes the index each element is gathered from (the identity
here), and whose torch ``gather`` then reads through it. With its kernels disabled the index tensor is the judge's
poison, out of range: on a GPU that is a device-side assert, and a CUDA fault stays with the process's context, so
every later call of that process fails too. This module plays the GPU's part on any device (it raises CUDA's message
and fails every later call of its process), so the CPU tests see it. Before a disabled call's CUDA fault replaced the
probe process, the next control call failed: ``runtime_error`` (attacker review 11, reasoned on the GPU); ``correct``
now.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

_faulted = False  # the process's "CUDA context" is broken


@triton.jit
def relu2_with_index(x_ptr, y_ptr, idx_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)
    tl.store(idx_ptr + offs, offs.to(tl.int64), mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        global _faulted
        if _faulted:
            raise RuntimeError("CUDA error: an illegal memory access was encountered (sticky from an earlier call)")
        flat = x.contiguous().view(-1)
        y = torch.empty_like(flat)
        idx = torch.empty(flat.numel(), dtype=torch.int64, device=x.device)
        n = flat.numel()
        relu2_with_index[(triton.cdiv(n, 1024),)](flat, y, idx, n, BLOCK=1024)
        if bool(((idx < 0) | (idx >= n)).any()):  # what the GPU's bounds assert sees
            _faulted = True
            raise RuntimeError("CUDA error: device-side assert triggered")
        return torch.gather(y, 0, idx).view_as(x)
