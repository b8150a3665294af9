"""What one output digest costs: the per-call work of the trusted round loop beyond the call (issue 11, review 14).

    python benchmarks/digest_cost.py [--numel 16777216 134217728] [--device cpu|cuda] [--repeats 3]

For each size, a float32 tensor is digested with :func:`drk.gym.rounds.digest_values` (what the runner does after
every call and the judge after every reference call): the median seconds per digest and the peak memory the digest
added above the tensor itself (CUDA: ``torch.cuda.max_memory_allocated``; CPU: the process's peak resident set,
each size in a fresh process, since it never goes down). Both numbers matter twice: the time is work a runner
rewritten from inside could do cheaper and spend on its kernel outside its reported times (so the line ends with the
time of one read of the tensor, ``x.sum()``: the least any digest costs), and the memory is part
of a judge's planned footprint (on an H200, a level-1 judge's peak was ~15x its 512 MB output). To compare with an
older digest, run the same command at that commit.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def measure(numel: int, device: str, repeats: int) -> dict:
    import torch

    from drk.gym import rounds

    x = torch.randn(numel, device=device)
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    else:
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    rounds.digest_values([x], 7)  # untimed: a CUDA digest's kernel compiles on first use, the weights are cached

    def timed(work) -> list[float]:
        seconds = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            work()
            if device == "cuda":
                torch.cuda.synchronize()
            seconds.append(time.perf_counter() - t0)
        return seconds

    seconds = timed(lambda: rounds.digest_values([x], 7))
    if device == "cuda":
        peak = torch.cuda.max_memory_allocated() - base
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
    floor = timed(lambda: x.sum().item())  # one read of the tensor: what no digest can do without
    return {"numel": numel, "device": device, "tensor_mb": round(numel * 4 / 2**20, 1),
            "median_s": round(statistics.median(seconds), 5), "min_s": round(min(seconds), 5),
            "max_s": round(max(seconds), 5), "peak_extra_mb": round(peak / 2**20, 1),
            "floor_s": round(statistics.median(floor), 5)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--numel", type=int, nargs="+", default=[1 << 24, 1 << 26])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child: one size, JSON out
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.numel[0], args.device, args.repeats)))
        return 0
    for numel in args.numel:  # a fresh process per size: a CPU process's peak resident set never goes down
        done = subprocess.run([sys.executable, __file__, "--one", "--numel", str(numel), "--device", args.device,
                               "--repeats", str(args.repeats)], capture_output=True, text=True)
        if done.returncode:
            print(f"numel {numel}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
            return 1
        row = json.loads(done.stdout.splitlines()[-1])
        print(f"{row['device']} {row['numel']:>11} float32 ({row['tensor_mb']} MB): digest {row['median_s']} s "
              f"(min {row['min_s']}, max {row['max_s']}), peak +{row['peak_extra_mb']} MB; one read of it (x.sum()) "
              f"{row['floor_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
