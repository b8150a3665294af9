"""Does a memory cgroup bound memory held in Unix socket buffers? (As root, on a host with cgroup v1's memory
controller at /sys/fs/cgroup/memory.)

Attacker review 27 held 1 GiB in filled Unix ``socketpair``s from inside the sandbox, in no process's resident size
(``results/reviews/2026-12-05-review27/``); the fix it proposed, a memory cgroup per sandbox, holds only if the kernel
charges socket buffers to the cgroup. This runs a holder in a fresh cgroup twice: under a limit above what it holds
(it should finish, and the cgroup's usage says whether the buffers were charged) and under a limit below it (it should
be stopped: killed by the cgroup's out-of-memory killer, or refused buffers).

    sudo python benchmarks/cgroup_socket_memory.py [--hold-mb 512] [--low-mb 256]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import uuid

ROOT = "/sys/fs/cgroup/memory"

HOLDER = r"""
import socket, sys
target, held, pairs = int(sys.argv[1]) << 20, 0, []
wmem = int(open("/proc/sys/net/core/wmem_max").read())
try:
    while held < target:
        a, b = socket.socketpair()
        a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, wmem)
        a.setblocking(False)
        try:
            while True:
                held += a.send(b"x" * 65536)
        except BlockingIOError:
            pass
        pairs.append((a, b))
except OSError as exc:
    print(f"refused at {held >> 20} MiB: {exc}", flush=True)
rss = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmRSS")][0]
print(f"held {held >> 20} MiB in {len(pairs)} pairs, VmRSS {int(rss) >> 10} MiB", flush=True)
sys.stdin.readline()
"""


def run(hold_mb: int, limit_mb: int) -> str:
    group = os.path.join(ROOT, f"drk-probe-{uuid.uuid4().hex[:8]}")
    os.mkdir(group)
    try:
        with open(os.path.join(group, "memory.limit_in_bytes"), "w") as f:
            f.write(str(limit_mb << 20))
        procs = os.path.join(group, "cgroup.procs")
        # the holder joins the cgroup before it runs (a shell writes its own pid, then becomes python)
        child = subprocess.Popen(["sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh", sys.executable, "-c", HOLDER,
                                  str(hold_mb)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        said = child.stdout.readline().strip()
        usage = {name: int(open(os.path.join(group, f"memory.{name}")).read()) >> 20
                 for name in ("usage_in_bytes", "kmem.usage_in_bytes")}
        child.stdin.close()
        code = child.wait(timeout=60)
        how = said or f"no answer (exit {code}: {'killed' if code < 0 else 'ended'})"
        return (f"limit {limit_mb} MiB, hold {hold_mb} MiB: {how}; cgroup usage {usage['usage_in_bytes']} MiB "
                f"(kernel memory {usage['kmem.usage_in_bytes']} MiB)")
    finally:
        os.rmdir(group)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hold-mb", type=int, default=512)
    parser.add_argument("--low-mb", type=int, default=256)
    args = parser.parse_args()
    if not os.access(ROOT, os.W_OK):
        print(f"{ROOT} is not writable here (needs root and cgroup v1's memory controller): nothing to measure")
        return
    print(f"kernel {os.uname().release}, net.core.wmem_max {open('/proc/sys/net/core/wmem_max').read().strip()}")
    print(run(args.hold_mb, 4 * args.hold_mb))
    print(run(args.hold_mb, args.low_mb))


if __name__ == "__main__":
    main()
