"""A WRONG relu2 kernel (no relu) that makes its verdict's error text ~17 MB (and the judge's result message ~21 MB).

The runner answers the first correctness round with an output digest whose "shape" is a list holding one string of
~4.19 M DEL characters (0x7f), written raw (json.dumps(ensure_ascii=False): strict JSON allows a raw 0x7f), inside
the 4 MiB header limit. drk.gym.judge._layout_mismatch formats `tuple(have[1])` -- a repr -- into the Verdict's
error without any bound: every DEL becomes the 4 characters `\\x7f` (and 5 bytes once the judge JSON-encodes it)."""
import json
import struct
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

_w = sys.modules["drk.gym.wire"]
_real_send = _w.send_frame
_done = []


def _send(fd, header, blobs=()):
    if not _done and isinstance(header, dict) and "times_ms" in header and header.get("outputs"):
        _done.append(1)
        header = dict(header)
        outs = [list(o) for o in header["outputs"]]
        first = dict(outs[0][0])
        first["shape"] = [""]
        outs[0][0] = first
        header["outputs"] = outs
        base = len(json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode())
        first["shape"] = ["\x7f" * (_w.MAX_HEADER_BYTES - base - 16)]
        head = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode()
        data = _w._HEAD.pack(_w.MAGIC, len(head), 0) + head
        view = memoryview(data)
        import os
        while view:
            view = view[os.write(fd, view):]
        return
    return _real_send(fd, header, blobs)


_w.send_frame = _send


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
