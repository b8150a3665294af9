"""Crashes mid-forward after printing one 64 KiB line of 'File "' repeated.

The judge reads a crashed runner's last output to point at the candidate's line. Its pattern once backtracked over
such a line, quadratically: ~6-7 s of the trusted judge's CPU per crash instead of ~0.25 s (attacker review,
2026-12-02). The output is now parsed in linear time (``drk.gym.judge.candidate_frames``); the verdict is the
crash's, `runtime_error`, either way.
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
        relu2_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        os.write(2, b'File "' * 10920)
        os._exit(3)
