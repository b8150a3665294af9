"""One timing at a time per physical GPU, across threads, pools, processes and users of a host.

A ``flock`` on a file named after the GPU: any two evaluations that time on the same GPU serialise, whether they
come from one ``Pool`` or from two training runs side by side, and the OS releases the lock when its holder dies,
so a candidate killed mid-timing (timeout, segfault) cannot wedge the GPU for everyone else — which a
``multiprocessing.Lock`` held by a killed child would.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path


def physical_gpu_id(index: int) -> str:
    """The host-wide name of visible GPU ``index`` (``CUDA_VISIBLE_DEVICES`` remaps indices per process)."""
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    return visible[index] if index < len(visible) else str(index)


class GpuTimingLock:
    """Picklable (travels to the sandbox child as its path); ``acquire`` blocks until this GPU is free."""

    def __init__(self, gpu_index: int = 0, lock_dir: str | Path | None = None) -> None:
        directory = Path(lock_dir or os.environ.get("DRK_LOCK_DIR") or tempfile.gettempdir())
        directory.mkdir(parents=True, exist_ok=True)
        self.path = str(directory / f"drk-gpu-{physical_gpu_id(gpu_index)}.lock")
        self._fd: int | None = None

    def __getstate__(self) -> dict:
        return {"path": self.path, "_fd": None}

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> GpuTimingLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
