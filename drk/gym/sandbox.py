"""Trusted child processes with a wall-clock limit: a one-shot child (:func:`run_sandboxed`), and the pieces the warm
judge servers of :mod:`drk.gym.judges` are made of (the forkserver, :class:`Reporter`, :func:`collect`).

Children are forked from a *forkserver* that has imported torch but never touched CUDA and never runs candidate
code, so a child does not pay the ~2 s import of torch again. The candidate itself never runs here: the judge starts it in an OS sandbox
(:mod:`drk.gym.isolation`). The judge answers over a pipe in JSON (never pickle), each message carrying a
per-evaluation secret.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import secrets
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

    def _send(self, message: dict[str, Any]) -> None:
        message["token"] = self._token
        self._conn.send_bytes(json.dumps(message, default=str).encode())


def _child_entry(target: Callable[..., dict[str, Any]], conn: Any, token: str, args: tuple,
                 stdio_path: str | None = None, timeout_s: float | None = None) -> None:
    os.setsid()  # own process group: a timeout kills whatever the candidate spawned, too
    if stdio_path:
        _redirect_stdio(stdio_path, timeout_s)
    handed = {fd for arg in args if callable(getattr(arg, "fds", None)) for fd in arg.fds()}  # a runner's pipes
    _close_inherited_fds(keep={conn.fileno(), *handed})
    reporter = Reporter(conn, token)
    try:
        payload = target(reporter, *args)
    except BaseException as exc:  # noqa: BLE001 - the child must always answer
        import traceback

        payload = {"internal_error": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-2000:]}
    try:
        reporter.result(payload)
        conn.close()
    finally:
        os._exit(0)  # skip atexit hooks and threads a candidate may have left behind


def _redirect_stdio(path: str, timeout_s: float | None) -> None:
    """Send the child's stdout/stderr to ``path`` (a candidate's prints never reach the caller's terminal or
    notebook) and arm ``faulthandler``: a segfault, or a hang shortly before the time limit, leaves the Python
    stack there, so the verdict can say *where* the candidate crashed or hung."""
    import faulthandler

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115 - lives as long as the process
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    faulthandler.enable(file=sys.stderr)
    if timeout_s:
        faulthandler.dump_traceback_later(max(timeout_s - 2.0, 0.5 * timeout_s), exit=False, file=sys.stderr)


def _close_inherited_fds(keep: set[int]) -> None:
    """Close every descriptor but stdio and ours (``keep``): the forkserver's and resource tracker's pipes are
    inherited, and nothing the judge does should hold them."""
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)


def run_sandboxed(target: Callable[..., dict[str, Any]], args: tuple, timeout_s: float,
                  stdio_path: str | None = None) -> SandboxOutcome:
    """Run ``target(reporter, *args)`` in a fresh child; never raises because of what the child does.

    Args:
        target: a module-level function (picklable by reference) returning a JSON-able dict.
        args: picklable arguments (plain data; multiprocessing locks are fine).
        timeout_s: wall-clock limit; the child's process group is killed when it passes.
        stdio_path: file for the child's stdout/stderr (with faulthandler stacks); None leaves them inherited.
    """
    ctx = _get_context()
    token = secrets.token_hex(16)
    recv_conn, send_conn = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_entry, args=(target, send_conn, token, args, stdio_path, timeout_s),
                       daemon=True)
    start = time.monotonic()
    _start_without_main(proc)
    send_conn.close()
    outcome = collect(recv_conn, proc, token, start, timeout_s)
    _terminate(proc, grace_s=0.0)  # the verdict is in hand (or never will be): no need to watch it exit
    recv_conn.close()
    outcome.exitcode = proc.exitcode
    return outcome


def collect(conn: Any, proc: multiprocessing.process.BaseProcess, token: str, start: float,
            timeout_s: float) -> SandboxOutcome:
    """Read one job's stage notices and result (messages carrying ``token``) until the result, the child's death or
    ``start + timeout_s``; a message that is not valid JSON or lacks the token is ignored."""
    stages: list[str] = []
    stage_started: list[float] = []
    result = None
    timed_out = False
    while result is None:
        remaining = start + timeout_s - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        if not conn.poll(min(remaining, 0.25)):
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
