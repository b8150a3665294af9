"""Could the judge's own clock bound a candidate's GPU time tightly enough to catch a forged clock? (GPU; no
sandbox, no judge: the round loops alone, in several processes at once, as a busy Pool runs them.)

    python benchmarks/burst_bound.py [--concurrent 1] [--rounds 12] [--cpu-load 0] [--calls 10] [--head-start-cycles 0]

The wall-clock bound (``rounds.unaccounted_verdict``) lets a candidate's round take longer than its reported
per-call times by what the reference's round needs beyond its calls plus a slack (~0.5 ms per call), because in a busy
pool honest candidates' unaccounted time varies by -0.2..+0.5 ms per call. ``attack_fake_clock_small`` (relu2, a
real 0.13 ms kernel reporting a twentieth of its times) hides ~0.12 ms per call inside that slack.

The noise is host latency: the evaluation loop synchronises the device after every call (``rounds.run_round``) and
digests every output (``rounds.digest_values``, which reads its sums back), so a round's wall time holds ~20 host
wake-ups, each delayed by whatever else the host runs. A *burst* queues a round's calls back to back (inputs, flush,
events, call), keeps the outputs, and synchronises once: while the GPU is the bottleneck the host's latency hides
behind the queue, and the wall time is the GPU's work plus one wake-up.

For each problem (relu2, matmul) and candidate (``--candidates``; the reference itself is the control), each child
process times alternating reference and candidate rounds in both styles and prints, per style, the per-call
*unaccounted difference*: ``(wall - sum(times))`` of the candidate's round minus the reference round's before it,
over the calls. An honest candidate's differences are the noise the slack must cover; a forged clock that reports
``1/f`` of its times adds ``(1 - 1/f)`` x its time per call (printed as ``hide20``). The bound can catch it only where
the honest spread is well under that.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

import torch
from timing_noise import _module  # noqa: E402 - benchmarks/ is the script's directory

from drk.examples import EXAMPLES_ROOT
from drk.gym import rounds


def synced_round(model, inputs, device, flush, seed: int) -> tuple[float, list[float]]:
    """The evaluation loop as the runner runs it: per-call sync, every output digested. (wall ms, call ms)."""
    t0 = time.perf_counter()
    times, _ = rounds.run_round(model, inputs, ["eval"] * len(inputs), device=device, flush=flush,
                                keep=lambda i, x, out: rounds.digest_values(out, seed), lates=[], flushes=[])
    return (time.perf_counter() - t0) * 1e3, times


def burst_round(model, inputs, device, flush, seed: int, head_start_cycles: int = 0) -> tuple[float, list[float]]:
    """The calls queued back to back, outputs kept, one synchronise; one output digested after the clock stops (what
    a judge would ask for, at an index the runner cannot predict). ``head_start_cycles`` of GPU busy-waiting queued
    first give the host time to queue the calls before the GPU reaches them (the same on both sides)."""
    events, outputs = [], []
    t0 = time.perf_counter()
    if head_start_cycles:
        torch.cuda._sleep(head_start_cycles)
    for index in range(len(inputs)):
        call_inputs = inputs[index]
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        outputs.append(rounds.call_model(model, call_inputs, "eval"))
        end.record()
        events.append((start, end))
        del call_inputs
    torch.cuda.synchronize(device)
    wall = (time.perf_counter() - t0) * 1e3
    rounds.digest_values(outputs[seed % len(outputs)], seed)
    return wall, [s.elapsed_time(e) for s, e in events]


def one_process(n_rounds: int, calls: int, candidates: tuple[str, ...], head_start_cycles: int = 0) -> dict:
    device = torch.device("cuda", 0)
    flush = torch.empty(512 * 2**20 // 4, dtype=torch.float32, device=device)
    out: dict[str, dict] = {}
    for name in ("relu2", "matmul"):
        problem = _module(EXAMPLES_ROOT / name / "problem.py", f"p_{name}")
        ref = problem.Model(*problem.get_init_inputs()).to(device)
        models = {"reference": problem.Model(*problem.get_init_inputs()).to(device)}
        for cand_name in candidates:
            path = EXAMPLES_ROOT / name / "candidates" / f"{cand_name}.py"
            if path.exists():
                with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
                    handle.write(path.read_text())
                models[cand_name] = _module(handle.name, f"c_{name}_{cand_name}").ModelNew(
                    *problem.get_init_inputs()).to(device)
        for cand_name, cand in models.items():
            for style in ("synced", "burst"):
                diffs, cand_ms = [], []
                for r in range(n_rounds + 1):  # the first is a warm-up
                    got = {}
                    for side, model in (("ref", ref), ("cand", cand)):
                        specs = [rounds.CallSpec(10_000 * r + 100 * (side == "cand") + i) for i in range(calls)]
                        inputs = rounds.LazyInputs(problem, specs, device)
                        if style == "burst":
                            wall, times = burst_round(model, inputs, device, flush, r, head_start_cycles)
                        else:
                            wall, times = synced_round(model, inputs, device, flush, r)
                        got[side] = (wall - sum(times)) / calls, statistics.median(times)
                    if r:
                        diffs.append(got["cand"][0] - got["ref"][0])
                        cand_ms.append(got["cand"][1])
                out[f"{name}:{cand_name}:{style}"] = {"diffs": diffs, "cand_ms": statistics.median(cand_ms)}
    return out


def _summary(rows: list[dict]) -> str:
    diffs = sorted(d for row in rows for d in row["diffs"])
    medians = [statistics.median(row["diffs"]) for row in rows]
    cand_ms = statistics.median(row["cand_ms"] for row in rows)
    hide = 0.95 * cand_ms
    q = lambda p: diffs[min(len(diffs) - 1, int(p * len(diffs)))]  # noqa: E731
    return (f"call {cand_ms:.4f} ms  hide20 {hide:.4f}  per-round diff min {diffs[0]:+.4f} p5 {q(0.05):+.4f} "
            f"p50 {q(0.5):+.4f} p95 {q(0.95):+.4f} max {diffs[-1]:+.4f}  per-process medians "
            f"{min(medians):+.4f}..{max(medians):+.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrent", type=int, default=1,
                        help="child processes timing at the same time (sharing the GPU: no evaluation times so)")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--calls", type=int, default=10, help="calls per round (an evaluation's rounds hold 10)")
    parser.add_argument("--cpu-load", type=int, default=0, help="busy processes running meanwhile")
    parser.add_argument("--head-start-cycles", type=int, default=0, help="GPU busy-wait queued before a burst")
    parser.add_argument("--candidates", nargs="+", default=["good", "lazy", "side_stream"])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_process(args.rounds, args.calls, tuple(args.candidates), args.head_start_cycles)))
        return
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.cpu_load)]
    try:
        children = [subprocess.Popen([sys.executable, __file__, "--child", "--rounds", str(args.rounds), "--calls",
                                      str(args.calls), "--head-start-cycles", str(args.head_start_cycles),
                                      "--candidates", *args.candidates],
                                     stdout=subprocess.PIPE, text=True) for _ in range(args.concurrent)]
        results = [json.loads(child.communicate()[0].strip().splitlines()[-1]) for child in children]
    finally:
        for burner in burners:
            burner.kill()
    print(f"{args.concurrent} processes at once, {args.rounds} rounds of {args.calls} calls per side, cpu load "
          f"{args.cpu_load}, head start {args.head_start_cycles} cycles; per-call unaccounted ms, candidate round minus the reference round before it")
    for key in results[0]:
        print(f"{key:32s} {_summary([r[key] for r in results])}", flush=True)


if __name__ == "__main__":
    main()
