"""A wrong kernel (no relu) whose runner describes fetched tensors with an unhashable dtype: the judge's
tensor_from_blob does `meta["dtype"] not in DTYPES` -> TypeError (not a WireError) -> internal_error -> env_error."""
import sys
import torch, torch.nn as nn, triton, triton.language as tl

_w = sys.modules["drk.gym.wire"]
_orig_meta = _w.tensor_meta
_w.tensor_meta = lambda t: {"dtype": [str(t.dtype).removeprefix("torch.")], "shape": list(t.shape)}

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
