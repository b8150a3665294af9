"""HONEST (conj_imag_problem.py): the complex product computed by a Triton kernel into an (N, 2) float buffer
(real, imaginary), then the reference's own tail, `view_as_complex(buf).conj().imag`. Every element of the returned
tensor is right. But `.conj().imag` is a lazy view with torch's *negative bit* set (values = -memory, stride 2):
the runner's commitment (`direct_reads.location`, a `.contiguous()` copy) hashes the logical values, the judge reads
the raw memory (the un-negated imaginary parts) and they differ."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cmul(a_ptr, b_ptr, c_ptr, d_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m)
    b = tl.load(b_ptr + offs, mask=m)
    c = tl.load(c_ptr + offs, mask=m)
    d = tl.load(d_ptr + offs, mask=m)
    tl.store(out_ptr + 2 * offs, a * c - b * d, mask=m)
    tl.store(out_ptr + 2 * offs + 1, a * d + b * c, mask=m)


class ModelNew(nn.Module):
    def forward(self, a, b, c, d):
        n = a.numel()
        buf = torch.empty(n, 2, dtype=a.dtype, device=a.device)
        cmul[(triton.cdiv(n, 1024),)](a, b, c, d, buf, n, BLOCK=1024)
        return torch.view_as_complex(buf).conj().imag
