"""Where does run-to-run timing noise come from? (GPU; no sandbox, no judge: drk's round loop alone.)

    python benchmarks/timing_noise.py [--processes 4] [--repeats 3] [--cpu-load N] [--head-start-cycles C]
                                      [--sync-before-start] [--candidates good attack_side_stream_launder ...]

For the relu2 and matmul examples, times the reference and the good candidate with :func:`drk.gym.rounds.run_round`
(the loop both sides of an evaluation run: lazy inputs, 512 MB L2 flush, events) in ``--repeats`` rounds of 100
calls inside one process, then does the same in ``--processes`` fresh processes one after another. If the
speedup varies across processes but not within one, the noise is per process (where its buffers landed, its
CUDA context), not the timer; if it varies within a process, it is the loop or the GPU.

``--cpu-load N`` runs N busy-looping processes meanwhile (a busy host: a pool's other workers, spares starting);
``--head-start-cycles C`` queues C GPU cycles of busy-waiting before each call's start event
(``rounds.run_round(head_start_cycles=)``). If the busy host moves the times and the head start removes that, the
host's latency between ``start`` and the launch is the noise.

Each row prints the raw speedup (``start -> end`` medians), the speedup with the judge's charges applied
(``rounds.settled_times`` for work left running, ``rounds.flushed_times`` for work run during the flush), and both
sides' median ``end -> settled`` (late) and ``flushing -> start`` (flush) times. ``--sync-before-start``
synchronises the device after the flush (``run_round(sync_before_start=True)``), an experiment: nothing can run
before ``start`` then, but the host's launch latency is inside every call's time. ``--candidates`` names the
candidates timed against the reference (each problem's that exist; default ``good``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile

import torch

from drk.examples import EXAMPLES_ROOT
from drk.gym import rounds


def _module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class SyncedInputs(rounds.LazyInputs):
    """Inputs made just before each call and then synchronised (the GPU is idle when the call's flush is queued):
    what a harness that wants a side-stream candidate not to race its inputs would do."""

    def __getitem__(self, index):  # type: ignore[override]
        inputs = super().__getitem__(index)
        torch.cuda.synchronize()
        return inputs


def one_process(repeats: int, head_start_cycles: int = 0, sync_inputs: bool = False, sync_before_start: bool = False,
                candidates: tuple[str, ...] = ("good",)) -> dict:
    device = torch.device("cuda", 0)
    flush = torch.empty(512 * 2**20 // 4, dtype=torch.float32, device=device)
    out = {}
    for name in ("relu2", "matmul"):
        problem = _module(EXAMPLES_ROOT / name / "problem.py", f"p_{name}")
        ref = problem.Model(*problem.get_init_inputs()).to(device)
        for cand_name in candidates:
            path = EXAMPLES_ROOT / name / "candidates" / f"{cand_name}.py"
            if not path.exists():
                continue
            with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
                handle.write(path.read_text())
            candidate = _module(handle.name, f"c_{name}_{cand_name}")
            cand = candidate.ModelNew(*problem.get_init_inputs()).to(device)
            rows = []
            for r in range(repeats + 1):  # the first is a warm-up
                specs = [rounds.CallSpec(1000 * r + i) for i in range(100)]
                got = {}
                for side, model in (("ref", ref), ("cand", cand)):
                    lates: list[float] = []
                    flushes: list[float] = []
                    inputs = (SyncedInputs if sync_inputs else rounds.LazyInputs)(problem, specs, device)
                    times, _ = rounds.run_round(model, inputs, ["eval"] * 100, device=device, flush=flush,
                                                keep=lambda *a: None, lates=lates, flushes=flushes,
                                                head_start_cycles=head_start_cycles,
                                                sync_before_start=sync_before_start)
                    got[side] = (times, lates, flushes)
                (ref_t, ref_l, ref_f), (cand_t, cand_l, cand_f) = got["ref"], got["cand"]
                charged, _ = rounds.settled_times(cand_t, cand_l, ref_l)
                charged, _ = rounds.flushed_times(charged, cand_f, ref_f)
                med = statistics.median
                if r:
                    rows.append({"ref_ms": med(ref_t), "cand_ms": med(cand_t), "speedup": med(ref_t) / med(cand_t),
                                 "charged": med(ref_t) / med(charged),
                                 "ref_late_ms": med(ref_l), "cand_late_ms": med(cand_l),
                                 "ref_flush_ms": med(ref_f), "cand_flush_ms": med(cand_f)})
            out[f"{name}:{cand_name}"] = rows
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpu-load", type=int, default=0, help="busy processes running meanwhile")
    parser.add_argument("--head-start-cycles", type=int, default=0)
    parser.add_argument("--sync-inputs", action="store_true", help="synchronise after making each call's inputs")
    parser.add_argument("--sync-before-start", action="store_true",
                        help="synchronise the device after the flush, before start (an experiment)")
    parser.add_argument("--candidates", nargs="+", default=["good"])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_process(args.repeats, args.head_start_cycles, args.sync_inputs, args.sync_before_start,
                                     tuple(args.candidates))))
        return
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.cpu_load)]
    try:
        run_children(args)
    finally:
        for burner in burners:
            burner.kill()


def run_children(args: argparse.Namespace) -> None:
    print(f"cpu load {args.cpu_load} processes, head start {args.head_start_cycles} cycles, "
          f"inputs synchronised {args.sync_inputs}, synchronised before start {args.sync_before_start}", flush=True)
    for p in range(args.processes):
        text = subprocess.run([sys.executable, __file__, "--child", "--repeats", str(args.repeats),
                               "--head-start-cycles", str(args.head_start_cycles), "--candidates", *args.candidates]
                              + (["--sync-inputs"] if args.sync_inputs else [])
                              + (["--sync-before-start"] if args.sync_before_start else []),
                              capture_output=True, text=True, check=True).stdout
        for name, rows in json.loads(text.strip().splitlines()[-1]).items():
            cells = "  ".join(f"{r['speedup']:.3f} charged {r['charged']:.3f} (ref {r['ref_ms']:.4f} cand "
                              f"{r['cand_ms']:.4f} late {r['ref_late_ms']:.3f}/{r['cand_late_ms']:.3f} flush "
                              f"{r['ref_flush_ms']:.4f}/{r['cand_flush_ms']:.4f})" for r in rows)
            print(f"process {p} {name:32s} {cells}", flush=True)


if __name__ == "__main__":
    main()
