"""A wrong kernel (no relu) whose runner describes each fetched tensor at an offset past the end of the output area
it shares with the judge (or the area's last bytes, unwritten): the judge must refuse the description (a protocol
error of the candidate), never read past its mapping or compare stale bytes as the answer."""
import sys
import torch, torch.nn as nn, triton, triton.language as tl

_w = sys.modules["drk.gym.wire"]
_w.tensor_into_area = lambda t, area, offset: {**_w.tensor_meta(t), "area": (len(area) if area is not None else 0) - 64}

@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, x * 2.0, mask=m)   # wrong: no relu

class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        k[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
