"""A sparse hidden set's tolerance holds only where its outliers reach (attacker review 23, F2).

A hidden set's atol is scaled by how much larger (or more rounding-sensitive) its outputs are than the seeded
trials'. The sparse set's outputs are large only where its few outliers reach; with its scaled atol held for every
element, a timed call's digest (whose bound sums the elements' tolerances) let through an answer zeroed at thousands
of outliers. The scaled atol now holds only at the elements the outliers moved (``drk.gym.correctness.Moved``).
"""

import math
import random
import types

import pytest
import torch

from drk.examples import example_problem
from drk.gym import EvalConfig, judge, rounds
from drk.gym import correctness as C
from drk.gym.rounds import CallSpec

#: relu2 (the bundled example) at a size where a round's element-wise check samples 1 in 16 elements.
BIG_RELU2 = example_problem("relu2").source.replace('CPU_SIZES = {"N": 4096}', 'CPU_SIZES = {"N": 1 << 20}')
assert "1 << 20" in BIG_RELU2


def _relu2(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) * 2.0


def _wrong_at_outliers(x: torch.Tensor) -> torch.Tensor:
    """Review 23's answer: right wherever ``get_inputs()`` could have put a value, zero at the outliers."""
    return torch.where(x.abs() > 5.0, torch.zeros_like(x), _relu2(x))


def test_moved_elements_marks_where_the_outputs_differ():
    before = [torch.tensor([1.0, 2.0, math.nan, 4.0]), torch.tensor([1, 2]), 3.0]
    after = [torch.tensor([1.0, -2.0, math.nan, 8.0]), torch.tensor([1, 5]), 3.0]
    moved = C.moved_elements(before, after, 0.01)
    assert moved.masks[0].tolist() == [False, True, False, True]  # NaN where it was NaN: not moved
    assert moved.counts[0] == 2 and moved.abs_sums[0] == 10.0 and moved.numels == [4, 2, 0]
    assert C.moved_elements(before, after, 0.01, keep=None).masks is None
    assert moved.masks[1] is None and moved.masks[2] is None  # integers are compared exactly anyway
    reshaped = C.moved_elements([torch.zeros(4)], [torch.zeros(2, 2)], 0.01)
    assert reshaped.counts[0] == 4  # nothing to compare with: moved everywhere


def test_the_scaled_atol_holds_only_at_moved_elements():
    expected = torch.zeros(8)
    moved = C.Moved([torch.tensor([True] + [False] * 7)], [1], [0.0], [8], unmoved_atol=0.01)
    off_at_moved = expected.clone()
    off_at_moved[0] = 0.5
    off_elsewhere = expected.clone()
    off_elsewhere[3] = 0.5
    assert C.compare_outputs([expected], [off_at_moved], 1.0, 0.01, moved=moved).ok
    assert not C.compare_outputs([expected], [off_elsewhere], 1.0, 0.01, moved=moved).ok
    assert C.compare_outputs([expected], [off_elsewhere], 1.0, 0.01).ok  # one atol for all: what it was
    chunked = C.compare_outputs([expected], [off_elsewhere], 1.0, 0.01, chunk=3, moved=moved)
    assert not chunked.ok and "(3,)" in chunked.message


def test_a_digests_bound_sums_the_scaled_atol_over_moved_elements_only():
    values = torch.ones(1000)
    moved = C.Moved(None, [10], [10.0], [1000], unmoved_atol=0.01)  # a digest needs no mask
    whole = rounds.reference_digests([values], 5, 0.5, 0.01)[0]
    sparse = rounds.reference_digests([values], 5, 0.5, 0.01, moved)[0]
    assert whole["bound"] == pytest.approx(0.5 * 1000 + 0.01 * 1000, rel=1e-6)
    assert sparse["bound"] == pytest.approx(0.01 * 990 + 0.5 * 10 + 0.01 * 1000, rel=1e-6)
    # sqrt(sum t_i^2), t_i = 0.51 at the 10 moved elements and 0.02 at the others
    spread = math.sqrt(10 * 0.51**2 + 990 * 0.02**2)
    assert sparse["wbound"] == pytest.approx(min(sparse["bound"], rounds.WEIGHTED_SIGMAS * spread), rel=1e-6)


