"""Not an evaluation: drk.gym.direct_reads.SandboxMemory.freeze against a self-replacing process (fork, parent exits
at once), outside any sandbox. A launcher L (a child subreaper, standing in for the sandbox's init) starts a
stand-in runner P (sleeps) and a hopper H. We freeze L's tree 200 times; after each freeze returns we look for a
descendant of L that is still running (not T/t/Z), and count freezes that it escaped."""
import ctypes, os, signal, subprocess, sys, time
from drk.gym import direct_reads as d

LAUNCHER = r'''
import ctypes, os, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: orphans stay in this tree (as under the sandbox's init)
p = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"])
h = subprocess.Popen([sys.executable, "-c", "import os\nwhile True:\n    if os.fork(): os._exit(0)"])
print(p.pid, flush=True)
while True:
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        time.sleep(0.01)
'''
launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER], stdout=subprocess.PIPE, text=True)
runner = int(launcher.stdout.readline())
time.sleep(0.5)
m = d.SandboxMemory.__new__(d.SandboxMemory)
m._root, m.runner_pid, m.frozen, m._available = launcher.pid, runner, [], True
escaped, fails, n = 0, 0, 100
for i in range(n):
    try:
        m.freeze()
    except d.UnreadableOutput:
        fails += 1
        m.thaw()
        continue
    time.sleep(0.002)  # what the judge's reads take, about
    running = [p for p in d._descendants(launcher.pid) if p != launcher.pid and not d._threads_stopped(p)]
    escaped += bool(running)
    m.thaw()
    time.sleep(0.01)
for _ in range(5):  # the tree first (stopped, then killed by pid: the hopper changes pid), then the launcher
    try:
        m.freeze()
    except d.UnreadableOutput:
        pass
    for p in d._descendants(launcher.pid):
        if p != launcher.pid:
            try: os.kill(p, signal.SIGKILL)
            except OSError: pass
os.kill(launcher.pid, signal.SIGKILL)
print(f"{n} freezes: {escaped} returned with a process of the tree still running 2 ms later; {fails} gave up")
