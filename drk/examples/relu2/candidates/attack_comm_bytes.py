"""Attacker review 25 (session 32): an uncharged `env_error` 2 of 2 before /proc was read as bytes; now its wrong
kernel is `incorrect`.

A plainly wrong kernel (relu(x) instead of 2 relu(x)) whose runner renames itself to two bytes that are not UTF-8.

`direct_reads._state` reads /proc/<pid>/stat as text (UTF-8, strict) and catches only OSError/IndexError: the
process name (comm, which any process may set for itself through /proc/self/comm) makes it raise
UnicodeDecodeError inside `SandboxMemory.freeze`, right after the first `go` answer, before any output is
compared. The exception is not a status: the evaluation ends as an environment failure (env_error: never charged,
never a gradient, never cached) instead of `incorrect`. Works for any candidate, at its first round.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

with open("/proc/self/comm", "wb") as handle:
    handle.write(bytes([0xFF, 0xFE]))


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