def _outlier_replays(n: int, moved_tolerance: bool) -> list[tuple[int, bool, bool]]:
    """Review 23's replay at ``n`` elements: per drawn sparse set, (wrong elements, whether the wrong answer's
    digest passes, whether a TF32-rounded answer's does), atol scaled as the plan scales it."""
    problem = types.SimpleNamespace(get_inputs=lambda: [torch.randn(n)])
    cpu = torch.device("cpu")
    base = max(float(_relu2(rounds.make_inputs(problem, CallSpec(k), cpu)[0]).abs().max()) for k in range(1, 6))
    draw = random.Random(1)
    out = []
    for _ in range(12):
        share = math.exp(draw.uniform(math.log(1e-5), math.log(1e-2)))
        scale = draw.choice((-1, 1)) * math.exp(draw.uniform(math.log(8), math.log(64)))
        seed = draw.getrandbits(40)
        x = rounds.make_inputs(problem, CallSpec(seed, "eval", round(scale, 3), 0.0, sparse=share), cpu)[0]
        plain = rounds.make_inputs(problem, CallSpec(seed), cpu)[0]
        expected = _relu2(x)
        atol = 1e-2 * max(1.0, float(expected.abs().max()) / base)
        moved = C.moved_elements([_relu2(plain)], [expected], 1e-2) if moved_tolerance else None
        digests = rounds.reference_digests([expected], seed, atol, 1e-2, moved)
        wrong = _wrong_at_outliers(x)
        passes, _ = judge._digests_agree(digests, rounds.digest_values([wrong], seed))
        honest, _ = judge._digests_agree(digests, rounds.digest_values([_relu2(judge.round_like_tf32(x))], seed))
        out.append((int((wrong != expected).sum()), passes, honest))
    return out


def test_an_answer_wrong_only_at_the_outliers_fails_a_timed_calls_digest():
    """Replayed on 12 drawn sparse sets at 1M elements: every answer wrong at 50 or more outliers fails its digest
    (with one atol for all elements, 10 of the 12 passed); a TF32-rounded answer passes every one."""
    replays = _outlier_replays(1 << 20, moved_tolerance=True)
    assert all(honest for _, _, honest in replays)
    assert not any(passes for wrong, passes, _ in replays if wrong >= 50), replays
    before = _outlier_replays(1 << 20, moved_tolerance=False)
    assert sum(passes for wrong, passes, _ in before if wrong >= 50) >= 6, before  # what the fix changed


