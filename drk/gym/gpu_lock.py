"""One timing at a time per physical GPU, and no other evaluation's GPU work while it runs.

A reader/writer lock made of two ``flock``s on files named after the GPU. A timing takes it *exclusively*
(:meth:`GpuTimingLock.acquire`); every other piece of GPU work of an evaluation — building the reference, each
request to a runner (correctness, probes, profiling), a spare runner creating its CUDA context — takes it *shared*
(:meth:`GpuTimingLock.shared`). Shared holders overlap freely; a timing waits for those in flight and keeps new ones
out until it ends, so a kernel from another cooperating process never lands inside a timed call (the GPU
time-slices contexts: a neighbour's work inflates whichever call it lands in). A third file is a turnstile: a timing
that waits holds it, so a stream of overlapping shared holders cannot starve it.

Any two evaluations on the same GPU obey it, whether they come from one ``Pool`` or from two training runs side by
side, and the OS releases a lock when its holder dies, so a candidate killed mid-timing (timeout, segfault) cannot
wedge the GPU for everyone else — which a ``multiprocessing.Lock`` held by a killed child would.
Only cooperating code takes it: a candidate's own threads are not held back by it (see docs/environment.md).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

#: How long a timing waits for other evaluations' GPU work in flight to finish before it goes ahead regardless. A
#: candidate's request holds the lock shared for at most ``drk.gym.judge.SHARED_HOLD_S`` (2 s) before its answer
#: starts, and not while the answer arrives; the longest holds are trusted work: a judge building its reference and
#: expected outputs, 3-7 s for a level-1 problem beside 7 other evaluations (H200, 2026-12-04). At 5 s, timings
#: that began during one went ahead not quiet.
QUIET_WAIT_S = 30.0
#: The longest one timing holds its GPU (the judge passes it as ``max_hold_s``): honest timings take seconds.
TIMING_HOLD_S = 60.0


def lock_root() -> Path:
    """Where drk's host-wide lock files live: a directory of their own under ``DRK_LOCK_DIR`` or the temp dir, made
    mode 0700 (a sandbox at the ``uid`` level cannot enter it) and seen empty by a sandbox at the ``namespace``
    level (:func:`drk.gym.isolation.hidden_paths`); under ``/tmp`` no sandbox sees it at all (its ``/tmp`` is its
    own). A candidate that could open a lock file read-only could ``flock`` it and stall every evaluation on its GPU
    (an attacker review held a read-only host file locked from inside the sandbox for 181 s, 2026-12-01)."""
    root = Path(os.environ.get("DRK_LOCK_DIR") or tempfile.gettempdir()) / "drk-locks"
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = root.stat()
    if info.st_uid == os.getuid() and info.st_mode & 0o077:
        root.chmod(0o700)  # made with a wider mode (an older drk, or a umask that mkdir's mode does not override)
    return root


def physical_gpu_id(index: int) -> str:
    """The host-wide name of visible GPU ``index`` (``CUDA_VISIBLE_DEVICES`` remaps indices per process)."""
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    return visible[index] if index < len(visible) else str(index)


class GpuTimingLock:
    """Picklable (travels to the judge as its paths); :meth:`acquire` blocks until this GPU is free of timings and of
    shared holders; :meth:`shared` until no timing runs or waits. Not for use by two threads at once."""

    def __init__(self, gpu_index: int = 0, lock_dir: str | Path | None = None) -> None:
        directory = Path(lock_dir) if lock_dir else lock_root()
        directory.mkdir(parents=True, exist_ok=True)
        self.path = str(directory / f"drk-gpu-{physical_gpu_id(gpu_index)}.lock")
        self.gate_path = self.path + ".gate"
        self._fd: int | None = None  # held exclusively (a timing)
        self._gate_fd: int | None = None
        self._shared_fd: int | None = None
        self._mutex = threading.Lock()  # release() and the hold limit's timer
        self._watchdog: threading.Timer | None = None
        self.expired = False  # the last exclusive hold ran past its limit and was let go

    @classmethod
    def from_state(cls, state: dict) -> GpuTimingLock:
        """The lock :meth:`__getstate__` describes (how a judge process gets its job's lock, as JSON)."""
        lock = cls.__new__(cls)
        lock.__setstate__(state)
        return lock

    def __getstate__(self) -> dict:
        return {"path": self.path, "gate_path": self.gate_path}

    def __setstate__(self, state: dict) -> None:
        self.path = state["path"]
        self.gate_path = state.get("gate_path", self.path + ".gate")
        self._fd = self._gate_fd = self._shared_fd = None
        self._mutex = threading.Lock()
        self._watchdog = None
        self.expired = False

    @property
    def held(self) -> bool:
        """Whether this object holds the lock exclusively now."""
        return self._fd is not None

    def acquire(self, quiet_wait_s: float = QUIET_WAIT_S, max_hold_s: float | None = None) -> bool:
        """Exclusive: wait at the turnstile (other timings; new shared holders then wait behind it), then up to
        ``quiet_wait_s`` for shared holders in flight to leave. Returns whether they did: a shared holder stuck
        longer (a hanging candidate's request) cannot stall every timing on the GPU; that timing goes ahead
        holding the turnstile, and says it was not quiet.

        ``max_hold_s``: let the lock go after that long even if :meth:`release` was not called (``expired`` says so):
        a candidate that is slow only while it is timed cannot keep every other evaluation on its GPU waiting."""
        gate = _locked(self.gate_path, fcntl.LOCK_EX)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        deadline = time.monotonic() + quiet_wait_s
        quiet = False
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    quiet = True
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(0.001)
        except BaseException:
            os.close(fd)
            _unlock(gate)
            raise
        with self._mutex:
            self._fd, self._gate_fd = fd, gate  # an fd without the flock: release unlocks nothing, closes it
            self.expired = False
            if max_hold_s is not None:
                self._watchdog = threading.Timer(max_hold_s, self._expire)
                self._watchdog.daemon = True
                self._watchdog.start()
        return quiet

    def _expire(self) -> None:
        with self._mutex:
            if self._fd is not None:
                self.expired = True
                self._let_go()

    def release(self) -> None:
        with self._mutex:
            if self._watchdog is not None:
                self._watchdog.cancel()
                self._watchdog = None
            self._let_go()

    def _let_go(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            _unlock(fd)
        if self._gate_fd is not None:
            gate, self._gate_fd = self._gate_fd, None
            _unlock(gate)

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        """GPU work that is not a timing: overlaps other shared holders, never a timing. A no-op while this object
        already holds the lock (exclusively or shared), so a timing's own requests do not wait for themselves."""
        if self._fd is not None or self._shared_fd is not None:
            yield
            return
        gate = _locked(self.gate_path, fcntl.LOCK_EX)  # passes only when no timing holds or waits for the GPU
        try:
            self._shared_fd = _locked(self.path, fcntl.LOCK_SH)
        finally:
            _unlock(gate)
        try:
            yield
        finally:
            fd, self._shared_fd = self._shared_fd, None
            _unlock(fd)

    def __enter__(self) -> GpuTimingLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _locked(path: str, how: int) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, how)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _unlock(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def gpu_shared(lock: GpuTimingLock | None) -> contextlib.AbstractContextManager:
    """``lock.shared()``, or nothing to hold (CPU evaluations, or a caller's timing lock without a shared side)."""
    shared = getattr(lock, "shared", None)
    return shared() if callable(shared) else contextlib.nullcontext()
