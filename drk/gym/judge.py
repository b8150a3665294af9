"""The judge: the trusted process of an evaluation. It never imports or runs candidate code.

It runs in a judge process that serves one evaluation after another (:mod:`drk.gym.judges`; it never holds
candidate code, so reuse is safe), and for each:

1. builds the problem's reference and computes every reference output it will need, before the candidate's
   process exists;
2. starts the candidate's runner (:mod:`drk.gym.runner`) in an OS sandbox (:mod:`drk.gym.isolation`) and talks
   to it over two pipes, in data only (:mod:`drk.gym.wire`);
3. decides everything itself: correctness (outputs fetched and compared with references only it holds, on
   seeded input sets and hidden perturbed ones; dtype and shape must match; inputs must be unchanged), kernel usage
   (the ``noop``/``raise`` source probes of :mod:`drk.gym.probes`), timing (its own reference rounds interleaved
   with the candidate's; every timed call's outputs checked by digest, one per round fetched whole; the candidate's
   per-call times must account for the wall time the judge saw: ``timing_mismatch``), statistics and the verdict.

What the runner reports about itself (launch counts, tripwires, the profiler's kernel table) is recorded as the
candidate's claim: it can add hack reasons and shape the profiling ratio, never make a verdict ``correct``.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import itertools
import math
import mmap
import os
import random
import secrets
import shutil
import statistics
import tempfile
import threading
import time
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from drk.gym import correctness as C
from drk.gym import direct_reads, isolation, rounds, wire
from drk.gym.config import EvalConfig
from drk.gym.gpu_lock import TIMING_HOLD_S, gpu_shared
from drk.gym.result import mentions_cuda_fault, mentions_out_of_memory
from drk.gym.rounds import CALIBRATION, CallSpec
from drk.gym.sandbox import Reporter
from drk.gym.secret import SeedStream, evaluation_key

#: The hidden input sets' distributions differ from ``get_inputs``: per set, the range its input scale and shift are
#: drawn from, per evaluation, from the judge's secret stream (:func:`hidden_perturbations`): scaled up, sign-flipped,
#: scaled down and shifted. Fixed public values (x8, x-1, x0.25+1) left bands of scales no set ever drew: a kernel
#: wrong only for inputs whose largest magnitude is between 6 and 16 (inputs x2-x4) was ``correct`` 2 times in 2
#: (attacker review 17). The largest scale stays 8, where the tolerance of ill-conditioned sets was measured. The
#: shifted set's shift-to-scale ratio runs from 0.025 to 16: with scales 0.125-0.5 and shifts 0.5-2 it was at least
#: 1, and a kernel wrong only for inputs whose |mean| / std was between 0.1 and 0.8 was ``correct`` 4 times in 4
#: (attacker review 18). Inputs beyond x8 are never drawn: a kernel wrong only there (clamping at 48) passes. Review
#: 19: the shift was always positive and every small scale shifted, so a kernel wrong only for inputs shifted down
#: (mean below -0.1 std) or only for small centred ones (std < 0.45) was ``correct`` 3 times in 3: the shift is now
#: signed (-2..2) and the sign-flipped set reaches x-0.125 (each band then drawn in about half the evaluations).
PERTURBATION_RANGES: tuple[tuple[tuple[float, float], tuple[float, float]], ...] = (
    ((2.0, 8.0), (0.0, 0.0)), ((-2.0, -0.125), (0.0, 0.0)), ((0.125, 2.0), (-2.0, 2.0)))
PROBE_SCALES = (1.0, 8.0, 64.0)
#: Probe calls per probe input (one eval, one train), by kind, run in an order the judge draws at random, each on a
#: fresh model: ``control`` calls run the kernels and must be right, ``noop``/``raise`` calls disable them. A decoy
#: that knows it is in the probe runner (a host-wide signal, its memory, its argv) but not which call disables its
#: kernels must guess which calls to answer right: per pass (eval, train: a model knows which) 2 control, 2 noop
#: and 1 raise call in a random order, so its best guess is right 1 time in 10 per pass, 1 in 100 for both. Each
#: pass also starts with one control call before that order (see ``Session.hack_reasons``), and every call has
#: fresh inputs of its own (``Session.probe_input``).
PROBE_CALLS = {"control": 2, "noop": 2, "raise": 1}

#: The most probe runners one evaluation takes: the first, and a fresh one after each call with the kernels disabled
#: in which the last one died, got stuck or met a sticky CUDA fault (two probe specs: eval and train).
MAX_PROBE_RUNNERS = 1 + 2 * sum(n for variant, n in PROBE_CALLS.items() if variant != "control")
#: A call with the kernels disabled may take this many times the longest control call of its evaluation, and at least
#: DISABLED_CALL_FLOOR_S seconds; past that it is stuck without its kernels, which is what "the kernels matter" means
#: (its process is replaced for the next calls, as after a death). Unbounded, an honest kernel whose host loop waits on
#: a count its kernel writes spun until the candidate's whole time was gone: ``timeout``, 4 runs in 4
#: (``legit_progress_loop``, attacker review 11). Control calls after a process's first are held to the same bound,
#: past which they are the candidate's ``timeout`` (``Session._control_call``): a decoy would have to be slow only in
#: the calls it cannot tell apart, and being killed at the bound no longer tells it which kind a call was.
DISABLED_CALL_FACTOR, DISABLED_CALL_FLOOR_S = 10.0, 2.0
MAX_STDOUT_TAIL = 64 * 1024


#: Stages before the candidate's code exists in its runner: a failure there is the environment's, never the candidate's.
_BEFORE_CANDIDATE = ("startup", "calibration")


class _PastTheBound(Exception):
    """A probe call that did not finish within the probes' bound (:meth:`Session._call_within_bound`): with the
    kernels disabled, stuck without them ("the kernels matter"); with them running, the candidate's ``timeout``."""

    def __init__(self, allowed_s: float) -> None:
        super().__init__(allowed_s)
        self.allowed_s = allowed_s


class ProbeUnavailable(RuntimeError):
    """A runner failed before any candidate code ran in it (the probe runner's start, the main runner's
    calibration): an environment failure."""


#: A call's claimed time (ms) beyond which it is no clock's (a day).
MAX_CLAIMED_MS = 86_400_000.0
#: A verdict's error text at most: the candidate's data reaches it (a repr of a claimed output shape made one 17 MB
#: long, in every result, cache entry and record; attacker review 7, 2026-12-02).
MAX_VERDICT_ERROR_CHARS = 8000