def test_the_plan_and_the_timed_calls_mark_the_elements_the_outliers_moved():
    """The sparse set's calls carry their moved elements, in the correctness plan (both passes) and in the timed
    calls (counted before the timing; the mask made for the call a round checks element by element); the other
    sets' calls hold their scaled atol everywhere."""
    from drk.gym.judge import Session, cpu_reference, plan_correctness

    ref = cpu_reference(BIG_RELU2, b"sparse-tol")
    cfg = EvalConfig(timing_hidden_rate=1.0)
    plan = plan_correctness(ref, cfg)
    sparse = [i for i, spec in enumerate(plan.specs) if spec.sparse]
    assert len(sparse) == 2 and all(plan.moved[i] is not None for i in sparse)
    assert all(plan.moved[i] is None for i in range(len(plan.specs)) if i not in sparse)
    for i in sparse:
        outliers = round(plan.specs[i].sparse * (1 << 20))
        assert 0 < plan.moved[i].counts[0] <= outliers  # relu: an outlier pushed further below 0 moves nothing
        # the plan's own comparison: the outlier-zeroing answer fails, the right one passes
        x = ref.inputs(plan.specs[i])[0]
        assert plan.compare(i, plan.expected[i], [_relu2(x)], cfg).ok
        assert not plan.compare(i, plan.expected[i], [_wrong_at_outliers(x)], cfg).ok or \
            bool((_wrong_at_outliers(x) == plan.expected[i][0]).all())

    session = object.__new__(Session)
    session.ref, session.cfg, session._cpu_twin, session.plan = ref, cfg, [], plan
    session.runner = session.probe_runner = types.SimpleNamespace(deadline=100.0)
    session.timing_lock = None
    seeds = iter(range(10**6, 2 * 10**6))
    made = [call for calls in session._hidden_timed_calls([10, 10], lambda: next(seeds)) for call in calls]
    timed_sparse = [(spec, moved) for _, spec, _, moved in made if spec.sparse]
    assert timed_sparse and all(moved is not None for _, moved in timed_sparse)
    assert all(moved is None for _, spec, _, moved in made if not spec.sparse)
    for spec, moved in timed_sparse:  # each call's own positions
        x = ref.inputs(spec)[0]
        mask = _relu2(x) != _relu2(ref.inputs(CallSpec(spec.seed))[0])
        assert moved.masks is None and moved.counts == [int(mask.sum())]
        scale, picked = session._checked_tolerance(spec, (3.0, moved))
        assert scale == 3.0 and picked.masks[0].tolist() == mask.tolist()
    assert session._checked_tolerance(CallSpec(5), (1.0, None)) == (1.0, None)


#: A row softmax, whose outputs a sparse set's outliers move row by row (attacker review 24's problem).
ROW_SOFTMAX = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
def get_inputs():
    return [torch.randn(256, 1024)]
def get_init_inputs():
    return []
