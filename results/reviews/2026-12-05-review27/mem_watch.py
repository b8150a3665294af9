"""Run a command; every 0.2 s sample the host's MemAvailable and the summed VmRSS of processes whose real uid is a
sandbox uid (>= 200000: the runners at the uid level). Prints the largest MemAvailable drop from the start and the
sandbox RSS at that moment. python mem_watch.py CMD..."""
import os, subprocess, sys, threading, time

def avail():
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable"):
            return int(line.split()[1]) // 1024

def sandbox_rss():
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            uid = rss = None
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("Uid:"):
                    uid = int(line.split()[1])
                elif line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) // 1024
            if uid is not None and uid >= 200000 and rss:
                total += rss
        except OSError:
            pass
    return total

start = avail()
worst = [0, 0]
done = threading.Event()

def watch():
    while not done.is_set():
        drop, rss = start - avail(), sandbox_rss()
        if drop > worst[0]:
            worst[:] = [drop, rss]
        time.sleep(0.2)

t = threading.Thread(target=watch, daemon=True)
t.start()
rc = subprocess.call(sys.argv[1:])
done.set()
t.join()
time.sleep(1.0)
print(f"mem_watch: largest MemAvailable drop {worst[0]} MiB, sandbox runners' summed VmRSS then {worst[1]} MiB; "
      f"drop after the run {start - avail()} MiB", flush=True)
sys.exit(rc)
