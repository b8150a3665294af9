"""Rounds (the shared call loop), digests and the judge's timing summaries, on CPU."""

import math

import pytest
import torch

from drk.gym import rounds
from drk.gym.judge import _digests_agree, _digests_close, _iqr
from drk.gym.rounds import CallSpec


def test_iqr_small_samples():
    assert _iqr([]) == 0.0 and _iqr([2.0, 5.0]) == 3.0
    assert _iqr([1.0, 2.0, 3.0, 4.0, 100.0]) == pytest.approx(52.0 - 1.5)  # exclusive quartiles: 1.5 and 52


def test_run_round_times_every_call_and_keeps_outputs():
    slow = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(8)])
    inputs = [[torch.randn(256, 64)] for _ in range(3)]
    times, outputs = rounds.run_round(slow, inputs, ["eval", "train", "eval"], device=torch.device("cpu"), flush=None)
    assert len(times) == len(outputs) == 3 and all(t > 0 for t in times)
    assert not outputs[0][0].requires_grad  # outputs are detached data
    assert not slow.training  # train() is set per call: the last call was an eval pass
    with pytest.raises(rounds.CallFailed) as failed:
        rounds.run_round(slow, [[torch.randn(2, 64)], [torch.randn(2, 3)]], ["eval", "eval"],
                         device=torch.device("cpu"), flush=None)
    assert failed.value.index == 1


def test_make_inputs_is_seeded_and_perturbs_only_floats():
    class Problem:
        @staticmethod
        def get_inputs():
            return [torch.randn(8), torch.randint(0, 5, (8,)), 3]

    a = rounds.make_inputs(Problem, CallSpec(7), torch.device("cpu"))
    b = rounds.make_inputs(Problem, CallSpec(7, scale=-2.0, shift=1.0), torch.device("cpu"))
    assert torch.equal(b[0], a[0] * -2.0 + 1.0) and torch.equal(b[1], a[1]) and b[2] == 3
    assert not torch.equal(rounds.make_inputs(Problem, CallSpec(8), torch.device("cpu"))[0], a[0])


def test_digests_accept_what_allclose_accepts_and_reject_wrong_outputs():
    ref = torch.randn(1000)
    seed = 5
    close = ref + 0.009 * torch.sign(torch.randn(1000))  # within atol everywhere
    assert torch.allclose(close, ref, atol=1e-2, rtol=0)
    assert _digests_close([ref], rounds.digest_values([close], seed), seed, 1e-2, 0.0)[0]
    for wrong in (torch.zeros(1000), ref.flip(0), ref.to(torch.bfloat16), ref[:999], ref * 1.5):
        ok, why = _digests_close([ref], rounds.digest_values([wrong], seed), seed, 1e-2, 0.0)
        assert not ok, wrong.dtype
    nan = ref.clone()
    nan[3] = math.nan
    assert not _digests_close([ref], rounds.digest_values([nan], seed), seed, 1e-2, 1e-2)[0]


def test_a_digest_reads_its_tensor_in_chunks_with_the_whole_tensors_sums(monkeypatch):
    """Digests are taken a chunk at a time (their float64 temporaries once were whole-tensor copies, several per
    output: GPU memory and per-call work a rewritten runner could save), with the whole tensor's sums and weights as
    long as the tensor; NaN and infinite elements anywhere are still digested apart, so an answer with them in other
    places disagrees."""
    monkeypatch.setattr(rounds, "DIGEST_CHUNK", 1000)
    rounds._WEIGHTS.clear()
    x = torch.randn(3, 1234)  # 3702 elements: three whole chunks and a part
    (record,) = rounds.digest_values([x], 9)
    flat = x.reshape(-1).double()
    weights = rounds._weights(flat.numel(), flat.device, 9).double()
    assert weights.numel() == flat.numel() and set(weights.unique().tolist()) == {-1.0, 1.0}
    assert record["sums"] == pytest.approx([flat.sum().item(), (flat * weights).sum().item()], rel=1e-12)
    assert record["abs"] == pytest.approx(flat.abs().sum().item(), rel=1e-12) and "nonfinite" not in record
    assert record["sq"] == pytest.approx((flat * flat).sum().item(), rel=1e-12)
    odd = x.clone().reshape(-1)
    odd[[5, 2500]], odd[3700] = math.nan, math.inf
    (special,) = rounds.digest_values([odd.reshape(3, 1234)], 9)
    finite = torch.where(torch.isfinite(odd), odd, 0.0).double()
    assert special["sums"] == pytest.approx([finite.sum().item(), (finite * weights).sum().item()], rel=1e-12)
    assert special["nonfinite"][0] == 2 and special["nonfinite"][2] == 1  # NaN count, +inf count
    moved = odd.clone()
    other = next(j for j in range(1000, 2000) if weights[j] != weights[2500])  # in another chunk, weighted apart
    moved[[2500, other]] = moved[[other, 2500]]
    expected = rounds.reference_digests([odd], 9, 1e-2, 1e-2)
    ok, why = _digests_agree(expected, rounds.digest_values([moved], 9))
    assert not ok and "NaN" in why
    assert _digests_agree(expected, rounds.digest_values([odd.clone()], 9))[0]


