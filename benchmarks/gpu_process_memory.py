"""GPU memory per process while something else runs: which of an evaluation's processes (the judge, the candidate's
runner, the probe runner) hold how much, as the driver sees it (``nvidia-smi``: CUDA context included).

The pool admits an evaluation at its judge's peak times ``drk.gym.pool.PROCESSES_PER_EVALUATION``, which assumes a
runner holds about what a judge does; this measures it. Run beside a pass, for ``--seconds``:

    python3 benchmarks/gpu_process_memory.py --seconds 180 &
    DEADLINE_S=180 bash benchmarks/suite_queue.sh drk:eager:level1

Prints, per role, how many processes were seen and the median and largest of their peaks (MiB).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time


def role(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return "gone"
    text = b" ".join(argv).decode(errors="replace")
    if "drk.gym.runner" in text:
        return "runner"  # the candidate's or the probe runner (the same command line)
    if "forkserver" in text:
        return "judge"  # judges are forkserver children (drk.gym.sandbox)
    return "other"  # the pool's own process, or anything else on the GPU


def sample() -> list[tuple[int, int]]:
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, check=False).stdout
    rows = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            rows.append((int(parts[0]), int(parts[1])))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--every", type=float, default=0.5)
    args = parser.parse_args()
    peaks: dict[int, int] = {}
    roles: dict[int, str] = {}
    totals: list[int] = []
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        rows = sample()
        totals.append(sum(m for _, m in rows))
        for pid, mib in rows:
            peaks[pid] = max(peaks.get(pid, 0), mib)
            if roles.get(pid, "gone") == "gone":
                roles[pid] = role(pid)
        time.sleep(args.every)
    by_role: dict[str, list[int]] = {}
    for pid, mib in peaks.items():
        by_role.setdefault(roles.get(pid, "gone"), []).append(mib)
    for name, values in sorted(by_role.items()):
        print(f"{name}: {len(values)} processes, peak MiB median {statistics.median(values):.0f}, "
              f"max {max(values)}")
    if totals:
        print(f"all processes: GPU memory in use median {statistics.median(totals):.0f} MiB, max {max(totals)} MiB "
              f"({len(totals)} samples)")


if __name__ == "__main__":
    main()
