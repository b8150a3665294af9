"""Judge processes kept warm and reused: an evaluation does not pay for a new process and CUDA context.

A judge (:func:`drk.gym.judge.judge`) never imports or runs candidate code: it builds the reference, talks to the
candidate's sandboxed runners over pipes and reads only *data* from them (:mod:`drk.gym.wire`). So, unlike a runner,
it can serve one evaluation after another. A fresh judge per evaluation cost a CUDA context each time (10-13 s of
an evaluation's wall time on a busy H200, 2026-12-01, ``results/gpu/2026-12-01-s12/call3_examples_partial.log``).

Each :class:`JudgeServer` is a forkserver child (torch imported, no CUDA until its first job) that takes one job at a
time over a duplex pipe: the job as JSON, then the candidate's runner's descriptors (pipes, output area) passed with
``SCM_RIGHTS``; the probe runner's come the same way when the judge asks for them (after the correctness checks, so a
failing candidate costs one runner, not two). It answers exactly as a one-shot child does (stage notices, then the
result, each carrying the job's token). The
caller's clock bounds every job: a server that overruns, dies or breaks the protocol is killed with its process
group and never reused, and a server retires after :data:`MAX_JOBS` jobs, so slow leaks (the allocator's cache,
compiled graphs) cannot pile up.
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import socket
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from multiprocessing import reduction
from typing import Any

from drk.gym import sandbox, wire
from drk.gym.sandbox import Reporter, SandboxOutcome
from drk.gym.warm import TAKE_WAIT_S

#: Jobs one server serves before it is replaced.
MAX_JOBS = 200
#: Descriptors passed per job at most: two runners' (requests, answers, output) pipes and output areas.
_JOB_FDS = 8
#: Seconds the judge waits for the caller's answer to its request for a runner: the caller waits up to
#: :data:`~drk.gym.warm.TAKE_WAIT_S` for a spare under way and then starts one (a ``Popen``), so a longer silence is a
#: caller that will never answer. Unbounded, a judge once waited out its whole job limit (540 s) in stage
#: ``probe_runner`` on a CI host, and an honest kernel was an ``env_error`` (CI of 381c282, 2026-12-02).
RUNNER_ANSWER_S = TAKE_WAIT_S + 60.0
#: Seconds between the caller's answer and the descriptors that follow it (sent at once after it).
DESCRIPTORS_S = 30.0


def _serve(conn: Any, stdio_path: str | None, cache_dir: str | None = None) -> None:
    """The server's loop (in the forkserver child): one job after another until the caller closes the pipe."""
    os.setsid()  # its own process group: the caller kills it whole when a job overruns
    if cache_dir:  # read when torch.compile or Triton first needs them, after this
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache_dir, "inductor")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(cache_dir, "triton")
    if stdio_path:
        sandbox._redirect_stdio(stdio_path)
        _bound_file_sizes(JUDGE_FILE_BYTES)
    sandbox._close_inherited_fds(keep={conn.fileno()})
    import faulthandler

    from drk.gym.gpu_lock import GpuTimingLock
    from drk.gym.warm import handle_from_fds

    saved_globals = _torch_globals()

    while True:
        try:
            job = json.loads(conn.recv_bytes())
            with socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                fds = reduction.recvfds(sock, _JOB_FDS)
        except (EOFError, OSError, ValueError):
            os._exit(0)  # the caller is gone (or spoke garbage): nothing left to serve
        reporter = Reporter(conn, job["token"])
        handles: list[Any] | None = None
        faulthandler.dump_traceback_later(max(job["timeout_s"] - 2.0, 1.0), exit=False, file=sys.stderr)
        try:
            lock = GpuTimingLock.from_state(job["lock"]) if job["lock"] is not None else None
            handles, at = [], 0
            for pid, greeted, count in job["runners"]:
                handles.append(handle_from_fds(pid, fds[at:at + count], greeted))
                at += count
            result = _judge_job(reporter, job["payload"], lock, handles,
                                lambda reporter=reporter, token=job["token"]: _request_runner(conn, reporter, token))
        except BaseException as exc:  # noqa: BLE001 - the server must always answer
            import traceback

            result = {"internal_error": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-2000:]}
        finally:
            faulthandler.cancel_dump_traceback_later()
        if handles is None:  # the job failed before the judge owned them (the judge closes what it is given)
            wire.close_quietly(fds)
        _between_jobs(saved_globals)
        if stdio_path:
            trim_log(1, JUDGE_LOG_KEEP_BYTES)
        reporter.result(result)


