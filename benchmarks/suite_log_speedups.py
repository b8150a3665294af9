"""Speedups of the bundled solutions side by side, read from the per-evaluation lines of suite logs
(``benchmarks/suite_gpu.py``'s output, e.g. ``results/gpu/*/..._suite_drk_eager_level1.log``): one column per log,
and per log the median of its per-evaluation ``timing`` stage seconds.

    python benchmarks/suite_log_speedups.py results/gpu/2026-12-04-s30/call2_suite_drk_eager_level1.log \
        results/gpu/2026-12-04-s31/call2_suite_drk_eager_level1.log
"""

from __future__ import annotations

import argparse
import re
import statistics
from pathlib import Path

LINE = re.compile(r"(L\d/\w+) (fused|lazy): (\w+) (?:([0-9.]+)x )?([0-9.]+)s .*?timing=([0-9.]+)")


def read_log(path: Path) -> tuple[dict[str, float | None], list[float]]:
    """Per ``label kind``: the speedup (None without one); and every evaluation's timing stage seconds."""
    speedups: dict[str, float | None] = {}
    timing_s: list[float] = []
    for match in LINE.finditer(path.read_text(errors="replace")):
        label, kind, _status, speedup, _elapsed, timing = match.groups()
        speedups[f"{label} {kind}"] = float(speedup) if speedup else None
        timing_s.append(float(timing))
    return speedups, timing_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("logs", nargs="+", type=Path)
    args = parser.parse_args()
    read = [read_log(path) for path in args.logs]
    for i, path in enumerate(args.logs):
        print(f"[{i}] {path}: {len(read[i][0])} evaluations, median timing stage "
              f"{statistics.median(read[i][1]) if read[i][1] else float('nan'):.1f} s")
    keys = sorted({key for speedups, _ in read for key in speedups})
    print(f"{'solution':44s}" + "".join(f"{f'[{i}]':>9s}" for i in range(len(read))))
    for key in keys:
        cells = [speedups.get(key) for speedups, _ in read]
        print(f"{key:44s}" + "".join(f"{c:9.2f}" if c is not None else f"{'-':>9s}" for c in cells))


if __name__ == "__main__":
    main()
