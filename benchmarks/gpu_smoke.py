"""Quick GPU diagnostic: evaluate a few example candidates and print status, error head, timing and PR."""

import sys
import time

from drk.examples import example_candidate, example_problem
from drk.gym import EvalConfig, evaluate

cfg = EvalConfig(timing_trials=20, warmup=3, timeout_s=100)
cases = [arg.split("/") for arg in sys.argv[1:]] or [("relu2", "good"), ("relu2", "lazy"), ("matmul", "good")]
for problem_name, cand in cases:
    t = time.monotonic()
    r = evaluate(example_problem(problem_name), example_candidate(cand, problem_name), device="cuda", config=cfg)
    print(f"{problem_name}/{cand}: {r.status} {time.monotonic() - t:.1f}s stage={r.stage} speedup={r.speedup} "
          f"PR={r.coverage} backend={r.timing_backend} err={(r.error or '')[:600]!r}", flush=True)
