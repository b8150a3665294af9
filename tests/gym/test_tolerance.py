"""The correctness tolerance of the hidden input sets: legitimate TF32 rounding passes, wrong answers do not.

A hidden set scales the inputs (x8 among others). Scaling atol by the output's magnitude alone failed legitimate
TF32 kernels of four bundled problems on an H200 (2026-12-02: matmul-scale-softmax, conv-tanh, two attentions), where
x8 inputs make the problem ill-conditioned rather than its output larger. These tests build the judge's correctness
plan on CPU and replay it against a candidate that rounds like a TF32 kernel (inputs *and* weights), and against
wrong ones.
"""

import math

import pytest
import torch

from drk.examples import example_problem
from drk.gym import EvalConfig, judge
from drk.gym import correctness as C
from drk.gym.judge import Reference, cpu_reference, hidden_perturbations, plan_correctness, round_like_tf32
from drk.gym.secret import SeedStream

SOFTMAX_OF_MATMUL = """
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4096, 256)
    def forward(self, x):
        return torch.softmax(self.linear(x) * 24.0, dim=-1)
def get_inputs():
    return [torch.randn(64, 4096)]
def get_init_inputs():
    return []
"""


def _reference(source: str) -> Reference:
    return cpu_reference(source, b"tol")


def _replay(ref: Reference, plan, answer, atol_scale=None) -> list[bool]:
    """Whether each planned call's answer passes the judge's comparison (``atol_scale`` overrides the plan's)."""
    cfg = EvalConfig()
    passed = []
    for i, spec in enumerate(plan.specs):
        got = answer(ref.inputs(spec), spec.mode)
        if atol_scale is None:
            passed.append(plan.compare(i, plan.expected[i], got, cfg).ok)
        else:
            passed.append(C.compare_outputs(plan.expected[i], got, cfg.atol * atol_scale[i], cfg.rtol).ok)
    return passed


def _tf32_model(ref: Reference):
    twin = type(ref.model)()
    twin.load_state_dict({k: round_like_tf32(v) for k, v in ref.model.state_dict().items()})

    def answer(inputs, mode):
        with torch.no_grad():
            return [twin(*[round_like_tf32(x) for x in inputs])]
    return answer


@pytest.fixture
def public_perturbations(monkeypatch):
    """The hidden sets at fixed values (x8, x-1, x0.25+1: the ranges' extremes or the old public sets), where the
    tolerance's worst cases were measured; evaluations draw them per evaluation (:func:`hidden_perturbations`)."""
    monkeypatch.setattr(judge, "PERTURBATION_RANGES", (((8.0, 8.0), (0.0, 0.0)), ((-1.0, -1.0), (0.0, 0.0)),
                                                       ((0.25, 0.25), (1.0, 1.0))))


def test_hidden_perturbations_are_drawn_per_evaluation_over_their_whole_ranges():
    """Attacker review 17: with fixed public sets (x8, x-1, x0.25+1), a kernel wrong only where its inputs' largest
    magnitude was between 6 and 16 (inputs x2-x4) was never checked there (``correct`` 2 of 2). Each evaluation's
    sets are now drawn from its secret stream: the same for the same key, others for other keys, and over many
    evaluations every part of each range is drawn."""
    key = b"k" * 32
    assert hidden_perturbations(SeedStream(key)) == hidden_perturbations(SeedStream(key))
    draws = [hidden_perturbations(SeedStream(bytes([i]) * 32)) for i in range(200)]
    assert len({tuple(d) for d in draws}) == 200
    for j, ((low, high), (shift_low, shift_high)) in enumerate(judge.PERTURBATION_RANGES):
        scales, shifts = [d[j][0] for d in draws], [d[j][1] for d in draws]
        small, large = sorted((low, high), key=abs)
        assert all(abs(small) - 1e-3 <= abs(x) <= abs(large) + 1e-3 and (x < 0) == (low < 0) for x in scales)
        assert all(shift_low - 1e-3 <= x <= shift_high + 1e-3 for x in shifts)
        # log-uniform: each third of the log range is drawn about a third of the time
        thirds = [0, 0, 0]
        for x in scales:
            thirds[min(2, int(3 * math.log(abs(x) / abs(small)) / math.log(abs(large) / abs(small))))] += 1
        assert min(thirds) > 40, (j, thirds)
    # the band of the review's kernel (inputs x2-x4) is drawn in about half the evaluations
    assert 60 < sum(2.0 <= d[0][0] <= 4.0 for d in draws) < 140
    # review 18: a kernel wrong only for inputs with |mean| / std in 0.1..0.8 was never checked (the shifted set's
    # ratio was at least 1); now the ratio spans ~0.03..16 and lands in that band in about a quarter of them
    ratios = [abs(shift / scale) for scale, shift, _ in (d[2] for d in draws)]
    assert min(ratios) < 0.06 and max(ratios) > 8 and 25 < sum(0.1 < r < 0.8 for r in ratios) < 80
    # review 19: inputs shifted down (mean below -0.1 std) and small centred ones (std < 0.45, no shift) were never
    # drawn; each is now drawn in about half the evaluations
    assert 60 < sum(shift < -0.1 * scale for scale, shift, _ in (d[2] for d in draws)) < 140
    assert 60 < sum(abs(d[1][0]) < 0.45 for d in draws) < 140
    # the integer draws: uniform in [0, 1), two per set
    assert all(0.0 <= u < 1.0 and 0.0 <= v < 1.0 for d in draws for _, _, (u, v) in d)