"""


def _softmax_reading_outliers_as_zero(x: torch.Tensor) -> torch.Tensor:
    """Review 24's shortcut: right on ``get_inputs()``' randn, elements with |x| > 6 read as 0."""
    return torch.softmax(torch.where(x.abs() > 6.0, torch.zeros_like(x), x), dim=-1)


def test_every_hidden_call_of_a_round_is_compared_element_by_element():
    """Attacker review 24, F1: on a row softmax the sparse set's outliers move whole rows, so its digests are blind
    to an answer wrong at the outliers (12 of 12 replays passed them); the one call per round compared element by
    element was all that could catch it. Now every hidden call of a round is (its reference made again by a copy,
    its moved elements' mask made for it)."""
    from drk.gym.judge import Session, Verdict, _twin, cpu_reference, plan_correctness

    ref = cpu_reference(ROW_SOFTMAX, b"rows")
    cfg = EvalConfig()
    session = object.__new__(Session)
    session.ref, session.cfg, session._cpu_twin, session.plan = ref, cfg, [], plan_correctness(ref, cfg)
    session._timing_twin = _twin(ref.model)
    seeds = iter(range(10**6, 2 * 10**6))
    session._fresh_seed = lambda: next(seeds)
    session._credit = lambda seconds: None
    sparse = CallSpec(77, "eval", 24.0, 0.0, sparse=1e-3)
    moved = judge._moved_by_outliers(ref, _twin(ref.model), sparse, cfg.atol, keep=None)
    specs = [CallSpec(1), sparse, CallSpec(2), CallSpec(3, "eval", 0.5, 1.0)]
    timed = [True, False, True, False]
    tolerances = [(1.0, None), (2.0, moved), (1.0, None), (1.0, None)]
    fetched = []

    def answer_with(kernel):
        def fetch(index, expected, seed, layout=None):
            fetched.append(index)
            return rounds.sample_values([kernel(ref.inputs(specs[index])[0])], seed)
        return fetch

    ref.digest_seed = 9
    digests = [rounds.reference_digests([torch.softmax(ref.inputs(spec)[0], dim=-1)], 9, cfg.atol * scale, cfg.rtol,
                                        call_moved) for spec, (scale, call_moved) in zip(specs, tolerances)]
    session.fetch = answer_with(lambda x: torch.softmax(x, dim=-1))
    session.check_hidden_calls(specs, timed, 0, tolerances, frozenset(), digests)
    assert fetched == [1, 3]  # the hidden calls only (call 0, the round's pick, was compared by check_round)
    fetched.clear()
    session.check_hidden_calls(specs, timed, 3, tolerances, frozenset({1}), digests)  # left unchecked: not fetched
    assert fetched == []
    session.fetch = answer_with(_softmax_reading_outliers_as_zero)
    with pytest.raises(Verdict, match="timed call"):
        session.check_hidden_calls(specs, timed, 0, tolerances, frozenset(), digests)
    # a copy of the reference out of step with it (its digests disagree: a reference with state) checks nothing more
    fetched.clear()
    out_of_step = [rounds.reference_digests([torch.softmax(ref.inputs(spec)[0], dim=-1) + 1], 9, cfg.atol, cfg.rtol)
                   for spec in specs]
    session.check_hidden_calls(specs, timed, 0, tolerances, frozenset(), out_of_step)
    assert fetched == []
    # its digest alone passed it
    x = ref.inputs(sparse)[0]
    digests = rounds.reference_digests([torch.softmax(x, dim=-1)], 9, cfg.atol * 2.0, cfg.rtol, moved)
    assert judge._digests_agree(digests, rounds.digest_values([_softmax_reading_outliers_as_zero(x)], 9))[0]


def test_a_complex_outputs_digest_bound_counts_both_parts():
    """A complex output is digested as its real and imaginary parts; its bound counted one tolerance per complex
    element, half what a right answer may need (attacker review 24, minor): an answer off by 0.9 atol in both parts
    of every element (allclose) failed its digest. The sparse set's moved elements count both parts too."""
    expected = torch.zeros(1000, dtype=torch.complex64)
    close = torch.full((1000,), complex(0.009, 0.009), dtype=torch.complex64)
    assert C.compare_outputs([expected], [close], 0.01, 0.0).ok
    assert judge._digests_agree(rounds.reference_digests([expected], 4, 0.01, 0.0), rounds.digest_values([close], 4))[0]
    moved = C.moved_elements([expected], [expected + complex(1, 1)], 0.01)
    assert moved.numels == [2000] and rounds._moved_part(moved, 0, expected) == (0.01, 2000, 2000.0)


@pytest.mark.parametrize("numel", [1000, 40_000, 100_000])  # all compared; all complex ones sampled; sampled
def test_a_complex_outputs_sampled_check_holds_the_seeded_atol_where_nothing_moved(numel):
    """A complex output's moved-elements mask marks real and imaginary parts; sampled as one flat mask it lost its
    pairing with the sampled output (twice as long, other positions), so a timed call's check fell back to the scaled
    atol everywhere (attacker review 24, minor). Sampled in pairs, an answer off only where nothing moved fails."""
    from drk.gym.judge import Session, Verdict

    expected = torch.zeros(numel, dtype=torch.complex64)
    moved_out = expected.clone()
    moved_out[:7] = complex(30, 30)  # the outliers moved seven elements
    moved = C.moved_elements([expected], [moved_out], 0.01)
    session = object.__new__(Session)
    session.cfg = EvalConfig()
    seed = 5
    sampled = rounds.sample_values([moved_out], seed)
    off_elsewhere = [sampled[0] + complex(0.5, 0.0)]  # within the scaled atol (2.0), not the seeded one
    masks = rounds.sample_masks(moved.masks, sampled, seed)
    assert masks[0].numel() == 2 * sampled[0].numel()
    with pytest.raises(Verdict, match="timed call"):
        session._check_sampled(sampled, off_elsewhere, (200.0, moved), seed)
    session._check_sampled(sampled, [sampled[0] * (1 + 1e-3)], (200.0, moved), seed)  # a right answer passes