#: The judge's output file (problems print; a crash leaves its stack there) is emptied between jobs past this size,
#: and no file the judge writes may grow past ``JUDGE_FILE_BYTES`` (a write beyond fails): a problem that printed
#: 100 MB per ``get_inputs`` call grew it by 1 GiB per evaluation, for up to 200 evaluations of a warm judge
#: (attacker review, 2026-12-02).
JUDGE_LOG_KEEP_BYTES = 16 * 2**20
JUDGE_FILE_BYTES = 1 * 2**30


def _bound_file_sizes(limit: int) -> None:
    """``RLIMIT_FSIZE`` for this process: a write past ``limit`` fails with ``EFBIG`` (its signal ignored)."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))


def trim_log(fd: int, keep_bytes: int) -> bool:
    """Empty the file behind ``fd`` (and rewind it) if it is larger than ``keep_bytes``; whether it was."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if os.fstat(fd).st_size <= keep_bytes:
        return False
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)  # stdout and stderr share this offset (one open file): no hole before the next line
    return True


def _request_runner(conn: Any, reporter: Reporter, token: str) -> Any:
    """In the judge: one more started runner from the caller (its handle, descriptors passed with ``SCM_RIGHTS``).

    Raises:
        OSError: the caller had none to give (its message says why) or the pipe broke.
    """
    from drk.gym.warm import handle_from_fds

    reporter.ask_for_runner()
    if not conn.poll(RUNNER_ANSWER_S):
        raise OSError(f"the caller did not answer the request for a runner within {RUNNER_ANSWER_S:.0f} s")
    try:
        reply = json.loads(conn.recv_bytes())
    except (EOFError, ValueError) as exc:
        raise OSError(f"no answer to the request for a runner: {exc}") from None
    if not isinstance(reply, dict) or reply.get("token") != token or reply.get("kind") != "runner":
        raise OSError("the caller's answer to the request for a runner is not one")
    if reply.get("runner") is None:
        raise OSError(str(reply.get("error") or "the caller has no runner to give"))
    pid, greeted, count = reply["runner"]
    if not conn.poll(DESCRIPTORS_S):  # the caller failed to send them after its answer (it says so in its log)
        raise OSError(f"the runner's descriptors did not follow the caller's answer within {DESCRIPTORS_S:.0f} s")
    with socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        fds = reduction.recvfds(sock, count)
    return handle_from_fds(pid, fds, greeted)


def _check_open(fds: tuple[int, ...]) -> None:
    """Raise ``OSError`` naming the first of ``fds`` that is not an open descriptor of this process (passing a
    closed one with ``SCM_RIGHTS`` fails after the answer that announced it was sent)."""
    for fd in fds:
        try:
            os.fstat(fd)
        except OSError as exc:
            raise OSError(f"the runner's descriptor {fd} is not open in the caller ({exc.strerror})") from None


def _judge_job(reporter: Reporter, payload: dict[str, Any], lock: Any, handles: list[Any],
               request_runner: Any = None) -> dict[str, Any]:
    """One job; with ``DRK_JUDGE_PROFILE=<dir>`` (a developer's switch: where does a judge's time go?) under
    ``cProfile``, its statistics written to ``<dir>/judge-<pid>-<n>.pstats``."""
    from drk.gym.judge import judge

    directory = os.environ.get("DRK_JUDGE_PROFILE")
    if not directory:
        return judge(reporter, payload, lock, *handles, request_runner=request_runner)
    import cProfile

    profiler = cProfile.Profile()
    try:
        return profiler.runcall(judge, reporter, payload, lock, *handles, request_runner=request_runner)
    finally:
        _judge_job.jobs = getattr(_judge_job, "jobs", 0) + 1
        profiler.dump_stats(os.path.join(directory, f"judge-{os.getpid()}-{_judge_job.jobs}.pstats"))