def test_round_like_tf32_keeps_ten_mantissa_bits_and_non_finite_values():
    x = torch.tensor([1.0 + 2**-10, 1.0 + 2**-12, 1.0 + 3 * 2**-12, float("inf"), float("nan"), -2.5])
    rounded = round_like_tf32(x)
    assert rounded[:3].tolist() == [1.0 + 2**-10, 1.0, 1.0 + 2**-10] and rounded[5] == -2.5
    assert rounded[3] == float("inf") and torch.isnan(rounded[4])
    assert round_like_tf32(torch.arange(3)).tolist() == [0, 1, 2]  # integers untouched


def test_an_ill_conditioned_hidden_set_tolerates_tf32_rounding(public_perturbations):
    magnitude_only_failed = 0
    for i in range(6):
        ref = cpu_reference(SOFTMAX_OF_MATMUL, bytes([i + 1]) * 8)
        plan = plan_correctness(ref, EvalConfig())
        x8 = [k for k, label in enumerate(plan.labels) if "inputs x8 +0)" in label or "inputs x8 +0," in label]
        assert x8 and plan.atol_scale[x8[0]] > 2  # the softmax's output cannot grow: only its sensitivity says why
        assert all(_replay(ref, plan, _tf32_model(ref)))
        # what the magnitude rule alone (atol x1 here) did to the same kernel: the x8 set failed it (in some draws)
        magnitude_only = [1.0] * len(plan.specs)
        magnitude_only_failed += not _replay(ref, plan, _tf32_model(ref), magnitude_only)[x8[0]]
    assert magnitude_only_failed > 0


@pytest.mark.parametrize("wrong", ["uniform", "base_distribution_only"])
def test_wrong_answers_still_fail_the_hidden_sets(wrong, public_perturbations):
    ref = _reference(SOFTMAX_OF_MATMUL)
    plan = plan_correctness(ref, EvalConfig())

    def answer(inputs, mode):
        x = inputs[0]
        if wrong == "uniform":
            return [torch.full((x.shape[0], 256), 1 / 256)]
        # right on inputs like get_inputs' (std ~1), the softmax of a fixed-scale logit otherwise
        with torch.no_grad():
            return [torch.softmax(ref.model.linear(x / x.std()) * 24.0, dim=-1)]

    passed = _replay(ref, plan, answer)
    hidden = [p for p, label in zip(passed, plan.labels) if label.startswith("hidden")]
    assert hidden and not all(hidden)


