"""Evaluate a candidate against a problem file (one at a time): python run_custom.py PROBLEM.py CANDIDATE.py [REPEATS]"""
import json, sys, time
from drk.gym import evaluate, EvalConfig
from drk.gym.problem import Problem

p = Problem.from_source(open(sys.argv[1]).read(), name="relu2_big")
src = open(sys.argv[2]).read()
for i in range(int(sys.argv[3]) if len(sys.argv) > 3 else 1):
    t = time.time()
    try:
        r = evaluate(p, src, device="cpu", config=EvalConfig(timeout_s=60))
        print(json.dumps({"file": sys.argv[2], "run": i, "status": r.status, "hack_reasons": r.hack_reasons,
                          "error": (r.error or "")[-int(__import__("os").environ.get("R25_ERRLEN", "500")):], "outputs_read": r.outputs_read,
                          "env_error": getattr(r, "env_error", None), "stage": getattr(r, "stage", None),
                          "wall_s": round(time.time() - t, 1)}), flush=True)
    except BaseException as exc:
        print("EXCEPTION from evaluate:", type(exc).__name__, str(exc)[:500], flush=True)
