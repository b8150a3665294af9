"""Measure every bundled solution on the GPU; write ``drk/problems/gpu_results.csv``.

    python benchmarks/suite_gpu.py [--out drk/problems/gpu_results.csv] [--workers 4] [--policies drk authors]
        [--reference-modes eager compile] [--append]

Each row: problem, level, kind (fused/lazy), timing policy, status, speedup, profiling ratio (coverage), reference
and kernel medians (ms), the GPU, the timing backend. Evaluations per minute are printed at the end, and, per timing
policy, Fast@p of the bundled solutions treated as samples: how much the timer alone (L2 flush and medians vs the
paper code's warm mean) moves the verdicts (issue 6). ``--reference-modes compile`` also times each solution against
the ``torch.compile``d reference (the paper's Table 2; the ``reference_mode`` column says which).
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from drk.gym import EvalConfig, Pool, load_problems, results_frame
from drk.gym.result import error_headline
from drk.problems import GPU_RESULTS, solution_source, timing_policy_fast_p


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(GPU_RESULTS))
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--spec", default="drk:all")
    parser.add_argument("--policies", nargs="+", default=["drk"], choices=["drk", "authors"])
    parser.add_argument("--kinds", nargs="+", default=["fused", "lazy"], choices=["fused", "lazy"])
    parser.add_argument("--reference-modes", nargs="+", default=["eager"], choices=["eager", "compile"])
    parser.add_argument("--memory-factor", type=float, default=None,
                        help="Pool(memory_factor=...): an evaluation's planned GPU memory as a multiple of its judge's "
                             "peak (default drk.gym.pool.PROCESSES_PER_EVALUATION)")
    parser.add_argument("--burst-cycles", type=int, default=None,
                        help="EvalConfig.timing_burst_cycles (burst rounds; default: the config's own)")
    parser.add_argument("--l2-flush-mb", type=int, default=None,
                        help="EvalConfig.l2_flush_mb (a longer flush hides more of the host's launch latency)")
    parser.add_argument("--append", action="store_true",
                        help="keep the rows already in --out that this run does not measure again (another "
                             "reference mode or level in a device call of its own: a 10-minute call fits about one "
                             "pass); their rows are kept, the file's comment lines are not")
    args = parser.parse_args()
    problems = load_problems(args.spec)
    pairs, labels = [], []
    for problem in problems:
        for kind in args.kinds:
            source = solution_source(problem, kind)
            if source:
                pairs.append((problem, source))
                labels.append((problem, kind))
    kept = _earlier_rows(args, {(p.key, kind) for p, kind in labels}) if args.append else []
    frames = []
    for policy, mode in [(p, m) for m in args.reference_modes for p in args.policies]:
        knobs = {key: value for key, value in (("timing_burst_cycles", args.burst_cycles),
                                                ("l2_flush_mb", args.l2_flush_mb)) if value is not None}
        config = EvalConfig(timeout_s=300, timing_policy=policy, reference_mode=mode, **knobs)
        factor = {} if args.memory_factor is None else {"memory_factor": args.memory_factor}
        pool = Pool(device="cuda", workers=args.workers, config=config, progress=True, **factor)
        start = time.monotonic()
        results = pool.map(pairs, on_result=lambda i, r: _print_result(labels[i], r))
        per_min = len(pairs) / (time.monotonic() - start) * 60
        frame = results_frame(results, labels=[p.key for p, _ in labels])
        frame.insert(1, "level", [p.level for p, _ in labels])
        frame.insert(2, "kind", [k for _, k in labels])
        frame.insert(3, "timing_policy", policy)
        frame.insert(4, "reference_mode", mode)
        policy = f"{policy}/{mode}"  # the label of this pass's printout
        frame["gpu"] = [r.device for r in results]
        frames.append(frame)
        ok = frame[frame.status == "correct"]
        print(f"[{policy}] {len(ok)}/{len(frame)} correct; median speedup fused "
              f"{ok[ok.kind == 'fused'].speedup.median():.2f}x, lazy {ok[ok.kind == 'lazy'].speedup.median():.2f}x; "
              f"median PR fused {ok[ok.kind == 'fused'].coverage.median():.2f}, lazy "
              f"{ok[ok.kind == 'lazy'].coverage.median():.2f}; {per_min:.1f} evaluations/min ({args.workers} workers)")
        for (problem, kind), r in zip(labels, results):
            if r.status != "correct":
                print(f"[{policy}] {problem.key} {kind}: {r.status} env_error={r.env_error} {error_headline(r.error, 400)!r}")
                if r.env_error:  # the whole text: the headline alone did not name a judge's CUDA failure
                    print(f"[{policy}] {problem.key} {kind} full error: {r.error[-3000:]}")
        stages = pd.DataFrame([r.stage_s for r in results]).mean().round(2)
        print(f"[{policy}] mean seconds per stage: " + ", ".join(f"{k} {v}" for k, v in stages.items())
              + f"; mean evaluation {pd.Series([r.elapsed_s for r in results]).mean():.1f} s")
        peaks = pd.Series([r.judge_gpu_mb for r in results], dtype=float) / 1024
        allocated = pd.Series([r.judge_gpu_allocated_mb for r in results], dtype=float) / 1024
        print(f"[{policy}] judge GPU peak GiB: median {peaks.median():.1f}, max {peaks.max():.1f} (in live tensors: "
              f"median {allocated.median():.1f}, max {allocated.max():.1f}); retried alone "
              f"after running out of memory: {sum('lone_retry' in (r.stage_s or {}) for r in results)}")
        timed = [r for r in results if r.timing_quiet is not None]
        print(f"[{policy}] timings with other evaluations' GPU work still running (timing_quiet False): "
              f"{sum(not r.timing_quiet for r in timed)} of {len(timed)}")
        by_stage = pd.DataFrame([r.judge_gpu_mb_by_stage or {} for r in results]) / 1024
        if not by_stage.empty:  # the running peak as each stage ended: where the judge's footprint comes from
            print(f"[{policy}] judge GPU peak GiB by the end of each stage (median): "
                  + ", ".join(f"{k} {v:.1f}" for k, v in by_stage.median().items()))
        overall = timing_policy_fast_p(frame.assign(label=[p.key for p, _ in labels])).iloc[0]
        print(f"[{policy}] Fast@p of the bundled solutions: "
              + ", ".join(f"{k} {100 * overall[k]:.1f}%" for k in overall.index if k.startswith("Fast@")))
        _write(kept + frames, args)  # after every pass: a device call cut short keeps the passes it finished


def _print_result(label: tuple, result) -> None:
    """One line per evaluation as it finishes, with its stages: a pass cut by a device call's limit still says
    where its time went (session 23's level-1 eager pass printed nothing but a progress bar)."""
    (problem, kind), r = label, result
    stages = " ".join(f"{k}={v:.1f}" for k, v in (r.stage_s or {}).items())
    speedup = f"{r.speedup:.2f}x" if r.speedup else "-"
    print(f"  {problem.key} {kind}: {r.status} {speedup} {r.elapsed_s:.1f}s judge_peak_mb={r.judge_gpu_mb} "
          f"(allocated {r.judge_gpu_allocated_mb}) quiet={r.timing_quiet} | "
          f"stages (s): {stages}", flush=True)


def _earlier_rows(args: argparse.Namespace, measured: set[tuple[str, str]]) -> list[pd.DataFrame]:
    """The rows of ``--out`` this run does not measure again: other passes (timing policy, reference mode), or other
    solutions (``--spec drk:level2`` after ``drk:level1``, to split a pass over device calls)."""
    try:
        earlier = pd.read_csv(args.out, comment="#")
    except FileNotFoundError:
        return []
    if "reference_mode" not in earlier:  # written before the column existed: eager only
        earlier.insert(4, "reference_mode", "eager")
    repeated = (earlier.timing_policy.isin(args.policies) & earlier.reference_mode.isin(args.reference_modes)
                & pd.Series([(label, kind) in measured for label, kind in zip(earlier.label, earlier.kind)],
                            index=earlier.index))
    return [earlier[~repeated]] if (~repeated).any() else []


def _write(frames: list[pd.DataFrame], args: argparse.Namespace) -> None:
    table = pd.concat(frames, ignore_index=True)
    done = sorted(set(zip(table.timing_policy, table.reference_mode)))
    with open(args.out, "w") as handle:
        handle.write(f"# drk bundled solutions measured by benchmarks/suite_gpu.py on {table.gpu.iloc[0]}; "
                     f"timing policies {args.policies}; reference modes {args.reference_modes}; passes written "
                     f"{['/'.join(d) for d in done]}\n")
        table.to_csv(handle, index=False)
    print(f"wrote {args.out} ({len(table)} rows)")


if __name__ == "__main__":
    main()
