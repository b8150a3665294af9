"""Legitimate: an honest Triton relu2 launched in chunks of at most four blocks, whose host loop launches the next
chunk from a device counter the kernel advances (``tl.atomic_add``): the shape of work queues, frontier loops and
persistent-chunk launches. With its kernels disabled the counter never moves and the loop never ends: each disabled
call is stuck, which is what "the kernels matter" means. Judged ``timeout`` 4 runs in 4 before such a call was bounded
(``judge.DISABLED_CALL_FACTOR`` x the longest control call, at least ``DISABLED_CALL_FLOOR_S``; attacker review 11):
``correct`` now, each stuck probe process replaced for the next calls.

On an H200 (2026-12-03) its first form, chunks of four blocks at the GPU's 64M elements, made 16,384 synchronised
launches per call (~0.5 s): ``timeout`` under ``benchmarks/examples_check.py``'s 90 s, its own time spent in
correctness (32 s) and the probes (63 s: six disabled calls stuck to 10 x its slowest control call, each followed by
a fresh probe runner). The chunks now grow with the input, at most 64 launches a call: the same loop, as a work queue
would run it.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024
MIN_PROGRAMS, MAX_LAUNCHES = 4, 64


@triton.jit
def relu2_chunk(x_ptr, y_ptr, done_ptr, start, n, BLOCK: tl.constexpr):
    offs = start + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)
    tl.atomic_add(done_ptr, tl.sum(m.to(tl.int32), axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        done = torch.zeros(1, dtype=torch.int32, device=x.device)
        programs = max(MIN_PROGRAMS, triton.cdiv(n, BLOCK * MAX_LAUNCHES))
        start = 0
        while start < n:  # progress as the device reports it
            grid = (min(programs, triton.cdiv(n - start, BLOCK)),)
            relu2_chunk[grid](x, y, done, start, n, BLOCK=BLOCK)
            start = int(done.item())
        return y
