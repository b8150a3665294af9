"""How many sandboxed runners a batch of evaluations takes and starts, and its evaluations/min (issue 13).

    python benchmarks/runner_demand.py [--device cpu|cuda] [--workers 2] [--copies 1]

Runner start-ups (Python, torch, a CUDA context, the profiler's warm-up) bounded a Pool's throughput on the H200
(``docs/environment.md``, Throughput). This judges every relu2 example of ``drk.examples`` (mixed verdicts: most of
an RL batch fails) through a ``Pool`` and counts runners taken by evaluations (``WarmRunners.take``) and runner
processes started (``drk.gym.warm.spawn_runner``, spares included). Each copy of the batch gets a comment line of
its own, so copies are distinct evaluations (no cache). Works on any drk version with ``drk.gym.warm``: run it in a
checkout of an older commit to compare.
"""

from __future__ import annotations

import argparse
import collections
import threading
import time

from drk.examples import EXPECTED, example_candidate, example_problem
from drk.gym import EvalConfig, Pool, warm

#: Examples that wait for their time limit: left out (they measure the limit, not the runners).
SLOW = {"hangs", "attack_pipe_stall"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--copies", type=int, default=1)
    args = parser.parse_args()
    counts: collections.Counter[str] = collections.Counter()
    lock = threading.Lock()
    take, spawn = warm.WarmRunners.take, warm.spawn_runner

    def counting_take(self, *a, **k):
        with lock:
            counts["taken"] += 1
        return take(self, *a, **k)

    def counting_spawn(*a, **k):
        with lock:
            counts["started"] += 1
        return spawn(*a, **k)

    warm.WarmRunners.take, warm.spawn_runner = counting_take, counting_spawn
    problem = example_problem()
    names = sorted(n for n in EXPECTED if n not in SLOW)
    pairs = [(problem, f"{example_candidate(n)}\n# copy {c}\n") for c in range(args.copies) for n in names]
    pool = Pool(device=args.device, workers=args.workers, config=EvalConfig(timeout_s=60), progress=False)
    start = time.monotonic()
    results = pool.map(pairs)
    seconds = time.monotonic() - start
    statuses = collections.Counter(r.status for r in results)
    print(f"{len(results)} evaluations in {seconds:.0f} s: {60 * len(results) / seconds:.1f}/min on {args.device}, "
          f"{args.workers} workers; statuses {dict(sorted(statuses.items()))}")
    print(f"runners taken {counts['taken']} ({counts['taken'] / len(results):.2f} per evaluation), "
          f"started {counts['started']} ({counts['started'] / len(results):.2f} per evaluation, spares included)")


if __name__ == "__main__":
    main()
