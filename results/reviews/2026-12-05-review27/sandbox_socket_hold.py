"""Not an evaluation: runs a small holder (the candidate's _hold, 1 GiB) inside the uid-level sandbox
(drk.gym.isolation.sandbox_command, the runners' bubblewrap command) and measures, from outside, the host's
MemAvailable drop and the sandboxed process's VmRSS while it holds, then after it is killed."""
import os, subprocess, sys, time
from drk.gym import isolation

HOLDER = r'''
import socket, sys, time
held, queued, chunk = [], 0, b"\0" * 65536
while queued < (1 << 30):
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    a.setblocking(False)
    try:
        while queued < (1 << 30):
            queued += a.send(chunk)
    except BlockingIOError:
        pass
    held.append((a, b))
print("held", queued >> 20, "MiB in", len(held), "socket pairs", flush=True)
time.sleep(30)
'''

def avail():
    return next(int(l.split()[1]) // 1024 for l in open("/proc/meminfo") if l.startswith("MemAvailable"))

def rss_of_uid(uid):
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            st = open(f"/proc/{pid}/status").read().splitlines()
            u = int(next(l for l in st if l.startswith("Uid:")).split()[1])
            r = next((int(l.split()[1]) // 1024 for l in st if l.startswith("VmRSS:")), 0)
            total += r if u == uid else 0
        except (OSError, StopIteration):
            pass
    return total

uid = 299_777
cmd = isolation.sandbox_command("uid", [sys.executable, "-c", HOLDER], uid=uid)
before = avail()
proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=isolation.sandbox_env("cpu"), text=True)
print(proc.stdout.readline().strip())
time.sleep(1)
print(f"while held: MemAvailable drop {before - avail()} MiB, sandboxed VmRSS {rss_of_uid(uid)} MiB")
proc.kill(); proc.wait(); time.sleep(1)
print(f"after kill: MemAvailable drop {before - avail()} MiB")
