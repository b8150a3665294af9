"""The pieces the warm judge servers of :mod:`drk.gym.judges` are made of: the forkserver their processes are forked
from, :class:`Reporter` (child side) and :func:`collect` (caller side, with a wall-clock limit).

Children are forked from a *forkserver* that has imported torch but never touched CUDA and never runs candidate
code, so a child does not pay the ~2 s import of torch again. The candidate itself never runs here: the judge starts it in an OS sandbox
(:mod:`drk.gym.isolation`). The judge answers over a pipe in JSON (never pickle), each message carrying a
per-evaluation secret.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_MAX_MESSAGE_BYTES = 32 * 2**20
_context: multiprocessing.context.BaseContext | None = None
_start_lock = threading.Lock()


def _get_context() -> multiprocessing.context.BaseContext:
    global _context
    if _context is None:
        if "forkserver" in multiprocessing.get_all_start_methods():
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["drk.gym.judge"])  # imports torch once; no triton, no CUDA
        else:  # pragma: no cover - Windows
            ctx = multiprocessing.get_context("spawn")
        _context = ctx
    return _context


@dataclass
class SandboxOutcome:
    """What came back from a child: its result (if it sent one) and how it ended."""

    result: dict[str, Any] | None
    last_stage: str
    exitcode: int | None
    timed_out: bool
    elapsed_s: float
    stages: list[str] = field(default_factory=list)
    stage_s: dict[str, float] = field(default_factory=dict)  # seconds spent in each stage ("startup": until the first)


class Reporter:
    """Child side of the pipe: stage notices and the final result, as authenticated JSON."""

    def __init__(self, conn: Any, token: str) -> None:
        self._conn = conn
        self._token = token

    def stage(self, name: str) -> None:
        self._send({"kind": "stage", "stage": name})

    def result(self, payload: dict[str, Any]) -> None:
        self._send({"kind": "result", "result": payload})

    def ask_for_runner(self) -> None:
        """Ask the caller for one more started runner (it answers on the same pipe: :func:`collect`)."""
        self._send({"kind": "runner"})

    def _send(self, message: dict[str, Any]) -> None:
        message["token"] = self._token
        self._conn.send_bytes(json.dumps(message, default=str).encode())


def _redirect_stdio(path: str) -> None:
    """Send the child's stdout/stderr to ``path`` (nothing of it reaches the caller's terminal or notebook) and
    enable ``faulthandler`` there: a crash leaves the Python stack in that file."""
    import faulthandler

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115 - lives as long as the process
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    faulthandler.enable(file=sys.stderr)


def _close_inherited_fds(keep: set[int]) -> None:
    """Close every descriptor but stdio, ours (``keep``) and multiprocessing's resource tracker pipe: the
    forkserver's are inherited, and nothing the judge does should hold them.

    The tracker's pipe stays because ``multiprocessing`` keeps its number: closed, the number went to the next file
    the judge opened (the CUDA driver's, in practice), and the first ``torch.compile`` that used the tracker wrote a
    probe to that descriptor and closed it. Judges of the compiled reference then failed with CUDA "OS call failed",
    "unknown error" or "unspecified launch failure", or died (5 of 14 level-3 evaluations on the H200, 2026-12-02,
    ``results/gpu/2026-12-02-s19``)."""
    from multiprocessing import resource_tracker

    tracker_fd = getattr(resource_tracker._resource_tracker, "_fd", None)  # noqa: SLF001 - no public accessor
    keep = set(keep) | ({tracker_fd} if isinstance(tracker_fd, int) and tracker_fd > 2 else set())
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)


#: Messages read after the time limit at most (those already waiting: a job's stage notices and its result).
_LATE_READS = 256


def collect(conn: Any, proc: multiprocessing.process.BaseProcess, token: str, start: float,
            timeout_s: float, on_runner_request: Callable[[], None] | None = None) -> SandboxOutcome:
    """Read one job's stage notices and result (messages carrying ``token``) until the result, the child's death or
    ``start + timeout_s``; a message that is not valid JSON or lacks the token is ignored.

    ``on_runner_request`` answers the judge's request for one more runner (:meth:`Reporter.ask_for_runner`); the
    time it takes (waiting for a spare) extends the limit: it is the caller's wait, not the job's."""
    stages: list[str] = []
    stage_started: list[float] = []
    result = None
    timed_out = False
    paused = 0.0
    late_reads = 0
    while result is None:
        remaining = start + timeout_s + paused - time.monotonic()
        if remaining <= 0:
            # what is already in the pipe is read first: a caller that stalled past the limit (its GIL held by
            # other work) once dropped a result waiting there and blamed the problem (attacker review 7)
            if late_reads >= _LATE_READS or not conn.poll(0):
                timed_out = True
                break
            late_reads += 1
        elif not conn.poll(min(remaining, 0.25)):
            if not proc.is_alive() and not conn.poll(0):
                break
            continue
        try:
            message = json.loads(conn.recv_bytes(_MAX_MESSAGE_BYTES))
        except (EOFError, OSError):
            break
        except (ValueError, UnicodeDecodeError):
            continue  # garbage on the pipe: not from us
        if not isinstance(message, dict) or message.get("token") != token:
            continue  # forged, or a late word from an earlier job
        if message.get("kind") == "stage":
            stages.append(str(message.get("stage")))
            stage_started.append(time.monotonic())
        elif message.get("kind") == "result":
            result = message.get("result")
        elif message.get("kind") == "runner" and on_runner_request is not None:
            asked = time.monotonic()
            on_runner_request()
            paused += time.monotonic() - asked
    end = time.monotonic()
    return SandboxOutcome(
        result=result,
        last_stage=stages[-1] if stages else "startup",
        exitcode=proc.exitcode,
        timed_out=timed_out,
        elapsed_s=end - start,
        stages=stages,
        stage_s=_stage_durations(start, stages, stage_started, end),
    )


def _stage_durations(start: float, stages: list[str], started: list[float], end: float) -> dict[str, float]:
    """Wall seconds per stage, from the parent's clock (where an evaluation's time goes; not a trusted timer)."""
    bounds = [start, *started, end]
    durations: dict[str, float] = {}
    for name, begin, finish in zip(["startup", *stages], bounds, bounds[1:]):
        durations[name] = round(durations.get(name, 0.0) + finish - begin, 4)
    return durations


def _start_without_main(proc: multiprocessing.process.BaseProcess) -> None:
    """Start ``proc`` without the child re-importing the caller's ``__main__``.

    multiprocessing's forkserver/spawn children normally re-run the parent's main script, which breaks scripts
    and notebooks without an ``if __name__ == "__main__"`` guard. Our target lives in an importable module, so the
    child needs nothing from ``__main__``: hide it for the instant the process is started.
    """
    with _start_lock:
        real_main = sys.modules["__main__"]
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            proc.start()
        finally:
            sys.modules["__main__"] = real_main


def _terminate(proc: multiprocessing.process.BaseProcess, grace_s: float) -> None:
    proc.join(grace_s)
    if proc.is_alive() or proc.exitcode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
        proc.join(5)
    else:
        try:  # reap grandchildren left in the group
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
