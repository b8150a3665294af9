"""How far the speedups of one honest kernel spread when evaluations of it run side by side in a Pool (GPU).

    python benchmarks/busy_pool_spread.py [--copies 8] [--workers 8] [--burst-cycles 0] [--timing-trials 30]
                                          [--problem relu2] [--candidate good] [--batches 1]

Every evaluation is the same kernel (copies differ by a comment only, so the pool judges each), started together: the
host is as busy as a Pool gets (eight judges and their runners importing, compiling, checking at once). Prints each
result's speedup, reference and kernel ms per call and what the timing charged, then the range and coefficient of
variation of the speedups per batch. Session 30 (H200) saw relu2 ``good`` at 1.38-1.99x in synced rounds with every
timing quiet and nothing charged, its reference steady at 0.260 ms: the kernel's own start -> end grew. Run with
``--burst-cycles 10000000`` to queue each round's calls behind a GPU busy-wait (``EvalConfig.timing_burst_cycles``),
which keeps the host's launch latency out of the calls' times.
"""

from __future__ import annotations

import argparse
import statistics

from drk.examples import example_candidate, example_problem
from drk.gym import EvalConfig, Pool


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--burst-cycles", type=int, default=0)
    parser.add_argument("--timing-trials", type=int, default=30)
    parser.add_argument("--problem", default="relu2")
    parser.add_argument("--candidate", default="good")
    parser.add_argument("--batches", type=int, default=1)
    args = parser.parse_args()
    problem = example_problem(args.problem)
    source = example_candidate(args.candidate, args.problem)
    config = EvalConfig(timing_trials=args.timing_trials, warmup=5, timeout_s=120,
                        timing_burst_cycles=args.burst_cycles)
    for batch in range(args.batches):
        pool = Pool(device="cuda", workers=args.workers, progress=False)
        pairs = [(problem, source + f"\n# batch {batch} copy {i}\n") for i in range(args.copies)]
        results = pool.map(pairs, config=config)
        speedups = []
        for r in results:
            print(f"  {r.status:9s} speedup {r.speedup or 0:.3f} ref {r.ref_ms or 0:.4f} kernel {r.kernel_ms or 0:.4f} "
                  f"charge {r.timing_charge_ms} unaccounted {r.unaccounted_ms} settle {r.settle_excess_ms} "
                  f"flush {r.flush_excess_ms} quiet {r.timing_quiet} burst {r.burst_cycles}")
            if r.speedup:
                speedups.append(r.speedup)
        if len(speedups) > 1:
            cv = statistics.stdev(speedups) / statistics.fmean(speedups) * 100
            print(f"{args.problem}/{args.candidate} burst={args.burst_cycles} batch {batch}: {len(speedups)} speedups "
                  f"{min(speedups):.3f}-{max(speedups):.3f}x, median {statistics.median(speedups):.3f}x, CV {cv:.1f} %")


if __name__ == "__main__":
    main()
