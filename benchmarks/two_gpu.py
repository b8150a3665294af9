"""Issue 14: Pool across two GPUs against one, on the bundled solutions (fused), and a GPU fault on one GPU.

    python benchmarks/two_gpu.py [--n 48] [--workers-per-gpu 8] [--out two_gpu.json]

Runs the same batch (distinct copies, no cache) through ``Pool(gpus=[0])`` and ``Pool(gpus=[0, 1])`` with the same
workers per GPU and prints evaluations/min of each and their ratio (goal >= 1.9). The two-GPU batch carries a
candidate that makes an illegal memory access: the others, on either GPU, must still be judged as on one GPU.
"""

from __future__ import annotations

import argparse
import json
import time

from drk.gym import EvalConfig, Pool, load_problems
from drk.problems import solution_source

ILLEGAL_ACCESS = '''
import torch, torch.nn as nn, triton, triton.language as tl

@triton.jit
def bad_kernel(x_ptr, y_ptr, n, far, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) + far
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))

class ModelNew(nn.Module):
    def forward(self, *xs):
        x = xs[0]
        y = torch.empty_like(x)
        bad_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), 1 << 40, BLOCK=1024)
        return y
'''


def run(pairs: list, gpus: list[int], workers_per_gpu: int, config: EvalConfig) -> tuple[float, list]:
    pool = Pool(device="cuda", gpus=gpus, workers=workers_per_gpu * len(gpus), config=config, progress=False)
    time.sleep(20)  # spares started: both runs begin warm
    start = time.monotonic()
    results = pool.map(pairs)
    return len(pairs) / (time.monotonic() - start) * 60, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=48)
    parser.add_argument("--workers-per-gpu", type=int, default=8)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    config = EvalConfig(timeout_s=120)
    problems = [p for p in load_problems("drk:all") if solution_source(p, "fused")][: args.n]
    base = [(p, solution_source(p, "fused")) for p in problems]
    one_rate, one = run([(p, s + "\n# one gpu\n") for p, s in base], [0], args.workers_per_gpu, config)
    print(f"1 GPU : {one_rate:.1f} evaluations/min ({len(base)} pairs, {args.workers_per_gpu} workers)", flush=True)
    two_pairs = [(p, s + "\n# two gpus\n") for p, s in base]
    two_pairs.insert(len(two_pairs) // 2, (problems[0], ILLEGAL_ACCESS))
    two_rate, two = run(two_pairs, [0, 1], args.workers_per_gpu, config)
    fault = two.pop(len(two_pairs) // 2)
    print(f"2 GPUs: {two_rate:.1f} evaluations/min ({len(two_pairs)} pairs incl. a faulting one); "
          f"ratio {two_rate / one_rate:.2f}", flush=True)
    same = sum(a.status == b.status for a, b in zip(one, two))
    print(f"faulting candidate: {fault.status} ({(fault.error or '')[-300:]!r}); same status on "
          f"{same}/{len(one)} others; GPUs used: {sorted({r.device for r in two})}")
    for label, results in (("1 GPU", one), ("2 GPUs", two)):
        for problem, r in zip(problems, results):
            if r.status != "correct":
                print(f"  {label} {problem.name}: {r.status} env_error={r.env_error} {(r.error or '')[-300:]!r}")
    if args.out:
        with open(args.out, "w") as handle:
            json.dump({"one_gpu_per_min": one_rate, "two_gpu_per_min": two_rate, "ratio": two_rate / one_rate,
                       "fault_status": fault.status, "same_status": same, "n": len(one),
                       "one": [r.status for r in one], "two": [r.status for r in two],
                       "errors": [[(r.error or "")[-1000:] for r in one], [(r.error or "")[-1000:] for r in two]],
                       "stage_s_one": [r.stage_s for r in one]}, handle, indent=1)


if __name__ == "__main__":
    main()
