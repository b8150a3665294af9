"""Run run_one.py while sampling the peak RSS of every descendant process of this one (the judges)."""
import os, runpy, sys, threading, time

peak = {}
stop = threading.Event()


def descendants(root):
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            for t in os.listdir(f"/proc/{pid}/task"):
                todo += [int(p) for p in open(f"/proc/{pid}/task/{t}/children").read().split()]
        except OSError:
            pass
    return out


def watch():
    me = os.getpid()
    while not stop.is_set():
        for pid in descendants(me):
            try:
                rss = [l for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")][0].split()[1]
                name = open(f"/proc/{pid}/cmdline").read().replace("\0", " ")[:80]
                if int(rss) > peak.get(pid, (0, ""))[0]:
                    peak[pid] = (int(rss), name)
            except (OSError, IndexError):
                pass
        time.sleep(0.02)


threading.Thread(target=watch, daemon=True).start()
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
stop.set()
for pid, (rss, name) in sorted(peak.items(), key=lambda kv: -kv[1][0])[:5]:
    print(f"peak RSS {rss/2**20:.2f} GiB  pid {pid}  {name}")