def _torch_globals() -> dict[str, Any]:
    """The process-wide torch settings a problem's module may change (some references set a default dtype or TF32
    for their own precision): taken when the server starts, put back after every job."""
    import torch

    return {"default_dtype": torch.get_default_dtype(), "grad": torch.is_grad_enabled(),
            "matmul_precision": torch.get_float32_matmul_precision(),
            "deterministic": torch.are_deterministic_algorithms_enabled(), "threads": torch.get_num_threads(),
            "cuda_matmul_tf32": torch.backends.cuda.matmul.allow_tf32,
            "cuda_matmul_fp16_reduced": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
            "cudnn_tf32": torch.backends.cudnn.allow_tf32, "cudnn_benchmark": torch.backends.cudnn.benchmark,
            "cudnn_deterministic": torch.backends.cudnn.deterministic}


def _restore_torch_globals(saved: dict[str, Any]) -> None:
    import torch

    torch.set_default_dtype(saved["default_dtype"])
    torch.set_grad_enabled(saved["grad"])
    torch.set_float32_matmul_precision(saved["matmul_precision"])
    torch.use_deterministic_algorithms(saved["deterministic"])
    torch.set_num_threads(saved["threads"])
    torch.backends.cuda.matmul.allow_tf32 = saved["cuda_matmul_tf32"]
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = saved["cuda_matmul_fp16_reduced"]
    torch.backends.cudnn.allow_tf32 = saved["cudnn_tf32"]
    torch.backends.cudnn.benchmark = saved["cudnn_benchmark"]
    torch.backends.cudnn.deterministic = saved["cudnn_deterministic"]


def _between_jobs(saved_globals: dict[str, Any]) -> None:
    """Forget what one job left, so that no evaluation's verdict depends on the one before it: torch's process-wide
    settings (a problem that set float64 as the default dtype made the next problem's reference float64 and an
    honest candidate ``incorrect``), the checksum weights cached per evaluation (512 MB each for relu2 on a GPU,
    17 kept), its cached GPU blocks, and any graphs ``torch.compile`` made of its reference."""
    import torch

    from drk.gym import rounds

    _restore_torch_globals(saved_globals)
    rounds._WEIGHTS.clear()
    if "torch._dynamo" in sys.modules:
        torch._dynamo.reset()
    if torch.cuda.is_initialized():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()  # each job's judge_gpu_mb is its own


def _failed_on_its_side(result: dict[str, Any]) -> bool:
    """Whether a job failed in the judge's own work (its reference, a drk stage): such a judge is not reused. A CUDA
    error is sticky for its process's context, so a judge that met one would fail every later job with it (seen on
    an H200, ``results/gpu/2026-12-02-s18`` and ``-s19``: judges whose CUDA driver had lost a descriptor, see
    :func:`drk.gym.sandbox._close_inherited_fds`)."""
    return "internal_error" in result or "reference_error" in result


