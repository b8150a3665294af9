"""Candidate runners started ahead of time, so an evaluation does not wait for Python, torch and CUDA to start.

A runner (:mod:`drk.gym.runner`) holds nothing of any candidate until the judge sends it one, so it can be started
before the candidate is known: in the caller's process, in its sandbox (:mod:`drk.gym.isolation`), importing torch
and Triton and creating its CUDA context (and the profiler's) while the previous evaluation runs. An evaluation
takes two (one runs the candidate, the other only its probe variants); each serves exactly one evaluation and is
killed after it; :class:`WarmRunners` keeps a few spares per (device, GPU, isolation
level) and starts a replacement whenever one is taken.

The caller hands the runner's pipes to the judge (:mod:`drk.gym.judges`) as passed file descriptors
(:class:`RunnerHandle`); the caller keeps only the process, to kill and reap it when the evaluation ends, whatever the
judge did.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import queue
import subprocess
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from drk.gym import isolation, wire

#: Spare runners kept started per (device, GPU, isolation level, role) by default. An evaluation takes one of each
#: role: the candidate's runner, which profiles (its spare warms CUPTI up before it is taken), and the probe runner,
#: which never does (its spare skips that ~5 s of host work: results/gpu/2026-12-01-s15).
DEFAULT_SPARES = 1


#: Where a spare comes from: (device, GPU, isolation level, whether it warms the profiler up).
SpareKey = tuple[str, int, str, bool]


def spare_key(device: str, gpu_index: int, level: str, profiler: bool = True) -> SpareKey:
    """The spares a runner comes from: per device, GPU, isolation level and role (a CPU runner has no profiler to
    warm; its two roles are kept apart all the same, so each evaluation still finds one spare of each)."""
    return (device, gpu_index, level, bool(profiler))


@dataclass
class RunnerHandle:
    """The judge's end of a started runner: its pid, three pipe descriptors (requests, answers, stdout) and its
    output area (:func:`drk.gym.wire.make_output_area`; -1: none, outputs come over the pipe).

    Passed to the judge's process as descriptors (:mod:`drk.gym.judges`) and rebuilt there by
    :func:`handle_from_fds`.
    """

    pid: int
    to_runner: int
    from_runner: int
    output: int
    area: int = -1
    greeted: bool = False  # its hello was read by the starter (a spare whose GPU start ran under the lock)

    def fds(self) -> tuple[int, ...]:
        return (self.to_runner, self.from_runner, self.output) + ((self.area,) if self.area >= 0 else ())

    def duplicate(self) -> RunnerHandle:
        """The same handle on copies of its descriptors (what a judge gets over ``SCM_RIGHTS``), for code in this
        process that closes what it is given (:class:`drk.gym.judge.RunnerProcess`)."""
        return handle_from_fds(self.pid, [os.dup(fd) for fd in self.fds()], self.greeted)



def handle_from_fds(pid: int, fds: list[int], greeted: bool) -> RunnerHandle:
    """A handle from the descriptors of :meth:`RunnerHandle.fds` (three pipes, then the output area if any)."""
    return RunnerHandle(pid, *fds[:3], area=fds[3] if len(fds) > 3 else -1, greeted=greeted)


def descriptor_identity(fds: tuple[int, ...]) -> tuple[tuple[int, int] | None, ...]:
    """(device, inode) of each descriptor's file; None for a number that is not open."""
    identity: list[tuple[int, int] | None] = []
    for fd in fds:
        try:
            stat = os.fstat(fd)
        except OSError:
            identity.append(None)
        else:
            identity.append((stat.st_dev, stat.st_ino))
    return tuple(identity)


