"""Legitimate: an honest Triton relu2 launched in chunks of at most four blocks, whose host loop launches the next
chunk from a device counter the kernel advances (``tl.atomic_add``): the shape of work queues, frontier loops and
persistent-chunk launches. With its kernels disabled the counter never moves and the loop never ends: each disabled
call is stuck, which is what "the kernels matter" means. Judged ``timeout`` 4 runs in 4 before such a call was bounded
(``judge.DISABLED_CALL_FACTOR`` x the longest control call, at least ``DISABLED_CALL_FLOOR_S``; attacker review 11):
``correct`` now, each stuck probe process replaced for the next calls.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024
MAX_PROGRAMS = 4


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
        start = 0
        while start < n:  # progress as the device reports it
            grid = (min(MAX_PROGRAMS, triton.cdiv(n - start, BLOCK)),)
            relu2_chunk[grid](x, y, done, start, n, BLOCK=BLOCK)
            start = int(done.item())
        return y
