"""How a Pool's throughput scales with its workers, and where each stage's time goes (issue 13).

    python benchmarks/pool_scaling.py --device cuda --workers 2 4 8 --pairs 24 [--timing-trials 100]
        [--calibration-rounds 3] [--out scaling.json]

Each setting judges its own slice of distinct mini2 (problem, program) pairs (no cache, so nothing is reused) through
a fresh ``Pool(workers)`` and prints evaluations/min, the mean seconds per stage, and how many results carry
``timing_mismatch`` evidence. If the per-stage times grow with the workers while the rate stays flat, the pool is
limited by contention (the GPU lock's exclusive sections, CPU, GPU time-slicing), not by start-up. A smaller
``--timing-trials``/``--calibration-rounds`` shortens the exclusive sections: the difference it makes says how much
of the limit is the lock. Each setting also prints the spare runners' start-up totals and how many start at once
(``drk.gym.warm.parallel_starts``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--pairs", type=int, default=24, help="distinct pairs per setting")
    parser.add_argument("--timing-trials", type=int, default=None)
    parser.add_argument("--calibration-rounds", type=int, default=None)
    parser.add_argument("--offset", type=int, default=0, help="skip this many pairs of the table first")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if args.device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    from drk.gym import EvalConfig, Pool
    from drk.gym.result import mean_stage_seconds
    from drk.gym.warm import parallel_starts, spare_start_stats
    from drk.mini2.render import render
    from drk.mini2.verdicts import measure_config, select_tasks, table_pairs

    config = measure_config(EvalConfig())
    if args.timing_trials is not None:
        config = replace(config, timing_trials=args.timing_trials)
    if args.calibration_rounds is not None:
        config = replace(config, calibration_rounds=args.calibration_rounds)
    pairs = table_pairs(select_tasks("all"))[args.offset:]
    rows, start_at = [], 0
    for workers in args.workers:
        chunk = pairs[start_at:start_at + args.pairs]
        start_at += args.pairs
        jobs = [(task.problem(), render(task, program)) for task, program in chunk]
        pool = Pool(device=args.device, workers=workers, config=config, progress=False)
        spare_start_stats(reset=True)
        time.sleep(5 if args.device == "cuda" else 0)  # the pool's spares start before the clock does
        began = time.monotonic()
        results = pool.map(jobs)
        minutes = (time.monotonic() - began) / 60
        row = {"workers": workers, "pairs": len(jobs), "evals_per_min": len(jobs) / minutes,
               "stage_s": mean_stage_seconds(results),
               "statuses": {s: sum(r.status == s for r in results) for s in sorted({r.status for r in results})},
               "timing_mismatch": sum("timing_mismatch" in (r.hack_reasons or []) for r in results),
               "env_errors": sum(r.env_error for r in results),
               "timing_charge_ms": [r.timing_charge_ms for r in results if r.timing_charge_ms],
               "parallel_starts": parallel_starts(2 * workers),
               "spare_starts": {k: round(v, 2) for k, v in sorted(spare_start_stats().items())}}
        rows.append(row)
        print(f"workers {workers}: {row['evals_per_min']:.1f} evaluations/min over {len(jobs)} pairs; stages (s) "
              f"{row['stage_s']}; statuses {row['statuses']}; timing_mismatch {row['timing_mismatch']}; "
              f"env errors {row['env_errors']}; charged {len(row['timing_charge_ms'])}; spares "
              f"({row['parallel_starts']} start at once): {row['spare_starts']}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"config": config.to_dict(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