def test_inputs_with_two_chunks_swapped_do_not_digest_alike(monkeypatch):
    """Attacker review 15: with +-1 weights that repeated per chunk, an input whose first two chunks a candidate had
    swapped digested exactly as the original, so the "inputs unchanged" check passed (``correct`` twice, 32M floats on
    CPU). The weights run the tensor's whole length."""
    monkeypatch.setattr(rounds, "DIGEST_CHUNK", 1000)
    rounds._WEIGHTS.clear()
    x = torch.randn(2000)
    swapped = torch.cat([x[1000:], x[:1000]])
    assert rounds.digest_values([x], 4) != rounds.digest_values([swapped], 4)
    assert rounds.digest_values([x], 4) == rounds.digest_values([x.clone()], 4)  # exact, as the input check needs


def test_a_constant_at_the_right_mean_fails_the_weighted_digest():
    """Attacker review 15: a runner rewritten from inside answered every timed call with a constant at the outputs'
    mean (no kernel) and was ``correct`` at 1/30 of the honest time: the digests' tolerance was the worst case of
    ``allclose`` errors all aligned with the weights (``atol * n + rtol * sum|ref|``), far above the constant's miss
    of the weighted sum (~sigma * sqrt(n)). Errors a right answer makes do not follow the weights, so the weighted
    sum is held to a statistical bound (:data:`drk.gym.rounds.WEIGHTED_SIGMAS` standard deviations of the largest
    such errors); the plain sum keeps the worst case."""
    torch.manual_seed(0)
    for n in (4096, 1 << 20):
        ref = torch.relu(torch.randn(n)) * 2.0
        expected = rounds.reference_digests([ref], 3, 1e-2, 1e-2)
        fill = torch.full_like(ref, float(ref.mean()))
        ok, why = _digests_agree(expected, rounds.digest_values([fill], 3))
        assert not ok and "checksum" in why, n
        # right answers, with errors up to the whole tolerance in a random pattern or all of one sign, pass
        tol = 0.999 * (1e-2 + 1e-2 * ref.abs())
        for err in (tol * (2 * torch.rand(n) - 1), tol * torch.sign(torch.randn(n)), tol):
            assert torch.allclose(ref + err, ref, atol=1e-2, rtol=1e-2)
            assert _digests_agree(expected, rounds.digest_values([ref + err], 3))[0], n


def test_calls_per_round_shrinks_for_big_outputs_but_never_below_two():
    assert rounds.calls_per_round(10, 4 * 2**20) == 10
    assert rounds.calls_per_round(10, 512 * 2**20) == 8  # 8 x 512 MB fit the 4 GB round budget
    assert rounds.calls_per_round(10, 8 * 2**30) == 2
    assert rounds.calls_per_round(1, 8 * 2**30) == 1


def test_lazy_rounds_hold_one_input_set_and_keep_what_the_caller_asks():
    import weakref

    made = []  # the input each call got (a copy of what get_inputs returned: rounds.make_inputs)

    class Problem:
        @staticmethod
        def get_inputs():
            return [torch.randn(1000)]

    specs = [CallSpec(seed) for seed in range(5)]
    alive_during_calls = []

    def model(x):
        made.append(weakref.ref(x))
        alive_during_calls.append(sum(r() is not None for r in made))
        return x * 2

    lazy = rounds.LazyInputs(Problem, specs, torch.device("cpu"))
    times, kept = rounds.run_round(model, lazy, ["eval"] * 5, device=torch.device("cpu"), flush=None,
                                   keep=lambda i, inputs, out: rounds.digest_values(out, 3))
    assert len(times) == 5 and len(made) == 5
    assert max(alive_during_calls) == 1  # each set is made when its call comes and dropped after it
    eager = [rounds.make_inputs(Problem, s, torch.device("cpu")) for s in specs]
    assert kept == [rounds.digest_values([x[0] * 2], 3) for x in eager]  # same seeds, same inputs, same digests


