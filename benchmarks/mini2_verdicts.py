"""Build the mini2 verdict table: every (problem, canonical program) judged once through drk.gym (issue 12, item 4).

    # on a GPU host (all visible GPUs, 4 evaluations per GPU): 838 evaluations, ~21 min on one H200
    python benchmarks/mini2_verdicts.py --device cuda --cache-dir runs/mini2/cache
    # the same in three device calls of ~7 minutes each (1.5 s per evaluation measured), then merged:
    python benchmarks/mini2_verdicts.py --device cuda --problems 0-12 --out runs/mini2/part1.csv    # 279
    python benchmarks/mini2_verdicts.py --device cuda --problems 13-25 --out runs/mini2/part2.csv   # 295
    python benchmarks/mini2_verdicts.py --device cuda --problems 26-37 --out runs/mini2/part3.csv   # 264
    python benchmarks/mini2_verdicts.py --merge runs/mini2/part1.csv runs/mini2/part2.csv runs/mini2/part3.csv
    # the held-out problems against torch.compile'd references (Table 2's mini2 row): 176 evaluations
    python benchmarks/mini2_verdicts.py --device cuda --problems heldout --reference-mode compile \
        --cache-dir runs/mini2c/cache --out results/mini2/verdicts_heldout_compile.csv
    # a quick CPU check (Triton interpreter, no sandbox here without bubblewrap):
    python benchmarks/mini2_verdicts.py --device cpu --limit 6 --problems 0 --isolation process --out /tmp/v.csv

The sandbox needs bubblewrap (absent from the device image: carry its .deb, see benchmarks/gpu_all.sh). With 4
evaluations per GPU, 2 of 279 honest rows were judged ``hacked: timing_mismatch`` on 2026-12-01 (drk's timing
slack, not the program): rows whose only reason is ``timing_mismatch`` are worth re-measuring.

Writes ``--out`` (CSV, one row per pair) and its ``.json`` sidecar (GPU, date, git sha, versions, EvalConfig).
With ``--cache-dir``, an interrupted build resumes from drk's content-addressed result cache (one file per pair:
to carry it between device calls, archive it, e.g. ``tar czf $OUT/cache.tgz -C runs/mini2 cache``; a call that
returns many small files gets only the first few back). Measured 2026-12-01 on one H200 with 8 workers: 166 pairs
in 290 s (~34/min) with the code of that day's morning; with a6803f0 (warm judges, calibration off) 261 pairs in
718 s (19-23/min: results/gpu/2026-12-01-s14), so the whole table needs ~40 min of GPU, in five calls. While it
runs, the spare runners' start-up totals (``drk.gym.warm.spare_start_stats``) are printed every ``--stats-every``
seconds (session 15 finished the table: 577 pairs at 21-23/min; ``benchmarks/cache_stages.py`` reads where the time
went from the cache).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    parser.add_argument("--out", default="results/mini2/verdicts.csv")
    parser.add_argument("--problems", default=None,
                        help="all (default), train, heldout, or comma-separated task indices/names")
    parser.add_argument("--limit", type=int, default=None, help="only the first N (problem, program) pairs")
    parser.add_argument("--workers", type=int, default=None, help="concurrent evaluations (default: drk.gym.Pool's)")
    parser.add_argument("--cache-dir", default=None, help="drk result cache (resume an interrupted build)")
    parser.add_argument("--isolation", default="auto", choices=("auto", "uid", "namespace", "process"))
    parser.add_argument("--timeout", type=float, default=180.0, help="EvalConfig.timeout_s")
    parser.add_argument("--reference-mode", default="eager", choices=("eager", "compile"),
                        help="EvalConfig.reference_mode: eager (the table RL reads) or compile (torch.compile'd "
                             "reference, for Table 2's mini2 row: e.g. --problems heldout)")
    parser.add_argument("--count", action="store_true", help="only print how many evaluations a build needs")
    parser.add_argument("--note", default=None,
                        help="text for the sidecar, e.g. which cached rows an earlier commit measured")
    parser.add_argument("--stats-every", type=float, default=60.0,
                        help="seconds between prints of the spare runners' start-up totals (0: never)")
    parser.add_argument("--merge", nargs="+", default=None, metavar="CSV",
                        help="merge tables built in parts into --out (no evaluation)")
    args = parser.parse_args(argv)

    if args.device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported
    from drk.gym import EvalConfig
    from drk.mini2.verdicts import load_verdicts, merge_tables, run_build, select_tasks, summary, table_pairs

    if args.merge:
        path = merge_tables(args.merge, args.out)
        print(f"wrote {path} ({len(load_verdicts(path))} rows; sources match this checkout)")
        return 0
    if args.count:
        pairs = table_pairs(select_tasks(args.problems), args.limit)
        print(f"{len(pairs)} evaluations over {len({t.name for t, _ in pairs})} problems")
        return 0
    config = EvalConfig(isolation=args.isolation, timeout_s=args.timeout, reference_mode=args.reference_mode)
    if args.stats_every > 0:
        _print_spare_stats_every(args.stats_every)
    path, verdicts = run_build(device=args.device, out=args.out, problems=args.problems, limit=args.limit,
                               workers=args.workers, cache_dir=args.cache_dir, config=config, note=args.note)
    print(json.dumps(summary(verdicts), indent=1, sort_keys=True))
    env = sum(v.env_error for v in verdicts)
    print(f"wrote {path} ({len(verdicts)} rows, {env} environment errors)")
    return 1 if env else 0


def _print_spare_stats_every(seconds: float) -> None:
    """A daemon thread printing the spare runners' start-up totals (a build cut by a time limit still shows them)."""
    import threading
    import time

    from drk.gym.warm import spare_start_stats

    def loop() -> None:
        while True:
            time.sleep(seconds)
            stats = {k: round(v, 1) for k, v in sorted(spare_start_stats().items())}
            print(f"\nspare starts: {stats}", file=sys.stderr, flush=True)

    threading.Thread(target=loop, name="spare-stats", daemon=True).start()


if __name__ == "__main__":
    raise SystemExit(main())