def test_a_well_conditioned_problem_keeps_its_tolerance(public_perturbations):
    """relu2: x8 inputs give x8 outputs and x8 rounding; the tolerance grows by that and no more."""
    ref = _reference(example_problem("relu2").source)
    plan = plan_correctness(ref, EvalConfig())
    scales = {label.split(",")[0].rstrip(")") + ")": s for s, label in zip(plan.atol_scale, plan.labels)}
    assert len(scales) == len(plan.labels) == 13  # 5 seeded trials, 4 hidden sets in both passes, none skipped
    # x8 outputs; x8 being a power of two, rounding errors grow by exactly x8 too, but the largest of 4096 depends on
    # whether a set has an element in a higher binade (up to x2 more), and its magnitude on its largest element
    # against the seeded trials' (7.99 in one draw)
    for mode in ("eval", "train"):
        assert 6.0 <= scales[f"hidden input set 1 ({mode} pass)"] <= 16.5
        assert scales[f"hidden input set 2 ({mode} pass)"] <= 1.5 and scales[f"hidden input set 3 ({mode} pass)"] <= 1.5
    assert all(scales[f"trial {i} ({'eval' if i % 2 else 'train'} pass)"] == 1.0 for i in range(1, 6))


def test_integer_outputs_keep_their_hidden_sets():
    """No float output, no tolerance to scale: every hidden set is still checked (exactly)."""
    ref = _reference(example_problem("int_ops").source)
    plan = plan_correctness(ref, EvalConfig())
    assert sum(label.startswith("hidden") for label in plan.labels) == 8  # 4 sets (one sparse), both passes


def test_only_float32_is_rounded():
    for dtype in (torch.float64, torch.float16, torch.bfloat16):
        x = torch.tensor([1e-3, 1.0 + 2**-7, 3.0], dtype=dtype)
        assert torch.equal(round_like_tf32(x), x)
    assert torch.equal(round_like_tf32(torch.tensor([1e300], dtype=torch.float64)),
                       torch.tensor([1e300], dtype=torch.float64))
    # non-contiguous and 0-dim float32 tensors round like their contiguous copies
    x = torch.randn(6, 4).t()
    assert torch.equal(round_like_tf32(x), round_like_tf32(x.contiguous()))
    assert round_like_tf32(torch.tensor(1.0 + 2**-12)).item() == 1.0


STATEFUL = """
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))
        self.python_calls = 0
    def forward(self, x):
        self.calls += 1
        self.python_calls += 1
        return x * self.calls + self.python_calls
def get_inputs():
    return [torch.randn(64)]
def get_init_inputs():
    return []
"""


@pytest.mark.parametrize("hidden_inputs", [True, False])
def test_a_stateful_reference_is_called_once_per_planned_call(hidden_inputs):
    """The sensitivity asks a copy: the reference's state advances exactly as a candidate's will (a reviewer's
    counter model was 7 calls of 8 out of step once the extra calls went to the reference itself)."""
    cfg = EvalConfig(hidden_inputs=hidden_inputs)
    ref = _reference(STATEFUL)
    plan = plan_correctness(ref, cfg)
    assert ref.model.python_calls == len(plan.specs)
    twin = type(ref.model)()
    from drk.gym import rounds

    for i, spec in enumerate(plan.specs):
        got = rounds.call_model(twin, ref.inputs(spec), spec.mode)
        assert plan.compare(i, plan.expected[i], got, cfg).ok, plan.labels[i]


INDEX_BY_VALUE = """
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.arange(5000.0))
    def forward(self, x):
        if bool((x == 5000).any()):  # as indexing past the table's end would
            raise IndexError("index 5000 is out of bounds for dimension 0 with size 5000")
        return x * 2
def get_inputs():
    return [torch.full((16,), 4999.0)]  # TF32 rounds 4999 to 5000
def get_init_inputs():
    return []
"""


def test_a_reference_that_fails_on_rounded_inputs_keeps_the_magnitude_rule():
    plan = plan_correctness(_reference(INDEX_BY_VALUE), EvalConfig())
    assert len(plan.specs) >= 5 and all(scale >= 1.0 for scale in plan.atol_scale)


