"""A wrong candidate whose forward raises an exception whose message holds a lone surrogate. The message crosses the
runner->judge->caller JSON pipes escaped (ensure_ascii), so EvalResult.error is a str that UTF-8 cannot encode:
printing the feedback (drk eval), writing a Parquet batch, or serving the result as JSON then fails."""
import torch, torch.nn as nn, triton, triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)

class ModelNew(nn.Module):
    def forward(self, x):
        raise RuntimeError("bad \ud800 input")
