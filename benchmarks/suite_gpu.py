"""Measure every bundled solution on the GPU; write ``drk/problems/gpu_results.csv``.

    python benchmarks/suite_gpu.py [--out drk/problems/gpu_results.csv] [--workers 4]

Each row: problem, level, kind (fused/lazy), status, speedup, profiling ratio (coverage), reference and kernel
medians (ms), the GPU, the timing backend. Evaluations per minute for the whole batch are printed at the end.
"""

from __future__ import annotations

import argparse
import time

from drk.gym import EvalConfig, Pool, load_problems, results_frame
from drk.problems import GPU_RESULTS, solution_source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(GPU_RESULTS))
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--spec", default="drk:all")
    args = parser.parse_args()
    problems = load_problems(args.spec)
    pairs, labels = [], []
    for problem in problems:
        for kind in ("fused", "lazy"):
            source = solution_source(problem, kind)
            if source:
                pairs.append((problem, source))
                labels.append((problem, kind))
    pool = Pool(device="cuda", workers=args.workers, config=EvalConfig(timeout_s=300), progress=False)
    start = time.monotonic()
    results = pool.map(pairs)
    per_min = len(pairs) / (time.monotonic() - start) * 60
    frame = results_frame(results, labels=[p.key for p, _ in labels])
    frame.insert(1, "level", [p.level for p, _ in labels])
    frame.insert(2, "kind", [k for _, k in labels])
    frame["gpu"] = [r.device for r in results]
    with open(args.out, "w") as handle:
        handle.write(f"# drk bundled solutions measured by benchmarks/suite_gpu.py on {results[0].device}; "
                     f"timing policy drk (L2 flush, interleaved, medians); {per_min:.1f} evaluations/min\n")
        frame.to_csv(handle, index=False)
    print(frame[["label", "kind", "status", "speedup", "coverage", "ref_ms", "kernel_ms"]].to_string())
    ok = frame[frame.status == "correct"]
    print(f"\n{len(ok)}/{len(frame)} correct; median speedup fused {ok[ok.kind == 'fused'].speedup.median():.2f}x, "
          f"lazy {ok[ok.kind == 'lazy'].speedup.median():.2f}x; median PR fused {ok[ok.kind == 'fused'].coverage.median():.2f}, "
          f"lazy {ok[ok.kind == 'lazy'].coverage.median():.2f}; {per_min:.1f} evaluations/min ({args.workers} workers)")


if __name__ == "__main__":
    main()
