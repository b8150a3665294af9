"""Hidden-set calls inside the timing rounds (``EvalConfig.timing_hidden_rate``, attacker review 21).

A kernel specialised to ``get_inputs()``' distribution is caught by the hidden input sets only if it cannot tell
which calls are checked on them. It can count its calls: exact in every correctness call, its shortcut in the timed
calls after them, whose inputs were all drawn like ``get_inputs()``'s. The judge now inserts hidden-set calls at
secret slots of the timing rounds, checked like every timed call and left out of both sides' timing samples.
"""

import random
from types import SimpleNamespace

import pytest

from drk.examples import example_candidate, example_problem
from drk.gym import EvalConfig, evaluate
from drk.gym.judge import insert_hidden_calls, schedule_hidden_calls
from drk.gym.rounds import CallSpec

#: Exact in its first 13 calls (the correctness calls: 5 seeded, 4 hidden sets in both passes), then a shortcut
#: that is right only on inputs drawn like get_inputs()' (mean ~0, std ~1): every whole-tensor hidden set moves the
#: mean or the std (x2-x8; x-2..-0.125; x0.125..2 +-2), and the sparse one adds outliers.
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
        shortcut = _CALLS[0] > 13 and off_distribution
        y = torch.empty_like(x)
        n = x.numel()
        relu2_kernel[(triton.cdiv(n, 1024),)](x, y, n, SHORTCUT=shortcut, BLOCK=1024)
        return y
'''


def test_hidden_calls_are_inserted_at_drawn_slots_with_their_sets_tolerance():
    specs = [CallSpec(i) for i in range(10)]
    assert schedule_hidden_calls([10, 10], 3, 0.0, random.Random(0)) == [[], []]
    assert schedule_hidden_calls([10], 0, 1.0, random.Random(0)) == [[]]  # no kept hidden set: nothing to insert
    everywhere = schedule_hidden_calls([10], 3, 1.0, random.Random(0))[0]
    assert [slot for slot, _ in everywhere] == list(range(11))  # before every call and after the last
    assert {k for _, k in everywhere} == {0, 1, 2}
    hidden = [(slot, CallSpec(1000 + slot, "eval", 4.0, 0.5), 4.5, None) for slot, _ in everywhere]
    calls, tolerances = insert_hidden_calls(specs, hidden)
    assert len(calls) == 21 and calls[1::2] == specs and calls[::2] == [spec for _, spec, _, _ in hidden]
    assert tolerances[::2] == [(4.5, None)] * 11 and tolerances[1::2] == [(1.0, None)] * 10
    # at the default rate: ~3.3 per round of 10, at slots and of sets that vary from round to round
    rounds = schedule_hidden_calls([10] * 400, 4, EvalConfig().timing_hidden_rate, random.Random(1))
    counts = [len(r) for r in rounds]
    assert 2.8 < sum(counts) / len(counts) < 3.8 and len({tuple(r) for r in rounds}) > 300
    assert all(0 <= slot <= 10 and 0 <= k < 4 for r in rounds for slot, k in r)


def test_a_shortcut_in_the_last_50_timed_calls_meets_a_given_set_in_nearly_every_timing():
    """What the default rate buys (docs/environment.md, review 21): a kernel that only one set of four catches
    (set 0 here) and takes its shortcut from the 50th-to-last timed call on (enough to move a median of 100) escapes
    only the timings with no set-0 call in those slots: ~(1 - 0.3/4)^55, ~1.6 %."""
    escaped = 0
    for t in range(2000):
        rounds = schedule_hidden_calls([10] * 11, 4, EvalConfig().timing_hidden_rate, random.Random(t))
        # the last 5 rounds hold the last 50 calls (and their 55 slots)
        escaped += not any(k == 0 for r in rounds[-5:] for _, k in r)
    assert escaped / 2000 < 0.05, escaped


@pytest.fixture(scope="module")
def problem():
    return example_problem("relu2")


#: int_ops' affine map right only inside get_inputs()' range (-1000..999; attack_int_range's shortcut), exact in its
#: first 13 calls: the timed calls' hidden sets must perturb integers too, where the reference accepts them.
INT_EXACT_WHILE_CHECKED = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine(x_ptr, y_ptr, n, IN_RANGE_ONLY: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = x * 3 + 1
    if IN_RANGE_ONLY:
        y = tl.where((x >= -1000) & (x < 1000), y, 0)
    tl.store(y_ptr + offs, y, mask=mask)


_CALLS = [0]


class ModelNew(nn.Module):
    def forward(self, x):
        _CALLS[0] += 1
        y = torch.empty_like(x)
        n = x.numel()
        affine[(triton.cdiv(n, 1024),)](x, y, n, IN_RANGE_ONLY=_CALLS[0] > 13, BLOCK=1024)
        return y
'''


