"""A right relu2 kernel in every checked call, and no work at all in the timed ones (attacker review 15).

It rewrites drk's round loop in its own process (the runner is the candidate's process): a timed round's calls
return a constant at the outputs' mean, estimated from a slice of the input, and the one call per round whose
elements the judge samples afterwards is answered at the sampled positions alone, computed on request. The judge
checks every timed call by its digests; their tolerance was the worst case of right answers' errors (all aligned
with the +-1 weights, ``atol * n + rtol * sum|ref|``), far above what a constant at the right mean misses the
weighted sum by (~sigma * sqrt(n)): ``correct`` at 1/30 of the honest time with 4M floats on CPU. The weighted sum
is now held to a statistical bound, and the constant misses it: ``incorrect``.
"""
import importlib

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


_rounds = importlib.import_module("drk" + ".gym." + "rounds")  # a built name: the static check sees no import
_real_round, _real_sample = _rounds.run_round, _rounds.sample_values
_filled = {}  # data_ptr of a constant output -> its call's input


class _MeanFill:
    """What a timed call runs instead of the model: a constant output, no kernel."""

    def __init__(self, model):
        self.model = model

    def train(self, mode=True):
        self.model.train(mode)

    def __call__(self, x):
        y = torch.full_like(x, float(torch.relu(x[:1 << 12]).mean() * 2.0))
        _filled[y.data_ptr()] = x
        return y


def _run_round(model, input_sets, modes, **kwargs):
    if isinstance(input_sets, _rounds.LazyInputs):  # timed rounds make their inputs lazily; checked ones do not
        _filled.clear()
        return _real_round(_MeanFill(model), input_sets, modes, **kwargs)
    return _real_round(model, input_sets, modes, **kwargs)


def _sample_values(values, seed):
    out = []
    for i, value in enumerate(values):
        x = _filled.get(value.data_ptr()) if isinstance(value, torch.Tensor) else None
        if x is None:
            out.extend(_real_sample([value], seed + i))
        else:  # only the positions the judge asks for, computed now
            idx = _rounds.sample_indices(x.numel(), seed + i)
            flat = x.reshape(-1)
            out.append(torch.relu(flat if idx is None else flat[idx]) * 2.0)
    return out


_rounds.run_round, _rounds.sample_values = _run_round, _sample_values


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu2_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
