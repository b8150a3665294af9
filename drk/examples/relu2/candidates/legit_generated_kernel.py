"""Legitimate: the Triton kernel computes the output, generated from a source template (``exec`` of a string compiled
under a file name of its own, as kernel generators do). Only kernels defined in the candidate's file counted as its
own, so the probes never disabled this one and its right outputs read as torch doing the work: ``hacked`` (attacker
review 9, 2026-12-02). A kernel defined anywhere but an installed library or the problem is the candidate's now."""
import linecache
import torch
import torch.nn as nn
import triton
import triton.language as tl

_SRC = '''
def relu2_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * {scale}, mask=m)
'''


def _make(scale):
    src = _SRC.format(scale=scale)
    name = f"<generated relu2 x{scale}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)  # so inspect.getsource finds it
    ns = {"tl": tl, "triton": triton}
    exec(compile(src, name, "exec"), ns)
    return triton.jit(ns["relu2_kernel"])


relu2_kernel = _make(2.0)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu2_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
