"""Not an evaluation: what the direct reads add to a CPU timing round's overhead for an honest *dense* float32 output
(3 calls per round, cpu_timing_trials): the runner's `locations()` of the round (inside its timed wall) and the judge's
read + commitment check of the picked call (counted as `cand_fetch_ms`). The CPU slack is 50 ms per call (150 ms a
round); past it the candidate is `hacked: timing_mismatch` (no counterpart on the reference's side)."""
import os, time
import torch
from drk.gym import direct_reads as d

for p in (18, 20, 22, 23, 24):
    outs = [[torch.randn(1 << p)] for _ in range(3)]
    t0 = time.perf_counter(); where = d.locations(outs); t1 = time.perf_counter()
    v = d.tensor_at(os.getpid(), where[1][0], torch.float32, [1 << p]); ok = where[1][0]["sha256"] == d.commitment(v)
    t2 = time.perf_counter()
    print(f"2**{p} floats ({(1 << p) * 4 / 2**20:.0f} MiB): runner locations() {1e3 * (t1 - t0):.0f} ms, "
          f"judge read+check {1e3 * (t2 - t1):.0f} ms, sum {1e3 * (t2 - t0):.0f} ms per round (ok={ok})")
    del outs, v
