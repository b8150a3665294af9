"""How long a CPU (Triton interpreter) evaluation of an honest relu2 kernel takes as its output grows: the sizes at
which a CPU evaluation finishes at all, against the costs that grow with the output (the answer's commitment, the
judge's reads).

    python benchmarks/cpu_output_size.py 4096 1048576 16777216 [--timeout-s 300]

One line per size: status, wall seconds and the stages over 0.05 s.
"""

from __future__ import annotations

import argparse
import time

from drk.examples import example_candidate, example_problem
from drk.gym import EvalConfig, evaluate
from drk.gym.problem import Problem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", type=int, nargs="+")
    parser.add_argument("--timeout-s", type=float, default=300)
    args = parser.parse_args()
    source = example_problem("relu2").source
    for n in args.sizes:
        problem = Problem.from_source(source.replace('CPU_SIZES = {"N": 4096}', f'CPU_SIZES = {{"N": {n}}}'),
                                      f"relu2_{n}")
        started = time.time()
        result = evaluate(problem, example_candidate("good"), device="cpu", config=EvalConfig(timeout_s=args.timeout_s))
        stages = {k: round(v, 1) for k, v in result.stage_s.items() if v > 0.05}
        print(f"N={n}: {result.status} in {time.time() - started:.1f} s; stages {stages}; "
              f"{(result.error or '')[:120]}", flush=True)


if __name__ == "__main__":
    main()
