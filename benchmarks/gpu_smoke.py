"""Quick GPU diagnostic: evaluate candidates and print status, wall time per pipeline stage, speedup and PR.

    python benchmarks/gpu_smoke.py relu2/good relu2/lazy matmul/good      # drk.examples candidates
    python benchmarks/gpu_smoke.py drk:level2/03                          # a bundled problem's fused solution

``stage_s`` (``EvalResult.stage_s``) says where an evaluation's seconds go: startup (process, CUDA, imports),
reference, import (candidate), correctness, hacking passes, timing, profiling.
"""

import sys
import time

from drk.examples import example_candidate, example_problem
from drk.gym import EvalConfig, evaluate, load_problems
from drk.problems import solution_source

cfg = EvalConfig(timeout_s=200)
for arg in sys.argv[1:] or ["relu2/good", "relu2/lazy", "matmul/good"]:
    if arg.startswith("drk:"):
        problem = load_problems(arg)[0]
        candidate = solution_source(problem, "fused")
    else:
        name, kind = arg.split("/")
        problem, candidate = example_problem(name), example_candidate(kind, name)
    t = time.monotonic()
    r = evaluate(problem, candidate, device="cuda", config=cfg)
    stages = " ".join(f"{k}={v:.2f}" for k, v in r.stage_s.items())
    print(f"{arg}: {r.status} {time.monotonic() - t:.1f}s [{stages}] speedup={r.speedup} PR={r.coverage} "
          f"ref_ms={r.ref_ms} err={(r.error or '')[:300]!r}", flush=True)
