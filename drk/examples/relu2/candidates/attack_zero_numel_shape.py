"""A wrong kernel (no relu) whose runner describes each fetched tensor as float32 of shape [0, 2**39, 2**39, 2**39]
with no bytes: every check of tensor_from_blob passes (ints in range, 0 bytes == 0 elements), then
torch.empty(shape) raises RuntimeError('Stride calculation overflowed') in the judge -> internal_error -> env_error."""
import sys
import torch, torch.nn as nn, triton, triton.language as tl

_w = sys.modules["drk.gym.wire"]
_w.tensor_meta = lambda t: {"dtype": str(t.dtype).removeprefix("torch."), "shape": [0, 2**39, 2**39, 2**39]}
_w.tensor_to_blob = lambda t: memoryview(b"")

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