def test_integers_are_scaled_by_whole_numbers_and_shifted_by_their_own_range():
    from drk.gym import rounds

    x = torch.tensor([-1000, -3, 0, 999], dtype=torch.int32)
    # x * k + ((i + o) mod |k|), i the position: k log-uniform from 2 to 2**29 / max|x| (536870 here), o = v |k|
    assert rounds.perturb_integers(x, 3.4, 0.0, (0.0, 0.5)).tolist() == [-1999, -6, 1, 1998]
    assert rounds.perturb_integers(x, 3.4, 0.0, (0.0, 0.0)).tolist() == [-2000, -5, 0, 1999]
    top = rounds.perturb_integers(x, 3.4, 0.0, (0.999999, 0.5)).to(torch.int64)
    k = (int(top[3]) - int(top[2]) - 1) // 999  # top[3] - top[2] = 999 k + 1
    assert 536000 < k <= 536870 and torch.equal(top, x.to(torch.int64) * k + k // 2 + torch.arange(4))
    # sign-flipped: |k| from half the reach (268435) up: always as far as it goes
    flipped = rounds.perturb_integers(x, -0.6, 0.0, (0.0, 0.5)).to(torch.int64)
    assert torch.equal(flipped, x.to(torch.int64) * -268435 + 134217 + torch.arange(4))
    # the shifted set: k 1 or 2, c uniform in +-4 max|x|, o = 0
    assert rounds.perturb_integers(x, 0.2, 0.5, (0.2, 0.25)).tolist() == [-3000, -2003, -2000, -1001]
    assert rounds.perturb_integers(x, 0.2, -0.5, (0.7, 1.0 - 1e-9)).tolist() == [2000, 3995, 4000, 5999]
    assert rounds.perturb_integers(x, 2.0, 0.0, (0.5, 0.5)).dtype == torch.int32
    small = torch.tensor([100, -100], dtype=torch.int8)
    assert torch.equal(rounds.perturb_integers(small, 8.0, 0.0, (0.9, 0.5)), small)  # would not fit: unchanged
    assert torch.equal(rounds.perturb_integers(torch.tensor([3], dtype=torch.uint8), -2.0, 0.0, (0.5, 0.5)),
                       torch.tensor([3], dtype=torch.uint8))  # no negatives in uint8


def test_integer_sets_reach_far_values_of_every_residue():
    """Attacker review 19: with sets ``x * k`` (k 2..8) and a positive shift under 2 max|x|, no value beyond +-8000
    (for int_ops' -1000..999), nor one there coprime to 210, was ever drawn: kernels wrong exactly there were
    ``correct`` 5 of 5. Review 20: nor odd values beyond 2**24, which float32 cannot hold (an integer kernel computing
    through float32: ``correct`` 3 of 3), nor a set wholly above or below the range. Now every evaluation's
    sign-flipped set reaches the first two, and about half the evaluations' shifted set the third."""
    from drk.gym import rounds
    from drk.gym.secret import SeedStream

    x = torch.randint(-1000, 1000, (4096,), generator=torch.Generator().manual_seed(0), dtype=torch.int32)
    one_sided = 0
    for i in range(60):
        reached, beyond_float32 = [], []
        for scale, shift, draw in hidden_perturbations(SeedStream(bytes([i + 1]) * 32)):
            y = rounds.perturb_integers(x, scale, shift, draw).to(torch.int64)
            outside = y.abs() > 8000
            reached.append(bool((outside & (y % 2 != 0) & (y % 3 != 0) & (y % 5 != 0) & (y % 7 != 0)).any()))
            beyond_float32.append(bool(((y.abs() > 2**24) & (y % 2 != 0)).any()))
            one_sided += int(bool(y.min() > 1000) or bool(y.max() < -1000))
        assert reached[1] and beyond_float32[1], (i, reached, beyond_float32)  # the flipped set, every evaluation
    assert 15 < one_sided < 45, one_sided  # about half the evaluations


def test_make_inputs_perturbs_integers_only_when_asked_and_never_masks():
    from drk.gym import rounds
    from drk.gym.rounds import CallSpec

    class Problem:
        @staticmethod
        def get_inputs():
            return [torch.arange(4, dtype=torch.int64), torch.tensor([True, False]), torch.ones(2)]

    plain = rounds.make_inputs(Problem, CallSpec(1, "eval", 4.0, 0.0), torch.device("cpu"))
    both = rounds.make_inputs(Problem, CallSpec(1, "eval", 4.0, 0.0, ints=True, int_draw=(0.0, 0.5)),
                              torch.device("cpu"))
    assert plain[0].tolist() == [0, 1, 2, 3] and both[0].tolist() == [1, 2, 5, 6]
    assert both[1].tolist() == [True, False] and both[2].tolist() == plain[2].tolist() == [4.0, 4.0]
    spec = CallSpec(1, "train", 4.0, 0.5, ints=True, int_draw=(0.25, 0.75))
    assert CallSpec.from_dict(spec.to_dict()) == spec
    assert CallSpec.from_dict({"seed": 1, "mode": "eval", "ints": "yes"}).ints is False  # only a real True
    with pytest.raises(ValueError):
        CallSpec.from_dict({"seed": 1, "mode": "eval", "int_draw": [1.5, 0.0]})


def test_integer_values_are_perturbed_in_the_hidden_sets():
    """``int_ops/attack_int_range`` (right only inside get_inputs()' range, -1000..999) was ``correct``: the hidden
    sets now reach integers the reference accepts, outside that range."""
    ref = _reference(example_problem("int_ops").source)
    plan = plan_correctness(ref, EvalConfig())
    hidden = [(spec, label) for spec, label in zip(plan.specs, plan.labels) if label.startswith("hidden")]
    assert len(hidden) == 8 and all(spec.ints and "integer inputs too" in label for spec, label in hidden)
    reach = max(int(ref.inputs(spec)[0].abs().max()) for spec, _ in hidden)
    assert reach > 1000


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


def test_indices_the_reference_refuses_perturbed_keep_their_range():
    """An embedding's indices out of range raise (on a GPU: a device-side assert in the judge): the hidden sets
    keep them as drawn and still perturb the float input."""
    ref = _reference(EMBEDDING)
    plan = plan_correctness(ref, EvalConfig())
    hidden = [spec for spec, label in zip(plan.specs, plan.labels) if label.startswith("hidden")]
    assert len(hidden) == 8 and not any(spec.ints for spec in hidden)
    for spec in hidden:
        index, weight = ref.inputs(spec)
        assert 0 <= int(index.min()) and int(index.max()) < 50
    assert ref.model.table.weight.device.type == "cpu"


def test_a_reference_too_big_for_a_cpu_check_keeps_its_integers(monkeypatch):
    """The CPU check runs the reference at the evaluation's sizes: past ``INTEGER_CHECK_MAX_ELEMENTS`` it is not
    asked, and the integers stay as drawn."""
    monkeypatch.setattr(judge, "INTEGER_CHECK_MAX_ELEMENTS", 100)
    ref = _reference(example_problem("int_ops").source)  # 4096 integers at the CPU's size
    plan = plan_correctness(ref, EvalConfig())
    assert not any(spec.ints for spec in plan.specs)


RANDOM_WITH_INTEGERS = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x, n):
        return x * torch.rand_like(x) + n
