"""Wrong at every element its `forward` returns; right in its process's memory by the time its round is over.

Like `attack_lazy_fetch`, its kernel's outputs are four tolerances off at every element (signs from a hash of the
index), which every call's digest lets through. It does not wait to be asked: it wraps `Runner.op_go` (and
`op_profile`) to rewrite, after the round's last call and before the answer, every output of the round with the
exact answer (the same kernel, exact, from the inputs it kept), and makes the answer's commitment to its outputs'
bytes again. The judge reads outputs from the runner's memory once it has answered and is stopped
(`drk.gym.direct_reads`), so it sees exact values, the ones committed to; `forward` itself never returned them.

What it pays: a second, exact pass over every call's data inside the round, where the judge's clock is: on a GPU its
time beyond the reference's per-call work is charged (`timing_charge_ms`) or flagged (`timing_mismatch`) past the
slack, so it can never be faster than the exact kernel alone. What it gets: `correct` for a `forward` that is wrong
(CPU; a known evasion, `drk.examples.KNOWN_EVASIONS`): no check can see an output between the moment `forward`
returns and the moment code in the same process changes it.
"""
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

_RUNNER = sys.modules["__main__"].Runner
_go, _profile = _RUNNER.op_go, _RUNNER.op_profile
_INPUTS: dict[int, torch.Tensor] = {}  # output's address -> the input it was computed from


@triton.jit
def relu2(x_ptr, y_ptr, n, ERRORS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.maximum(x, 0.0) * 2.0
    if ERRORS:
        sign = tl.where(((offs * 40503) >> 7) % 2 == 0, 1.0, -1.0)
        y = y + 4.0 * sign * (0.01 + 0.01 * tl.abs(y))
    tl.store(y_ptr + offs, y, mask=m)


def _launch(x, y, errors):
    n = x.numel()
    relu2[(triton.cdiv(n, 1024),)](x, y, n, ERRORS=errors, BLOCK=1024)


def _fixed(answering):
    def op(self, req):
        header, blobs = answering(self, req)
        _fix(self)
        if "where" in header:  # the answer's commitment to its outputs' bytes, made again after the rewrite
            header["where"] = sys.modules["drk.gym.direct_reads"].locations(self.last_outputs)
        return header, blobs
    return op


def _fix(runner):
    for outputs in runner.last_outputs:
        for value in outputs:
            source = _INPUTS.get(value.data_ptr()) if isinstance(value, torch.Tensor) else None
            if source is not None:
                _launch(source, value, False)  # exact now, after its digest and before the judge reads it


_RUNNER.op_go, _RUNNER.op_profile = _fixed(_go), _fixed(_profile)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _launch(x, y, True)
        if len(_INPUTS) > 64:
            _INPUTS.clear()
        _INPUTS[y.data_ptr()] = x
        return y