def test_reference_digests_bound_is_the_allclose_tolerance():
    ref = torch.randn(1000, dtype=torch.float64)
    (record,) = rounds.reference_digests([ref], 1, 1e-2, 1e-2)
    assert record["bound"] == pytest.approx(1e-2 * 1000 + 1e-2 * float(ref.abs().sum()), rel=1e-6)
    t = 1e-2 + 1e-2 * ref.abs()
    assert record["wbound"] == pytest.approx(rounds.WEIGHTED_SIGMAS * float(t.square().sum().sqrt()), rel=1e-6)
    (few,) = rounds.reference_digests([ref[:4]], 1, 1e-2, 1e-2)
    assert few["wbound"] == few["bound"]  # four elements: the worst case is the tighter bound


def test_settled_times_charge_left_running_work_only_beyond_the_references_host_latency():
    times = [1.0, 1.0, 1.0, 1.0, 1.0]
    ref_lates = [0.02, 0.03, 0.02, 0.2, 0.02]  # a busy host: one slow wake-up
    # an honest call: the same host latency as the reference's (noisy per call, one spike) -> GPU-only times stand
    honest, excess = rounds.settled_times(times, [0.03, 0.02, 0.25, 0.02, 0.03], ref_lates)
    assert honest == times and abs(excess - 0.01) < 1e-9
    # work left running on a side stream in most calls -> every call is charged what it left beyond the reference's
    # typical host latency (0.02 here): the left work, not the host's wake-up
    left = [0.9, 0.8, 0.02, 0.9, 0.9]
    charged, excess = rounds.settled_times(times, left, ref_lates)
    assert charged == pytest.approx([1.88, 1.78, 1.0, 1.88, 1.88]) and excess > rounds.SETTLE_SLACK_MS
    # a stream-synchronising call whose wake-up is always a little later than the reference's is charged only that
    slow_wake = [0.09] * 5
    charged, excess = rounds.settled_times(times, slow_wake, ref_lates)
    assert excess > rounds.SETTLE_SLACK_MS and charged == pytest.approx([1.07] * 5)
    # in fewer than half of the calls: the typical call (the median the speedup uses) is a whole one
    few = [0.9, 0.02, 0.02, 0.9, 0.03]
    assert rounds.settled_times(times, few, ref_lates)[0] == times


def test_work_run_during_the_flush_is_charged_beyond_the_references_flush():
    """A kernel on a stream that never waits for the L2 flush runs during it, before ``start``: on an H200 its
    flushes took longer than the reference's (2026-12-03). Charged like left-running work, on medians, but with the
    flush's own slack (a GPU-only interval of a fixed kernel, no host latency in it)."""
    times = [0.05] * 5
    ref_flushes = [0.110, 0.111, 0.110, 0.112, 0.110]
    same, excess = rounds.flushed_times(times, [0.111, 0.110, 0.150, 0.110, 0.111], ref_flushes)
    assert same == times and excess < rounds.FLUSH_SLACK_MS  # one slow flush: the typical call is honest
    overlapped = [0.19, 0.18, 0.19, 0.11, 0.19]
    charged, excess = rounds.flushed_times(times, overlapped, ref_flushes)
    assert excess == pytest.approx(0.08) and charged == pytest.approx([0.13, 0.12, 0.13, 0.05, 0.13])
    # the settle charge and the flush charge are one rule with two slacks
    assert rounds.settled_times(times, overlapped, ref_flushes) == rounds.charged_times(
        times, overlapped, ref_flushes, rounds.SETTLE_SLACK_MS)


def test_run_round_reports_a_late_and_a_flush_per_call():
    lates: list[float] = []
    flushes: list[float] = []
    times, _ = rounds.run_round(lambda x: x * 2, [[torch.randn(4)], [torch.randn(4)]], ["eval", "eval"],
                                device=torch.device("cpu"), flush=None, lates=lates, flushes=flushes)
    assert len(times) == len(lates) == len(flushes) == 2 and lates == flushes == [0.0, 0.0]