def get_inputs():
    return [torch.randn(64), torch.randint(0, 100, (64,))]
def get_init_inputs():
    return []
"""


def test_the_integer_check_leaves_the_generator_as_the_inputs_left_it():
    """The CPU check calls a copy of the reference before the reference's own call: a reference that draws random
    numbers (here ``rand_like``; a dropout) must draw what the candidate's call draws right after the same inputs."""
    from drk.gym import rounds

    ref = _reference(RANDOM_WITH_INTEGERS)
    plan = plan_correctness(ref, EvalConfig())
    hidden = [i for i, label in enumerate(plan.labels) if label.startswith("hidden")]
    assert hidden and all(plan.specs[i].ints for i in hidden)
    for i in hidden:
        spec = plan.specs[i]
        again = rounds.call_model(ref.model, ref.inputs(spec), spec.mode)  # inputs, then the call: a runner's order
        assert torch.equal(again[0], plan.expected[i][0]), plan.labels[i]


def test_the_plan_holds_the_gpu_call_by_call():
    """The reference's outputs are computed in one hold per call, not one for the whole plan: one hold lasted
    3-7 s for a level-1 problem in a Pool of 8 (H200, 2026-12-04), and other evaluations' timings waited that long
    or went ahead with the GPU busy."""
    import contextlib

    holds = []

    @contextlib.contextmanager
    def hold():
        holds.append(1)
        yield

    ref = _reference(SOFTMAX_OF_MATMUL)
    cfg = EvalConfig()
    plan = plan_correctness(ref, cfg, hold=hold)
    assert len(holds) >= len(plan.specs) > cfg.correctness_trials


