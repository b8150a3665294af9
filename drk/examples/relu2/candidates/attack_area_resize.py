"""A wrong kernel (no relu) whose runner tries to resize the output area it shares with the judge, through the memfd
descriptor it was given (argv 'area=N'): on import it tries to grow it (fallocate and ftruncate past its size: memory
that no process's footprint shows and that killing the runner does not free), and after writing each fetched output
it tries to shrink it to nothing, so that the judge's read of the answer faults (SIGBUS: the judge dies, an uncharged
env_error). The area's size is sealed: every attempt fails (EPERM), the judge reads the answer whole and judges the
candidate on its own work: incorrect. (Filling the area within its size is allowed: that is bounded by its 256 MiB.)"""
import os, sys
import torch, torch.nn as nn, triton, triton.language as tl

_w = sys.modules["drk.gym.wire"]
_fd = next((int(a[5:]) for a in sys.argv if a.startswith("area=")), -1)

def _try(resize, *args):
    try:
        resize(_fd, *args)
    except OSError as exc:
        print(f"{resize.__name__}{args}: {exc}", file=sys.stderr)

if _fd >= 0:
    _try(os.posix_fallocate, _w.OUTPUT_AREA_BYTES, 2**20)  # grow by 1 MiB: the seal refuses any growth
    _try(os.ftruncate, _w.OUTPUT_AREA_BYTES + 2**20)
    _into = _w.tensor_into_area
    def _into_then_shrink(t, area, offset):
        meta = _into(t, area, offset)
        _try(os.ftruncate, 0)
        return meta
    _w.tensor_into_area = _into_then_shrink

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