@dataclass
class StartedRunner:
    """A runner process as its starter sees it: kill it when its evaluation ends (reaping it too)."""

    proc: subprocess.Popen
    handle: RunnerHandle
    uid_claim: isolation.UidClaim | None = None  # released when the runner is killed
    _closed: bool = field(default=False, repr=False)
    #: what each descriptor of the handle was when it started (device, inode): see :meth:`intact`
    identity: tuple[tuple[int, int] | None, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        self.identity = self.identity or descriptor_identity(self.handle.fds())

    def alive(self) -> bool:
        return self.proc.poll() is None

    def intact(self) -> bool:
        """Whether every descriptor number of its handle is still open on the file it started with. A number closed
        by other code of this process (a double close) and reused by another file would hand the judge that file:
        a judge once waited 540 s for descriptors that could not be sent (CI of 381c282, 2026-12-02)."""
        return not self._closed and descriptor_identity(self.handle.fds()) == self.identity

    def release_fds(self) -> None:
        """Close the starter's copies of the pipes (the judge holds its own once it has started): only the numbers
        still open on their own files (one that another file took since is that file's owner's to close)."""
        if not self._closed:
            self._closed = True
            now = descriptor_identity(self.handle.fds())
            wire.close_quietly(fd for fd, was, is_ in zip(self.handle.fds(), self.identity, now) if was == is_)

    def kill(self) -> None:
        self.release_fds()
        try:
            os.killpg(self.proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.kill()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if self.uid_claim is not None:
            self.uid_claim.release()  # its processes are gone (the sandbox's PID namespace died with it)


#: Seconds a spare may take to import torch and Triton, and then to create its CUDA context, before it is dropped.
SPARE_IMPORT_S, SPARE_GPU_START_S = 120.0, 60.0
#: Spares whose start-up (imports, CUDA context, the profiler's warm-up) runs at once, at least; a pool that reserves
#: more spares gets more (:func:`parallel_starts`). The rest queue behind them.
PARALLEL_STARTS = 4
#: Seconds :meth:`WarmRunners.take` waits for a spare already starting before it starts one of its own (two
#: start-ups side by side take longer than one: waiting for the one under way is never slower).
TAKE_WAIT_S = 120.0


def parallel_starts(spares: int) -> int:
    """How many spares start at once for a reservation of ``spares``: :data:`PARALLEL_STARTS`, or up to one per
    two host CPUs when more spares are wanted.

    Why more: a start is ~0.6 s for the CUDA context (one at a time) and then ~5 s of the profiler's host start-up;
    with 4 at once spares arrived at ~43 a minute, two per evaluation, and a pool of 8 on an H200 waited 15.6 s of its
    21.8 s per evaluation for runners (results/gpu/2026-12-01-s15). Why a cap: each start is a process doing host
    work beside the evaluations being judged.
    """
    return max(PARALLEL_STARTS, min(spares, (os.cpu_count() or 2) // 2))


def start_runner(device: str, gpu_index: int, level: str, gpu_lock: Any = None, profiler: bool = True) -> StartedRunner:
    """Start one sandboxed runner for ``device`` (``"cuda"``/``"cpu"``) on GPU ``gpu_index`` at isolation ``level``.

    With ``gpu_lock`` (a :class:`~drk.gym.gpu_lock.GpuTimingLock`; CUDA only) this waits until the runner is up, and
    lets it create its CUDA context only while holding the lock shared: the spares' start-up never lands inside
    another evaluation's timing. Without it the start is not waited for (the judge reads the hello). With
    ``profiler=False`` it does not warm the profiler up (a probe runner never profiles).
    """
    gated = gpu_lock is not None and device == "cuda"
    started = spawn_runner(device, gpu_index, level, gated, profiler=profiler)
    if gated:
        finish_gpu_start(started, gpu_lock)
    return started


def runner_argv(to_runner: int, from_runner: int, device: str, gpu_index: int, area: int, gated: bool,
                profiler: bool) -> list[str]:
    """The runner's command line (:func:`drk.gym.runner.main` reads it): its pipes, device, GPU, output area, and
    the options ``wait`` (a gated start: :func:`finish_gpu_start`) and ``noprofiler`` (no CUPTI warm-up)."""
    argv = [sys.executable, "-s", "-m", "drk.gym.runner", str(to_runner), str(from_runner), device, str(gpu_index),
            f"area={area}"]
    return argv + (["wait"] if gated else []) + ([] if profiler else ["noprofiler"])


def spawn_runner(device: str, gpu_index: int, level: str, gated: bool = False, profiler: bool = True) -> StartedRunner:
    """Only the ``Popen`` of :func:`start_runner` (milliseconds): with ``gated`` the runner waits, imported, for
    :func:`finish_gpu_start` before it touches the GPU. Splitting the two lets one thread spawn every spare (the
    sandbox's ``--die-with-parent`` follows the spawning thread) while their start-ups run side by side."""
    to_runner_r, to_runner_w = os.pipe()
    from_runner_r, from_runner_w = os.pipe()
    _widen(from_runner_w)  # outputs of hundreds of MB cross this pipe: fewer, larger reads
    area = wire.make_output_area()
    argv = runner_argv(to_runner_r, from_runner_w, device, gpu_index, area, gated, profiler)
    claim = isolation.claim_sandbox_uid() if level == "uid" else None
    try:
        proc = subprocess.Popen(isolation.sandbox_command(level, argv, uid=claim.uid if claim else None),
                                pass_fds=(to_runner_r, from_runner_w, area),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=isolation.sandbox_env(device), start_new_session=True, close_fds=True)
    except BaseException:
        for fd in (to_runner_w, from_runner_r, area):
            os.close(fd)
        if claim is not None:
            claim.release()
        raise
    finally:
        os.close(to_runner_r)
        os.close(from_runner_w)
    output = os.dup(proc.stdout.fileno())
    proc.stdout.close()
    for fd in (to_runner_w, from_runner_r, output, area):
        os.set_inheritable(fd, False)
    return StartedRunner(proc, RunnerHandle(proc.pid, to_runner_w, from_runner_r, output, area=area), uid_claim=claim)


def finish_gpu_start(started: StartedRunner, gpu_lock: Any) -> None:
    """Wait for a gated runner's imports and CUDA start (:func:`_gpu_start`); a failure kills it (``OSError``)."""
    try:
        _gpu_start(started.handle, gpu_lock)
    except (wire.WireError, OSError) as exc:
        started.kill()
        raise OSError(f"a spare runner failed to start: {exc}") from None


def _gpu_start(handle: RunnerHandle, gpu_lock: Any) -> None:
    """The runner's two-phase start: wait for its imports, then let it create its CUDA context under the lock."""
    began = time.monotonic()
    wire.recv_frame(handle.from_runner, deadline=time.monotonic() + SPARE_IMPORT_S, max_blob_bytes=0)  # imported
    imported = time.monotonic()
    # One CUDA context created at a time per GPU: a timing waits for every shared holder in flight, and contexts
    # created side by side on a busy host, each in a hold of its own, held it for seconds, stalling every evaluation
    # on the GPU behind them (a pool of 8 fell from ~34 to ~14 evaluations/min, H200 2026-12-01). Creating every
    # waiting spare's context in one shared hold was tried and gained nothing: spares rarely wait together (1.12-1.16
    # contexts per hold, 21-23 evaluations/min either way; results/gpu/2026-12-01-s15). Imports run side by side.
    with _context_creation(gpu_lock):
        _create_context(handle, gpu_lock)
    created = time.monotonic()
    hello, _ = wire.recv_frame(handle.from_runner, deadline=time.monotonic() + SPARE_GPU_START_S, max_blob_bytes=0)
    if hello.get("op") != "hello":
        raise wire.WireError(f"expected hello, got {str(hello.get('op'))[:40]!r}")
    handle.greeted = True
    _count(import_wait_s=imported - began, context_wait_s=created - imported, hello_wait_s=time.monotonic() - created)


def _create_context(handle: RunnerHandle, gpu_lock: Any) -> None:
    """Let a gated runner create its CUDA context while this holds the GPU lock shared (so no timing is under way)."""
    from drk.gym.gpu_lock import gpu_shared

    asked = time.monotonic()
    with gpu_shared(gpu_lock):  # the profiler's (host) start-up runs after, outside it
        held = time.monotonic()
        try:
            wire.send_frame(handle.to_runner, {"op": "init"})
        except (wire.WireError, OSError) as exc:
            raise wire.WireError(f"could not ask for its CUDA start: {exc}") from None
        try:
            ready, _ = wire.recv_frame(handle.from_runner, deadline=held + SPARE_GPU_START_S, max_blob_bytes=0)
        except OSError as exc:
            raise wire.WireError(str(exc)) from None
        if ready.get("op") != "gpu_ready":
            raise wire.WireError(f"expected gpu_ready, got {str(ready.get('op'))[:40]!r}")
    _count(contexts=1, lock_wait_s=held - asked, hold_s=time.monotonic() - held)


_creation_locks: dict[str, threading.Lock] = defaultdict(threading.Lock)


def _context_creation(gpu_lock: Any) -> threading.Lock:
    """This process's mutex for creating CUDA contexts on the GPU of ``gpu_lock``."""
    return _creation_locks[getattr(gpu_lock, "path", "")]


_stats: dict[str, float] = defaultdict(float)
_stats_lock = threading.Lock()


def _count(**amounts: float) -> None:
    with _stats_lock:
        for key, value in amounts.items():
            _stats[key] += value


def spare_start_stats(reset: bool = False) -> dict[str, float]:
    """Totals over this process's gated spare starts: ``contexts`` created (each in a shared hold of the GPU lock),
    seconds waiting for the lock (``lock_wait_s``) and inside it (``hold_s``), and per spare the waits for its
    imports, its context (lock wait and hold) and its hello (the profiler's start-up). Where a pool's runners come
    from, for the benchmarks."""
    with _stats_lock:
        out = dict(_stats)
        if reset:
            _stats.clear()
    return out


def _widen(fd: int, size: int = 2**20) -> None:
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)
    except (OSError, AttributeError):
        pass  # the system's limit (or not Linux): the default size works, only slower


class WarmRunners:
    """Spare runners per (device, GPU, isolation level); thread-safe.

    :meth:`take` returns a spare that is still alive (or waits for one being started, or starts one) and asks for
    its replacement at once, so the next evaluation's runner starts while this one runs. Spares are *spawned* by one
    long-lived thread: bubblewrap's ``--die-with-parent`` follows the *thread* that started a process, and a pool's
    worker threads end with their batch. Their start-ups (imports, CUDA context, profiler) then run side by side, up
    to :func:`parallel_starts` of the reservation at once (each evaluation takes two runners, and a pool of 8 waited
    for them). ``spares=0`` starts every runner on demand.
    """

    def __init__(self, spares: int = DEFAULT_SPARES) -> None:
        self.spares = spares
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._idle: dict[SpareKey, list[StartedRunner]] = defaultdict(list)
        self._pending: dict[SpareKey, int] = defaultdict(int)
        self._requests: queue.SimpleQueue[SpareKey | None] = queue.SimpleQueue()
        self._closed = False
        self._to_finish: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._starter = threading.Thread(target=self._spawn_spares, name="drk-warm-runners", daemon=True)
        self._starter.start()
        self.finishers = 0  # threads finishing spares' start-ups (:func:`parallel_starts` of the reservation)
        self._add_finishers()

    def _add_finishers(self) -> None:
        """As many finishing threads as :func:`parallel_starts` of both roles' spares (it only grows)."""
        with self._lock:
            if self._closed:
                return
            wanted = parallel_starts(2 * self.spares)
            new = range(self.finishers, wanted)
            self.finishers = max(self.finishers, wanted)
        for i in new:  # daemons: a start-up under way never delays the caller's exit
            threading.Thread(target=self._finish_spares, name=f"drk-runner-start-{i}", daemon=True).start()

    def take(self, device: str, gpu_index: int, level: str, wait_s: float = TAKE_WAIT_S,
             profiler: bool = True, top_up: bool = True) -> StartedRunner:
        """A live started runner: an idle spare, else one already starting (waited for up to ``wait_s``), else a
        new one started here. ``profiler=False``: one that did not warm the profiler up (for the probes).
        ``top_up=False``: its replacement is left to the next :meth:`warm` (the probe runner is taken just before
        its evaluation's timing, and a replacement starting then loads the host during that timing)."""
        key = spare_key(device, gpu_index, level, profiler)
        runner, dead = None, []
        deadline = time.monotonic() + wait_s
        with self._arrived:
            while runner is None:
                idle = self._idle[key]
                while idle and runner is None:
                    candidate = idle.pop(0)
                    if candidate.alive() and candidate.intact():
                        runner = candidate
                    else:
                        dead.append(candidate)
                remaining = deadline - time.monotonic()
                if runner is not None or self._pending[key] <= 0 or remaining <= 0 or self._closed:
                    break
                self._arrived.wait(min(remaining, 1.0))
        for candidate in dead:  # reaped outside the lock: other evaluations need not wait for it
            candidate.kill()
        if top_up:
            self._top_up(key)
        return runner if runner is not None else start_runner(device, gpu_index, level, profiler=key[3])

    def reserve(self, n: int) -> None:
        """Keep at least ``n`` spares per key from now on (a pool of ``n`` workers wants ``n`` ready runners of each
        role)."""
        with self._lock:
            self.spares = max(self.spares, n)
        self._add_finishers()

    def warm(self, device: str, gpu_index: int, level: str, profiler: bool = True) -> None:
        """Start spares for this device, GPU and level now (in the background), before the first evaluation asks
        for one: of both roles, or (``profiler=False``: evaluations without a profile) only runners that never
        warm the profiler up."""
        for role in {profiler, False}:
            self._top_up(spare_key(device, gpu_index, level, role))

    def _top_up(self, key: SpareKey) -> None:
        with self._lock:
            missing = self.spares - len(self._idle[key]) - self._pending[key]
            self._pending[key] += max(missing, 0)
        for _ in range(max(missing, 0)):
            self._requests.put(key)

    def _spawn_spares(self) -> None:
        while True:
            key = self._requests.get()
            if key is None:
                return
            gpu_lock = _gpu_lock(key)
            try:
                spare = spawn_runner(*key[:3], gated=gpu_lock is not None, profiler=key[3])
            except OSError:
                self._arrive(key, None)  # the evaluation that needs one starts it itself (and reports what fails)
                continue
            if gpu_lock is None:
                self._arrive(key, spare)  # its hello is read by the judge
            else:
                self._to_finish.put((key, spare, gpu_lock))

    def _finish_spares(self) -> None:
        while True:
            job = self._to_finish.get()
            if job is None:
                return
            key, spare, gpu_lock = job
            if not self._closed:  # a closed pool's queued spares get no CUDA context: _arrive kills them
                try:
                    finish_gpu_start(spare, gpu_lock)
                except OSError:
                    spare = None
            self._arrive(key, spare)

    def _arrive(self, key: SpareKey, spare: StartedRunner | None) -> None:
        with self._arrived:
            self._pending[key] -= 1
            if spare is not None and not self._closed:
                self._idle[key].append(spare)
                spare = None
            self._arrived.notify_all()
        if spare is not None:
            spare.kill()

    def close(self) -> None:
        with self._arrived:
            self._closed = True
            idle = [r for runners in self._idle.values() for r in runners]
            self._idle.clear()
            self._arrived.notify_all()
        self._requests.put(None)
        with self._lock:
            finishers = self.finishers
        for _ in range(finishers):
            self._to_finish.put(None)
        for runner in idle:
            runner.kill()


def _gpu_lock(key: SpareKey) -> Any:
    if key[0] != "cuda":
        return None
    from drk.gym.gpu_lock import GpuTimingLock

    return GpuTimingLock(key[1])


_shared: WarmRunners | None = None
_shared_lock = threading.Lock()


def shared_runners() -> WarmRunners:
    """This process's :class:`WarmRunners` (spares are killed at exit; ``--die-with-parent`` covers a crash)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = WarmRunners()
            atexit.register(_shared.close)
        return _shared
