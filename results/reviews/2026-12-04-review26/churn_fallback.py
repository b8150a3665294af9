"""Not an evaluation: how often direct_reads._children(pid) falls back to a scan of the whole host's /proc when pid's
threads come and go (a thread exits between the listing of /proc/<pid>/task and the open of its children file)."""
import os, subprocess, sys, time
from drk.gym import direct_reads as d

CHURN = r'''
import threading
def short(): pass
while True:
    ts = [threading.Thread(target=short) for _ in range(8)]
    for t in ts: t.start()
    for t in ts: t.join()
'''
child = subprocess.Popen([sys.executable, "-c", CHURN])
time.sleep(0.5)
scans = 0
real_listdir = os.listdir
def counting(path):
    global scans
    if path == "/proc":
        scans += 1
    return real_listdir(path)
d.os.listdir = counting
n, t0 = 0, time.perf_counter()
while time.perf_counter() - t0 < 3:
    d._children(child.pid)
    n += 1
child.kill()
print(f"{n} walks of a process with thread churn: {scans} fell back to a host-wide /proc scan ({100*scans/n:.0f} %)")
