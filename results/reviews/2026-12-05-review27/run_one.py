"""Evaluate a candidate one at a time (never in parallel).
python run_one.py CANDIDATE.py PROBLEM REPEATS [key=json ...]
PROBLEM: an example name (relu2, matmul, tuple_out, int_ops) or a path to a KernelBench-form problem file."""
import json, os, sys, time
from drk.gym import evaluate, EvalConfig
from drk.gym.problem import Problem
from drk.examples import example_problem

path, problem = sys.argv[1], sys.argv[2]
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 1
extra = {k: json.loads(v) for k, v in (a.split("=", 1) for a in sys.argv[4:])}
p = Problem.from_source(open(problem).read(), name=os.path.basename(problem)[:-3]) if problem.endswith(".py") \
    else example_problem(problem)
src = open(path).read()
for i in range(repeats):
    t = time.time()
    try:
        r = evaluate(p, src, device="cpu", config=EvalConfig(**{"timeout_s": 60, **extra}))
        print(json.dumps({"file": os.path.basename(path), "problem": os.path.basename(problem), "run": i,
                          "status": r.status, "hack_reasons": r.hack_reasons,
                          "error": (r.error or "")[-int(os.environ.get("R27_ERRLEN", "400")):],
                          "outputs_read": r.outputs_read, "env_error": getattr(r, "env_error", None),
                          "stage": getattr(r, "stage", None), "max_abs_err": getattr(r, "max_abs_err", None),
                          "wall_s": round(time.time() - t, 1),
                          **({"stage_s": getattr(r, "stage_s", None)} if os.environ.get("R27_STAGES") else {})}),
              flush=True)
    except BaseException as exc:
        print("EXCEPTION from evaluate:", type(exc).__name__, str(exc)[:500], flush=True)
