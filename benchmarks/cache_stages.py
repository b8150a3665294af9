"""Where a batch of evaluations spent its time, read back from drk's result cache (issue 13).

    python benchmarks/cache_stages.py runs/mini2/cache.tgz [--stage runners] [--rows rows.csv]

A Pool's rate (evaluations/min) says *that* it is slow; every cached ``EvalResult`` carries ``stage_s`` (the seconds
of each stage, including the caller's wait for two started runners, ``runners``), so the cache of a finished build
says *where*. Prints, over the results that have ``--stage`` (older results lack the caller's stages), the mean,
median and 90th percentile of each stage and of ``elapsed_s``; ``--rows`` writes one row per result. Reads a cache
directory or a ``.tgz`` of one (as ``benchmarks/gpu_all.sh mini2`` leaves it) without unpacking it.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from drk.gym.result import EvalResult, mean_stage_seconds  # noqa: E402


def cached_results(path: Path) -> Iterator[EvalResult]:
    """Every result in a cache directory, or in a ``.tgz``/``.tar.gz`` of one."""
    if path.is_dir():
        for entry in sorted(path.rglob("*.json")):
            yield EvalResult.from_dict(json.loads(entry.read_text()))
        return
    with tarfile.open(path) as archive:
        for member in archive:
            if member.isfile() and member.name.endswith(".json"):
                yield EvalResult.from_dict(json.load(archive.extractfile(member)))


def quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cache", type=Path, help="a cache directory or a .tgz of one")
    parser.add_argument("--stage", default="runners", help="summarise only results that record this stage")
    parser.add_argument("--rows", type=Path, help="write one CSV row per result here")
    args = parser.parse_args()
    results = list(cached_results(args.cache))
    kept = [r for r in results if args.stage in (r.stage_s or {})]
    print(f"{len(results)} cached results, {len(kept)} with stage {args.stage!r}")
    if not kept:
        sys.exit(1)
    means = mean_stage_seconds(kept)
    print(f"{'stage':<12} {'mean':>7} {'median':>7} {'p90':>7}   (seconds per evaluation)")
    for name in [*means, "elapsed_s"]:
        values = [r.elapsed_s if name == "elapsed_s" else (r.stage_s or {}).get(name, 0.0) for r in kept]
        print(f"{name:<12} {statistics.mean(values):7.2f} {statistics.median(values):7.2f} {quantile(values, 0.9):7.2f}")
    judged = [sum(v for k, v in (r.stage_s or {}).items() if k not in ("runners", "teardown")) for r in kept]
    print(f"judge stages (all but runners and teardown): mean {statistics.mean(judged):.2f} s")
    if args.rows:
        names = sorted({k for r in results for k in (r.stage_s or {})})
        with args.rows.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["problem", "status", "speedup", "timing_charge_ms", "elapsed_s", *[f"s_{n}" for n in names]])
            for r in results:
                writer.writerow([r.problem, r.status, r.speedup, r.timing_charge_ms, r.elapsed_s,
                                 *[(r.stage_s or {}).get(n, "") for n in names]])
        print(f"wrote {args.rows} ({len(results)} rows)")


if __name__ == "__main__":
    main()
