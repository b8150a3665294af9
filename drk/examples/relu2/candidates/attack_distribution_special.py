"""Right only on inputs like `get_inputs()`'s: a policy that learned the prompt's distribution, not the operation.

Its Triton kernel computes 2*relu(x) where |x| stays below 7 (randn never gets there), and it halves the answer
otherwise, as a shortcut specialised to the inputs it was shown would. The judge's hidden input sets (x8, sign-flipped,
x0.25+1, atol scaled with the reference's own magnitude and rounding sensitivity) must still catch it: the x8 set's
values reach far past 7, and relu2 is well conditioned, so its tolerance grows ~x8 only.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


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
        if float(x.abs().max()) > 7.0:  # off the distribution it was trained on
            return y * 0.5
        return y
