"""GPU behaviour of the environment: timing, L2 flush policy, side streams, profiling ratio, memory reuse, faults.

Marked ``gpu``: skipped without CUDA. Run on the device with ``pytest -m gpu tests/gym/test_gpu.py``.
"""

import pytest

from drk.examples import all_examples, example_candidate, example_problem, verdict_matches
from drk.gym import EvalConfig, Pool, evaluate
from drk.gym.rounds import SETTLE_SLACK_MS

pytestmark = pytest.mark.gpu
FAST = EvalConfig(timing_trials=30, warmup=5, timeout_s=120)

ILLEGAL_ACCESS = '''
import torch, torch.nn as nn, triton, triton.language as tl

@triton.jit
def bad_kernel(x_ptr, y_ptr, n, far, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) + far  # a runtime int64 offset: 8 TB past the buffer
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))

class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        bad_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), 1 << 40, BLOCK=1024)
        return y
'''


@pytest.fixture(scope="module")
def relu2():
    return example_problem("relu2")


def test_fused_kernel_is_faster_and_covers_the_time(relu2):
    result = evaluate(relu2, example_candidate("good"), device="cuda", config=FAST)
    assert result.status == "correct", result.error
    assert result.timing_backend == "cuda_events:median_l2flush"
    assert result.speedup > 1.3  # one pass over memory instead of two kernels' worth
    assert result.coverage > 0.9
    assert result.profile and result.profile[0]["own"]
    assert result.ref_ms_iqr is not None and result.kernel_ms > 0
    assert "Speedup" in result.feedback and "GPU time" in result.feedback


def test_lazy_kernel_has_partial_coverage(relu2):
    result = evaluate(relu2, example_candidate("lazy"), device="cuda", config=FAST)
    assert result.status == "correct", result.error
    assert 0.1 < result.coverage < 0.9


def test_a_module_that_detects_the_profiler_gets_no_more_pr_than_its_work(relu2):
    """An RL-side review (2026-12-02): the profiled calls' outputs were not checked, so this lazy module, which
    launches only its Triton kernel while profiled, claimed PR ~1. It must get no more than `lazy` does, or be
    flagged (the judge now checks the profiled call's output: `profile_mismatch`; tested on CPU under the autograd
    profiler, not yet run on a GPU)."""
    honest = evaluate(relu2, example_candidate("lazy"), device="cuda", config=FAST)
    forged = evaluate(relu2, example_candidate("attack_profiler_detect"), device="cuda", config=FAST)
    assert forged.status == "hacked" or (forged.coverage or 0.0) <= honest.coverage + 0.1, (
        forged.status, forged.coverage, honest.coverage)


def test_authors_policy_is_recorded(relu2):
    cfg = EvalConfig(timing_trials=30, warmup=3, timing_policy="authors", timeout_s=120)
    result = evaluate(relu2, example_candidate("good"), device="cuda", config=cfg)
    assert result.status == "correct" and result.timing_backend == "cuda_events:mean_noflush"
    assert result.timing_policy == "authors"


def test_side_stream_is_timed_with_device_sync(relu2):
    result = evaluate(relu2, example_candidate("side_stream"), device="cuda", config=FAST)
    # its kernel runs on a stream the timed one never waits for: the judge charges what each call left running
    # (end -> settled beyond the reference's host latency), so its time is its kernel's, not ~0
    assert result.status == "correct", (result.error, result.unaccounted_ms)
    assert result.settle_excess_ms > SETTLE_SLACK_MS
    # 0.94x on an H200 (2026-12-01), 0.48x once (2026-12-03), where the same kernel on the current stream is ~2x;
    # never an absurd speedup
    assert 0.5 < result.speedup < 3.0


def test_a_side_stream_gains_nothing_from_the_flush(relu2):
    """``attack_side_stream_launder`` runs the same kernel as ``good`` on a stream that never waits for the judge's
    L2 flush: 2.78x where honest relu2 kernels got ~2x on an H200 (2026-12-03), part of its kernel running during
    the flush, before ``start``. Its flushes take longer than the reference's and are charged (with its left-running
    work), so it can only be as fast as ``good`` (or incorrect: it also reads its input without waiting for it)."""
    honest = evaluate(relu2, example_candidate("good"), device="cuda", config=FAST)
    laundered = evaluate(relu2, example_candidate("attack_side_stream_launder"), device="cuda", config=FAST)
    assert honest.status == "correct", honest.error
    if laundered.status == "correct":
        assert laundered.speedup < 1.2 * honest.speedup, [
            (r.speedup, r.flush_excess_ms, r.settle_excess_ms, r.timing_charge_ms, r.unaccounted_ms, r.kernel_ms,
             r.ref_ms) for r in (laundered, honest)]
    else:
        assert laundered.status == "incorrect", (laundered.status, laundered.error)


