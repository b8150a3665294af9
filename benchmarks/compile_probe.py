"""Judge one kernel against the ``torch.compile``d reference N times; print each status, its seconds and stages.

    python benchmarks/compile_probe.py 3      # on a GPU, with the sandbox (bash benchmarks/gpu_all.sh sets it up)

``test_compile_reference_mode`` failed on an H200 in two device calls of five (2026-12-01 s14, 2026-12-02 s16) and
passed in the others: this prints the error of a failing call, which a pytest line cuts short.
"""
import sys
import time

from drk.examples import example_candidate, example_problem
from drk.gym import EvalConfig, evaluate

cfg = EvalConfig(timing_trials=20, warmup=3, reference_mode="compile", timeout_s=300)
for i in range(int(sys.argv[1])):
    t = time.monotonic()
    r = evaluate(example_problem("relu2"), example_candidate("good"), device="cuda", config=cfg)
    print(f"compile probe {i}: {r.status} {time.monotonic() - t:.1f}s speedup={r.speedup} env_error={r.env_error} stages={r.stage_s}", flush=True)
    if r.status != "correct":
        print("ERROR:", r.error, flush=True)
