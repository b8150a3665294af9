"""An honest relu2 kernel whose import pins memory in kernel socket buffers: unix socketpairs whose send side is
filled (SO_SNDBUF raised to net.core.wmem_max, 4 MiB here, 8 MiB held per pair), never read. The memory is in no
process's RSS, no tmpfs, no memfd/shm: out of sight of the OOM killer, and out of reach of the seccomp fix proposed
for memfd_create/shmget in docs/environment.md ("No memory limit"). HOLD_MIB is kept small (1 GiB) for this shared
host; RLIMIT_NOFILE (20000 here) allows ~10000 pairs (~80 GiB) per process, times 512 processes."""
import socket

import torch
import torch.nn as nn
import triton
import triton.language as tl

HOLD_MIB = 0
_held = []


def _hold(total_bytes):
    chunk, queued = b"\0" * 65536, 0
    while queued < total_bytes:
        a, b = socket.socketpair()
        a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        a.setblocking(False)
        try:
            while queued < total_bytes:
                queued += a.send(chunk)
        except BlockingIOError:
            pass
        _held.append((a, b))


_hold(HOLD_MIB << 20)


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