def test_unwritten_output_never_passes_on_gpu(relu2):
    # The reference output of the same shape was just freed; torch.empty may hand back its block.
    assert evaluate(relu2, example_candidate("unwritten_output"), device="cuda", config=FAST).status == "incorrect"


def test_cuda_fault_is_isolated(relu2):
    result = evaluate(relu2, ILLEGAL_ACCESS, device="cuda", config=FAST)
    assert result.status == "runtime_error", (result.status, result.error)
    good = evaluate(relu2, example_candidate("good"), device="cuda", config=FAST)
    assert good.status == "correct"
    # the judge's own peak, what a Pool sizes its admissions by: relu2's 256 MB input and output at least
    assert good.judge_gpu_mb is not None and good.judge_gpu_mb >= 512
    assert 512 <= good.judge_gpu_allocated_mb <= good.judge_gpu_mb  # live tensors within what was reserved
    # where it comes from: the running peak as each stage ended, from the reference on, never above the whole
    by_stage = good.judge_gpu_mb_by_stage
    assert "reference" in by_stage and "timing" in by_stage, by_stage
    assert list(by_stage.values()) == sorted(by_stage.values()) and max(by_stage.values()) <= good.judge_gpu_mb


def test_compile_reference_mode(relu2):
    cfg = EvalConfig(timing_trials=20, warmup=3, reference_mode="compile", timeout_s=300)
    result = evaluate(relu2, example_candidate("good"), device="cuda", config=cfg)
    assert result.status == "correct" and result.reference_mode == "compile", (result.status, result.error)
    assert result.speedup is not None


def test_every_example_verdict_on_gpu():
    pairs = [pair for pair in all_examples() if pair[1] != "hangs"]
    results = Pool(device="cuda", workers=8, config=FAST, progress=False).map(
        [(example_problem(p), example_candidate(c, p)) for p, c in pairs])
    wrong = {"/".join(pair): (r.status, r.hack_reasons, (r.error or "")[:200]) for pair, r in zip(pairs, results)
             if not verdict_matches(*pair, "cuda", r.status, r.hack_reasons)}
    assert not wrong


def test_matmul_compute_bound(relu2):
    problem = example_problem("matmul")
    result = evaluate(problem, example_candidate("good", "matmul"), device="cuda", config=FAST)
    assert result.status == "correct", result.error
    assert result.coverage > 0.9 and result.speedup > 0.3


