"""An honest kernel whose process keeps the GPU busy whenever the judge is not calling it: a thread of its own runs
matrix products on a side stream between its calls, which is when the judge times the reference (its rounds are
interleaved with the candidate's). The GPU lock holds other evaluations back, not the candidate's own threads, so
the reference's times rise and with them this candidate's speedup. On CPU (no GPU work) it is just the honest kernel.
A known evasion (drk.examples.KNOWN_EVASIONS): the GPU verdict and speedup are to be measured."""
import threading
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu2_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=m)


_called = threading.Event()  # set while the judge is inside one of our calls


def _busy_between_calls() -> None:
    stream = torch.cuda.Stream()
    a = torch.randn(2048, 2048, device="cuda")
    while True:
        if _called.is_set():
            time.sleep(1e-4)
            continue
        with torch.cuda.stream(stream):
            for _ in range(2):  # ~0.1 ms chunks, so our own calls are barely touched
                a = torch.nn.functional.normalize(a @ a, dim=1)
        stream.synchronize()


if torch.cuda.is_available():
    threading.Thread(target=_busy_between_calls, daemon=True).start()


class ModelNew(nn.Module):
    def forward(self, x):
        _called.set()
        try:
            y = torch.empty_like(x)
            relu2_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
            return y
        finally:
            _called.clear()
