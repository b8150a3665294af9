"""A right kernel whose runner describes every fetched output as one float32 tensor filling its whole output area
(256 MiB at offset 0: inside the area's bounds, but far more than a right answer's 16 KiB). Before the judge checked
the size first it copied whatever was described (a 4 GiB description got the judge OOM-killed: an uncharged
env_error); it must refuse the description before copying anything, a protocol error of the candidate: runtime_error.
The runner itself writes nothing there (the area is sparse) and allocates nothing."""
import sys
import torch, torch.nn as nn, triton, triton.language as tl

_w = sys.modules["drk.gym.wire"]
_w.tensor_into_area = lambda t, area, offset: {"dtype": "float32", "shape": [len(area) // 4], "area": 0}

@triton.jit
def relu2(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)

class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu2[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