def test_a_gpu_digest_equals_the_cpu_digest_of_the_same_values():
    """The judge's and the runner's digests on a GPU (the one-read kernel, :mod:`drk.gym.digest_kernel`) are the
    sums a CPU takes of the same values, to float64 rounding (the weighted sum with the GPU's weights, the kernel's
    position hash, the same bits as the hash taken on a CPU), in every dtype kind, across chunks; a NaN digests
    apart on both."""
    import torch

    from drk.gym import digest_kernel, rounds

    x = torch.randn(3 * rounds.DIGEST_CHUNK // 2 + 7, generator=torch.Generator().manual_seed(0))
    gpu_weights = rounds._weights(x.numel(), torch.device("cuda", torch.cuda.current_device()), 11).cpu().double()
    assert torch.equal(gpu_weights, digest_kernel.hashed_signs(0, x.numel(), 11, torch.device("cpu")).double())
    for dtype in (torch.float32, torch.bfloat16, torch.int64):
        value = (x * 100).to(dtype)
        (on_gpu,), (on_cpu,) = rounds.digest_values([value.cuda()], 11), rounds.digest_values([value], 11)
        assert on_gpu["dtype"] == on_cpu["dtype"] and on_gpu["shape"] == on_cpu["shape"]
        for key in ("abs", "sq"):
            assert on_gpu[key] == pytest.approx(on_cpu[key], rel=1e-10), (dtype, key)
        assert on_gpu["sums"][0] == pytest.approx(on_cpu["sums"][0], rel=1e-10, abs=1e-9 * on_cpu["abs"]), dtype
        weighted = (value.double() * gpu_weights).sum().item()
        assert on_gpu["sums"][1] == pytest.approx(weighted, rel=1e-10, abs=1e-9 * on_cpu["abs"]), dtype
    odd = x.clone()
    odd[5] = float("nan")
    (on_gpu,), (on_cpu,) = rounds.digest_values([odd.cuda()], 11), rounds.digest_values([odd], 11)
    assert on_gpu["nonfinite"][0::2] == on_cpu["nonfinite"][0::2] == [1.0, 0.0, 0.0]  # NaN, +inf, -inf counts


BURST = EvalConfig(timing_trials=30, warmup=5, timeout_s=120, timing_burst_cycles=10**7, timing_slack_ms=0.01,
                   timing_round_slack_ms=0.3)


@pytest.mark.xfail(strict=True, reason="bursts in an evaluation charge honest kernels the runner's per-round pipe "
                   "cost (0.79-0.81x vs 1.99x synced, H200, session 28): docs/environment.md, Burst rounds")
def test_burst_rounds_leave_a_forged_clock_little(relu2):
    """Burst rounds (``EvalConfig.timing_burst_cycles``) with a tight slack: ``attack_fake_clock_small`` reports a
    twentieth of its real times and got ~40x in synced rounds where honest relu2 kernels get ~2x (the slack there is
    ~0.5 ms per call, more than its 0.13 ms kernel). In a burst the wall time is the GPU's work, so what it hides is
    charged beyond ~0.04 ms per call (or flagged): it keeps at most that, about half of its speedup over the honest
    kernel's (asserted: under 2x the honest speedup, against ~20x in synced rounds), and the honest kernel keeps its
    speedup. Session 28's first run: the honest kernel 0.79x against 1.99x synced (charged 0.2 ms per call: its
    runner queued a round more slowly than 10**7 cycles of busy-wait lasted); the busy-wait now grows after a starved
    round (``rounds.grown_burst``)."""
    honest = evaluate(relu2, example_candidate("good"), device="cuda", config=BURST)
    synced = evaluate(relu2, example_candidate("good"), device="cuda", config=FAST)
    forged = evaluate(relu2, example_candidate("attack_fake_clock_small"), device="cuda", config=BURST)
    for name, r in (("honest", honest), ("synced", synced), ("forged", forged)):
        print(name, r.status, r.speedup, "charge", r.timing_charge_ms, "unaccounted", r.unaccounted_ms, "burst",
              r.burst_cycles, "starved rounds", r.burst_starved_rounds, "ms", r.kernel_ms, r.ref_ms)
    assert honest.status == synced.status == "correct", (honest.error, synced.error)
    assert abs(honest.speedup / synced.speedup - 1) < 0.15, (honest.speedup, synced.speedup, honest.timing_charge_ms)
    assert forged.status == "hacked" or forged.speedup < 2.0 * honest.speedup, (
        forged.status, forged.speedup, honest.speedup, forged.unaccounted_ms, forged.timing_charge_ms)


def test_a_burst_the_host_cannot_outrun_is_starved():
    """``rounds.run_round``'s ``starved`` flag: a model that spends 2 ms of host time per call cannot queue 5 calls
    behind ~50 us of busy-wait (starved), and can behind ~0.5 s of it (not starved)."""
    import time

    import torch

    from drk.gym import rounds

    def slow_host(x):
        time.sleep(0.002)
        return x * 2

    inputs = [[torch.ones(1024, device="cuda")] for _ in range(5)]
    verdicts = []
    for cycles in (10**5, 10**9):
        starved: list[bool] = []
        times, _ = rounds.run_round(slow_host, inputs, ["eval"] * 5, device=torch.device("cuda"), flush=None,
                                    burst_cycles=cycles, starved=starved)
        verdicts.append(starved)
        assert len(times) == 5
    assert verdicts == [[True], [False]], verdicts


def test_a_noop_launch_on_a_gpu_calls_the_launch_hooks_and_writes_nothing(tmp_path):
    """Attacker review 17 (``attack_hook_tell``): on a GPU a ``noop`` probe launch goes through Triton's whole launch
    path with the compiled kernel's launcher given an empty grid (``drk.gym.hacking._run_without_programs``): the
    launch hooks fire as for a real launch, the kernel's programs never run. (Written in session 27; not yet run.)"""
    import importlib.util

    import torch
    import triton
    from triton import knobs

    from drk.gym.hacking import LaunchRecorder

    path = tmp_path / "candidate.py"
    path.write_text("import triton, triton.language as tl\n\n@triton.jit\ndef fill(y_ptr, n, BLOCK: tl.constexpr):\n"
                    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                    "    tl.store(y_ptr + offs, tl.full((BLOCK,), 1.0, tl.float32), mask=offs < n)\n")
    spec = importlib.util.spec_from_file_location("candidate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    recorder = LaunchRecorder(candidate_file=str(path))
    recorder.install()
    entered = []
    knobs.runtime.launch_enter_hook = entered.append
    try:
        for disabled in (None, "noop", None):
            recorder.disabled = disabled
            y = torch.zeros(4096, device="cuda")
            returned = module.fill[(triton.cdiv(4096, 1024),)](y, 4096, BLOCK=1024)
            torch.cuda.synchronize()
            assert returned is not None  # the compiled kernel, as a real launch returns
            assert torch.equal(y, torch.zeros_like(y) if disabled else torch.ones_like(y)), disabled
        assert len(entered) == 3  # the hook fired for every launch, the noop one too
    finally:
        knobs.runtime.launch_enter_hook = None
        recorder.disabled = None


def test_the_near_zero_check_holds_no_whole_float64_copy():
    """Whether zeros would pass as a probe's answer was asked of whole float64 copies (a zeros tensor, the answer,
    allclose's temporaries): +5 GB at the hacking stage for a level-1 elementwise problem's 512 MB output (judge peak
    3.4 GiB after correctness, 8.4 after hacking, H200, 2026-12-04). Chunked, its temporaries are a chunk's."""
    import torch

    from drk.gym import correctness as C

    t = torch.full((2**27,), 0.5, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    assert not C.near_zero(t, 0.01, 0.01)
    extra = torch.cuda.max_memory_allocated() - before
    assert extra <= 8 * C.COMPARE_CHUNK * 8, f"{extra / 2**20:.0f} MB beyond the tensor"


def test_timings_in_a_busy_pool_are_quiet_and_agree(relu2):
    """Eight evaluations of one honest kernel side by side: every timing had the GPU to itself (no other
    evaluation's request or judge's own GPU work in flight: ``timing_quiet``) and, in burst rounds, their speedups
    agree. In a level-1 pass an honest Sigmoid kernel was timed at 0.80x beside 1.00x in two other passes (H200,
    2026-12-04): the judges' own comparisons held no lock, and a timing waited only 5 s for a reference being built.
    In synced rounds (the default) the same eight spread 0.55-2.01x with every timing quiet: on a host this busy the
    Triton launch's host latency outlasts the L2 flush and lands between the call's start and end events; burst
    rounds queue the calls behind a busy-wait and gave 1.981-1.993x (``benchmarks/busy_pool_spread.py``, session
    30, ``results/gpu/2026-12-04-s30``)."""
    pool = Pool(device="cuda", workers=8, progress=False)
    # distinct sources: a batch evaluates identical pairs once
    config = EvalConfig(**{**FAST.to_dict(), "timing_burst_cycles": 10_000_000})
    results = pool.map([(relu2, example_candidate("good") + f"\n# copy {i}\n") for i in range(8)], config=config)
    assert all(r.status == "correct" for r in results), [r.error for r in results]
    assert all(r.timing_quiet for r in results), [r.timing_quiet for r in results]
    speedups = [r.speedup for r in results]
    why = [(round(r.speedup, 3), round(r.ref_ms, 4), round(r.kernel_ms, 4), r.timing_charge_ms, r.unaccounted_ms,
            r.settle_excess_ms, r.flush_excess_ms) for r in results]  # speedup, ref, kernel, charge, unacc, settle, flush
    print("busy pool:", why)
    assert max(speedups) <= 1.03 * min(speedups), why
