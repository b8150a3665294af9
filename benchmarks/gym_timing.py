"""Environment benchmark (GPU): speedup run-to-run spread, and evaluations per minute.

    python benchmarks/gym_timing.py [--repeats 10] [--batch 24] [--out results.json]

Prints, for a memory-bound (relu2) and a compute-bound (matmul) example, the coefficient of variation of the
speedup of the same candidate measured in ``--repeats`` fresh evaluations under our timing policy and the paper
code's (``authors``); then evaluations per minute for a batch of distinct candidates, sequential vs the pool,
and the cost of a cache hit. Targets (issue 2/3): CV <= 1 % for kernels >= 0.1 ms; >= 20 evaluations/min/GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

from drk.examples import example_candidate, example_problem
from drk.gym import EvalConfig, Pool, evaluate
from drk.gym.result import mean_stage_seconds


def gpu_clocks() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu",
                               "--format=csv,noheader"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "n/a"


#: EvalConfig fields the command line sets for every evaluation (--burst-cycles and its slacks)
TIMING: dict = {}


def spread(problem_name: str, repeats: int, policy: str) -> dict:
    problem = example_problem(problem_name)
    candidate = example_candidate("good", problem_name)
    cfg = EvalConfig(timing_policy=policy, timeout_s=300, **TIMING)
    speedups, ref_ms, kernel_ms, coverage = [], [], [], []
    for i in range(repeats):
        result = evaluate(problem, candidate, device="cuda", config=cfg)
        assert result.status == "correct", result.error
        speedups.append(result.speedup)
        ref_ms.append(result.ref_ms)
        kernel_ms.append(result.kernel_ms)
        coverage.append(result.coverage)
        print(f"  {problem_name} {policy} #{i}: speedup {result.speedup:.4f} ref {result.ref_ms:.4f} ms "
              f"kernel {result.kernel_ms:.4f} ms  unaccounted {_ms(result.unaccounted_ms)} / calibrated "
              f"{_ms(result.unaccounted_calibrated_ms)} ms/call  quiet {result.timing_quiet}  stages {_stages(result)}",
              flush=True)
    cv = statistics.stdev(speedups) / statistics.fmean(speedups)
    return {"problem": problem_name, "policy": policy, "speedup_mean": statistics.fmean(speedups),
            "speedup_cv_pct": 100 * cv, "ref_ms": statistics.median(ref_ms), "kernel_ms": statistics.median(kernel_ms),
            "speedups": speedups, "coverage": coverage}


def _ms(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _stages(result) -> str:
    return " ".join(f"{k}={v:.1f}" for k, v in (result.stage_s or {}).items())


def pool_spread(problem_names: list[str], copies: int, workers: int) -> list[dict]:
    """The CV of one candidate's speedup when its evaluations share a Pool with other candidates (each copy a new
    source, so nothing is cached): what a training run's rewards see, with other evaluations' GPU work around."""
    kinds = ["lazy", "wrong", "decoy"]
    jobs, owners = [], []
    for i in range(copies):
        for name in problem_names:
            problem = example_problem(name)
            jobs.append((problem, example_candidate("good", name) + f"\n# copy {i}\n"))
            owners.append(name)
            jobs.append((example_problem("relu2"), example_candidate(kinds[i % 3]) + f"\n# filler {i} {name}\n"))
            owners.append(None)
    with tempfile.TemporaryDirectory() as cache_dir:
        pool = Pool(device="cuda", workers=workers, cache_dir=cache_dir, progress=False, config=EvalConfig(**TIMING))
        start = time.monotonic()
        results = pool.map(jobs)
        per_min = len(jobs) / (time.monotonic() - start) * 60
    rows = []
    for name in problem_names:
        mine = [r for r, owner in zip(results, owners) if owner == name]
        speedups = [r.speedup for r in mine if r.status == "correct" and r.speedup]
        cv = statistics.stdev(speedups) / statistics.fmean(speedups) if len(speedups) > 1 else float("nan")
        rows.append({"problem": name, "workers": workers, "n": len(mine), "n_correct": len(speedups),
                     "speedup_mean": statistics.fmean(speedups) if speedups else None, "speedup_cv_pct": 100 * cv,
                     "speedups": speedups, "evals_per_min": per_min,
                     "statuses": sorted({r.status for r in mine}),
                     "hack_reasons": sorted({x for r in mine for x in (r.hack_reasons or [])}),
                     "unaccounted_ms": [r.unaccounted_ms for r in mine],
                     "unaccounted_calibrated_ms": [r.unaccounted_calibrated_ms for r in mine],
                     "timing_quiet": [r.timing_quiet for r in mine],
                     "settle_excess_ms": [r.settle_excess_ms for r in mine]})
    return rows


def throughput(batch: int, workers: int) -> dict:
    problem = example_problem("relu2")
    kinds = ["good", "lazy", "wrong", "decoy"]
    pairs = [(problem, example_candidate(kinds[i % len(kinds)]) + f"\n# variant {i}\n") for i in range(batch)]
    start = time.monotonic()
    sequential = []
    for p, c in pairs[: batch // 2]:
        sequential.append(evaluate(p, c, device="cuda"))
        print(f"  sequential #{len(sequential)}: {sequential[-1].status} {sequential[-1].elapsed_s:.1f} s  "
              f"stages {_stages(sequential[-1])}", flush=True)
    sequential_per_min = (batch // 2) / (time.monotonic() - start) * 60
    with tempfile.TemporaryDirectory() as cache_dir:
        pool = Pool(device="cuda", workers=workers, cache_dir=cache_dir, progress=False)
        fresh = [(p, c + "\n# pool\n") for p, c in pairs]
        start = time.monotonic()
        results = pool.map(fresh)
        pool_per_min = len(fresh) / (time.monotonic() - start) * 60
        start = time.monotonic()
        again = pool.map(fresh)
        hit_ms = (time.monotonic() - start) / len(fresh) * 1e3
    assert all(r.cached for r in again)
    return {"batch": batch, "workers": workers, "sequential_evals_per_min": sequential_per_min,
            "pool_evals_per_min": pool_per_min, "cache_hit_ms": hit_ms,
            "statuses": sorted({r.status for r in results}),
            "sequential_seconds_by_status": seconds_by_status(sequential),
            "pool_seconds_by_status": seconds_by_status(results),
            "sequential_stage_s": mean_stage_seconds(sequential), "pool_stage_s": mean_stage_seconds(results)}




def seconds_by_status(results: list) -> dict:
    """Mean wall seconds of one evaluation, per status (failing candidates should cost little)."""
    by: dict[str, list[float]] = {}
    for r in results:
        by.setdefault(r.status, []).append(r.elapsed_s)
    return {k: round(statistics.fmean(v), 2) for k, v in sorted(by.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--batch", type=int, default=24)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--out", default=None)
    parser.add_argument("--spread", nargs="*", default=["relu2", "matmul"], help="examples for the CV part")
    parser.add_argument("--policies", nargs="+", default=["drk", "authors"], choices=["drk", "authors"])
    parser.add_argument("--spares", type=int, default=None,
                        help="runners started ahead (drk.gym.warm; default 1): 0 tells whether a spare starting "
                             "during an evaluation moves its timings")
    parser.add_argument("--pool-copies", type=int, default=0,
                        help="also the CV inside a Pool: this many copies of each --spread example's good candidate, "
                             "each beside a failing filler candidate, through Pool(--workers)")
    parser.add_argument("--burst-cycles", type=int, default=0, help="EvalConfig.timing_burst_cycles (burst rounds)")
    parser.add_argument("--slack-ms", type=float, default=None, help="EvalConfig.timing_slack_ms")
    parser.add_argument("--round-slack-ms", type=float, default=None, help="EvalConfig.timing_round_slack_ms")
    args = parser.parse_args()
    TIMING.update({k: v for k, v in (("timing_burst_cycles", args.burst_cycles), ("timing_slack_ms", args.slack_ms),
                                     ("timing_round_slack_ms", args.round_slack_ms)) if v})
    if args.spares is not None:
        from drk.gym.warm import shared_runners

        shared_runners().spares = args.spares
    report = {"spares": args.spares, "warm_profiler": os.environ.get("DRK_WARM_PROFILER", "1"), "clocks_before": gpu_clocks(), "spread": [], "throughput": None}
    for name in args.spread if args.repeats > 1 else []:
        for policy in args.policies:
            row = spread(name, args.repeats, policy)
            report["spread"].append(row)
            print(f"{name:7s} {policy:8s} speedup {row['speedup_mean']:.3f}x  CV {row['speedup_cv_pct']:.2f} %  "
                  f"ref {row['ref_ms']:.3f} ms  kernel {row['kernel_ms']:.3f} ms  PR {row['coverage']}", flush=True)
    if args.pool_copies:
        report["pool_spread"] = pool_spread(args.spread, args.pool_copies, args.workers)
        for row in report["pool_spread"]:
            print(f"pool({row['workers']}) {row['problem']:7s} speedup {row['speedup_mean']}  CV "
                  f"{row['speedup_cv_pct']:.2f} %  correct {row['n_correct']}/{row['n']}  statuses {row['statuses']}  "
                  f"{row['evals_per_min']:.1f} evals/min  speedups {[round(x, 3) for x in row['speedups']]}  "
                  f"hack reasons {row['hack_reasons']}  unaccounted_ms {row['unaccounted_ms']}  "
                  f"settle_excess_ms {row['settle_excess_ms']}  calibrated {row['unaccounted_calibrated_ms']}  "
                  f"quiet {row['timing_quiet']}",
                  flush=True)
    report["clocks_after"] = gpu_clocks()
    if args.batch:
        report["throughput"] = throughput(args.batch, args.workers)
    t = report["throughput"] or {}
    if t:
        print(f"throughput: sequential {t['sequential_evals_per_min']:.1f}/min, pool({t['workers']}) "
              f"{t['pool_evals_per_min']:.1f}/min, cache hit {t['cache_hit_ms']:.2f} ms")
        print(f"seconds per evaluation by status: sequential {t['sequential_seconds_by_status']}, "
              f"pool {t['pool_seconds_by_status']}")
        print(f"mean seconds per stage: sequential {t['sequential_stage_s']}, pool {t['pool_stage_s']}")
    print(f"clocks before: {report['clocks_before']}  after: {report['clocks_after']}")
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(report, handle, indent=2)


if __name__ == "__main__":
    main()