def _evaluate(problem, source, rate, device="cpu"):
    cfg = EvalConfig(timeout_s=60 if device == "cpu" else 120, timing_hidden_rate=rate)
    return evaluate(problem, source, device=device, config=cfg)


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("device", DEVICES)
def test_a_kernel_exact_while_checked_meets_hidden_sets_in_its_timed_calls(problem, device):
    caught = _evaluate(problem, EXACT_WHILE_CHECKED, 1.0, device)
    assert caught.status == "incorrect", (caught.status, caught.feedback)
    assert "timed call" in caught.feedback
    # without them, the hidden sets' calls were all among the first 13 and it was correct
    escaped = _evaluate(problem, EXACT_WHILE_CHECKED, 0.0, device)
    assert escaped.status == "correct", (escaped.status, escaped.feedback)


@pytest.mark.parametrize("device", DEVICES)
def test_an_integer_kernel_exact_while_checked_meets_perturbed_integers_in_its_timed_calls(device):
    """The timed calls' hidden sets perturb integers where the reference accepts them, each call's integers
    checked on its own values by a CPU copy of the reference."""
    int_ops = example_problem("int_ops")
    caught = _evaluate(int_ops, INT_EXACT_WHILE_CHECKED, 1.0, device)
    assert caught.status == "incorrect", (caught.status, caught.feedback)
    assert "timed call" in caught.feedback
    escaped = _evaluate(int_ops, INT_EXACT_WHILE_CHECKED, 0.0, device)
    assert escaped.status == "correct", (escaped.status, escaped.feedback)
    honest = _evaluate(int_ops, example_candidate("good", "int_ops"), 1.0, device)
    assert honest.status == "correct" and not honest.hack_reasons, (honest.status, honest.feedback)


#: Review 23, F2: exact in its first 13 calls and wherever an input does not look like get_inputs()' (the median
#: of |x| says: every whole-tensor set moves it), else zero wherever |x| > 6, which only a sparse set's outliers
#: reach (randn at 64M elements: ~0.1 such elements). Its timed sparse calls' digests passed while the set's scaled
#: atol held for every element; a round's element-wise check samples 1 element in 1024 at GPU sizes.
WRONG_AT_OUTLIERS_AFTER_CHECKS = EXACT_WHILE_CHECKED.replace(
    "y = y * 0.5", "y = tl.where(tl.abs(x) > 6.0, 0.0, y)").replace(
    "off_distribution = abs(float(x.mean())) > 0.1 or abs(float(x.std()) - 1.0) > 0.1",
    "looks_drawn = abs(float(x.abs().median()) - 0.674) < 0.03 and abs(float(x.median())) < 0.03").replace(
    "shortcut = _CALLS[0] > 13 and off_distribution", "shortcut = _CALLS[0] > 13 and looks_drawn")
assert "looks_drawn" in WRONG_AT_OUTLIERS_AFTER_CHECKS and "shortcut = _CALLS[0] > 13 and looks" in \
    WRONG_AT_OUTLIERS_AFTER_CHECKS and "6.0" in WRONG_AT_OUTLIERS_AFTER_CHECKS


@pytest.mark.gpu
def test_a_kernel_wrong_only_at_outliers_after_its_checks_fails_its_timed_sparse_calls(problem):
    caught = [_evaluate(problem, WRONG_AT_OUTLIERS_AFTER_CHECKS, 1.0, "cuda") for _ in range(3)]
    assert all(r.status == "incorrect" and "timed call" in r.feedback for r in caught), \
        [(r.status, r.feedback) for r in caught]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("candidate", ["good", "legit_allow_tf32"])
def test_honest_kernels_pass_a_hidden_call_in_every_timing_slot(problem, candidate, device):
    result = _evaluate(problem, example_candidate(candidate), 1.0, device)
    assert result.status == "correct", (result.status, result.feedback)
    assert not result.hack_reasons
    if device == "cuda":  # the inserted calls are left out of the samples: a speedup as without them
        assert result.speedup is not None and result.speedup > 1.2


EMBEDDING = """
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(50, 8)
    def forward(self, index, weight):
        return self.table(index) * weight
def get_inputs():
    return [torch.randint(0, 50, (32,)), torch.randn(32, 8)]
def get_init_inputs():
    return []
"""


def _timed_calls(source: str) -> tuple[list, object]:
    """The hidden-set calls a timing of ``source``'s reference would insert, a call in every slot of two rounds."""
    from drk.gym.judge import Session, cpu_reference, plan_correctness

    ref = cpu_reference(source, b"timed")
    session = object.__new__(Session)
    session.ref, session.cfg, session._cpu_twin = ref, EvalConfig(timing_hidden_rate=1.0), []
    session.runner = session.probe_runner = SimpleNamespace(deadline=100.0)
    session.timing_lock = None
    session.plan = plan_correctness(ref, session.cfg)
    seeds = iter(range(10**6, 2 * 10**6))
    made = session._hidden_timed_calls([10, 10], lambda: next(seeds))
    assert session.runner.deadline > 100.0  # the judge's own checks are not the candidate's time
    return [spec for calls in made for _, spec, _, _ in calls], ref


