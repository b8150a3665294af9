"""Evaluate candidate files one at a time (never in parallel): python run_one.py FILE [PROBLEM] [REPEATS] [key=val config...]"""
import sys, time, json
from drk.gym import evaluate, EvalConfig
from drk.examples import example_problem

path = sys.argv[1]
problem = sys.argv[2] if len(sys.argv) > 2 else "relu2"
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 1
extra = dict(a.split("=", 1) for a in sys.argv[4:])
extra = {k: json.loads(v) for k, v in extra.items()}
p = example_problem(problem)
src = open(path).read()
for i in range(repeats):
    t = time.time()
    r = evaluate(p, src, device="cpu", config=EvalConfig(timeout_s=60, **extra))
    print(json.dumps({"file": path, "run": i, "status": r.status, "hack_reasons": r.hack_reasons,
                      "error": (r.error or "")[-int(__import__("os").environ.get("R25_ERRLEN", "400")):], "outputs_read": r.outputs_read,
                      "env_error": getattr(r, "env_error", None), "wall_s": round(time.time() - t, 1)}), flush=True)
