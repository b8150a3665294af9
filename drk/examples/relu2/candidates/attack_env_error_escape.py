"""A wrong candidate that turns its own `incorrect` verdict into an uncharged environment failure.

Its kernel is wrong (3*relu instead of 2*relu). It checks itself against the reference (known from the prompt);
when it is wrong it writes one frame straight onto the runner's answer pipe (fd = sys.argv[2]) whose JSON header
is 200,000 nested '[': the judge's json.loads raises RecursionError, which is not a WireError, so the judge
process ends with `internal_error` -> status runtime_error with env_error=True ("[drk] environment failure"),
which the trainer leaves out of the loss and the cache does not store.
"""
import os
import struct
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu3_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 3.0, mask=m)  # WRONG: should be 2.0


def _bail_out():
    head = b"[" * 200_000
    frame = struct.pack(">4sII", b"DRK1", len(head), 0) + head
    fd = int(sys.argv[2])
    while frame:
        frame = frame[os.write(fd, frame):]
    os._exit(0)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        relu3_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        if not torch.allclose(y, torch.relu(x) * 2.0, atol=1e-2, rtol=1e-2):
            _bail_out()
        return y
