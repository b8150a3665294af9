"""Hidden-set calls inside the timing rounds (``EvalConfig.timing_hidden_rate``, attacker review 21).

A kernel specialised to ``get_inputs()``' distribution is caught by the hidden input sets only if it cannot tell
which calls are checked on them. It can count its calls: exact in every correctness call, its shortcut in the timed
calls after them, whose inputs were all drawn like ``get_inputs()``'s. The judge now inserts hidden-set calls at
secret slots of the timing rounds, checked like every timed call and left out of both sides' timing samples.
"""

import random

import pytest

from drk.examples import example_candidate, example_problem
from drk.gym import EvalConfig, evaluate
from drk.gym.judge import with_hidden_calls
from drk.gym.rounds import CallSpec

#: Exact in its first 11 calls (the correctness calls), then a shortcut that is right only on inputs drawn like
#: get_inputs()' (mean ~0, std ~1): every hidden set moves the mean or the std (x2-x8; x-2..-0.125; x0.125..2 +-2).
EXACT_WHILE_CHECKED = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu2_kernel(x_ptr, y_ptr, n, SHORTCUT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.maximum(x, 0.0) * 2.0
    if SHORTCUT:
        y = y * 0.5
    tl.store(y_ptr + offs, y, mask=m)


_CALLS = [0]


class ModelNew(nn.Module):
    def forward(self, x):
        _CALLS[0] += 1
        off_distribution = abs(float(x.mean())) > 0.1 or abs(float(x.std()) - 1.0) > 0.1
        shortcut = _CALLS[0] > 11 and off_distribution
        y = torch.empty_like(x)
        n = x.numel()
        relu2_kernel[(triton.cdiv(n, 1024),)](x, y, n, SHORTCUT=shortcut, BLOCK=1024)
        return y
'''


def test_hidden_calls_are_inserted_at_drawn_slots_with_their_sets_tolerance():
    specs = [CallSpec(i) for i in range(10)]
    sets = [(4.0, 0.0, 4.5), (-0.5, 0.0, 1.0), (0.3, 1.5, 1.2)]
    seeds = iter(range(1000, 100000))
    same, scales = with_hidden_calls(specs, sets, 0.0, random.Random(0), lambda: next(seeds))
    assert same == specs and scales == [1.0] * 10
    none, _ = with_hidden_calls(specs, [], 1.0, random.Random(0), lambda: next(seeds))
    assert none == specs  # no kept hidden set (hidden_inputs off, or all skipped): nothing to insert
    everywhere, scales = with_hidden_calls(specs, sets, 1.0, random.Random(0), lambda: next(seeds))
    assert len(everywhere) == 21 and everywhere[1::2] == specs  # before every call and after the last
    for spec, scale in zip(everywhere[::2], scales[::2]):
        assert (spec.scale, spec.shift, scale) in sets and spec.mode == "eval" and spec.seed >= 1000
        assert not spec.ints  # integers perturbed were checked on the plan's values only
    assert len({s.seed for s in everywhere[::2]}) == 11  # fresh inputs each
    # at the default rate: ~2 per round of 10, at slots that vary from round to round
    counts, slots = [], set()
    for r in range(400):
        calls, _ = with_hidden_calls(specs, sets, EvalConfig().timing_hidden_rate, random.Random(r),
                                     lambda: next(seeds))
        hidden = [k for k, c in enumerate(calls) if c.seed >= 1000]
        counts.append(len(hidden))
        slots.add(tuple(hidden))
    assert 1.8 < sum(counts) / len(counts) < 2.6 and len(slots) > 150


@pytest.fixture(scope="module")
def problem():
    return example_problem("relu2")


def _evaluate(problem, source, rate, device="cpu"):
    cfg = EvalConfig(timeout_s=60 if device == "cpu" else 120, timing_hidden_rate=rate)
    return evaluate(problem, source, device=device, config=cfg)


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("device", DEVICES)
def test_a_kernel_exact_while_checked_meets_hidden_sets_in_its_timed_calls(problem, device):
    caught = _evaluate(problem, EXACT_WHILE_CHECKED, 1.0, device)
    assert caught.status == "incorrect", (caught.status, caught.feedback)
    assert "timed call" in caught.feedback
    # without them, the hidden sets' calls were all among the first 11 and it was correct
    escaped = _evaluate(problem, EXACT_WHILE_CHECKED, 0.0, device)
    assert escaped.status == "correct", (escaped.status, escaped.feedback)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("candidate", ["good", "legit_allow_tf32"])
def test_honest_kernels_pass_a_hidden_call_in_every_timing_slot(problem, candidate, device):
    result = _evaluate(problem, example_candidate(candidate), 1.0, device)
    assert result.status == "correct", (result.status, result.feedback)
    assert not result.hack_reasons
    if device == "cuda":  # the inserted calls are left out of the samples: a speedup as without them
        assert result.speedup is not None and result.speedup > 1.2