class JudgeServer:
    """The caller's end of one server: :meth:`run` one job at a time; :meth:`kill` when it misbehaves."""

    def __init__(self, stdio_path: str | None, cache_dir: str | None = None) -> None:
        """``stdio_path``: the server's output file; ``cache_dir``: its own compile caches (inductor's, Triton's), as
        concurrent processes sharing them can race (pytorch/pytorch#173679: stale or busy files in a shared Triton
        cache). Both are removed when the server is killed (a retired or failed judge left up to 1 GiB of log and
        its caches behind until the caller exited: attacker review 8, 2026-12-02)."""
        self._files = [p for p in (stdio_path, cache_dir) if p]
        ctx = sandbox._get_context()
        self._conn, child_conn = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=_serve, args=(child_conn, stdio_path, cache_dir), daemon=True)
        self.started = time.monotonic()
        sandbox._start_without_main(self.process)
        child_conn.close()
        self.jobs = 0
        self.usable = True

    def run(self, payload: dict[str, Any], lock: Any, runners: list[Any], timeout_s: float,
            more_runner: Callable[[], Any] | None = None) -> SandboxOutcome:
        """Judge one evaluation: ``runners`` are :class:`~drk.gym.warm.RunnerHandle` (the candidate's; optionally
        the probes'), ``more_runner`` gives the probe runner's handle when the judge asks for it (only a candidate
        that passed its correctness checks needs one: one that fails costs a single runner).

        Never raises because of the job; an outcome without a result (died, timed out) leaves the server unusable.
        """
        self.jobs += 1
        token = secrets.token_hex(16)
        job = {"token": token, "payload": payload, "timeout_s": timeout_s,
               "lock": lock.__getstate__() if lock is not None else None,
               "runners": [(h.pid, bool(getattr(h, "greeted", False)), len(h.fds())) for h in runners]}
        start = time.monotonic()
        try:
            self._conn.send_bytes(json.dumps(job).encode())
            with socket.fromfd(self._conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                reduction.sendfds(sock, [fd for h in runners for fd in h.fds()])
        except OSError:  # the server died between jobs
            self.kill()
            return SandboxOutcome(result=None, last_stage="startup", exitcode=self.process.exitcode,
                                  timed_out=False, elapsed_s=time.monotonic() - start)
        outcome = sandbox.collect(self._conn, self.process, token, start, timeout_s,
                                  on_runner_request=lambda: self._give_runner(token, more_runner))
        if outcome.result is None or outcome.timed_out or self.jobs >= MAX_JOBS or _failed_on_its_side(outcome.result):
            self.kill()
        return outcome

    def _give_runner(self, token: str, more_runner: Callable[[], Any] | None) -> None:
        """Answer the judge's request for a runner: its handle's descriptors, or why there is none (the judge
        then fails the job as the environment's)."""
        handle, error = None, "this job has no runner to give"
        if more_runner is not None:
            try:
                handle = more_runner()
                _check_open(handle.fds())
            except Exception as exc:  # noqa: BLE001 - the environment's failure, reported to the judge
                handle, error = None, f"{type(exc).__name__}: {exc}"
        reply = {"token": token, "kind": "runner", "error": None if handle is not None else error,
                 "runner": None if handle is None else
                 [handle.pid, bool(getattr(handle, "greeted", False)), len(handle.fds())]}
        try:
            self._conn.send_bytes(json.dumps(reply).encode())
            if handle is not None:
                with socket.fromfd(self._conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    reduction.sendfds(sock, list(handle.fds()))
        except OSError as exc:  # the server died (collect sees it), or the descriptors could not be sent: the
            # judge's wait for them is bounded (DESCRIPTORS_S); this says why in the caller's log
            print(f"[drk] could not give a runner to the judge: {type(exc).__name__}: {exc}", file=sys.stderr)

    def alive(self) -> bool:
        return self.usable and self.process.is_alive()

    def kill(self) -> None:
        import shutil

        self.usable = False
        sandbox._terminate(self.process, grace_s=0.0)
        try:
            self._conn.close()
        except OSError:
            pass
        for path in self._files:
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.exists(path):
                os.unlink(path)


class JudgeServers:
    """Idle servers per (device, GPU); thread-safe. Each job takes one (or starts one) and gives it back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[tuple[str, int], list[JudgeServer]] = defaultdict(list)
        self._all: list[JudgeServer] = []
        self._stdio_dir: str | None = None
        self._closed = False

    def run(self, device: str, gpu_index: int, payload: dict[str, Any], lock: Any, runners: list[Any],
            timeout_s: float, more_runner: Callable[[], Any] | None = None) -> SandboxOutcome:
        server = self._take((device, gpu_index))
        try:
            return server.run(payload, lock, runners, timeout_s, more_runner)
        finally:
            with self._lock:
                if server.alive() and not self._closed:
                    self._idle[(device, gpu_index)].append(server)
                elif server in self._all:
                    self._all.remove(server)
            if not server.alive():
                server.kill()

    def _take(self, key: tuple[str, int]) -> JudgeServer:
        with self._lock:
            idle = self._idle[key]
            while idle:
                server = idle.pop()
                if server.alive():
                    return server
                self._all.remove(server)
            if self._stdio_dir is None:
                import tempfile

                self._stdio_dir = tempfile.mkdtemp(prefix="drk_judges_")
            name = os.path.join(self._stdio_dir, f"judge-{len(self._all)}-{secrets.token_hex(4)}")
        server = JudgeServer(name + ".txt", name + ".cache")  # started outside the lock: others need not wait
        with self._lock:
            self._all.append(server)
        return server

    def close(self) -> None:
        with self._lock:
            self._closed = True
            servers, self._all = list(self._all), []
            self._idle.clear()
        for server in servers:
            server.kill()
        if self._stdio_dir:
            import shutil

            shutil.rmtree(self._stdio_dir, ignore_errors=True)


_shared: JudgeServers | None = None
_shared_lock = threading.Lock()


def shared_judges() -> JudgeServers:
    """This process's :class:`JudgeServers` (killed at exit)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = JudgeServers()
            atexit.register(_shared.close)
        return _shared
