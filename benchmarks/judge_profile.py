"""Where a judge's time goes: sequential evaluations with the judge under cProfile (developer diagnostics).

    DRK_JUDGE_PROFILE is set by this script; run on a GPU host from the repository root:
    python benchmarks/judge_profile.py --out out/prof [--relu2 2] [--matmul 1] [--mini2 2]

Prints each evaluation's status and ``stage_s``, then, per evaluation, the judge's functions with the most cumulative
time (the runner's work shows as the judge waiting in ``RunnerProcess.request`` under the stage that asked).
"""

from __future__ import annotations

import argparse
import glob
import os
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="out/prof")
    parser.add_argument("--relu2", type=int, default=2)
    parser.add_argument("--matmul", type=int, default=1)
    parser.add_argument("--mini2", type=int, default=2, help="the first N pairs of the mini2 verdict table")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.environ["DRK_JUDGE_PROFILE"] = os.path.abspath(args.out)  # before the first judge starts
    from drk.examples import example_candidate, example_problem
    from drk.gym import evaluate
    from drk.mini2.render import render
    from drk.mini2.verdicts import measure_config, select_tasks, table_pairs

    jobs = [("relu2", example_problem("relu2"), example_candidate("good") + f"\n# {i}\n", None)
            for i in range(args.relu2)]
    jobs += [("matmul", example_problem("matmul"), example_candidate("good", "matmul") + f"\n# {i}\n", None)
             for i in range(args.matmul)]
    for task, program in table_pairs(select_tasks("all"), args.mini2):
        jobs.append((f"mini2 {task.name} {program}", task.problem(), render(task, program), measure_config()))
    for label, problem, source, config in jobs:
        before = set(glob.glob(os.path.join(args.out, "*.pstats")))
        result = evaluate(problem, source, device=args.device, config=config)
        stages = " ".join(f"{k}={v:.2f}" for k, v in (result.stage_s or {}).items())
        print(f"== {label}: {result.status} {result.hack_reasons} {result.elapsed_s:.1f} s | {stages}", flush=True)
        new = sorted(set(glob.glob(os.path.join(args.out, "*.pstats"))) - before)
        for path in new:
            stats = pstats.Stats(path, stream=sys.stdout)
            stats.sort_stats("cumulative").print_stats(r"drk/gym", args.top)
            stats.print_callers(r"\(request\)|\(fetch\)|\(candidate_round\)|\(reference_round\)")


if __name__ == "__main__":
    main()
