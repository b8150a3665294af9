"""Reads each call's request from its own runner, so it knows which calls are on hidden input sets.

The runner is in the candidate's process: this module wraps `Runner.op_prepare` (which every round's calls pass
through, a timed round's too) to keep the round's call descriptions, each with its perturbation (`scale`, `shift`,
`sparse`). Its kernel is exact on every call whose inputs are perturbed and takes a shortcut on the others: halving
the answer wherever |x| > 7, which `get_inputs()`' randn never reaches. The hidden sets exist to catch exactly such a
kernel, and cannot: a known evasion (`drk.examples.KNOWN_EVASIONS`). Closing it needs the calls' descriptions kept
out of the candidate's process (inputs made by a trusted process and handed over as data).
"""
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

_RUNNER = sys.modules["__main__"].Runner
_prepare = _RUNNER.op_prepare
_ROUND = {"calls": [], "next": 0}


def _op_prepare(self, req):
    _ROUND["calls"], _ROUND["next"] = list(req.get("calls") or []), 0
    return _prepare(self, req)


_RUNNER.op_prepare = _op_prepare


def _on_hidden_set() -> bool:
    calls, i = _ROUND["calls"], _ROUND["next"]
    _ROUND["next"] += 1
    if i >= len(calls):
        return True  # a call it cannot place: be exact
    call = calls[i]
    return call.get("scale", 1.0) != 1.0 or call.get("shift", 0.0) != 0.0


@triton.jit
def relu2(x_ptr, y_ptr, n, SHORTCUT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.maximum(x, 0.0) * 2.0
    if SHORTCUT:
        y = tl.where(tl.abs(x) > 7.0, y * 0.5, y)
    tl.store(y_ptr + offs, y, mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu2[(triton.cdiv(n, 1024),)](x, y, n, SHORTCUT=not _on_hidden_set(), BLOCK=1024)
        return y