def _hidden_positions(plan) -> list[int]:
    return [i for i, label in enumerate(plan.labels) if label.startswith("hidden")]


def test_hidden_sets_fall_in_both_rounds_at_positions_the_secret_draws():
    """Attacker review 21: the hidden sets always came last, refilled into the first round's buffers, so a module
    that counted its calls (exact only on calls 6-11) or remembered the first round's buffers ran a kernel specialised
    to get_inputs()' distribution everywhere else: ``correct`` 7 of 7 (int_ops) and 6 of 6 (relu2). Now the secret
    stream mixes them with the seeded trials: each round has hidden sets and seeded trials at positions that vary
    from one evaluation to the next, every position is sometimes a hidden set, and the split between the rounds moves."""
    source = example_problem("relu2").source
    positions, splits, hidden_at = set(), set(), [0] * 13
    for i in range(60):
        plan = plan_correctness(cpu_reference(source, bytes([i]) * 16), EvalConfig())
        hidden = _hidden_positions(plan)
        assert len(plan.specs) == 13 and len(hidden) == 8
        first = plan.first_round
        assert 0 < first < 13
        assert any(h < first for h in hidden) and any(h >= first for h in hidden), (first, hidden)
        assert all((h in hidden) == (plan.specs[h].scale != 1.0 or plan.specs[h].shift != 0.0) for h in range(13))
        assert all(("refreshed in place" in label) == (k >= first) for k, label in enumerate(plan.labels))
        positions.add(tuple(hidden))
        splits.add(first)
        for h in hidden:
            hidden_at[h] += 1
    assert len(positions) > 40 and len(splits) > 4
    assert all(15 < count < 58 for count in hidden_at), hidden_at  # each position, hidden ~8 times in 13
    # the same evaluation (key) plans the same calls
    again = [plan_correctness(cpu_reference(source, bytes([3]) * 16), EvalConfig()) for _ in range(2)]
    assert again[0].specs == again[1].specs and again[0].first_round == again[1].first_round


def _plans_that_catch(source: str, answer, keys) -> int:
    """How many evaluations (one plan per key) have a call where ``answer(input, position, plan)`` fails the judge's
    comparison: a candidate's verdict replayed on the plan alone."""
    caught = 0
    for i in keys:
        ref = cpu_reference(source, bytes([i]) * 16)
        plan = plan_correctness(ref, EvalConfig())
        caught += any(not plan.compare(k, plan.expected[k], [answer(ref.inputs(spec)[0], k, plan)], EvalConfig()).ok
                      for k, spec in enumerate(plan.specs))
    return caught


def test_a_kernel_exact_only_where_hidden_sets_used_to_be_fails_the_plan_most_times():
    """The review's gate, replayed on the plan: exact on calls 6-11 when in the second round, relu2's
    ``attack_distribution_special`` shortcut (halves its answer where |x| > 7) elsewhere. It escaped every evaluation
    (hidden sets last); now about 4 in 5 catch it. It escapes when the one set whose inputs reach |x| > 7 (the x2-x8
    one) has both passes in its window; the timed calls' hidden sets (``test_hidden_calls_in_timed_rounds``) are the
    check that a kernel exact in every correctness call meets (``tests/gym/test_timed_hidden_calls.py``)."""

    def answer(x, k, plan):
        y = torch.relu(x) * 2.0
        exact = 5 <= k <= 10 and k >= plan.first_round
        return y if exact else torch.where(x.abs() > 7.0, y * 0.5, y)

    caught = _plans_that_catch(example_problem("relu2").source, answer, keys=range(100, 160))
    assert caught >= 36, caught  # 81 of 100 in a run of 100 keys


