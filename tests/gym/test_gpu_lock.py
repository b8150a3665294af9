"""The per-GPU timing lock serialises across processes and is freed when its holder dies."""

import multiprocessing
import os
import pickle
import signal
import time

from drk.gym import GpuTimingLock
from drk.gym.gpu_lock import physical_gpu_id


def _hold(lock: GpuTimingLock, seconds: float, started) -> None:
    lock.acquire()
    started.set()
    time.sleep(seconds)
    lock.release()


def _blocked_for(lock: GpuTimingLock) -> float:
    start = time.monotonic()
    with lock:
        return time.monotonic() - start


def _start_holder(lock: GpuTimingLock, seconds: float):
    """Another process that takes ``lock`` and keeps it for ``seconds``; returns once it holds it."""
    ctx = multiprocessing.get_context("spawn")
    started = ctx.Event()
    holder = ctx.Process(target=_hold, args=(lock, seconds, started))
    holder.start()
    assert started.wait(60)
    return holder


def test_second_process_waits_for_the_holder(tmp_path):
    lock = GpuTimingLock(0, lock_dir=tmp_path)
    holder = _start_holder(lock, 1.0)
    assert _blocked_for(lock) > 0.5
    holder.join(10)


def test_killed_holder_does_not_wedge_the_gpu(tmp_path):
    lock = GpuTimingLock(0, lock_dir=tmp_path)
    holder = _start_holder(lock, 600.0)
    os.kill(holder.pid, signal.SIGKILL)
    holder.join(10)
    assert _blocked_for(lock) < 5.0


def test_locks_are_per_physical_gpu_and_picklable(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert physical_gpu_id(1) == "5"
    a, b = GpuTimingLock(0, lock_dir=tmp_path), GpuTimingLock(1, lock_dir=tmp_path)
    assert a.path != b.path and a.path.endswith("drk-gpu-3.lock")
    with a:
        copy = pickle.loads(pickle.dumps(a))  # what the sandbox child receives: the path, not the open descriptor
    assert copy.path == a.path and copy._fd is None
    with b, copy:  # a different GPU does not block; the copy can take a's lock once a released it
        pass