def capped_error(error: str) -> str:
    """``error`` cut to :data:`MAX_VERDICT_ERROR_CHARS` (its head and tail kept)."""
    if len(error) > MAX_VERDICT_ERROR_CHARS:
        error = error[:MAX_VERDICT_ERROR_CHARS // 2] + " [...] " + error[-MAX_VERDICT_ERROR_CHARS // 2:]
    return error


class Verdict(Exception):
    """Ends the judging early with a status (raised by the judge only; the candidate never sees this class)."""

    def __init__(self, status: str, error: str, **fields: Any) -> None:
        error = capped_error(error)
        super().__init__(error)
        self.status, self.error, self.fields = status, error, fields


# --- the runner process ---------------------------------------------------------------------------------------


#: The largest per-kernel time (ms) taken from a runner's profile claim.
MAX_KERNEL_MS = 1e6

#: Seconds of a probe runner's start-up (after the caller gave it: importing torch and Triton, a CUDA context) not
#: counted as the candidate's time, whatever its ``timeout_s`` (a fresh runner on a loaded 2-core host took longer
#: than a 10 s limit); see ``Session._probe_runner``. A job's payload may set ``probe_start_grace_s`` (tests).
PROBE_START_GRACE_S = 60.0

#: Seconds the judge's own work before the candidate's code is given (the reference, the runner's start-up, the
#: calibration) may take beyond ``timeout_s``; none of it is the candidate's time (its clock starts at ``import``).
#: Past it the runner "did not start in time": drk's failure, uncharged.
BEFORE_CANDIDATE_S = 60.0

#: The longest a request to a runner holds the GPU lock shared before its answer starts (see RunnerProcess.request).
SHARED_HOLD_S = 2.0


class RunnerProcess:
    """The judge's end of the sandboxed candidate process's pipes (bounded reads, deadlines).

    The process was started by the caller (:mod:`drk.gym.warm`), before the candidate was known; the caller also
    kills it when the evaluation ends. The judge kills it as soon as it is done with it.
    """

    def __init__(self, handle: Any, deadline: float, max_blob_bytes: int) -> None:
        self.pid, self.to_runner, self.from_runner = handle.pid, handle.to_runner, handle.from_runner
        self.greeted = bool(getattr(handle, "greeted", False))
        self.deadline, self.max_blob_bytes = deadline, max_blob_bytes
        self.tail = bytearray()
        self.output_bytes = 0
        self.output = handle.output
        os.set_blocking(self.to_runner, False)  # requests are written against a deadline (wire.write_within)
        self.area = self._map_area(getattr(handle, "area", -1))
        #: the runner's memory, read by the judge itself (:mod:`drk.gym.direct_reads`; CPU outputs), or None
        self.memory: direct_reads.SandboxMemory | None = None
        self.where: Any = None  # where the last round's outputs lie, as its runner said (``go``/``profile``)
        self.freeze_s = 0.0  # the judge's time stopping the sandbox after the last answer (not the candidate's)
        self._stop = threading.Event()
        self._drain = threading.Thread(target=self._drain_output, daemon=True)
        self._drain.start()

    @staticmethod
    def _map_area(fd: int) -> mmap.mmap | None:
        """Map the runner's output area read-only (and close its descriptor): only a sealed area of the expected size
        (a runner cannot shrink it under the judge's reads); None when there is none or it is not sealed."""
        if fd < 0:
            return None
        try:
            return mmap.mmap(fd, wire.OUTPUT_AREA_BYTES, prot=mmap.PROT_READ) if wire.area_is_sealed(fd) else None
        except (OSError, ValueError):
            return None
        finally:
            os.close(fd)

    def _drain_output(self) -> None:
        """Keep the last :data:`MAX_STDOUT_TAIL` bytes of the runner's stdout/stderr (a flood costs it, not us).

        Polls, so :meth:`close` can stop it and close the descriptor itself: a judge serves many evaluations
        (:mod:`drk.gym.judges`), and a descriptor closed late by a reader could be the next evaluation's by then."""
        while not self._stop.is_set():
            try:
                if not wire.readable(self.output, 0.1):
                    continue
                chunk = os.read(self.output, 65536)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            self.output_bytes += len(chunk)
            self.tail += chunk
            del self.tail[:-MAX_STDOUT_TAIL]

    def await_hello(self) -> None:
        """The runner's first frame, unless its starter already read it (a spare started under the GPU lock)."""
        if not self.greeted:
            wire.recv_frame(self.from_runner, deadline=self.deadline, max_blob_bytes=0)
            self.greeted = True

    def read_memory(self) -> bool:
        """Read this runner's outputs from its memory from now on, if the judge may here
        (:mod:`drk.gym.direct_reads`). Called before the candidate is loaded: it cannot make the check fail and be
        asked for its outputs instead."""
        if self.memory is None:
            memory = direct_reads.SandboxMemory(self.pid)
            self.memory = memory if memory.available() else None
        return self.memory is not None

    def outputs(self, call: int, layout: list[Any], sample_seed: int | None = None) -> list[Any]:
        """The outputs of ``call`` of the last round, read from the stopped runner's memory where it said they lie,
        each of the dtype and shape of the reference's in ``layout`` (its whole outputs), sampled at
        ``sample_seed`` if given (as :meth:`Session.fetch` returns them)."""
        where = self.where[call] if isinstance(self.where, list) and 0 <= call < len(self.where) else None
        if self.memory is None or not self.memory.frozen or not isinstance(where, list) \
                or len(where) != len(layout) or not all(isinstance(w, dict) for w in where):
            raise wire.WireError("the runner did not say where its outputs are")
        values = [self.memory.read(w, x) if isinstance(x, torch.Tensor) else w.get("value")
                  for w, x in zip(where, layout)]
        return values if sample_seed is None else rounds.sample_values(values, sample_seed)

    def request(self, header: dict[str, Any], max_blob_bytes: int | None = None,
                gpu_lock: Any = None) -> tuple[dict[str, Any], list[bytearray]]:
        answer, blobs = self._request(header, max_blob_bytes, gpu_lock)
        if self.memory is not None and header.get("op") in ("go", "profile"):
            # stopped as soon as it has answered: what its outputs hold now is what they held when its round ended
            started = time.perf_counter()
            self.where = answer.get("where")
            self.memory.freeze()
            self.freeze_s = time.perf_counter() - started
        return answer, blobs

    def _request(self, header: dict[str, Any], max_blob_bytes: int | None = None,
                 gpu_lock: Any = None) -> tuple[dict[str, Any], list[bytearray]]:
        """Send ``header``, return the answer. With ``gpu_lock`` the request holds the GPU lock shared while the runner
        works, but for at most :data:`SHARED_HOLD_S` before its answer starts, and never while the answer's bytes
        arrive: a candidate stuck in a request (a hung kernel), or one that starts its answer and trickles the rest,
        must not keep every other evaluation's timing waiting (the answer's bytes were read inside the hold: a
        runner held it as long as its time limit by sending one byte, then the rest)."""
        if self.memory is not None:
            self.memory.thaw()
            self.where = None
        limit = self.max_blob_bytes if max_blob_bytes is None else min(max_blob_bytes, self.max_blob_bytes)
        frame = wire.encode_frame(header)
        with contextlib.ExitStack() as hold:
            waiting = time.monotonic()
            hold.enter_context(gpu_shared(gpu_lock))
            # time spent waiting for another evaluation's timing is not this candidate's: its limit moves with it
            self.deadline += time.monotonic() - waiting
            # a runner that does not read its requests holds neither the judge nor (beyond SHARED_HOLD_S) the lock
            unsent = wire.write_within(self.to_runner, frame, min(self.deadline, time.monotonic() + SHARED_HOLD_S)
                                       if gpu_lock is not None else self.deadline)
            answered = not unsent and (gpu_lock is None or wire.readable(self.from_runner, SHARED_HOLD_S))
        if answered:
            return wire.recv_frame(self.from_runner, deadline=self.deadline, max_blob_bytes=limit)
        if unsent and wire.write_within(self.to_runner, unsent, self.deadline):
            raise wire.WireTimeout("the candidate's process did not read the judge's request in time")
        return wire.recv_frame(self.from_runner, deadline=self.deadline, max_blob_bytes=limit)

    def exit_description(self) -> str:
        """How the process ended, as far as its pipes tell (it is the caller's child: no exit status here)."""
        self._drain.join(timeout=1.0)
        return "stopped answering" if self._drain.is_alive() else "its process ended"

    def output_tail(self, candidate_path: str, source: str, max_lines: int = 4) -> str:
        """The candidate's own frames from a faulthandler dump in its output ('' when there are none)."""
        self._drain.join(timeout=1.0)  # a dead process's last words are still in the pipe
        return candidate_frames(bytes(self.tail).decode(errors="replace"), candidate_path, source, max_lines)

    def close(self) -> None:
        for target in (lambda: os.killpg(self.pid, 9), lambda: os.kill(self.pid, 9)):
            try:
                target()
            except (ProcessLookupError, PermissionError):
                pass
        if self.memory is not None:
            self.memory.thaw()  # killed already: a stopped process's pending SIGKILL takes effect when it runs
        self._drain.join(timeout=0.5)  # the runner's last words (killed: its pipe ends at once)
        self._stop.set()
        self._drain.join()
        wire.close_quietly((self.to_runner, self.from_runner, self.output))
        if self.area is not None:
            self.area.close()


# --- the reference ---------------------------------------------------------------------------------------------


@dataclass
class Reference:
    """The trusted side: the problem's module and model, and the judge's own call machinery."""

    module: types.ModuleType
    model: torch.nn.Module
    device: torch.device
    timed: Any = None
    flush: torch.Tensor | None = None
    digest_seed: int = 0
    seeds: SeedStream = field(default_factory=lambda: SeedStream(b"unkeyed"))
    initial_state: dict[str, Any] = field(default_factory=dict)  # weights and buffers as built (running stats...)

    def state(self) -> dict[str, Any]:
        return {k: v.detach().clone() for k, v in self.model.state_dict().items()}

    def inputs(self, spec: CallSpec) -> list[Any]:
        return rounds.make_inputs(self.module, spec, self.device)

    def outputs(self, spec: CallSpec) -> list[Any]:
        return rounds.call_model(self.model, C.clone_all(self.inputs(spec)), spec.mode)


def build_reference(payload: dict[str, Any], cfg: EvalConfig, device: torch.device) -> Reference:
    module, model = _module_and_model(payload["problem_source"], payload["problem_path"], payload["problem_name"],
                                      cfg, device)
    seeds = SeedStream(evaluation_key(bytes.fromhex(payload["secret"]), payload["problem_source"],
                                      payload["candidate_source"], payload["config"], payload["device"]))
    ref = Reference(module, model, device, seeds=seeds, digest_seed=seeds.next(31))
    ref.initial_state = ref.state()
    if device.type == "cuda":
        ref.flush = torch.empty(cfg.l2_flush_mb * 2**20 // 4, dtype=torch.float32, device=device) \
            if cfg.timing_policy == "drk" and cfg.l2_flush_mb else None
        model.eval()
        ref.timed = torch.compile(model) if cfg.reference_mode == "compile" else model
    return ref


def cpu_reference(source: str, seed: bytes = b"drk", cfg: EvalConfig | None = None) -> Reference:
    """A problem's reference on CPU at its ``CPU_SIZES``, built as an evaluation builds it but with a fixed seed
    stream: for inspecting what the judge plans (:func:`plan_correctness`) outside an evaluation. Executes the
    problem's code in this process."""
    device = torch.device("cpu")
    module, model = _module_and_model(source, "problem.py", "inspected", cfg or EvalConfig(), device)
    return Reference(module, model, device, seeds=SeedStream(seed))


def _module_and_model(source: str, path: str, name: str, cfg: EvalConfig,
                      device: torch.device) -> tuple[types.ModuleType, torch.nn.Module]:
    module = types.ModuleType(f"drk_reference_{name}")
    module.__file__ = path
    torch.manual_seed(cfg.seed)  # as the runner: a tensor drawn at import (returned by get_inputs) is the same there
    exec(compile(source, path, "exec"), module.__dict__)  # trusted problem
    if device.type == "cpu" and isinstance(getattr(module, "CPU_SIZES", None), dict):
        module.__dict__.update(module.CPU_SIZES)
    torch.manual_seed(cfg.seed)
    init_inputs = list(module.get_init_inputs())
    torch.manual_seed(cfg.seed)
    with torch.device(device):
        model = module.Model(*init_inputs).to(device)
    return module, model


# --- the judging -----------------------------------------------------------------------------------------------


def judge(reporter: Reporter, payload: dict[str, Any], timing_lock: Any, handle: Any,
          probe_handle: Any = None, *, request_runner: Callable[[], Any] | None = None) -> dict[str, Any]:
    """The whole evaluation, in a judge process; returns a JSON-able dict of result fields.

    ``handle`` is a started runner (:class:`drk.gym.warm.RunnerHandle`: its pipes, passed in) that runs the
    candidate; the probe variants run in a second one, ``probe_handle`` or else one ``request_runner()`` gives
    when the candidate has passed its correctness checks (a failing candidate never needs it). So nothing a
    variant does in its process can touch the candidate's measurements, and the probes can run before the timing.
    """
    runner = probe_runner = session = workdir = None
    try:
        cfg = EvalConfig.from_dict(payload["config"])
        device = torch.device("cpu")
        if payload["device"] == "cuda":
            torch.cuda.set_device(payload.get("gpu_index", 0))
            device = torch.device("cuda", payload.get("gpu_index", 0))
        out: dict[str, Any] = {"device": "cpu (triton interpreter)" if device.type == "cpu"
                               else f"cuda:{device.index} ({torch.cuda.get_device_name(device)})"}
        level = payload["isolation_level"]
        out["isolation"] = level
        # a sandboxed runner writes the candidate into its private /tmp; an unsandboxed one into a directory of ours
        workdir = tempfile.mkdtemp(prefix="drk_cand_") if level == "process" else None
        inside_dir = workdir or isolation.CANDIDATE_DIR
        inside = f"{inside_dir}/candidate.py"  # where both runners write what they import
        # the judge's own stages (reference, runner start-up, calibration) are bounded here; the candidate's one
        # time limit for all its processes starts when its code is given (Session.start_candidate_clock)
        deadline = time.monotonic() + cfg.timeout_s + BEFORE_CANDIDATE_S
        runner = RunnerProcess(handle, deadline, max_blob_bytes=cfg.max_output_bytes)
        if probe_handle is not None:
            probe_runner = RunnerProcess(probe_handle, deadline, max_blob_bytes=cfg.max_output_bytes)
        reporter.stage("reference")
        try:
            lock = timing_lock if device.type == "cuda" else None
            with held_gpu_work(lock, device):  # never inside another's timing
                ref = build_reference(payload, cfg, device)
            plan = plan_correctness(ref, cfg, hold=lambda: held_gpu_work(lock, device))
        except Exception as exc:  # noqa: BLE001 - the problem's own failure, never the candidate's
            return {**out, "reference_error": _format_exception(exc, payload["problem_path"])}
        session = Session(reporter, runner, ref, cfg, plan, inside, payload, timing_lock, probe_runner,
                          request_runner)
        fields = _session_outcome(session, runner, cfg, inside, payload["candidate_source"])
        if "internal_error" in fields:
            return {**out, **fields}
        out.update(fields)
        out.setdefault("stage", session.stage)
        out["candidate_output_bytes"] = runner.output_bytes
        out["outputs_read"] = "memory" if runner.memory is not None else "runner"
        if device.type == "cuda":  # trusted: the judge's own peak (a Pool sizes its admissions by it)
            if session is not None:
                session.note_gpu_peak()
                out["judge_gpu_mb_by_stage"] = dict(session.gpu_mb_by_stage)
            out["judge_gpu_mb"] = _reserved_mb(device)
            out["judge_gpu_allocated_mb"] = round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
    finally:  # every descriptor handed in is closed here, exactly once (a judge serves the next evaluation next)
        if session is not None:
            probe_runner = session.probe_runner  # given now, or asked for on the way
        for process, given in ((runner, handle), (probe_runner, probe_handle)):
            if process is not None:
                process.close()
            elif given is not None:
                wire.close_quietly(given.fds())
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    if isinstance(out.get("error"), str):  # every path, not only a Verdict's (a crash quotes the candidate's lines)
        out["error"] = capped_error(out["error"])
    return out


def _session_outcome(session: Session, runner: RunnerProcess, cfg: EvalConfig, inside: str,
                     candidate_source: str) -> dict[str, Any]:
    """The result fields of ``session.run()``, or its failure as a status; ``internal_error`` where the failure is
    drk's own (the candidate not loaded yet, a probe runner unavailable), never charged to the candidate."""
    try:
        return session.run()
    except Verdict as verdict:
        return dict(status=verdict.status, error=verdict.error, **verdict.fields)
    except ProbeUnavailable as exc:
        return {"internal_error": str(exc)}
    except wire.WireTimeout:
        if session.stage in _BEFORE_CANDIDATE:  # the candidate is not loaded yet: the runner did not start in time
            return {"internal_error": "the candidate's runner did not start in time"}
        return dict(status="timeout", error=f"no answer from the candidate within {cfg.timeout_s:.0f} s "
                    f"(stuck in stage '{session.stage}')" + _where(runner, inside, candidate_source))
    except direct_reads.UnreadableOutput as exc:  # its processes could not be stopped or its claims were wrong
        return dict(status="runtime_error", error=f"the judge could not read the candidate's outputs in its process "
                    f"as its runner described them ({exc}) in stage '{session.stage}'")
    except wire.WireError as exc:
        how = runner.exit_description()
        if session.stage in _BEFORE_CANDIDATE:  # the candidate is not loaded yet: this is drk's own failure
            tail = bytes(runner.tail[-1500:]).decode(errors="replace")
            return {"internal_error": f"the runner failed to start ({how}: {exc}): {tail}"}
        return dict(status="runtime_error",
                    error=f"the candidate's process died or broke the protocol ({how}: {exc}) in stage "
                    f"'{session.stage}' (a segfault, os._exit, memory exhausted or a CUDA fault)"
                    + _where(runner, inside, candidate_source))


def record_stage_end(record: dict[str, float], stage: str, value: float) -> None:
    """``record[stage] = value``, with ``stage`` moved to the end: a stage entered again (``hacking``, after the
    caller gave a probe runner in stage ``probe_runner``) is listed where it last ended, so a running peak's record
    never falls along its order (its first place kept its last value: 4098 MiB before a 3522, on an H200)."""
    record.pop(stage, None)
    record[stage] = value


def _reserved_mb(device: torch.device) -> float:
    """This process's peak of reserved GPU memory on ``device`` so far, in MiB."""
    return round(torch.cuda.max_memory_reserved(device) / 2**20, 1)


def candidate_frames(text: str, candidate_path: str, source: str, max_lines: int = 4) -> str:
    """The candidate's own frames in a faulthandler dump (``File "<path>", line N in NAME`` lines), with the code of
    each line; '' when there are none.

    The dump is the candidate's text, parsed in linear time: a line number of 5000 digits made ``int()`` raise in
    the judge (an uncharged ``env_error``, attacker review, 2026-12-01); a 64 KiB line of ``File "`` made a
    backtracking pattern take seconds of the judge's time per crash (attacker review, 2026-12-02).
    """
    import re

    lines = source.splitlines()
    frames = []
    prefix = f'File "{candidate_path}", line '
    for line in text.splitlines():
        at = line.find(prefix)
        match = re.match(r"(\d{1,9}) in (\S+)", line[at + len(prefix):]) if at >= 0 else None
        if match:
            number = int(match.group(1))
            code = lines[number - 1].strip() if 0 < number <= len(lines) else ""
            # a quoted line is the candidate's text: one of 195,000 characters made an error 780,000 long
            frames.append(f"  candidate.py line {number}, in {match.group(2)[:100]}: {code[:200]}")
            if len(frames) == max_lines:
                break
    return "\n".join(frames)


def _where(runner: RunnerProcess, path: str, source: str) -> str:
    frames = runner.output_tail(path, source)
    return f"\nlast candidate lines on the stack:\n{frames}" if frames else ""


@dataclass
class Planned:
    """Correctness calls in two rounds, seeded trials and hidden sets mixed in an order the judge draws
    (:func:`correctness_order`): the first ``first_round`` calls in fresh buffers, the rest written into the first
    round's input buffers (same addresses: pointer-keyed caches fail)."""

    specs: list[CallSpec]
    labels: list[str]
    expected: list[list[Any]]
    input_digests: list[list[dict[str, Any]]]
    first_round: int = 0
    atol_scale: list[float] = field(default_factory=list)
    #: per call, the elements its sparse hidden set moved (None: the call's atol scale holds for every element)
    moved: list[C.Moved | None] = field(default_factory=list)

    def compare(self, index: int, expected: list[Any], got: list[Any], cfg: EvalConfig) -> C.Comparison:
        """Call ``index``'s answer against ``expected`` (its kept outputs, wherever they now are) at its tolerance."""
        return C.compare_outputs(expected, got, cfg.atol * self.atol_scale[index], cfg.rtol,
                                 moved=self.moved[index] if self.moved else None)

    def timed_hidden_sets(self) -> list[tuple[CallSpec, float]]:
        """Each hidden set kept in its eval pass, with its atol scale: what timing rounds insert
        (:func:`schedule_hidden_calls`). A set whose integers the reference accepted perturbed (``spec.ints``) has
        each timed call's integers checked again on that call's own values."""
        return [(spec, scale) for spec, scale in zip(self.specs, self.atol_scale)
                if spec.perturbed and spec.mode == "eval"]


#: The sparse hidden set: outliers x8-x64 of either sign (integers: as far as a scaled or a sign-flipped set
#: carries them) at a share of each tensor's elements log-uniform in this range, at least one element. Every other
#: set moves every element alike, so a kernel that read a few hundred of them told each set apart and took its
#: shortcut only where they looked like get_inputs()' (attacker review 22, ``correct`` 14 of 14); with 1e-5..1e-2, a
#: 256-element sample misses the moved elements in about 80 % of evaluations, and reading them all costs a pass
#: over the input.
SPARSE_SCALE = (8.0, 64.0)
SPARSE_SHARE = (1e-5, 1e-2)


def _log_uniform(draw: random.Random, low: float, high: float) -> float:
    return math.exp(draw.uniform(math.log(low), math.log(high)))


def sparse_perturbation(seeds: SeedStream) -> tuple[float, float, tuple[float, float], float]:
    """The sparse set's ``(scale, shift, int_draw, share)`` from the evaluation's secret stream (see
    :data:`SPARSE_SHARE`); the share rounded to 6 significant digits (it is printed in feedback)."""
    draw = random.Random(seeds.next())
    sign = -1.0 if draw.random() < 0.5 else 1.0
    scale = sign * _log_uniform(draw, *SPARSE_SCALE)
    share = _log_uniform(draw, *SPARSE_SHARE)
    return round(scale, 3), 0.0, (draw.random(), draw.random()), float(f"{share:.6g}")


def hidden_perturbations(seeds: SeedStream) -> list[tuple[float, float, tuple[float, float]]]:
    """One ``(scale, shift, int_draw)`` per :data:`PERTURBATION_RANGES` entry: the scale log-uniform in its range
    (its sign kept), the shift uniform, both rounded to 3 decimals (they are printed in feedback), and two uniform
    numbers in [0, 1) that place the set's integer inputs (:func:`drk.gym.rounds.perturb_integers`). From the
    evaluation's secret stream: the same for the same evaluation, unknown to the candidate before its calls."""
    draw = random.Random(seeds.next())
    drawn = []
    for (low, high), (shift_low, shift_high) in PERTURBATION_RANGES:
        sign = -1.0 if low < 0 else 1.0
        small, large = sorted((abs(low), abs(high)))
        scale = sign * _log_uniform(draw, small, large)
        shift = round(draw.uniform(shift_low, shift_high), 3)
        drawn.append((round(scale, 3), shift, (draw.random(), draw.random())))
    return drawn


def correctness_order(hidden: Sequence[bool], draw: random.Random) -> tuple[list[int], int]:
    """The order of the correctness calls (indices into ``hidden``, which says which are hidden sets) and how many
    of them make the first round, drawn from the evaluation's secret stream (``draw``).

    The hidden sets are mixed with the seeded trials, and each round has some when there are two or more: when they
    always came last, in the second round, a module that counted its calls (exact on calls 6-11 only) or remembered
    the first round's buffers ran a kernel specialised to ``get_inputs()``' distribution everywhere else, and was
    ``correct`` (attacker review 21). Both rounds have a call: the second refills the first's input buffers, where a
    cache keyed on pointers answers stale outputs."""
    order = list(range(len(hidden)))
    draw.shuffle(order)
    both_have_hidden = [k for k in range(1, len(order))
                        if any(hidden[i] for i in order[:k]) and any(hidden[i] for i in order[k:])]
    return order, draw.choice(both_have_hidden or list(range(1, len(order))))


def schedule_hidden_calls(counts: Sequence[int], n_sets: int, rate: float,
                          draw: random.Random) -> list[list[tuple[int, int]]]:
    """Where hidden-set calls go in timing rounds of ``counts`` calls each: per round, ``(slot, set)`` pairs, slot
    ``i`` before the round's call ``i`` (``count``: after its last), each slot taken with chance ``rate``, the set
    drawn among ``n_sets``. Drawn before the timing, so that each call can be made (and its integers checked against
    the reference, :func:`_with_integers_perturbed`) outside the GPU's exclusive hold: a kernel exact in every
    correctness call and specialised to ``get_inputs()``' distribution after them cannot tell which timed calls are
    safe to answer with its shortcut (attacker review 21)."""
    if n_sets <= 0:
        return [[] for _ in counts]
    return [[(slot, draw.randrange(n_sets)) for slot in range(count + 1) if draw.random() < rate] for count in counts]


#: A hidden-set call to insert in a timing round: ``(slot, spec, atol scale, moved elements)``
#: (:meth:`Session._hidden_timed_calls`); a call's tolerance is ``(atol scale, moved elements)``.
HiddenCall = tuple[int, CallSpec, float, "C.Moved | None"]
CallTolerance = tuple[float, "C.Moved | None"]


def insert_hidden_calls(specs: list[CallSpec], scheduled: Sequence[HiddenCall]
                        ) -> tuple[list[CallSpec], list[CallTolerance]]:
    """``specs`` with the calls of :func:`schedule_hidden_calls` inserted at their slots, and each call's tolerance
    (``(1, None)`` for the round's own calls)."""
    before: dict[int, list[tuple[CallSpec, CallTolerance]]] = {}
    for slot, spec, scale, moved in scheduled:
        before.setdefault(slot, []).append((spec, (scale, moved)))
    out: list[CallSpec] = []
    tolerances: list[CallTolerance] = []
    for k in range(len(specs) + 1):
        for spec, tolerance in before.get(k, []):
            out.append(spec)
            tolerances.append(tolerance)
        if k < len(specs):
            out.append(specs[k])
            tolerances.append((1.0, None))
    return out, tolerances


def pick_checked_call(timed: Sequence[bool], seeds: SeedStream) -> int:
    """Which call of a timing round is compared element by element (``timed``: False for the inserted hidden-set
    calls): one of the timed calls, uniformly (any call in a round of hidden calls only). The hidden-set calls are
    compared element by element apart, every one of them (:meth:`Session.check_hidden_calls`, attacker review 24).
    The pick fell on a hidden call half the time since review 23 (before :meth:`Session.check_hidden_calls`), and
    then no timed call of the round was compared but by its digests, which pass errors of a few tolerances at every
    element: a kernel exact in its correctness, probe, profiled and hidden-set calls and four tolerances off in the
    timed ones was ``correct`` in 4 of 6 CPU evaluations (attacker review 27, ``attack_timed_seeded_only``)."""
    plain = [i for i, is_timed in enumerate(timed) if is_timed]
    return plain[seeds.below(len(plain))] if plain else seeds.below(len(timed))


def _has_nonfinite(digests: Any) -> bool:
    """Whether a call's digests (:func:`drk.gym.rounds.reference_digests`) say an output has a NaN or an inf."""
    return isinstance(digests, list) and any(isinstance(d, dict) and "nonfinite" in d for d in digests)


def _buffers(model: Any) -> dict[str, torch.Tensor]:
    if not isinstance(model, torch.nn.Module):
        return {}
    return {name: b.detach().clone() for name, b in model.named_buffers()}


def _restore_buffers(model: Any, saved: dict[str, torch.Tensor] | None) -> None:
    if saved and isinstance(model, torch.nn.Module):
        with torch.no_grad():
            for name, b in model.named_buffers():
                if name in saved and saved[name].shape == b.shape:
                    b.copy_(saved[name])


@contextlib.contextmanager
def held_gpu_work(lock: Any, device: torch.device) -> Iterator[None]:
    """The judge's own GPU work: the GPU lock held shared (never inside another evaluation's timing; a no-op inside
    this evaluation's own), and the work finished before the hold ends (the GPU runs it after the host moves on)."""
    with gpu_shared(lock):
        yield
        if lock is not None and device.type == "cuda":
            torch.cuda.synchronize(device)


def plan_correctness(ref: Reference, cfg: EvalConfig,
                     hold: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext) -> Planned:
    """The correctness calls and their reference outputs, all computed before the candidate process exists.

    ``hold()`` is entered around each call's work (the judge passes :func:`held_gpu_work`): one hold over the whole
    plan lasted 3-7 s for a level-1 problem in a Pool of 8 (H200, 2026-12-04), longer than other evaluations'
    timings waited for the GPU to go quiet.

    Seeded trials alternate eval/no-grad and train/grad passes; hidden sets perturb the float inputs (scaled up and
    down, sign-flipped, shifted) so that constant or partial outputs fail, each perturbation in both passes (with
    the eval pass's only, a kernel that clamped its inputs when ``self.training`` was ``correct``: attacker review
    16); a hidden set whose reference output is not finite (a log of negatives, say) is skipped.
    """
    calls: list[tuple[CallSpec, str]] = []
    # every input seed comes from the judge's secret stream: a candidate that knew them (cfg.seed is public) could
    # answer exactly the checked inputs right
    for i in range(cfg.correctness_trials):
        mode = "eval" if i % 2 == 0 else "train"
        calls.append((CallSpec(ref.seeds.next(), mode), f"trial {i + 1} ({mode} pass)"))
    if cfg.hidden_inputs:
        sets = [(*drawn, 0.0) for drawn in hidden_perturbations(ref.seeds)] + [sparse_perturbation(ref.seeds)]
        for j, (scale, shift, int_draw, share) in enumerate(sets):
            where = f" on {share * 100:.3g} % of elements" if share else ""
            for mode in ("eval", "train"):
                calls.append((CallSpec(ref.seeds.next(), mode, scale, shift, int_draw=int_draw, sparse=share),
                              f"hidden input set {j + 1} ({mode} pass, inputs x{scale:g} {shift:+g}{where})"))
    else:
        for mode in ("eval", "train"):
            calls.append((CallSpec(ref.seeds.next(), mode), f"trial {len(calls) + 1} ({mode} pass)"))
    order, first_round = correctness_order([spec.perturbed for spec, _ in calls], random.Random(ref.seeds.next()))
    kept = Planned([], [], [], [], 0)
    drawn: list[tuple[float, float, bool]] = []  # per kept call: magnitude, sensitivity, hidden
    eval_sensitivity: dict[tuple[float, float], float] = {}  # per perturbation, its eval pass's
    cpu_twin: list[Any] = []  # one CPU copy of the reference for every integer check (_with_integers_perturbed)
    for position, index in enumerate(order):
        spec, label = calls[index]
        hidden = spec.perturbed
        with hold():  # each call's GPU work in a hold of its own (a CPU integer check included: bounded)
            if hidden:
                spec, inputs = _with_integers_perturbed(ref, spec, cpu_twin)
                label = label[:-1] + ", integer inputs too)" if spec.ints else label
            else:
                inputs = ref.inputs(spec)
            digests = rounds.digest_values(inputs, ref.digest_seed)
            # eval passes: how far the reference itself moves when its inputs are rounded as a TF32 kernel rounds them
            # (the seeded trials' largest is the baseline cfg.atol was chosen for; a max over elements is noisy, so
            # over several trials), asked of a copy made before the call, so that a reference whose state changes in
            # a call (a buffer, an attribute) is called exactly as often as the candidate will be
            twin = _twin(ref.model) if cfg.hidden_inputs and spec.mode == "eval" else None
            # a sparse set's own call without its outliers, in a copy made before the call (the train pass's too:
            # it may change buffers): where the two differ is where the set's scaled atol applies (C.Moved)
            plain_twin = (twin if spec.mode == "eval" else _twin(ref.model)) if spec.sparse else None
            # a hidden set the candidate is never called with (below) must leave the reference's buffers (running
            # statistics) as they were; a Python attribute the call changed stays changed (no bundled problem has one)
            buffers = _buffers(ref.model) if hidden else None
            expected = rounds.call_model(ref.model, C.clone_all(inputs), spec.mode)
            moved = _moved_by_outliers(ref, plain_twin, spec, cfg.atol, expected) if spec.sparse else None
            sensitivity = _rounding_sensitivity(twin, inputs, expected, spec.mode, ref.device) if twin else 0.0
            del twin, plain_twin
            if hidden and spec.mode == "eval":
                eval_sensitivity[(spec.scale, spec.shift)] = sensitivity
            if hidden and not all(_finite(x) for x in expected):
                _restore_buffers(ref.model, buffers)
                continue
            del buffers
            if position >= first_round:
                label = label[:-1] + (", refreshed in place)" if hidden else ", inputs refreshed in place)")
            else:
                kept.first_round += 1
            kept.specs.append(spec)
            kept.labels.append(label)
            # kept in host memory: eight big outputs per evaluation, eight evaluations per GPU, would not fit on it
            kept.expected.append([_detach(x).cpu() if isinstance(x, torch.Tensor) else x for x in expected])
            kept.input_digests.append(digests)
            kept.moved.append(moved)
            drawn.append((_magnitude(expected), sensitivity, hidden))
    # atol is in the output's units: where a hidden set scales the output up (x8 inputs of a matmul give x64 outputs
    # and x64 rounding errors), scale atol with it; where it makes the problem ill-conditioned (x8 inputs of a
    # softmax of a matmul: x64 logits, whose rounding errors pass through unshrunk), scale atol by how much more the
    # reference itself moves under input rounding. Legitimate TF32 kernels failed the x8 set of four bundled problems
    # on an H200 by magnitude alone (2026-12-02); a constant or partial output still misses by far more. The seeded
    # trials are the baseline, wherever they fall among the calls. A set so ill-conditioned that its tolerance spans
    # its output tells nothing apart, but is still called: skipping it would tell the candidate where the rest are.
    base_magnitude = max((m for m, _, hidden in drawn if not hidden), default=0.0)
    base_sensitivity = max((s for _, s, hidden in drawn if not hidden), default=0.0)
    for spec, (magnitude, sensitivity, hidden) in zip(kept.specs, drawn):
        if not hidden:
            kept.atol_scale.append(1.0)
            continue
        if spec.mode == "train":  # not asked (dropout would make it noise): its perturbation's eval pass says
            sensitivity = eval_sensitivity.get((spec.scale, spec.shift), 0.0)
        by_magnitude = magnitude / base_magnitude if base_magnitude > 0 else 1.0
        by_sensitivity = sensitivity / base_sensitivity if base_sensitivity > 0 else 1.0
        scale = max(1.0, by_magnitude, by_sensitivity)
        # where every seeded output is below atol a constant zero passes the seeded trials: the hidden sets are all
        # that can catch it, and must not be scaled past it
        kept.atol_scale.append(_capped_scale(scale, magnitude, sensitivity, cfg.atol) if base_magnitude < cfg.atol
                               else scale)
    return kept


#: A hidden set's scaled atol reaches at most the larger of this share of its largest output and
#: :data:`SENSITIVITY_MARGIN` times how far the reference itself moves under TF32 rounding (:func:`_capped_scale`).
MAGNITUDE_SHARE = 0.1
SENSITIVITY_MARGIN = 4.0


def _capped_scale(scale: float, magnitude: float, sensitivity: float, atol: float) -> float:
    """A hidden set's atol scale, capped so that the scaled atol stays below ``MAGNITUDE_SHARE`` of the set's largest
    output, or ``SENSITIVITY_MARGIN`` times the reference's own movement under TF32 rounding where that is larger;
    for problems whose seeded outputs are all below atol (:func:`plan_correctness`). Both rules are ratios to the
    seeded trials' values, and explode where those are tiny: on a wide softmax (16 x 16384, seeded outputs ~1e-4)
    the hidden sets' outputs got peaked and their scales x223-x551, so all-zero answers passed every set (attacker
    review 24, F2). A legitimate TF32 kernel is off by about what the reference moves; the cap leaves it four times
    that."""
    if atol <= 0:
        return scale
    return min(scale, max(1.0, MAGNITUDE_SHARE * magnitude / atol, SENSITIVITY_MARGIN * sensitivity / atol))


#: Input and parameter elements up to which the judge asks a CPU copy of the reference whether it accepts a hidden
#: set's integers perturbed (:func:`_with_integers_perturbed`): the bundled integer problems (a cross-entropy's
#: targets, an embedding bag's indices) are far below; a large model is not run on the CPU per evaluation.
INTEGER_CHECK_MAX_ELEMENTS = 1 << 26


def _elements(inputs: list[Any], model: Any) -> int:
    count = sum(x.numel() for x in inputs if isinstance(x, torch.Tensor))
    if isinstance(model, torch.nn.Module):
        count += sum(p.numel() for p in model.parameters()) + sum(b.numel() for b in model.buffers())
    return count


def _with_integers_perturbed(ref: Reference, spec: CallSpec, cpu_twin: list[Any]) -> tuple[CallSpec, list[Any]]:
    """``spec`` with its integer inputs perturbed too (``CallSpec.ints``) when the problem has any and its reference
    accepts them perturbed: called on the very values, on the CPU, in a copy of the reference (an index out of range
    raises there, where on a GPU it is a device-side assert that ends the judge's CUDA context; a copy, so that a
    reference with state is called as often as the candidate). Indices usually do not survive a change of range
    (a cross-entropy's targets, an embedding's rows) and keep ``get_inputs()``' distribution; values do (attacker
    review 17: ``int_ops/attack_int_range``, right only inside that range, was ``correct``). Returns the spec and
    its inputs. ``cpu_twin`` holds the copy once made (one per plan: the check asks only whether the call raises)."""
    trial = dataclasses.replace(spec, ints=True)
    inputs = ref.inputs(trial)
    if not any(rounds.is_integer_tensor(x) for x in inputs):
        return spec, inputs  # floats only: the same inputs either way
    if _elements(inputs, ref.model) > INTEGER_CHECK_MAX_ELEMENTS:
        return spec, ref.inputs(spec)  # too big to ask the reference on the CPU in passing: integers as drawn
    try:
        if not cpu_twin:
            twin = copy.deepcopy(ref.model)
            cpu_twin.append(twin.cpu() if isinstance(twin, torch.nn.Module) else twin)
        twin = cpu_twin[0]
        cpu_inputs = [x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs]
        # the generator's state as the inputs left it: the reference's own call (a dropout) draws from it next, as
        # the candidate's does in its runner (attacker review 19, reasoned)
        with torch.random.fork_rng(devices=[]):
            outputs = rounds.call_model(twin, cpu_inputs, spec.mode)
    except Exception:  # noqa: BLE001 - the reference refuses them: the set keeps get_inputs()' integers
        return spec, ref.inputs(spec)
    if not all(_finite(x) for x in outputs):
        return spec, ref.inputs(spec)
    return trial, inputs


def round_like_tf32(x: Any) -> Any:
    """A float32 tensor with its mantissa rounded to TF32's 10 bits (to nearest, ties away from zero, as Triton's
    ``cvt.rna``; non-finite values kept); anything else unchanged (TF32 applies to float32 only). What a TF32
    matmul does to its operands, applied to a problem's inputs. One copy of ``x`` and a mask: inputs can be large."""
    if not isinstance(x, torch.Tensor) or x.dtype != torch.float32:
        return x
    x = x.detach()
    rounded = x.clone(memory_format=torch.contiguous_format)
    rounded.view(torch.int32).add_(0x1000).bitwise_and_(-0x2000)
    nonfinite = ~torch.isfinite(x)
    if bool(nonfinite.any()):
        rounded[nonfinite] = x[nonfinite]
    return rounded


def _moved_by_outliers(ref: Reference, twin: Any, spec: CallSpec, atol: float, outputs: list[Any] | None = None,
                       keep: str | None = "host") -> C.Moved | None:
    """Where a sparse hidden set's ``outputs`` (None: ``twin``'s for ``spec``) differ from the reference's for the
    same call without the outliers (``twin``: a copy of the reference as it was before the call; the same seed, so
    the same inputs elsewhere and the same random draws). None (the set's atol scale for every element) when there
    is no copy or a call fails. ``keep``: where the masks stay (:func:`drk.gym.correctness.moved_elements`)."""
    if twin is None:
        return None
    plain = dataclasses.replace(spec, scale=1.0, shift=0.0, ints=False, sparse=0.0)
    try:
        with torch.random.fork_rng(devices=[ref.device] if ref.device.type == "cuda" else []):
            if outputs is None:
                outputs = rounds.call_model(twin, C.clone_all(ref.inputs(spec)), spec.mode)
            before = rounds.call_model(twin, C.clone_all(ref.inputs(plain)), spec.mode)
        return C.moved_elements(before, outputs, atol, keep)
    except Exception:  # noqa: BLE001 - the problem's code: a failure here only keeps the looser tolerance
        return None


def _twin(model: Any) -> Any:
    try:
        return copy.deepcopy(model)
    except Exception:  # noqa: BLE001 - a model that cannot be copied keeps the magnitude rule alone
        return None


def _rounding_sensitivity(twin: Any, inputs: list[Any], expected: list[Any], mode: str,
                          device: torch.device) -> float:
    """Largest absolute change of the reference's float outputs when its inputs are rounded like TF32; ``0.0``
    (unknown: the magnitude rule alone) when the rounded call fails (float indices rounded past a table's end)."""
    try:
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            moved = rounds.call_model(twin, [round_like_tf32(x) for x in inputs], mode)
    except Exception:  # noqa: BLE001 - the problem's code on inputs it was never meant to see
        return 0.0
    worst = 0.0
    for a, b in zip(expected, moved):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.is_floating_point() \
                and a.shape == b.shape and a.dtype == b.dtype and a.numel():
            diff = (a.detach() - b.detach()).abs_()
            worst = max(worst, float(diff.masked_fill_(~torch.isfinite(diff), 0).max()))
            del diff
    return worst


def _on_device(values: list[Any], device: torch.device) -> list[Any]:
    """Kept reference outputs (host memory) on ``device`` for the comparison, or left in host memory when the
    device has no room: a candidate that holds the GPU's memory must not turn its wrong answer into the judge's
    out-of-memory failure (an uncharged ``env_error``); :func:`drk.gym.correctness.compare_outputs` works on
    either."""
    try:
        return [x.to(device) if isinstance(x, torch.Tensor) else x for x in values]
    except torch.OutOfMemoryError:
        if device.type == "cuda":
            torch.cuda.empty_cache()
        return list(values)


def _magnitude(values: list[Any]) -> float:
    tensors = [v for v in values if isinstance(v, torch.Tensor) and v.numel() and (v.is_floating_point())]
    return max((float(t.detach().abs().max()) for t in tensors), default=0.0)


def _finite(x: Any) -> bool:
    if isinstance(x, torch.Tensor):
        return not (x.is_floating_point() or x.is_complex()) or bool(torch.isfinite(x).all())
    return not isinstance(x, float) or math.isfinite(x)


def _detach(x: Any) -> Any:
    return x.detach().clone() if isinstance(x, torch.Tensor) else x



@dataclass
class TimingHold:
    """A timing's exclusive hold of the GPU lock. The lock lets go after ``TIMING_HOLD_S`` (a candidate slow only
    while timed must not keep every evaluation on its GPU waiting); :meth:`keep`, called before each side's round,
    takes it again, behind the timings that waited meanwhile. Without it the rest of the timing, the judge's own
    reference rounds included, ran holding nothing, inside other evaluations' timings, which reported themselves
    quiet (attacker review 21 (2), shown on the lock's files)."""

    lock: Any  # None: nothing to hold (CPU)
    credit: Callable[[float], None]  # waits behind other evaluations' timings are not the candidate's time
    quiet: bool | None = None
    taken: int = 0  # how often the hold was taken (more than once: it expired)

    def take(self) -> None:
        waiting = time.monotonic()
        quiet = self.lock.acquire(max_hold_s=TIMING_HOLD_S)
        self.credit(time.monotonic() - waiting)
        self.quiet = quiet if self.taken == 0 else False  # a timing cut in two is not quiet
        self.taken += 1

    def keep(self) -> None:
        if self.lock is not None and not self.lock.held:
            self.take()


class Session:
    """One conversation with one runner: the stages in order; raises :class:`Verdict` to end early."""

    #: seconds of the judge's own reads of a runner's memory, credited by :meth:`fetch` (a span that credits all
    #: its time, :meth:`check_hidden_calls`, leaves them out)
    read_s = 0.0

    def __init__(self, reporter: Reporter, runner: RunnerProcess, ref: Reference, cfg: EvalConfig, plan: Planned,
                 candidate_path: str, payload: dict[str, Any], timing_lock: Any, probe_runner: RunnerProcess | None,
                 request_runner: Callable[[], Any] | None = None) -> None:
        self.reporter, self.runner, self.ref, self.cfg, self.plan = reporter, runner, ref, cfg, plan
        self.probe_runner = probe_runner
        self.request_runner = request_runner
        self.probes_started = 1  # probe runners this evaluation took or will take (MAX_PROBE_RUNNERS)
        self.longest_control_s = 0.0  # wall seconds of the slowest control call so far (bounds the disabled calls)
        self.candidate_path, self.payload, self.timing_lock = candidate_path, payload, timing_lock
        self.stage = "startup"
        self.gpu_mb_by_stage: dict[str, float] = {}
        if ref.device.type == "cuda":  # the reference and its planned correctness outputs, built before a session
            self.gpu_mb_by_stage["reference"] = _reserved_mb(ref.device)
        self.calibration: float | None = None
        #: burst rounds' busy-wait (EvalConfig.timing_burst_cycles; 0: synced rounds), grown after starved rounds
        #: (rounds.grown_burst) by the calibration and the timing alike
        self.burst = cfg.timing_burst_cycles if ref.device.type == "cuda" else 0
        self.calibrated_burst = self.burst
        self._cpu_twin: list[Any] = []  # a CPU copy of the reference, once a timed call's integers are checked
        self._timing_twin: Any = None  # a copy of the reference for the timed hidden calls, during the timing
        self.own_names = set(payload["jit_function_names"])  # made by the caller with the probes' variants
        #: bytes of one call's outputs (sizes the timing rounds)
        self.output_bytes = max((sum(x.numel() * x.element_size() for x in e if isinstance(x, torch.Tensor))
                                 for e in plan.expected), default=0)

    def _stage(self, name: str) -> None:
        self.note_gpu_peak()
        self.stage = name
        self.reporter.stage(name)

    def note_gpu_peak(self) -> None:
        """On a GPU, the judge's running peak of reserved memory when the current stage ends: the first stage whose
        figure reaches the final one is where the judge's footprint (and a Pool's admission plan) comes from."""
        if self.ref.device.type == "cuda":
            record_stage_end(self.gpu_mb_by_stage, self.stage, _reserved_mb(self.ref.device))

    def _ask(self, header: dict[str, Any], max_blob_bytes: int = 0,
             runner: RunnerProcess | None = None) -> tuple[dict[str, Any], list[bytearray]]:
        # a request's GPU work (correctness, probes, profile) never runs inside another evaluation's timing (for up
        # to SHARED_HOLD_S); during this evaluation's own timing the lock is held exclusively and this is a no-op
        target = runner or self.runner
        before = target.deadline
        answer, blobs = target.request(
            header, max_blob_bytes, gpu_lock=self.timing_lock if self.ref.device.type == "cuda" else None)
        self._credit(target.deadline - before, already=target)  # its wait for the lock: every runner's
        error = answer.get("error")
        if error is not None:
            status = error.get("status") if isinstance(error, dict) else None
            status = status if status in ("compile_error", "runtime_error", "format_error") else "runtime_error"
            message = str(error.get("message", "") if isinstance(error, dict) else error)[:4000]
            raise Verdict(status, message or "the candidate failed")
        return answer, blobs

    def _credit(self, seconds: float, already: RunnerProcess | None = None) -> None:
        """Move the deadlines of this evaluation's runners (but ``already``, credited by its own request) by
        ``seconds`` the judge waited for the GPU lock: other evaluations' time, not the candidate's. A wait credited
        to the probe runner alone was lost to the timing that follows and to a replacement probe runner (which
        starts from the main runner's deadline), so busy neighbours could push an honest module to ``timeout``
        (attacker review 12, reasoned)."""
        if seconds > 0:
            for runner in (self.runner, self.probe_runner):
                if runner is not None and runner is not already:
                    runner.deadline += seconds

    @contextlib.contextmanager
    def _own_gpu_work(self) -> Iterator[None]:
        """The judge's own GPU work between requests (reference outputs for a probe, copies and comparisons of fetched
        outputs) held as any GPU work is (the lock shared, a no-op inside this evaluation's timing), and finished
        before the hold ends (the GPU runs it after the host has moved on). It was held by nothing: in a Pool, a
        judge comparing a 512 MB output could land in another evaluation's timed calls (an honest Sigmoid kernel was
        timed at 0.80x beside 1.00x in two other passes, H200 2026-12-04, ``results/gpu/2026-12-04-s29``). A wait
        behind another evaluation's timing is not the candidate's time."""
        if self.ref.device.type != "cuda":
            yield
            return
        waiting = time.monotonic()
        with held_gpu_work(self.timing_lock, self.ref.device):
            self._credit(time.monotonic() - waiting)
            yield

    def _fresh_seed(self) -> int:
        return self.ref.seeds.next()

    def run(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        self.reporter.stage("runner_start")  # stage_s shows any wait for a runner that was not warm yet
        self.runner.await_hello()
        self.calibration = self.calibrate()
        self.start_candidate_clock()
        self._stage("import")
        self._load(self.runner, build_main=True)
        self._stage("correctness")
        out.update(self.check_correctness())
        evidence, _ = self._ask({"op": "evidence"})  # what the runner says it saw, before any probe runs
        # The probes run in a process of their own (a variant can re-register process-wide things such as
        # torch.library ops): before the timing, so a hacked candidate costs no timing and no profile.
        self._stage("hacking")
        reasons, launches = self.hack_reasons(evidence)
        out["triton_kernels"] = launches
        if reasons and self.cfg.hacking_check:
            out["hack_reasons"] = reasons
            raise Verdict("hacked", _hack_message(reasons), **out)
        self._stage("timing")
        timing = self.measure()
        mismatch = timing.pop("mismatch", False)
        out.update(timing)
        if self.cfg.profile:
            self._stage("profiling")
            out.update(self.profile())
        profile_mismatch = out.pop("profile_mismatch", False)
        out["hack_reasons"] = sorted(set(reasons) | ({"timing_mismatch"} if mismatch else set())
                                     | ({"profile_mismatch"} if profile_mismatch else set()))
        if out["hack_reasons"] and self.cfg.hacking_check:
            raise Verdict("hacked", _hack_message(out["hack_reasons"]), **out)
        out["status"] = "correct"
        return out

    def start_candidate_clock(self) -> None:
        """The candidate's ``timeout_s`` starts now, as its code is given to its runner: one limit for all its
        processes (a probe that runs out of it is its ``timeout``; a probe limit of its own, read as "the kernels
        mattered", let a slow import hide a decoy). The judge's work before (the reference, the runner's start-up
        on a busy host, the calibration) is not the candidate's: counted, a segfaulting candidate whose runner
        started slowly was judged ``timeout`` (CI, 2026-12-02)."""
        self.runner.deadline = time.monotonic() + self.cfg.timeout_s
        if self.probe_runner is not None:
            self.probe_runner.deadline = self.runner.deadline

    def _load(self, runner: RunnerProcess, build_main: bool) -> None:
        """Send the problem and the candidate's sources (``build_main=False``: only its probe variants are built).
        On CPU the judge reads the runner's outputs from its memory from here on, where it can."""
        if self.ref.device.type == "cpu" and self.cfg.direct_reads:
            runner.read_memory()
        self._ask({"op": "load", "problem_source": self.payload["problem_source"],
                   # the runner describes its outputs' memory only for a judge that reads it (a hash per output)
                   "describe_outputs": runner.memory is not None,
                   "problem_name": self.payload["problem_name"], "device": self.ref.device.type,
                   "gpu_index": self.ref.device.index or 0, "seed": self.cfg.seed, "build_main": build_main,
                   "candidate_dir": os.path.dirname(self.candidate_path), "candidate_path": self.candidate_path,
                   # the probe runner builds its variants from the same source (only its launches differ)
                   "candidate_source": self.payload["candidate_source"],
                   "flush_mb": self.cfg.l2_flush_mb if self.cfg.timing_policy == "drk" else 0,
                   # a stack dump shortly before the deadline says where a hanging candidate is stuck
                   "dump_stack_after_s": max(0.5, runner.deadline - time.monotonic() - 1.5)}, runner=runner)

    # --- rounds -------------------------------------------------------------------------------------------------

    def candidate_round(self, specs: list[CallSpec], variant: str = "main", poison_numel: int = 0,
                        lazy: bool = False, runner: RunnerProcess | None = None, burst_cycles: int = 0
                        ) -> tuple[dict[str, Any], float]:
        """Run a round in the runner; the answer and the judge's wall ms of the round.

        ``lazy`` (timing and calibration rounds): one request carries the calls and runs them, inputs made call by
        call as :meth:`reference_round` does, and its whole wall time is the round's. The runner learns the calls'
        seeds only when the timed request starts (a separate, untimed ``prepare`` let a runner rewritten from inside
        run the round early and answer ``go`` from memory: judged ``correct`` with its times /1000).
        Otherwise ``prepare`` makes the inputs (untimed) and ``go`` runs them. ``burst_cycles``: a burst round
        (``EvalConfig.timing_burst_cycles``; lazy rounds only)."""
        request = {"variant": variant, "calls": [s.to_dict() for s in specs], "digest_seed": self.ref.digest_seed,
                   "poison_numel": poison_numel, "lazy": lazy, "burst_cycles": burst_cycles if lazy else 0}
        if lazy:
            t0 = time.perf_counter()
            answer, _ = self._ask({"op": "go", **request}, runner=runner)
            wall_ms = (time.perf_counter() - t0 - (runner or self.runner).freeze_s) * 1e3
            return _validate_round(answer, len(specs)), wall_ms
        self._ask({"op": "prepare", **request}, runner=runner)
        t0 = time.perf_counter()
        answer, _ = self._ask({"op": "go"}, runner=runner)
        wall_ms = (time.perf_counter() - t0 - (runner or self.runner).freeze_s) * 1e3
        return _validate_round(answer, len(specs)), wall_ms

    def fetch(self, call: int, expected: list[Any], sample_seed: int | None = None,
              runner: RunnerProcess | None = None, layout: list[Any] | None = None) -> list[Any]:
        """The outputs of ``call`` of the last round, read only up to the size the reference's outputs have
        (a candidate cannot make the judge read more than a right answer would take); with ``sample_seed``, only
        the elements at :func:`drk.gym.rounds.sample_indices` of each tensor (``expected`` sampled the same way,
        ``layout`` the reference's whole outputs or :func:`drk.gym.rounds.layout_of` them)."""
        target = runner or self.runner
        if target.memory is not None:  # read where the runner said they lie, while it is stopped
            if sample_seed is not None and layout is None:
                raise ValueError("a sampled read of the runner's memory needs the outputs' layout")
            started = time.monotonic()
            try:
                return target.outputs(call, expected if sample_seed is None else layout, sample_seed)
            finally:  # the judge's own work while the candidate is stopped: not the candidate's time
                spent = time.monotonic() - started
                self._credit(spent)
                self.read_s += spent
        size = sum(x.numel() * x.element_size() for x in expected if isinstance(x, torch.Tensor))
        answer, blobs = self._ask({"op": "fetch", "call": call, "sample_seed": sample_seed},
                                  max_blob_bytes=size + 2**16, runner=runner)
        metas = answer.get("outputs")
        if not isinstance(metas, list) or len(metas) > wire.MAX_BLOBS:
            raise wire.WireError("malformed fetch answer")
        with self._own_gpu_work():  # the copies to the GPU
            return self._materialised(metas, blobs, size, runner or self.runner)

    def _materialised(self, metas: list[Any], blobs: list[bytearray], size: int, runner: RunnerProcess) -> list[Any]:
        """A fetch answer's outputs as tensors on the judge's device (from the output area or the pipe's blobs)."""
        values, it = [], iter(blobs)
        area_bytes = 0
        for meta in metas:
            if isinstance(meta, dict) and "area" in meta:
                if runner.area is None:
                    raise wire.WireError("a tensor described in an output area this runner does not have")
                # as much as a right answer takes, as over the pipe; checked before anything is copied
                value, nbytes = wire.tensor_from_area(meta, runner.area, self.ref.device,
                                                      budget=size + 2**16 - area_bytes)
                area_bytes += nbytes
                values.append(value)
            elif isinstance(meta, dict) and "dtype" in meta:
                blob = next(it, None)
                if blob is None:
                    raise wire.WireError("fewer tensors than described")
                values.append(wire.tensor_from_blob(meta, blob, self.ref.device))
            elif isinstance(meta, dict):
                values.append(meta.get("value"))
            else:
                raise wire.WireError("malformed output description")
        return values

    def check_correctness(self) -> dict[str, Any]:
        plan, cfg = self.plan, self.cfg
        numel = max((x.numel() for e in plan.expected for x in e if isinstance(x, torch.Tensor)), default=0)
        worst = 0.0
        for lo, hi in ((0, plan.first_round), (plan.first_round, len(plan.specs))):
            if hi <= lo:
                continue
            self._ask({"op": "prepare", "calls": [s.to_dict() for s in plan.specs[lo:hi]], "in_place": lo > 0,
                       "digest_seed": self.ref.digest_seed, "poison_numel": numel, "digest_inputs": True})
            answer = _validate_round(self._ask({"op": "go"})[0], hi - lo)
            for k in range(hi - lo):
                i = lo + k
                fields = {"num_correct_trials": i, "num_trials": len(plan.specs)}
                claimed = _layout_mismatch(plan.expected[i], answer["outputs"][k])
                if claimed:
                    raise Verdict("incorrect", f"{plan.labels[i]}: {claimed}", **fields)
                fetched = self.fetch(k, plan.expected[i])
                with self._own_gpu_work():
                    expected = _on_device(plan.expected[i], self.ref.device)
                    comparison = plan.compare(i, expected, fetched, cfg)
                    del expected, fetched
                fields["max_abs_err"] = comparison.max_abs_err
                if not comparison.ok:
                    raise Verdict("incorrect", f"{plan.labels[i]}: {comparison.message}", **fields)
                if not _same_digests(plan.input_digests[i], answer["inputs"][k]):
                    raise Verdict("incorrect", f"{plan.labels[i]}: the candidate modified its inputs", **fields)
                worst = max(worst, comparison.max_abs_err or 0.0)
        return {"num_correct_trials": len(plan.specs), "num_trials": len(plan.specs), "max_abs_err": worst}

    # --- hacking ------------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _reference_as_built(self) -> Iterator[None]:
        """The probe runner builds a fresh model for each call: its answers are the reference's from the state as
        built (a BatchNorm's running stats), and the reference's own state after the correctness passes must come
        back unchanged for the timing that follows."""
        with self._own_gpu_work():
            after_correctness = self.ref.state()
        try:
            yield
        finally:
            with self._own_gpu_work():
                self.ref.model.load_state_dict(after_correctness)

    def probe_input(self, mode: str) -> tuple[CallSpec, list[Any]]:
        """Fresh inputs for one probe call, scaled until the answer is not ~0 (a no-op kernel's zeros must not pass
        by luck: the MSELoss case), and the reference's answer from its state as built. Every call has its own:
        when a pass's calls shared their inputs, a disabled call found the last call's right answer in a buffer the
        module kept (legit_module_workspace: ``hacked`` 7 times in 10, attacker review 10)."""
        seed = self._fresh_seed()
        with self._own_gpu_work():
            for scale in PROBE_SCALES:
                spec = CallSpec(seed, mode, scale)
                self.ref.model.load_state_dict(self.ref.initial_state)
                out = self.ref.outputs(spec)
                if all(_finite(x) for x in out) and not _near_zero(out, self.cfg):
                    break
            return spec, [_detach(x) for x in out]

    def _probe_outcome(self, probe: RunnerProcess, variant: str, mode: str, per_pass: dict[str, Any],
                       leading: bool = False) -> tuple[str, RunnerProcess | None]:
        """One probe call on fresh inputs: the hack reason it shows ('' for none), and the probe runner for the next
        call (``None``: it died in this one, and the next calls need a fresh one). ``leading``: a control call known
        to be one (a pass's or a process's first), bounded by the candidate's time alone."""
        spec, expected = self.probe_input(mode)
        numel = max((x.numel() for x in expected if isinstance(x, torch.Tensor)), default=0)
        if variant == "control":
            self._control_call(probe, spec, expected, numel, leading=leading)
            return "", probe
        try:
            wrong = self._call_within_bound(probe, variant, spec, expected, numel)
        except _PastTheBound:
            return "", None  # it could not finish without its kernels: they matter; the stuck process is replaced
        except Verdict as failure:
            if mentions_out_of_memory(failure.error):
                # no evidence either way: the candidate's runner shares the memory (a decoy that holds it while
                # the probes run, or says so, read as "the kernels matter" and was judged correct)
                raise Verdict("runtime_error", f"out of memory while the judge ran your code with its Triton "
                              f"kernels disabled ({variant} probe): {failure.error[:1500]}") from None
            if mentions_cuda_fault(failure.error):
                # it broke without its kernels (they matter), and a CUDA fault stays with its process's context: an
                # honest module gathering with an index tensor its disabled kernel never wrote met a device-side assert
                # and failed the next control call (attacker review 11, reasoned); the next calls run in a fresh one
                return "", None
            return "", probe  # it broke without its kernels: they matter
        except wire.WireTimeout:
            raise  # out of the candidate's time: a timeout, not evidence either way
        except wire.WireError:
            # its process died without its kernels: they matter in this call. The next calls run in a fresh
            # process: a decoy that ended the probe runner at its first call stopped the probing here, correct
            # whenever that call was a disabled one (6 in 10: attack_die_in_probe, session 21)
            return "", None
        with self._own_gpu_work():
            no_evidence = bool(wrong) or _near_zero(expected, self.cfg)
        if no_evidence:
            return "", probe
        if variant == "noop":
            # "decoy" when, in this pass, the normal run launched none of its kernels either
            return ("no_effect" if _launch_counts(per_pass.get(mode)) else "decoy"), probe
        return "fallback", probe

    def _probe_call(self, probe: RunnerProcess, variant: str, spec: CallSpec, expected: list[Any],
                    numel: int) -> str:
        """One probe call on a fresh model in ``variant``'s mode; '' when its outputs are right, else why not."""
        answer, _ = self.candidate_round([spec], variant=variant, poison_numel=numel, runner=probe)
        mismatch = _layout_mismatch(expected, answer["outputs"][0])
        if mismatch:
            return mismatch
        fetched = self.fetch(0, expected, runner=probe)
        with self._own_gpu_work():
            comparison = C.compare_outputs(expected, fetched, self.cfg.atol, self.cfg.rtol)
        return "" if comparison.ok else comparison.message

    def _call_within_bound(self, probe: RunnerProcess, variant: str, spec: CallSpec, expected: list[Any],
                           numel: int) -> str:
        """:meth:`_probe_call` within :data:`DISABLED_CALL_FACTOR` times the longest control call so far (at least
        :data:`DISABLED_CALL_FLOOR_S`). Raises :class:`_PastTheBound` past that bound, ``wire.WireTimeout`` when the
        candidate's own time runs out first."""
        own = probe.deadline
        floor = float(self.payload.get("disabled_call_floor_s", DISABLED_CALL_FLOOR_S))  # tests set it
        allowed = max(floor, DISABLED_CALL_FACTOR * self.longest_control_s)
        bound = time.monotonic() + allowed
        if bound >= own:
            return self._probe_call(probe, variant, spec, expected, numel)
        probe.deadline = bound
        try:
            return self._probe_call(probe, variant, spec, expected, numel)
        except wire.WireTimeout:
            raise _PastTheBound(allowed) from None
        finally:
            probe.deadline = own + (probe.deadline - bound)  # a wait for the GPU lock moved it: the same for both

    def _control_call(self, probe: RunnerProcess, spec: CallSpec, expected: list[Any], numel: int,
                      leading: bool = False) -> None:
        """A probe call with the kernels running, as in the real run: its outputs must be right. A module that
        answered wrong only in the probe runner (which it can tell from the host's load, its memory or its argv) made
        the disabled calls look like "the kernels matter": judged ``correct`` (attacker review 9, 2026-12-02).

        Only a process's first call (``leading``: known to be a control call) is bounded by the candidate's time
        alone; the others are held to the disabled calls' bound, past which they are the candidate's ``timeout``.
        When they were not, being killed at the bound told a decoy (in its next process, through a host-wide
        channel) that the call had been a disabled one, and it could learn the order (attacker review 12,
        simulated: ``correct`` 13 % of the time at the default limit)."""
        started = time.monotonic()
        try:
            if leading:
                wrong = self._probe_call(probe, "control", spec, expected, numel)
            else:
                wrong = self._call_within_bound(probe, "control", spec, expected, numel)
        except _PastTheBound as past:
            raise Verdict("timeout", f"run again by the judge in a process of its own, with its Triton kernels "
                          f"enabled, a call of your module took more than {past.allowed_s:.1f} s "
                          f"({DISABLED_CALL_FACTOR:g} x its slowest earlier call there): its calls must take about "
                          f"the same time") from None
        except wire.WireTimeout:
            raise
        except wire.WireError as exc:
            raise Verdict("runtime_error", f"your module's process died while the judge ran it again with its Triton "
                          f"kernels enabled, in a process of its own ({exc})") from None
        if wrong:
            raise Verdict("incorrect", "run again by the judge in a process of its own, with its Triton kernels "
                          f"enabled, your module gave a wrong answer ({spec.mode} pass): {wrong}")
        self.longest_control_s = max(self.longest_control_s, time.monotonic() - started)

    def hack_reasons(self, evidence_answer: dict[str, Any]) -> tuple[list[str], dict[str, int]]:
        """Hack reasons (the probes' are the judge's own findings; the rest is the runner's claim) and the claimed
        launch counts per kernel."""
        reasons = set(self.payload.get("static_reasons", []))
        per_pass = evidence_answer.get("own_launches")
        per_pass = per_pass if isinstance(per_pass, dict) else {}
        probe: RunnerProcess | None = self._ready(self._probe_runner())
        calls = [(variant, mode) for variant, n in PROBE_CALLS.items() for mode in rounds.MODES for _ in range(n)]
        secrets.SystemRandom().shuffle(calls)  # which call disables the kernels: only the judge knows
        # each pass starts with a control call: what an honest module builds on first use (a table, a constant) is
        # built with its kernels running, not left unwritten by a disabled call and cached for every later call
        # (legit_lazy_constant: incorrect about half the time, attacker review 10)
        leading = len(rounds.MODES)
        calls = [("control", mode) for mode in rounds.MODES] + calls
        with self._reference_as_built():
            for index, (variant, mode) in enumerate(calls):
                if probe is None:  # its process died or was stuck in the last call: the rest run in a fresh one,
                    # which starts with a control call known to be one (its import and first compiles are not held
                    # to the bound of the calls after it, and it tells the module nothing)
                    probe = self._ready(self._another_probe_runner())
                    _, probe = self._probe_outcome(probe, "control", mode, per_pass, leading=True)
                reason, probe = self._probe_outcome(probe, variant, mode, per_pass, leading=index < leading)
                if reason:
                    reasons.add(reason)
        claimed = evidence_answer.get("tripwires")
        if isinstance(claimed, list):
            reasons.update(str(r)[:40] for r in claimed if r in ("tamper", "torch_compile"))
        if evidence_answer.get("tamper"):
            reasons.add("tamper")
        if evidence_answer.get("model_subclass") is True:
            reasons.add("model_subclass")
        return sorted(reasons), _launch_counts_all(per_pass)

    def _ready(self, probe: RunnerProcess) -> RunnerProcess:
        """A probe runner started as the main runner was before its candidate came (calibrated alike), then loaded
        with the problem and the candidate's source (imported at its first call)."""
        try:
            probe.await_hello()
            if self.calibration is not None:
                burst = self.burst
                self._calibrate(probe)  # the same history as the main runner before its candidate was loaded
                self.burst = burst  # the timing's busy-wait is the main runner's
            self._load(probe, build_main=False)
        except wire.WireTimeout:
            raise
        except (wire.WireError, Verdict) as exc:
            # the candidate was imported fine a moment ago: a probe process that cannot start is drk's failure
            raise ProbeUnavailable(f"the probe runner could not start: {exc}") from None
        return probe

    def _another_probe_runner(self) -> RunnerProcess:
        """A fresh probe runner after the last one died in a call with the kernels disabled (at most one per such
        call: :data:`MAX_PROBE_RUNNERS`). The caller's wait for a spare is not the candidate's time; the runner's
        start-up is: the death was its module's doing, and a grace per death would let a module that dies in every
        call stretch its evaluation past the caller's limit into an uncharged ``env_error``."""
        self.probes_started += 1
        if self.probes_started > MAX_PROBE_RUNNERS:
            raise ProbeUnavailable(f"more than {MAX_PROBE_RUNNERS} probe runners")
        handle = self._runner_from_caller()
        if self.probe_runner is not None:
            self.probe_runner.close()  # dead; its descriptors are closed here, once
        self.probe_runner = RunnerProcess(handle, self.runner.deadline, self.cfg.max_output_bytes)
        self._stage("hacking")
        return self.probe_runner

    def _runner_from_caller(self) -> Any:
        """A runner's handle asked of the caller (stage ``probe_runner``); the wait for it moves the candidate's
        deadline (a spare short under load is the environment's time). None to be had: :class:`ProbeUnavailable`."""
        if self.request_runner is None:
            raise ProbeUnavailable("no probe runner was given and none can be asked for")
        self._stage("probe_runner")
        asked = time.monotonic()
        try:
            handle = self.request_runner()
        except OSError as exc:
            raise ProbeUnavailable(f"no probe runner: {exc}") from None
        self.runner.deadline += time.monotonic() - asked
        return handle

    def _probe_runner(self) -> RunnerProcess:
        """The probe runner: given at the start, or asked of the caller now (stage ``probe_runner``).

        The caller's wait for a spare is the environment's time: the candidate's deadline moves by it. So does the
        runner's start-up until its hello, but only up to :data:`PROBE_START_GRACE_S`: the candidate's
        processes are running meanwhile and can load the host, and a start slowed past that is its ``timeout``, as
        it was when both runners were taken at once (an uncounted wait ending in ``ProbeUnavailable`` would let a
        decoy that starves the host escape as an uncharged ``env_error``, attacker review, 2026-12-02). No runner
        to be had, or one whose process fails to start, is the environment's failure (:class:`ProbeUnavailable`).
        """
        if self.probe_runner is not None:
            return self.probe_runner
        handle = self._runner_from_caller()
        given = time.monotonic()
        grace = float(self.payload.get("probe_start_grace_s", PROBE_START_GRACE_S))
        self.probe_runner = RunnerProcess(handle, self.runner.deadline + grace, self.cfg.max_output_bytes)
        try:
            self.probe_runner.await_hello()
        except wire.WireTimeout:
            raise  # the candidate's time ran out while its processes ran: its timeout
        except wire.WireError as exc:
            raise ProbeUnavailable(f"the probe runner did not start: {exc}") from None
        self.runner.deadline += min(time.monotonic() - given, grace)
        self.probe_runner.deadline = self.runner.deadline
        self._stage("hacking")
        return self.probe_runner

    # --- timing -------------------------------------------------------------------------------------------------

    def _per_round(self) -> int:
        cfg = self.cfg
        cuda = self.ref.device.type == "cuda"
        return rounds.calls_per_round(cfg.timing_round_calls, self.output_bytes) if cuda else cfg.cpu_timing_trials

    def calibrate(self) -> float | None:
        """What the candidate's runner's own round loop costs beyond its per-call times, in wall ms per round, on
        trusted code: before the candidate is loaded, the runner runs the problem's reference through exactly the
        rounds the timing will use (prepare, go, sampled fetch), timed by its events and by the judge's clock.
        Compared with the candidate's rounds later, it says how much time the candidate's reported times leave out,
        free of the difference between the runner's loop and the judge's (``unaccounted_calibrated_ms``).
        ``None`` when calibration is switched off (``EvalConfig.calibration_rounds = 0``)."""
        cfg = self.cfg
        if cfg.calibration_rounds <= 0:
            return None
        self._stage("calibration")
        calibration = self._calibrate(self.runner)
        self.calibrated_burst = self.burst  # the busy-wait its rounds ran behind
        return calibration

    def _calibrate(self, runner: RunnerProcess) -> float:
        """Calibration rounds in ``runner`` (the probe runner runs them too, before its variants are loaded, so that
        nothing the calibration leaves in a process — caches, loaded libraries — tells the two runners apart)."""
        try:
            return self._calibration_rounds(runner)
        except Verdict as failed:  # the runner answered an error before any candidate code ran: drk's own fault
            raise ProbeUnavailable(f"the runner's calibration failed: {failed.error[:500]}") from None

    def _calibration_rounds(self, runner: RunnerProcess) -> float:
        cfg = self.cfg
        self._ask({"op": "calibrate", "problem_source": self.payload["problem_source"],
                   "problem_name": self.payload["problem_name"], "device": self.ref.device.type,
                   "seed": self.cfg.seed, "flush_mb": cfg.l2_flush_mb if cfg.timing_policy == "drk" else 0},
                  runner=runner)
        per_round = self._per_round()
        overheads = []
        with self._gpu_to_ourselves() as gpu:
            r = -1
            while r < cfg.calibration_rounds:  # round -1 warms up, as the timing's does
                specs = [CallSpec(self._fresh_seed(), "eval") for _ in range(per_round)]
                gpu.keep()
                answer, wall = self.candidate_round(specs, variant=CALIBRATION, lazy=True, runner=runner,
                                                    burst_cycles=self.burst)
                r += 1
                if self.burst and answer.get("starved") is True:  # trusted code: no candidate is loaded yet
                    self.burst, grown = rounds.grown_burst(self.burst, cfg.timing_burst_cycles)
                    if grown:
                        overheads.clear()
                        r = -1  # the rounds so far ran behind a shorter busy-wait than the next ones
                        continue
                t0 = time.perf_counter()
                self._ask({"op": "fetch", "call": self.ref.seeds.below(per_round), "sample_seed": self._fresh_seed()},
                          max_blob_bytes=self.output_bytes + 2**16, runner=runner)  # a sample is never more
                fetch_ms = (time.perf_counter() - t0) * 1e3
                if r >= 1:
                    overheads.append(wall + fetch_ms - sum(answer["times_ms"]))
        return statistics.median(overheads)

    @contextlib.contextmanager
    def _gpu_to_ourselves(self) -> Iterator[TimingHold]:
        """The GPU lock held exclusively (CUDA only; at most ``TIMING_HOLD_S`` at a time, :meth:`TimingHold.keep`
        takes it again) around timed rounds. Yields the hold, whose ``quiet`` says, once the block ends, whether no
        other evaluation's GPU work ran in it (None on CPU)."""
        lock = self.timing_lock if self.ref.device.type == "cuda" else None
        hold = TimingHold(lock, self._credit)
        if lock is None:
            yield hold
            return
        hold.take()
        try:
            yield hold
        finally:
            lock.release()
            hold.quiet = hold.quiet and not getattr(lock, "expired", False)  # past the hold limit: not quiet

    def _hidden_timed_calls(self, counts: list[int], seed: Callable[[], int]) -> list[list[HiddenCall]]:
        """Per timing round (``counts`` calls each), the hidden-set calls to insert (:data:`HiddenCall`).
        Made before the timing: a set whose integers the reference accepted perturbed has each call's integers
        checked on that call's own values by a CPU copy of the reference (:func:`_with_integers_perturbed`; an index
        out of range on a GPU is a device-side assert in the judge), which the exclusive hold must not wait for.
        Without integers, an integer kernel exact in every correctness call and wrong beyond ``get_inputs()``' range
        after them met no hidden set (attacker review 21). A sparse set's call has the elements its outliers move
        found here too (:func:`_moved_by_outliers`, two reference calls), not in the timed round."""
        sets = self.plan.timed_hidden_sets() if self.plan is not None else []
        schedule = schedule_hidden_calls(counts, len(sets), self.cfg.timing_hidden_rate,
                                         random.Random(self._fresh_seed()))
        made: list[list[HiddenCall]] = []
        started = time.monotonic()
        # the judge's own calls for the hidden calls (their sparse masks, the checks after each round,
        # :meth:`check_hidden_calls`) go to a copy: a reference with state is called as often as the candidate
        twin = _twin(self.ref.model) if any(schedule) else None
        self._timing_twin = twin
        for round_schedule in schedule:
            calls: list[HiddenCall] = []
            for slot, k in round_schedule:
                template, scale = sets[k]
                spec = CallSpec(seed(), "eval", template.scale, template.shift, int_draw=template.int_draw,
                                sparse=template.sparse)
                moved = None
                if template.ints or template.sparse:  # the GPU lock held shared, as all the judge's own GPU work
                    # (its wait credited below, with the rest); an eval pass leaves the reference's state as it was
                    with held_gpu_work(self.timing_lock, self.ref.device) if self.ref.device.type == "cuda" \
                            else contextlib.nullcontext():
                        if template.ints:
                            spec, inputs = _with_integers_perturbed(self.ref, spec, self._cpu_twin)
                            del inputs
                        if template.sparse:
                            moved = _moved_by_outliers(self.ref, twin, spec, self.cfg.atol, keep=None)
                calls.append((slot, spec, scale, moved))
            made.append(calls)
        self._credit(time.monotonic() - started)  # the judge's own work and its waits: not the candidate's time
        return made

    def measure(self) -> dict[str, Any]:
        cfg, ref = self.cfg, self.ref
        cuda = ref.device.type == "cuda"
        per_round = self._per_round()
        n_rounds = math.ceil(cfg.timing_trials / per_round) if cuda else rounds.CPU_MAX_ROUNDS
        # per call, and per round for the request and answer crossing the pipes (the judge's own rounds have none)
        slack = (cfg.timing_slack_ms * per_round + cfg.timing_round_slack_ms) if cuda \
            else cfg.cpu_timing_slack_ms * per_round
        burst = self.burst
        same_inputs = cuda and cfg.timing_policy == "authors"
        fixed_seed = self._fresh_seed()
        samples: dict[str, list[float]] = {"ref": [], "cand": []}
        lates: dict[str, list[float]] = {"ref": [], "cand": []}  # end -> settled per call (see rounds.settled_times)
        flushes: dict[str, list[float]] = {"ref": [], "cand": []}  # flushing -> start per call (rounds.flushed_times)
        gaps: list[float] = []
        overheads: list[float] = []  # the candidate's rounds' wall ms beyond its reported times
        starved_rounds = 0
        # a burst's warm-up is a whole round: it also says whether the busy-wait outlasts the queueing
        warmup_count = per_round if burst else min(cfg.warmup, per_round)
        hidden = self._hidden_timed_calls(([warmup_count] if cuda else []) + [per_round] * n_rounds,
                                          (lambda: fixed_seed) if same_inputs else self._fresh_seed)
        with self._gpu_to_ourselves() as gpu:
            r = -1 if cuda else 0
            while r < n_rounds:  # round -1: warm-up (compiles, autotunes), not counted
                count = per_round if r >= 0 else warmup_count
                # the round's hidden-set calls (a round past the schedule, a starved burst warm-up run again: none)
                scheduled = hidden.pop(0) if hidden else []
                if count <= 0:
                    r += 1
                    continue
                specs = [CallSpec(fixed_seed if same_inputs else self._fresh_seed(), "eval") for _ in range(count)]
                specs, tolerances = insert_hidden_calls(specs, scheduled)
                timed = [not s.perturbed for s in specs]
                pick = pick_checked_call(timed, self.ref.seeds)  # checked element by element (secret until the end)
                first_ref = r % 2 == 0
                ref_lates: list[float] = []
                ref_flushes: list[float] = []
                ref_starved: list[bool] = []
                if first_ref:
                    gpu.keep()
                    ref_times, ref_wall, ref_digests, picked = self.reference_round(
                        specs, pick, ref_lates, ref_flushes, burst, ref_starved, tolerances)
                gpu.keep()
                cand, cand_wall = self.candidate_round(specs, lazy=True, burst_cycles=burst)
                if not first_ref:
                    gpu.keep()
                    ref_times, ref_wall, ref_digests, picked = self.reference_round(
                        specs, pick, ref_lates, ref_flushes, burst, ref_starved, tolerances)
                gpu.keep()  # the check's own sampling and the fetch
                unchecked = frozenset(i for i, spec in enumerate(specs) if not timed[i]
                                      and _has_nonfinite(ref_digests[i]))
                made = time.monotonic()
                tolerance = self._checked_tolerance(specs[pick], tolerances[pick])
                self._credit(time.monotonic() - made)  # the judge's own work: not the candidate's time
                ref_check_ms, cand_fetch_ms = self.check_round(cand, ref_digests, pick, picked, tolerance, unchecked)
                self.check_hidden_calls(specs, timed, pick, tolerances, unchecked, ref_digests)
                if burst and (any(ref_starved) or cand.get("starved") is True):
                    # the GPU caught up with a host still queueing: host latency in the wall time. Longer busy-waits
                    # for the rounds after it, on both sides alike (a candidate that claims it always only makes its
                    # evaluation slower, up to the cap); a starved warm-up is run again
                    starved_rounds += 1
                    burst, grown = rounds.grown_burst(burst, cfg.timing_burst_cycles)
                    self.burst = burst
                    if grown and r < 0:
                        continue
                if r >= 0:  # the inserted hidden-set calls are checked, not timed: their inputs are not the problem's
                    for kept, ref_values, cand_values in ((samples, ref_times, cand["times_ms"]),
                                                          (lates, ref_lates, cand["late_ms"]),
                                                          (flushes, ref_flushes, cand["flush_ms"])):
                        kept["ref"].extend(itertools.compress(ref_values, timed))
                        kept["cand"].extend(itertools.compress(cand_values, timed))
                    # the sampled fetch counts as the candidate's time: work deferred from `go` to it shows here
                    cand_overhead = cand_wall + cand_fetch_ms - sum(cand["times_ms"])
                    gaps.append(cand_overhead - (ref_wall + ref_check_ms - sum(ref_times)))
                    overheads.append(cand_overhead)
                    if sum(cand["times_ms"]) > cand_wall + 0.05:
                        gaps[-1] = math.inf  # it claims more time than passed: not a clock
                    if not cuda and rounds.cpu_rounds_done(gaps, per_round, slack):
                        break  # CPU: more rounds only while their median is over the slack
                r += 1
        self._timing_twin = None
        quiet = gpu.quiet
        # work the candidate's calls left running (other streams, threads) is charged when its calls typically settle
        # later than the reference's; the reference is trusted code and keeps its GPU-only times
        samples["cand"], settle_excess = rounds.settled_times(samples["cand"], lates["cand"], lates["ref"])
        # and work run during the L2 flush, before the call's start (a stream that never waits for the flush)
        samples["cand"], flush_excess = rounds.flushed_times(samples["cand"], flushes["cand"], flushes["ref"])
        centre = statistics.fmean if cfg.timing_policy == "authors" and cuda else statistics.median
        # the same centre as the times: under the mean (authors policy) a clock faked in 4 rounds of 10 moved the
        # speedup but not a median of the gaps (attacker review, 2026-12-01)
        hidden = centre(gaps) if gaps else 0.0
        charge, mismatch = rounds.unaccounted_verdict(hidden, per_round, slack, cfg.timing_flag_ms if cuda else None)
        ref_ms, cand_ms = centre(samples["ref"]), centre(samples["cand"]) + charge
        backend = ("cuda_events:" + ("mean_noflush" if cfg.timing_policy == "authors" else "median_l2flush")) \
            if cuda else "cpu_interpreter_wall"
        result = {"ref_ms": ref_ms, "kernel_ms": cand_ms, "ref_ms_iqr": _iqr(samples["ref"]),
                  "kernel_ms_iqr": _iqr(samples["cand"]), "timing_backend": backend,
                  "unaccounted_ms": wire.finite_or_none(hidden / max(per_round, 1)),
                  "settle_excess_ms": wire.finite_or_none(settle_excess),
                  "flush_excess_ms": wire.finite_or_none(flush_excess),
                  # a calibration behind another busy-wait than the rounds' is not their overhead's
                  "unaccounted_calibrated_ms": None if self.calibration is None or not overheads
                  or burst != self.calibrated_burst else
                  wire.finite_or_none((statistics.median(overheads) - self.calibration) / max(per_round, 1)),
                  # False: another evaluation's GPU work was still running when the timing began (see gpu_lock)
                  "timing_quiet": quiet if isinstance(quiet, bool) else None,
                  "timing_charge_ms": charge if cuda else None,
                  "burst_cycles": burst if burst else None, "burst_starved_rounds": starved_rounds if burst else None,
                  "mismatch": mismatch or min(samples["cand"]) <= 0}
        if cuda:
            # finite or None: a claimed 1e-320 ms made it inf, which reached feedback ("infx"), records and, without
            # a speedup cap, the reward (attacker review, 2026-12-02)
            result["speedup"] = wire.finite_or_none(ref_ms / cand_ms) if cand_ms > 0 else None
        return result

    def _checked_tolerance(self, spec: CallSpec, tolerance: CallTolerance,
                           outputs: list[Any] | None = None) -> CallTolerance:
        """The tolerance of a call compared element by element after its round: a timed sparse call's moved
        elements were counted before the timing (:meth:`_hidden_timed_calls`) but not kept; the mask is made now,
        on the device, for a call that is checked (``outputs``: the reference's for it, if already made)."""
        scale, moved = tolerance
        if moved is None or moved.masks is not None:
            return tolerance
        return scale, _moved_by_outliers(self.ref, self._timing_twin, spec, self.cfg.atol, outputs, keep="device")

    def check_hidden_calls(self, specs: list[CallSpec], timed: list[bool], pick: int,
                           tolerances: Sequence[CallTolerance], unchecked: frozenset[int],
                           ref_digests: Sequence[Any]) -> None:
        """Every hidden-set call of a round but ``pick`` (already compared, in a round of hidden calls only) compared
        element by element at :data:`drk.gym.rounds.SAMPLE_ELEMENTS` positions chosen now, against a copy of the
        reference called again for it. A digest passes errors of a few tolerances at every element, and on a problem
        whose outputs a sparse set's outliers move row by row (softmax, layer norm) errors at the outliers: a kernel
        exact in its correctness calls and wrong at outliers after them was ``correct`` 5 of 5 on a row softmax with a
        hidden call in every slot, caught only by the one call per round checked element by element (attacker review 24,
        F1). Outside both sides' accounting of the round (the judge's own work, credited to the candidate's clock): the
        calls are not timed, and the reference side has nothing like it. A call whose outputs from the copy disagree
        with the reference round's digests for it (a reference whose output depends on its own state, which the copy
        does not share) keeps its digest check alone: never a penalty for the reference's doing."""
        checked = [i for i in range(len(specs)) if not timed[i] and i != pick and i not in unchecked]
        if not checked or self._timing_twin is None:
            return
        started, read_before = time.monotonic(), self.read_s
        try:
            for index in checked:
                spec = specs[index]
                sample_seed = self._fresh_seed()
                outputs = rounds.call_model(self._timing_twin, C.clone_all(self.ref.inputs(spec)), spec.mode)
                if not _digests_agree(ref_digests[index], rounds.digest_values(outputs, self.ref.digest_seed))[0]:
                    continue
                tolerance = self._checked_tolerance(spec, tolerances[index], outputs)
                expected = rounds.sample_values(outputs, sample_seed)
                layout = rounds.layout_of(outputs)
                del outputs
                self._check_sampled(expected, self.fetch(index, expected, sample_seed, layout=layout), tolerance,
                                    sample_seed)
        finally:  # less the reads fetch credited already
            self._credit(time.monotonic() - started - (self.read_s - read_before))

    def reference_round(self, specs: list[CallSpec], pick: int, lates: list[float] | None = None,
                        flushes: list[float] | None = None, burst_cycles: int = 0,
                        starved: list[bool] | None = None, tolerances: Sequence[CallTolerance] | None = None
                        ) -> tuple[list[float], float, list[Any], list[Any]]:
        """The reference's round, in the runner's loop with the runner's per-call work (inputs made lazily, output
        digests; a timed round's inputs are not digested on either side), so both sides' wall time beyond their call
        times is comparable (a burst round, ``burst_cycles``, as the runner's: digests read back after the round).
        Keeps the digests of every call (``tolerances``: each call's, :func:`insert_hidden_calls`) and the outputs of
        call ``pick`` only."""
        model = self.ref.timed if self.ref.timed is not None else self.ref.model
        cfg, seed = self.cfg, self.ref.digest_seed
        picked: list[Any] = []
        start = rounds.start_reference_digests if burst_cycles else rounds.reference_digests

        def keep(index: int, inputs: Any, outputs: list[Any]) -> Any:
            if index == pick:
                picked.extend(outputs)
            scale, moved = tolerances[index] if tolerances else (1.0, None)
            return start(outputs, seed, cfg.atol * scale, cfg.rtol, moved)

        t0 = time.perf_counter()
        times, digests = rounds.run_round(model, rounds.LazyInputs(self.ref.module, specs, self.ref.device),
                                          [s.mode for s in specs], device=self.ref.device, flush=self.ref.flush,
                                          keep=keep, lates=lates, flushes=flushes, burst_cycles=burst_cycles,
                                          starved=starved)
        if burst_cycles:
            digests = [rounds.finish_digests(pending) for pending in digests]
        wall = (time.perf_counter() - t0) * 1e3
        return times, wall, digests, picked

    def check_round(self, answer: dict[str, Any], ref_digests: list[Any], pick: int,
                    picked: list[Any], tolerance: CallTolerance = (1.0, None),
                    unchecked: frozenset[int] = frozenset()) -> tuple[float, float]:
        """Every call's digests must agree with the reference's; call ``pick`` is compared element by element at
        positions chosen now that the round is over. Returns the wall ms of the judge's own sampling and of the
        runner's fetch (both count in the timing check). ``unchecked``: calls not compared (a hidden-set call whose
        reference output is not finite, as the plan skips one: a numerically stable kernel differs there from a
        reference that overflows, and was judged ``incorrect``, attacker review 22); the fetch is made alike."""
        for index, (claimed, expected) in enumerate(zip(answer["outputs"], ref_digests)):
            if index in unchecked:
                continue
            ok, why = _digests_agree(expected, claimed)
            if not ok:
                raise Verdict("incorrect", f"a timed call's output is wrong ({why}): outputs must be right on every "
                              "call, not only the checked ones")
        sample_seed = self._fresh_seed()
        t0 = time.perf_counter()
        expected, layout = rounds.sample_values(picked, sample_seed), rounds.layout_of(picked)
        t1 = time.perf_counter()
        fetched = self.fetch(pick, expected, sample_seed, layout=layout)
        t2 = time.perf_counter()
        if pick not in unchecked:
            self._check_sampled(expected, fetched, tolerance, sample_seed)
        if self.runner.memory is not None:  # read by the judge with the runner stopped: neither side's work
            return 0.0, 0.0  # (a judge's read of a strided output counted as the candidate's: hacked, review 26)
        return (t1 - t0) * 1e3, (t2 - t1) * 1e3

    def _check_sampled(self, expected: list[Any], fetched: list[Any], tolerance: CallTolerance,
                       sample_seed: int) -> None:
        """A timed call's outputs sampled at ``sample_seed``'s positions against the reference's, at the call's
        tolerance (a sparse set's moved-elements masks sampled at the same positions)."""
        scale, moved = tolerance
        if moved is not None:
            moved = dataclasses.replace(moved, masks=rounds.sample_masks(moved.masks, expected, sample_seed))
        comparison = C.compare_outputs(expected, fetched, self.cfg.atol * scale, self.cfg.rtol, moved=moved)
        if not comparison.ok:
            raise Verdict("incorrect", f"a timed call's output is wrong: {comparison.message}")

    def profile(self) -> dict[str, Any]:
        """PR from the runner's profiled calls, whose last output is checked like any call's: a module can tell
        that it is profiled, and a lazy one that launched only its own kernel then claimed PR ~1 (an RL-side review,
        2026-12-02). A wrong output there is the hack reason ``profile_mismatch``. On CPU (no device profile) only
        the output is checked."""
        spec = CallSpec(self._fresh_seed(), "eval")
        answer, _ = self._ask({"op": "profile", "call": spec.to_dict()})
        # sampled positions, chosen now, as the timing's check does: a whole 512 MB output through the pipe took
        # ~1 s; an answer wrong while profiled is wrong nearly everywhere
        sample_seed = self._fresh_seed()
        with self._own_gpu_work():
            outputs = self.ref.outputs(spec)
            expected, layout = rounds.sample_values(outputs, sample_seed), rounds.layout_of(outputs)
            del outputs
        fetched = self.fetch(0, expected, sample_seed, layout=layout)
        with self._own_gpu_work():
            comparison = C.compare_outputs(expected, fetched, self.cfg.atol, self.cfg.rtol)
        out: dict[str, Any] = {"profile_mismatch": not comparison.ok}
        if self.ref.device.type == "cuda":
            out["coverage"], out["profile"] = claimed_coverage(answer.get("kernels_ms"), self.own_names)
        return out


def claimed_coverage(table: Any, own_names: set[str]) -> tuple[float, list[dict[str, Any]]]:
    """PR from a runner's kernel table (a claim) and its top ten kernels.

    Each claim is capped (1e6 ms), so a sum of up to 2,000 stays finite (a claimed 1e308 once made PR NaN, and the
    reward raised on it). A table that is missing, malformed or claims no kernel time gives PR 0: none of the time is
    shown to be the candidate's own kernels' (it was ``None``, which PRS's default treats as a configuration error:
    one candidate that launched nothing while profiled stopped a whole training step, attacker review 2026-12-02).
    """
    from drk.gym.profiling import summarise_kernels

    if not isinstance(table, dict):
        return 0.0, []
    # a name is the runner's claim: one line of printable text (a newline in it forged a "Speedup ... 31.70x" line in
    # a correct result's feedback, attacker review 13)
    clean = {" ".join(str(k).split())[:200]: min(float(v), MAX_KERNEL_MS) for k, v in list(table.items())[:2000]
             if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0}
    prof = summarise_kernels(clean, own_names)
    coverage = prof.coverage if prof.coverage is not None and math.isfinite(prof.coverage) else 0.0
    return coverage, prof.kernels[:10]


# --- checks on the runner's claims ------------------------------------------------------------------------------


def _validate_round(answer: dict[str, Any], n: int) -> dict[str, Any]:
    times, outputs, inputs = answer.get("times_ms"), answer.get("outputs"), answer.get("inputs")
    lates, flushes = answer.get("late_ms"), answer.get("flush_ms")
    if not (isinstance(times, list) and isinstance(outputs, list) and isinstance(inputs, list)
            and isinstance(lates, list) and isinstance(flushes, list)):
        raise wire.WireError("malformed round answer")
    if not (len(times) == len(outputs) == len(inputs) == len(lates) == len(flushes) == n):
        raise wire.WireError("round answer has the wrong number of calls")
    # bounded, so that sums stay finite: claimed times of 1e308 ms summed to inf, and under the authors' policy the
    # mean of the gaps (-inf and +inf) raised in the judge, an uncharged env_error (attacker review 7, 2026-12-02)
    if not all(isinstance(t, (int, float)) and not isinstance(t, bool) and 0 <= t <= MAX_CLAIMED_MS
               for t in times + lates + flushes):
        raise wire.WireError("round answer has non-numeric, negative or impossible times")
    if not all(isinstance(o, list) for o in outputs) or not all(isinstance(i, list) for i in inputs):
        raise wire.WireError("malformed digests")
    return answer


def _digests_close(expected: list[Any], claimed: list[Any], seed: int, atol: float, rtol: float) -> tuple[bool, str]:
    """Whether ``claimed`` digests are those of outputs ``allclose`` to ``expected`` (see :func:`_digests_agree`)."""
    return _digests_agree(rounds.reference_digests(expected, seed, atol, rtol), claimed)


def _digests_agree(ref: list[dict[str, Any]], claimed: list[Any]) -> tuple[bool, str]:
    """Whether the runner's ``claimed`` digests can be those of outputs ``allclose`` to the reference's (``ref``:
    :func:`drk.gym.rounds.reference_digests`), with why not."""
    if not isinstance(claimed, list) or len(claimed) != len(ref):
        return False, f"{len(claimed) if isinstance(claimed, list) else '?'} outputs, expected {len(ref)}"
    for index, (mine, theirs) in enumerate(zip(ref, claimed)):
        if not isinstance(theirs, dict):
            return False, f"output {index}: malformed digest"
        if "dtype" not in mine:
            if theirs.get("value") != mine.get("value"):
                return False, f"output {index}: {theirs.get('value')!r} != {mine.get('value')!r}"
            continue
        if theirs.get("dtype") != mine["dtype"] or theirs.get("shape") != mine["shape"]:
            return False, f"output {index}: {theirs.get('dtype')}{theirs.get('shape')}, expected {mine['dtype']}{mine['shape']}"
        if theirs.get("nonfinite") != mine.get("nonfinite"):
            return False, f"output {index}: its NaN/inf elements are not the reference's"
        sums = theirs.get("sums")
        if not (isinstance(sums, list) and len(sums) == 2
                and all(isinstance(s, (int, float)) and not isinstance(s, bool) and math.isfinite(s) for s in sums)):
            return False, f"output {index}: not finite"
        if not all(isinstance(s, (int, float)) for s in mine["sums"]):
            return False, f"output {index}: the reference's output is not finite"
        bounds = (mine["bound"], mine["wbound"])  # plain, weighted (rounds.reference_digests)
        if any(abs(float(a) - float(b)) > bound for a, b, bound in zip(sums, mine["sums"], bounds)):
            return False, f"output {index}: checksum off by more than the tolerance allows"
    return True, ""


def _layout_mismatch(expected: list[Any], claimed: Any) -> str:
    """'' when the runner's claimed output layout (count, dtype, shape) matches the reference's, else why not."""
    if not isinstance(claimed, list) or len(claimed) != len(expected):
        return f"expected {len(expected)} outputs, got {len(claimed) if isinstance(claimed, list) else '?'}"
    for index, (exp, got) in enumerate(zip(expected, claimed)):
        if not isinstance(exp, torch.Tensor):
            continue
        want = (str(exp.dtype).removeprefix("torch."), list(exp.shape))
        have = (got.get("dtype"), got.get("shape")) if isinstance(got, dict) else (None, None)
        if have[1] != want[1]:
            return f"output {index}: shape {tuple(have[1]) if isinstance(have[1], list) else have[1]}, expected {tuple(want[1])}"
        if have[0] != want[0]:
            return f"output {index}: dtype torch.{have[0]}, expected torch.{want[0]} (the reference's)"
    return ""


def _same_digests(mine: list[dict[str, Any]], theirs: Any) -> bool:
    return isinstance(theirs, list) and len(theirs) == len(mine) and all(
        isinstance(t, dict) and t.get("dtype") == m.get("dtype") and t.get("shape") == m.get("shape")
        and t.get("value") == m.get("value") and t.get("sums") == m.get("sums")
        and t.get("nonfinite") == m.get("nonfinite") for m, t in zip(mine, theirs))


def _near_zero(values: list[Any], cfg: EvalConfig) -> bool:
    """True when all-zero outputs would pass as ``values`` (then a no-op probe cannot tell anything)."""
    tensors = [v for v in values if isinstance(v, torch.Tensor)]
    return bool(tensors) and all(C.near_zero(t, cfg.atol, cfg.rtol) for t in tensors)


def _launch_counts(claimed: Any) -> dict[str, int]:
    """Kernel name -> launches, from the runner's claim for one pass (malformed entries dropped)."""
    if not isinstance(claimed, dict):
        return {}
    return {str(name)[:100]: n for name, n in list(claimed.items())[:100] if isinstance(n, int) and n > 0}


def _launch_counts_all(per_pass: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for claimed in list(per_pass.values())[:10]:
        for name, n in _launch_counts(claimed).items():
            counts[name] = counts.get(name, 0) + n
    return counts


def _iqr(samples: list[float]) -> float:
    if len(samples) < 4:
        return max(samples) - min(samples) if samples else 0.0
    q = statistics.quantiles(samples, n=4)
    return q[2] - q[0]


def _hack_message(reasons: list[str]) -> str:
    explain = {
        "decoy": "your Triton kernels were never launched: with them disabled the outputs are still right",
        "no_effect": "the outputs are still right when your Triton kernels do nothing: they do not compute the result",
        "fallback": "the outputs are still right when your Triton kernels fail: the forward falls back to other code",
        "timing_mismatch": "the times your process reported do not account for the time the calls took",
        "profile_mismatch": "your code computed a wrong result while it was profiled: it behaves differently then",
        "tamper": "the code replaced or inspected functions of torch/triton/time, caller frames or the garbage collector",
        "model_subclass": "ModelNew derives from the reference Model",
        "torch_compile": "torch.compile writes the kernels, not your code",
        "native_code": "the code loads native (non-Triton) GPU code",
    }
    return "; ".join(explain.get(r, r) for r in reasons)


def _format_exception(exc: BaseException, path: str) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return text[-2000:]
