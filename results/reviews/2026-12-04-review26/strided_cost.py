"""Not an evaluation: the judge's cost to read a strided claim (direct_reads.tensor_at) of N float32 elements
spread with stride 2 (every element its own run), read from this very process. Prints time and peak RSS growth."""
import os, resource, sys, time
import torch
from drk.gym import direct_reads as d

n = int(sys.argv[1])
dtype = getattr(torch, sys.argv[2]) if len(sys.argv) > 2 else torch.float32
buf = torch.zeros(2 * n, dtype=dtype)
y = buf[::2]
where = d.location(y)
def rss():  # current RSS in MiB
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
before = rss()
peak0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter()
v = d.tensor_at(os.getpid(), where, dtype, [n])
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"n={n} dtype={dtype} output={n*y.element_size()/2**20:.1f} MiB read in {dt:.2f} s; "
      f"peak RSS {peak0:.0f} -> {peak:.0f} MiB (+{peak-peak0:.0f}); ok={torch.equal(v, y)}")
