"""Attacker review 26 (session 32): never `correct` (the answer's commitment catches its rewrite: `runtime_error`, or
`incorrect` when the stop lands first); the freeze now ends only after two walks alike, all stopped.

ATTACK (relu2), on the freeze: a helper process that keeps *replacing itself* (fork, then the parent exits at once)
is never stopped, so the judge's freeze (`SandboxMemory.freeze`) returns while it runs: every pid the judge listed
is stopped or gone by its check, and the newest generation was never listed.

- Outputs are views of a MAP_SHARED file in the sandbox's /dev/shm (as attack_zombie_leader), so the helper can
  write them. The kernel is four tolerances off at every element (attack_lazy_fetch's).
- `Runner.op_go`/`op_profile` are wrapped to bump a counter as a round starts: the helper hops from then on. Before
  each answer a wrapped `drk.gym.wire.send_frame` writes the round's slots into the shared header, and, as
  soon as /proc says the runner is stopped (the judge's freeze has landed), a running generation rewrites every slot
  of the round exactly, again and again while the runner stays stopped. It writes nothing while the runner runs.
  Four independent hoppers: the freeze must catch every one.
- HOP = False (control_no_hop.py): the same helper without hopping: stopped with everything else.

What it shows: the freeze is not airtight. With the answer's commitment (SHA-256) the rewrite is caught
(`runtime_error`: "changed after the answer"); without it this would be `correct` (review 25's findings)."""
import mmap
import os
import subprocess
import sys
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl

HOP = True
HOPPERS = 4  # independent hoppers: the freeze has to catch every one
_WIRE = sys.modules["drk.gym.wire"]
_send = _WIRE.send_frame
SLOT, NSLOTS, HEAD = 4096, 256, 65536
_PATH = f"/dev/shm/r26_{os.getpid()}"
with open(_PATH, "wb") as f:
    f.truncate(HEAD + SLOT * NSLOTS * 4)
_FD = os.open(_PATH, os.O_RDWR)
_MAP = mmap.mmap(_FD, HEAD + SLOT * NSLOTS * 4)
_H = torch.frombuffer(_MAP, dtype=torch.int64, count=HEAD // 8)
_DATA = torch.frombuffer(_MAP, dtype=torch.float32, offset=HEAD)
_RING = {"next": 0, "round": []}

_HELPER = r'''
import mmap, os, sys, time
import numpy as np
path, runner, hop = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
SLOT, HEAD = 4096, 65536
fd = os.open(path, os.O_RDWR)
m = mmap.mmap(fd, os.fstat(fd).st_size)
H = np.frombuffer(m, dtype=np.int64, count=HEAD // 8)
data = np.frombuffer(m, dtype=np.float32, offset=HEAD)
offs = np.arange(SLOT, dtype=np.int64)
s = np.where(((offs * 40503) >> 7) % 2 == 0, 1.0, -1.0).astype(np.float32)
a, b = (0.04 * s).astype(np.float32), (1.0 + 0.04 * s).astype(np.float32)

def stopped():
    try:
        with open(f"/proc/{runner}/stat", "rb") as h:
            return h.read().rsplit(b")", 1)[1].split()[0] in (b"T", b"t")
    except OSError:
        return False

H[4000] = 1  # ready
seen = int(H[3])
while True:
    if int(H[3]) == seen:
        time.sleep(0.0001)
        continue
    seen = int(H[3])
    until = time.monotonic() + 2.0
    while time.monotonic() < until:
        if stopped() and int(H[0]) == seen:  # stopped after this round's answer
            slots = [(int(H[2 + k]), int(H[1024 + k])) for k in range(int(H[1]))]
            fixed = [(data[s * SLOT: s * SLOT + n] - a[:n]) / b[:n] for s, n in slots]
            while stopped():  # written again and again while the runner stays stopped: any read after lands on it
                for (s, n), f in zip(slots, fixed):
                    data[s * SLOT: s * SLOT + n] = f
            H[2000] += 1  # rewrites made while the runner was stopped
            break
        if hop:
            if os.fork():
                os._exit(0)  # the parent goes; the child (a pid the judge has not listed yet) goes on
            H[2001] += 1
'''


def send_frame(fd, header, blobs=()):
    where = header.get("where") if isinstance(header, dict) else None
    slots, _RING["round"] = _RING["round"], []
    if where:
        for k, (slot, n) in enumerate(slots[:1000]):
            _H[2 + k], _H[1024 + k] = slot, n
        _H[1] = min(len(slots), 1000)
        _H[0] = _H[3]
    _send(fd, header, blobs)


@triton.jit
def relu2(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.maximum(x, 0.0) * 2.0
    sign = tl.where(((offs * 40503) >> 7) % 2 == 0, 1.0, -1.0)
    y = y + 4.0 * sign * (0.01 + 0.01 * tl.abs(y))
    tl.store(y_ptr + offs, y, mask=m)


_RUNNER = sys.modules["__main__"].Runner


def _starting(op):
    def wrapped(self, req):
        _H[3] += 1  # a round starts: the helper hops from now until the runner is stopped after its answer
        return op(self, req)
    return wrapped


_RUNNER.op_go, _RUNNER.op_profile = _starting(_RUNNER.op_go), _starting(_RUNNER.op_profile)
_PROCS = [subprocess.Popen([sys.executable, "-c", _HELPER, _PATH, str(os.getpid()), "1" if HOP else "0"],
                           stdin=subprocess.DEVNULL) for _ in range(HOPPERS)]
_WIRE.send_frame = send_frame
while int(_H[4000]) != 1:
    time.sleep(0.005)
time.sleep(0.5)  # all of them up


class ModelNew(nn.Module):
    def forward(self, x):
        n = x.numel()
        if n > SLOT:
            raise RuntimeError("this demonstration keeps outputs of up to 4096 elements")
        slot = _RING["next"] % NSLOTS
        _RING["next"] += 1
        y = _DATA[slot * SLOT: slot * SLOT + n].view(x.shape)
        relu2[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        _RING["round"].append((slot, n))
        return y
