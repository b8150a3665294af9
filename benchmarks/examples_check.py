"""Judge every example candidate (drk.examples: attacks, legitimate patterns, hacks, crashes) and compare with
the verdicts it must get. Prints one line per example and the count of wrong verdicts; exit code 1 if any.

    python benchmarks/examples_check.py [NAME ...] [--repeat 3]      # GPU if visible, else CPU (interpreter)
    python benchmarks/examples_check.py --burst-cycles 10000000 --slack-ms 0.01 --round-slack-ms 0.3   # burst rounds
"""
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

import torch

from drk.examples import GPU_ONLY, all_examples, example_candidate, example_problem, expected, verdict_matches
from drk.gym import EvalConfig, Pool

dev = "cuda" if torch.cuda.is_available() else "cpu"
repeat = 1
if "--repeat" in sys.argv:
    i = sys.argv.index("--repeat")
    repeat = int(sys.argv[i + 1])
    del sys.argv[i:i + 2]
#: --burst-cycles N [--slack-ms X] [--round-slack-ms Y]: burst rounds (EvalConfig.timing_burst_cycles) with those
#: slacks, to see every example's verdict under them (GPU); --calibration-rounds N prints unaccounted time against
#: the runner's own rounds of the reference (EvalConfig.calibration_rounds)
timing = {}
for flag, key, kind in (("--burst-cycles", "timing_burst_cycles", int), ("--slack-ms", "timing_slack_ms", float),
                        ("--round-slack-ms", "timing_round_slack_ms", float),
                        ("--calibration-rounds", "calibration_rounds", int)):
    if flag in sys.argv:
        i = sys.argv.index(flag)
        timing[key] = kind(sys.argv[i + 1])
        del sys.argv[i:i + 2]
sel = sys.argv[1:]
pairs = [(p, c) for p, c in all_examples() if (not sel or c in sel or f"{p}/{c}" in sel) and (dev == "cuda" or (p, c) not in GPU_ONLY)]
t=time.time()
pool = Pool(device=dev, workers=8 if dev == "cuda" else 2, progress=False, config=EvalConfig(timeout_s=90, **timing))
#: Started first, after relu2/good (a pool's first evaluation runs alone, to learn a size): the examples that run to a
#: limit. In chunks of 16 each chunk waited on its slowest, and a 10-minute device call judged 64 of 91 (session 20).
SLOW_FIRST = ("hangs", "memory_hog", "attack_pipe_stall", "attack_slow_import_decoy", "attack_fake_clock")


def judged(batch):
    """Every pair through the pool at once, each verdict printed as it finishes (a device call's time limit must not
    lose the finished ones); results in ``batch``'s order."""
    rank = {("relu2", "good"): -1, **{("relu2", c): i for i, c in enumerate(SLOW_FIRST)}}
    order = sorted(range(len(batch)), key=lambda i: rank.get(batch[i], len(SLOW_FIRST)))
    out = {}
    with ThreadPoolExecutor(max_workers=pool.workers) as executor:
        futures = {executor.submit(pool.evaluate, example_problem(batch[i][0]), example_candidate(batch[i][1], batch[i][0])): i
                   for i in order}
        for future in as_completed(futures):
            i = futures[future]
            (p, c), r = batch[i], future.result()
            stages = " ".join(f"{k}={v:.1f}" for k, v in r.stage_s.items())
            exp = expected(p, c, dev)
            wrong = not verdict_matches(p, c, dev, r.status, r.hack_reasons)
            why = f" | WRONG (expected {exp}; env_error={r.env_error}): {(r.error or '')[-400:]!r}" if wrong else ""
            print(f"  {p}/{c}: {r.status} {','.join(r.hack_reasons)} {r.elapsed_s:.1f}s unaccounted/call "
                  f"{r.unaccounted_ms} ms (calibrated {r.unaccounted_calibrated_ms}) timing charge "
                  f"{r.timing_charge_ms} ms, excess settle {r.settle_excess_ms} flush {r.flush_excess_ms} ms, "
                  f"burst {r.burst_cycles} starved {r.burst_starved_rounds} | "
                  f"stages (s): {stages}{why}",
                  flush=True)
            out[i] = r
    return [out[i] for i in range(len(batch))]


runs = [judged(pairs) for _ in range(repeat)]
res = runs[0]
bad = 0
for k, ((p, c), r) in enumerate(zip(pairs, res)):
    if len({(run[k].status, tuple(run[k].hack_reasons)) for run in runs}) > 1:
        print(f"NOT REPEATABLE {p}/{c}: {[run[k].status for run in runs]}")
        bad += 1
    exp = expected(p, c, dev)
    ok = verdict_matches(p, c, dev, r.status, r.hack_reasons)
    bad += not ok
    sp = f"{r.speedup:.2f}x" if r.speedup else ""
    print(f"{'OK ' if ok else 'BAD'} {p+'/'+c:34s} {r.status:13s} {','.join(r.hack_reasons):22s} {sp:8s} cov={r.coverage} unacc={r.unaccounted_ms} {r.isolation} {r.elapsed_s:.1f}s | exp={exp} | {(r.error or '').splitlines()[0][:110] if r.error else ''}")
print(f"{len(pairs)} pairs x {repeat} runs on {dev}: {bad} wrong or unrepeatable, {time.time()-t:.0f}s")
sys.exit(1 if bad else 0)