def test_unaccounted_time_within_the_slack_is_free():
    from drk.gym.rounds import unaccounted_verdict

    assert unaccounted_verdict(4.9, 10, 5.0, 2.5) == (0.0, False)
    assert unaccounted_verdict(-3.0, 10, 5.0, 2.5) == (0.0, False)
    assert unaccounted_verdict(4.9, 10, 5.0, None) == (0.0, False)


def test_gpu_unaccounted_time_past_the_slack_is_charged_and_only_gross_excess_is_a_mismatch():
    """Honest host-bound candidates under load showed up to 1.4 ms/call (H200, 2026-12-01): charged, not hacked."""
    from drk.gym.rounds import unaccounted_verdict

    charge, mismatch = unaccounted_verdict(19.0, 10, 5.0, 2.5)  # 1.4 ms per call beyond the slack
    assert mismatch is False and abs(charge - 1.4) < 1e-12
    charge, mismatch = unaccounted_verdict(40.0, 10, 5.0, 2.5)  # 3.5 ms per call: more than host work explains
    assert mismatch is True and abs(charge - 3.5) < 1e-12


def test_cpu_and_impossible_clocks_are_mismatches():
    import math

    from drk.gym.rounds import unaccounted_verdict

    assert unaccounted_verdict(5.1, 10, 5.0, None) == (0.0, True)  # CPU: synchronous calls, any excess
    assert unaccounted_verdict(math.inf, 10, 5.0, 2.5) == (0.0, True)  # it claimed more time than passed


def test_cpu_timing_retries_a_single_hiccup_but_not_time_hidden_in_every_round():
    """On CPU one round decides when it is within the slack; a round over it (a busy host's hiccup) brings up to
    ``CPU_MAX_ROUNDS``, decided by their median: one hiccup passes, hidden time in every round does not."""
    slack = 50.0
    assert rounds.cpu_rounds_done([3.0], 1, slack)  # the usual case: one round
    assert not rounds.cpu_rounds_done([400.0], 1, slack)
    assert not rounds.cpu_rounds_done([400.0, 2.0], 1, slack)  # median 201: one more
    assert rounds.cpu_rounds_done([400.0, 2.0, 4.0], 1, slack)
    assert not rounds.unaccounted_verdict(4.0, 1, slack, None)[1]  # ... and that median (4 ms) is not a mismatch
    hidden = [100.0, 100.0, 100.0]  # attack_fake_clock: 0.1 s hidden in every call
    assert rounds.cpu_rounds_done(hidden[:1], 1, slack) is False and rounds.cpu_rounds_done(hidden, 1, slack)
    assert rounds.unaccounted_verdict(100.0, 1, slack, None)[1]
    assert rounds.cpu_rounds_done([math.inf, math.inf, math.inf], 1, slack)
    assert rounds.unaccounted_verdict(math.inf, 1, slack, None)[1]


def test_a_starved_burst_doubles_its_busy_wait_up_to_a_cap():
    """A burst round whose busy-wait ended before the host had queued it had the host's latency in its wall time
    (an honest relu2 kernel was charged 0.2 ms per call behind 10**7 cycles on an H200, session 28): the judge doubles
    the busy-wait, but never past x64 of the configured one nor 10**9 cycles, so a runner that always claims to be
    starved only slows its own evaluation by a bounded amount."""
    assert rounds.grown_burst(10**7, 10**7) == (2 * 10**7, True)
    cycles, steps = 10**7, 0
    while True:
        cycles, grown = rounds.grown_burst(cycles, 10**7)
        if not grown:
            break
        steps += 1
    assert steps == 6 and cycles == 64 * 10**7
    assert rounds.grown_burst(10**8, 10**8) == (2 * 10**8, True)
    assert rounds.grown_burst(8 * 10**8, 10**8) == (8 * 10**8, False)  # 10**9 cycles at most
    assert rounds.grown_burst(10**10, 10**10) == (10**10, False)  # a configured busy-wait above the cap is kept


def test_a_round_on_cpu_is_never_starved():
    """``starved`` is a burst round's (CUDA) flag: a CPU round's calls are synchronous and leave it empty."""
    starved: list[bool] = []
    rounds.run_round(lambda x: x * 2, [[torch.ones(3)]], ["eval"], device=torch.device("cpu"), flush=None,
                     burst_cycles=1000, starved=starved)
    assert starved == []