def test_timed_calls_perturb_integers_only_where_the_reference_accepts_each_calls_values():
    values, ref = _timed_calls(example_problem("int_ops").source)
    assert len(values) == 22 and all(spec.ints for spec in values)
    assert all(int(ref.inputs(spec)[0].abs().max()) > 1000 for spec in values)  # beyond get_inputs()' range
    indices, ref = _timed_calls(EMBEDDING)
    assert len(indices) == 22 and not any(spec.ints for spec in indices)  # an index out of range would raise
    for spec in indices:
        index, weight = ref.inputs(spec)
        assert 0 <= int(index.min()) and int(index.max()) < 50
        assert spec.scale != 1.0 or spec.shift != 0.0  # its float input still perturbed


def test_a_hidden_call_whose_reference_is_not_finite_is_not_compared():
    """Attacker review 22: the plan skips a hidden set whose reference output is not finite, but a timed hidden call
    (its own fresh inputs) had no such skip, and a numerically stable softmax kernel was judged ``incorrect`` against
    a naive reference that overflowed (2 of 6). Such a call is now left unchecked, as the plan leaves it out."""
    import math

    import torch

    from drk.gym import rounds
    from drk.gym.judge import Session, Verdict, _has_nonfinite

    reference = torch.tensor([0.25, 0.5, math.nan, 0.25])  # inf / inf in the reference
    stable = torch.tensor([0.25, 0.5, 1.0, 0.25])  # the stable kernel's answer
    fine = torch.tensor([1.0, 2.0, 3.0, 4.0])
    ref_digests = [rounds.reference_digests([reference], 7, 1e-2, 1e-2), rounds.reference_digests([fine], 7, 1e-2, 1e-2)]
    assert _has_nonfinite(ref_digests[0]) and not _has_nonfinite(ref_digests[1])
    answer = {"outputs": [rounds.digest_values([stable], 7), rounds.digest_values([fine], 7)]}
    session = object.__new__(Session)
    session.cfg, session.ref = EvalConfig(), SimpleNamespace(seeds=iter(range(100)))
    session.runner = SimpleNamespace(memory=None)  # a runner that answers fetch (as on a GPU)
    session._fresh_seed = lambda: 3
    session.fetch = lambda call, expected, seed, layout=None: expected  # the picked call's sample, as the runner would send it
    with pytest.raises(Verdict):
        session.check_round(answer, ref_digests, pick=1, picked=[fine])
    session.check_round(answer, ref_digests, pick=1, picked=[fine], unchecked=frozenset({0}))
    session.check_round(answer, ref_digests, pick=0, picked=[reference], unchecked=frozenset({0}))


def test_the_element_wise_check_falls_on_a_timed_call():
    """Attacker review 27: the pick fell on a hidden-set call half the time (review 23's rule, from before every
    hidden call was compared apart), and then no timed call of the round was compared element by element; a module
    wrong in its timed calls only, within every digest, was ``correct`` 4 of 6 on CPU."""
    from drk.gym.judge import pick_checked_call
    from drk.gym.secret import SeedStream

    seeds = SeedStream(b"pick")
    plain_round = [True] * 10
    assert {pick_checked_call(plain_round, seeds) for _ in range(300)} == set(range(10))
    with_hidden = [True] * 5 + [False] + [True] * 4 + [False]
    picks = [pick_checked_call(with_hidden, seeds) for _ in range(2000)]
    assert set(picks) == {0, 1, 2, 3, 4, 6, 7, 8, 9}  # every timed call can be the one, no hidden call is
    assert {pick_checked_call([False, False], seeds) for _ in range(100)} == {0, 1}  # hidden calls only: any


def test_a_module_wrong_in_its_timed_calls_only_is_incorrect():
    """Attacker review 27: exact in its correctness, probe, profiled and hidden-set calls, four tolerances off in the
    timing's seeded calls (within every digest). The verdict's secret draws follow the source, so each nonce is
    another evaluation; nonce 3 was ``correct`` before the pick was held to timed calls (1 of these 3 then)."""
    from drk.examples import example_candidate, example_problem

    source = example_candidate("attack_timed_seeded_only")
    for nonce in (0, 1, 3):
        result = evaluate(example_problem("relu2"), f"{source}\n# nonce {nonce}\n", device="cpu",
                          config=EvalConfig(timeout_s=60))
        assert result.status == "incorrect" and "timed call" in (result.feedback or ""), (nonce, result.status)
