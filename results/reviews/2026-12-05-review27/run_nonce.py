"""Evaluate K variants of one candidate, each with a distinct nonce comment appended (a new evaluation key, so new
secret draws: the same source always gets the same draws and the same verdict). One at a time.
python run_nonce.py CANDIDATE.py PROBLEM K [START] [key=json ...]"""
import json, os, sys, time
from drk.gym import evaluate, EvalConfig
from drk.gym.problem import Problem
from drk.examples import example_problem

path, problem, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
start = int(sys.argv[4]) if len(sys.argv) > 4 and "=" not in sys.argv[4] else 0
extra = {a.split("=", 1)[0]: json.loads(a.split("=", 1)[1]) for a in sys.argv[4:] if "=" in a}
p = Problem.from_source(open(problem).read(), name=os.path.basename(problem)[:-3]) if problem.endswith(".py") \
    else example_problem(problem)
base = open(path).read()
for i in range(start, start + k):
    t = time.time()
    r = evaluate(p, base + f"\n# nonce {i}\n", device="cpu", config=EvalConfig(**{"timeout_s": 60, **extra}))
    print(json.dumps({"file": os.path.basename(path), "nonce": i, "status": r.status, "hack_reasons": r.hack_reasons,
                      "error": (r.error or "")[:int(os.environ.get("R27_ERRLEN", "160"))], "outputs_read": r.outputs_read,
                      "env_error": r.env_error, "stage": r.stage, "wall_s": round(time.time() - t, 1)}), flush=True)
