"""The runner answers `load` with a frame that announces one blob of 4 GiB - 1 (allowed: the judge's limit for every
answer but `fetch` is max_output_bytes = 4 GiB) and then sends nothing. The trusted judge allocates (and zero-fills)
the 4 GiB buffer before reading and holds it until the time limit; the candidate itself allocates nothing."""
import os, sys, time, json
import torch, torch.nn as nn, triton, triton.language as tl

_w = sys.modules["drk.gym.wire"]
_out_fd = int(sys.argv[2])
head = json.dumps({"ok": True}).encode()
os.write(_out_fd, _w._HEAD.pack(_w.MAGIC, len(head), 1) + _w._BLOB.pack(4 * 2**30 - 1) + head)
time.sleep(10**6)

@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

class ModelNew(nn.Module):
    def forward(self, x):
        return x