BUFFERED = """
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(8)
    def forward(self, x):
        return torch.log(x + 6.0) * self.bn(x)  # a train pass updates the running stats, finite or not
def get_inputs():
    return [torch.randn(64, 8)]
def get_init_inputs():
    return []
"""


def test_a_skipped_hidden_set_leaves_the_references_buffers_as_they_were():
    """A hidden set whose reference output is not finite is skipped: the candidate is never called with it, so the
    reference's running statistics must not keep what that call did to them (here: a train pass of a BatchNorm
    whose output is not finite wherever a set's inputs go below -6). Replayed call by call on a fresh copy, every
    kept call agrees."""
    from drk.gym import rounds

    cfg = EvalConfig()
    skipped_train_passes = 0
    for i in range(8):
        ref = cpu_reference(BUFFERED, bytes([i + 7]) * 16)
        fresh = type(ref.model)()
        fresh.load_state_dict(ref.model.state_dict())
        plan = plan_correctness(ref, cfg)
        # the rounds' split counts the kept calls only
        assert all(("refreshed in place" in label) == (k >= plan.first_round) for k, label in enumerate(plan.labels))
        for k, spec in enumerate(plan.specs):
            got = rounds.call_model(fresh, ref.inputs(spec), spec.mode)
            assert plan.compare(k, plan.expected[k], got, cfg).ok, (i, plan.labels[k])
        skipped_train_passes += 3 - sum("hidden" in label and "train pass" in label for label in plan.labels)
    assert skipped_train_passes > 0  # the case the test is about happened


