"""Per bundled problem, which hidden input sets the judge keeps and how far each one's atol is scaled (CPU sizes).

    python benchmarks/hidden_set_tolerance.py [--spec drk:all]

A hidden set's atol grows with its output's magnitude and with the reference's own sensitivity to TF32 rounding of
its inputs (``drk.gym.judge.plan_correctness``); a set so ill-conditioned that its tolerance spans its output is
skipped. This prints both, so a change to that rule can be read against the whole suite: a problem with no hidden set
left is checked on the distribution of ``get_inputs`` only.
"""

from __future__ import annotations

import argparse

import torch

from drk.gym import EvalConfig, load_problems
from drk.gym.judge import cpu_reference, plan_correctness


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", default="drk:all")
    args = parser.parse_args()
    torch.set_num_threads(1)
    kept_counts = []
    for problem in load_problems(args.spec):
        plan = plan_correctness(cpu_reference(problem.source), EvalConfig())
        hidden = {label.split(" (")[0].removeprefix("hidden input "): round(scale, 1)
                  for label, scale in zip(plan.labels, plan.atol_scale) if label.startswith("hidden")}
        kept_counts.append(len(hidden))
        print(f"{problem.key:40s} {len(hidden)} kept  atol x {hidden}", flush=True)
    print(f"{len(kept_counts)} problems; hidden sets kept: " +
          ", ".join(f"{n}: {kept_counts.count(n)} problems" for n in sorted(set(kept_counts), reverse=True)))


if __name__ == "__main__":
    main()