def _stats_gated_relu2(x: torch.Tensor) -> torch.Tensor:
    """Attacker review 22's ``relu2_stats_gate``: the shortcut (halve the answer where max|x| > 7) only when 256
    strided elements look like ``randn``; every whole-tensor hidden set moves them, so it was exact there."""
    flat = x.reshape(-1)
    sample = flat[:: max(1, flat.numel() // 256)][:256].double()
    y = torch.relu(x) * 2.0
    if 0.8 < float(sample.std()) < 1.25 and abs(float(sample.mean())) < 0.25 and float(x.abs().max()) > 7.0:
        return y * 0.5
    return y


def _stats_gated_int_ops(x: torch.Tensor) -> torch.Tensor:
    """Review 22's ``int_stats_gate``: through float32 (wrong on odd values beyond 2**24) when 64 strided elements
    are within +-4096, exact otherwise."""
    flat = x.reshape(-1)
    sample = flat[:: max(1, flat.numel() // 64)][:64]
    if int(sample.abs().max()) <= 4096:
        return x.to(torch.float32).to(torch.int32) * 3 + 1
    return x * 3 + 1


@pytest.mark.parametrize("name, answer, least", [("relu2", _stats_gated_relu2, 32), ("int_ops", _stats_gated_int_ops, 22)])
def test_a_kernel_that_samples_its_inputs_meets_a_sparse_hidden_set(name, answer, least):
    """Attacker review 22: every hidden set moved every element alike, so a few hundred sampled elements told each
    apart and a kernel specialised to get_inputs() took its shortcut only on inputs that looked like them: ``correct``
    14 of 14. The sparse set moves a secret few elements (0.001-1 %, at least one, positions from the call's seed):
    the sample looks in-distribution, the moved elements are not. Replayed on the plan over 40 keys: relu2's is
    caught wherever a moved element exists (all 40 in a run); int_ops' only where one lands beyond 2**24, which a
    sign-flipped draw always reaches and a scaled one sometimes (28 of 40 in a run)."""
    caught = _plans_that_catch(example_problem(name).source, lambda x, k, plan: answer(x), keys=range(50, 90))
    assert caught >= least, caught


def test_a_sparse_set_moves_a_few_elements_and_keeps_the_layout():
    """The sparse set moves its share of each tensor's elements (at least one), the same ones for the same call, and
    keeps every input's strides (a layout unlike the other calls' would tell it apart); the global generator is left
    as get_inputs() left it."""
    from drk.gym import rounds
    from drk.gym.rounds import CallSpec

    class Problem:
        @staticmethod
        def get_inputs():
            return [torch.randn(64, 32).t(), torch.randn(()), torch.randint(-100, 100, (50,), dtype=torch.int32)]

    cpu = torch.device("cpu")
    spec = CallSpec(5, "eval", 16.0, 0.0, ints=True, int_draw=(0.3, 0.4), sparse=0.01)
    plain = rounds.make_inputs(Problem, CallSpec(5), cpu)
    after_plain = torch.rand(())
    moved = rounds.make_inputs(Problem, spec, cpu)
    assert torch.equal(torch.rand(()), after_plain)  # the same next draw: positions came from a generator of their own
    assert [x.stride() for x in moved] == [x.stride() for x in plain]
    assert [int((x != y).sum()) for x, y in zip(moved, plain)] == [20, 1, 1]  # 1 % of 2048, and at least one
    changed = moved[0] != plain[0]
    assert torch.allclose(moved[0][changed], plain[0][changed] * 16.0)
    assert all(torch.equal(x, y) for x, y in zip(moved, rounds.make_inputs(Problem, spec, cpu)))
    other = rounds.make_inputs(Problem, CallSpec(6, "eval", 16.0, 0.0, sparse=0.01), cpu)[0]
    assert not torch.equal(other != rounds.make_inputs(Problem, CallSpec(6), cpu)[0], changed)  # other positions
    assert CallSpec.from_dict(spec.to_dict()) == spec
    with pytest.raises(ValueError):
        CallSpec.from_dict({"seed": 1, "mode": "eval", "sparse": 1.0})


def test_a_call_cannot_read_its_seed_back_from_torch():
    """Attacker review 23: a timed call's inputs are made just before it, and ``torch.initial_seed()`` in its
    ``forward`` returned the call's seed, from which a module predicted the sparse set's positions (64 reads told
    every sparse call apart: ``correct`` 6 of 6). After the inputs torch is seeded again from a one-way function of
    the seed, the same on both sides: a model that draws in its call still draws what the judge's reference draws."""
    from drk.gym import rounds
    from drk.gym.rounds import CallSpec

    class Problem:
        @staticmethod
        def get_inputs():
            return [torch.randn(16)]

    cpu = torch.device("cpu")
    for seed in (5, 123456789012):
        rounds.make_inputs(Problem, CallSpec(seed), cpu)
        assert torch.initial_seed() not in (seed, (seed * 1_000_003) % 2**63)
        first = torch.rand(3)
        rounds.make_inputs(Problem, CallSpec(seed, "eval", 8.0, 0.0, sparse=0.01), cpu)
        assert torch.equal(torch.rand(3), first)  # what the call draws next: the same whatever the set
    assert rounds.seed_after_inputs(5) != rounds.seed_after_inputs(6)


#: KernelBench's 23_Softmax shape: seeded outputs ~1e-4, below atol, so an all-zero answer passes every seeded trial.
WIDE_SOFTMAX = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)
def get_inputs():
    return [torch.randn(16, 16384)]
def get_init_inputs():
    return []
"""


def test_an_all_zero_answer_fails_a_hidden_set_where_seeded_outputs_are_below_atol():
    """Attacker review 24, F2: the hidden sets' atol scales are ratios to the seeded trials' magnitude and rounding
    sensitivity, both tiny here, and reached x223-x551: zeros passed every planned call in 10 of 10 evaluations.
    Capped (``judge._capped_scale``) where every seeded output is below atol, every plan catches them; answers made
    from TF32-rounded inputs still pass every call."""
    cfg = EvalConfig()
    for key in range(6):
        ref = cpu_reference(WIDE_SOFTMAX, bytes([key + 40]) * 16)
        plan = plan_correctness(ref, cfg)
        zeros = [plan.compare(i, plan.expected[i], [torch.zeros_like(plan.expected[i][0])], cfg).ok
                 for i in range(len(plan.specs))]
        assert not all(zeros), (key, plan.atol_scale)
        assert all(zeros[i] for i, spec in enumerate(plan.specs) if not spec.perturbed)  # the seeded trials cannot
        for i, spec in enumerate(plan.specs):
            rounded = torch.softmax(round_like_tf32(ref.inputs(spec)[0]), dim=1)
            assert plan.compare(i, plan.expected[i], [rounded], cfg).ok, (key, plan.labels[i])
