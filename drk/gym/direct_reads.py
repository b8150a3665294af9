"""The judge reads a call's outputs from the candidate's memory itself, with the candidate's processes stopped.

Why: the runner lives in the candidate's process, so any answer it gives is produced by code the candidate can
replace. A runner whose ``fetch`` was wrapped rewrote each output with the exact answer just before the judge read
it, while the kernel's own outputs were four tolerances off at every element of every call: ``correct`` on CPU and
GPU (``attack_lazy_fetch``, session 32). Asked for values, a candidate computes them at the asking; read from its
memory while it cannot run, it is held to what it had written when its call's round ended.

How: after a round (the runner's ``go`` or ``profile``) the runner says where each output tensor lies (its address,
strides, shape and dtype: a claim, like everything it says) and commits to its elements' bytes (SHA-256, taken as
the answer is made). The judge stops every process of the candidate's sandbox (``SIGSTOP`` to the descendants of
the PID namespace's init, the runner first, until every *thread* of each is stopped) as soon as the answer arrives,
reads the bytes with ``process_vm_readv(2)`` (never more than the reference's layout holds), checks them against
the commitment, and lets the processes go on (``SIGCONT``) only with its next request. Whatever memory the claim
names, its content is what the candidate had written before it answered: bytes written after the answer break the
commitment, whenever they ran (attacker review 25: a helper whose leader thread had exited, a thread resumed by its
tracer and a runner that rewrote its outputs between its answer and its stop all got ``correct`` without it), and
rewriting outputs before the answer costs time inside the round, where the judge's clock is.

Where it works: CPU tensors (the Triton interpreter), when the judge may read the runner's memory (root, or the owner
of the sandbox's user namespace; :meth:`SandboxMemory.available` checks this on the runner's own executable, which
the candidate cannot unmap and live). Elsewhere the runner's ``fetch`` answers, as before: CUDA outputs need the
device's own sharing of memory between processes (CUDA IPC), not built yet.
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
import signal
import sys
import time
from typing import Any

import numpy as np
import torch

from drk.gym import wire

#: Bytes one process_vm_readv call moves at most (it may move less; the rest is asked for again).
_CHUNK_BYTES = 1 << 26
#: How long the judge waits for every process of a sandbox to be stopped before it reads.
STOP_WAIT_S = 2.0
#: Remote pieces per process_vm_readv call (the kernel's IOV_MAX).
_IOV_MAX = 1024


class UnreadableOutput(wire.WireError):
    """The runner's claim about where an output lies cannot be read or does not describe it: a broken protocol (an
    honest runner names the tensor its call returned)."""


class _Iovec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.process_vm_readv.restype = ctypes.c_ssize_t


def commitment(value: torch.Tensor) -> str:
    """SHA-256 of a tensor's elements' bytes in logical (row-major) order: what the runner commits to and the judge
    checks. Hashed in place where the tensor is contiguous: a copy of each output, allocated and freed as the answer
    was made, changed which freed block the runner's NaN poison filled, and a probe call's unwritten output came back
    holding the previous call's answer (CI, session 32)."""
    flat = value.detach()
    flat = (flat if flat.is_contiguous() else flat.contiguous()).reshape(-1)
    return hashlib.sha256(flat.view(torch.uint8).numpy() if flat.numel() else b"").hexdigest()


def location(value: Any) -> dict[str, Any]:
    """(Runner side) where an output lies: a CPU tensor's address of element 0, strides, shape and dtype, and the
    :func:`commitment` of its elements as they are when the answer is made; or a scalar's value. A CUDA tensor gets
    an empty description (read through ``fetch``)."""
    if isinstance(value, torch.Tensor):
        if value.device.type != "cpu" or value.layout != torch.strided:
            return {}
        return {"ptr": int(value.data_ptr()), "strides": [int(s) for s in value.stride()],
                "shape": list(value.shape), "dtype": str(value.dtype).removeprefix("torch."),
                "sha256": commitment(value)}
    return wire.scalar_meta(value)


def resolved(outputs: list[list[Any]]) -> list[list[Any]]:
    """(Runner side) every output of a round with torch's lazy negation and conjugation applied: such a view's
    memory holds the values before them, so a judge reading memory saw other values than the view's (an honest
    ``view_as_complex(buf).conj().imag`` was a false ``runtime_error``, attacker review 26). The runner keeps these."""
    return [[v.resolve_conj().resolve_neg() if isinstance(v, torch.Tensor) and (v.is_conj() or v.is_neg()) else v
             for v in out] for out in outputs]


def locations(outputs: list[list[Any]]) -> list[list[dict[str, Any]]]:
    """(Runner side) :func:`location` of every output of every call of a round."""
    return [[location(v) for v in out] for out in outputs]


def read_runs(pid: int, runs: np.ndarray | list[tuple[int, int]]) -> bytearray:
    """The bytes of process ``pid``'s memory at ``runs`` (rows of address, length), concatenated, read
    :data:`_IOV_MAX` runs at a time from one array of iovecs (no Python object per run: a claim of 2**17 one-element
    runs took 0.44 s of the judge's time that way, attacker review 26). Raises OSError with the call's errno, or on a
    short read."""
    table = np.ascontiguousarray(np.asarray(runs, dtype=np.uint64).reshape(-1, 2))
    if int(table[:, 1].max(initial=0)) > _CHUNK_BYTES:  # long runs in pieces the call can take at once
        pieces = [(int(a) + at, min(_CHUNK_BYTES, int(n) - at)) for a, n in table for at in range(0, int(n), _CHUNK_BYTES)]
        table = np.ascontiguousarray(np.asarray(pieces, dtype=np.uint64).reshape(-1, 2))
    total = int(table[:, 1].sum())
    buffer = bytearray(total)
    if total == 0:
        return buffer
    base = ctypes.addressof((ctypes.c_char * total).from_buffer(buffer))
    done = 0
    for start in range(0, len(table), _IOV_MAX):
        batch = table[start:start + _IOV_MAX]
        want = int(batch[:, 1].sum())
        local = _Iovec(base + done, want)
        got = _libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.c_void_p(batch.ctypes.data), len(batch), 0)
        if got != want:
            err = ctypes.get_errno() if got < 0 else 0
            raise OSError(err, os.strerror(err) if err else f"read {got} of {want} bytes")
        done += want
    return buffer


def read_bytes(pid: int, address: int, nbytes: int) -> bytearray:
    """``nbytes`` of process ``pid``'s memory from ``address``."""
    return read_runs(pid, [(address, nbytes)])


def _element_offsets(shape: list[int], strides: list[int]) -> torch.Tensor:
    """Every element's offset from element 0, in elements, in logical order (int64, one per element)."""
    offsets = torch.zeros((), dtype=torch.int64)
    for size, stride in zip(shape, strides):
        offsets = offsets.unsqueeze(-1) + torch.arange(size, dtype=torch.int64) * stride
    return offsets.reshape(-1)


def tensor_at(pid: int, where: dict[str, Any], dtype: torch.dtype, shape: list[int] | tuple[int, ...]
              ) -> torch.Tensor:
    """A copy of the tensor of ``dtype`` and ``shape`` that ``where`` (:func:`location`) says lies in ``pid``'s
    memory: never more bytes read or held than the elements' own (a claim spread thin is read run by run; an
    honest ``buf[:, 0]`` of a wide buffer spans 32 times its elements). Raises :class:`UnreadableOutput` when the
    claim is malformed or cannot be read."""
    ptr, strides = where.get("ptr"), where.get("strides")
    shape = list(shape)
    if not (isinstance(ptr, int) and not isinstance(ptr, bool) and ptr >= 0 and isinstance(strides, list)
            and len(strides) == len(shape) and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**48
                                                   for s in strides)):
        raise UnreadableOutput("its runner described the output's memory in a malformed way")
    numel = math.prod(shape)
    if numel == 0:  # nothing to read (torch gives an empty tensor address 0: review 26, a false runtime_error)
        return torch.empty(shape, dtype=dtype)
    if ptr == 0:
        raise UnreadableOutput("its runner described the output's memory in a malformed way")
    element = torch.empty((), dtype=dtype).element_size()
    span = 1 + sum((size - 1) * stride for size, stride in zip(shape, strides))
    try:
        if span <= numel:  # dense (or overlapping: expanded): one read of the span
            flat = torch.frombuffer(read_bytes(pid, ptr, span * element), dtype=dtype)
            return torch.as_strided(flat, shape, strides).contiguous()
        offsets = _element_offsets(shape, strides)
        unique, inverse = torch.unique(offsets, sorted=True, return_inverse=True)
        breaks = torch.nonzero(unique[1:] - unique[:-1] != 1).reshape(-1) + 1
        starts = torch.cat([torch.zeros(1, dtype=torch.int64), breaks])
        ends = torch.cat([breaks, torch.tensor([unique.numel()])])
        runs = torch.stack([ptr + unique[starts] * element, (ends - starts) * element], dim=1).numpy()
        packed = torch.frombuffer(read_runs(pid, runs), dtype=dtype)
        return packed[inverse].reshape(shape)
    except OSError as exc:
        raise UnreadableOutput(f"the output's memory cannot be read where its runner said it is ({exc.strerror})"
                               ) from None
    except (RuntimeError, ValueError, OverflowError, MemoryError) as exc:
        raise UnreadableOutput(f"the output's description cannot be read ({type(exc).__name__})") from None


def _children(pid: int) -> list[int]:
    """``pid``'s children, from ``/proc/<pid>/task/*/children`` or, on a kernel without it, a scan of every
    process's parent."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(p) for p in handle.read().split()]
        return found
    except FileNotFoundError:
        pass
    except (OSError, ValueError):
        return found
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    if int(handle.read().rsplit(b")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return found


def _descendants(root: int) -> list[int]:
    seen, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.append(pid)
        todo += _children(pid)
    return seen


#: /proc states of a thread that runs no code: stopped, traced-stopped, zombie, dead.
_STOPPED = frozenset("TtZXx")


def _stat_state(path: str) -> str:
    """The state letter of a ``/proc/.../stat`` file, read as bytes (a process names itself: ``/proc/self/comm``
    may hold any bytes, and a strict UTF-8 read of them made the judge's freeze raise, an uncharged ``env_error``,
    attacker review 25); "X" when it is gone, "?" (running, as far as the judge knows) when it cannot be parsed."""
    try:
        with open(path, "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0].decode("ascii", "replace")
    except FileNotFoundError:
        return "X"
    except (OSError, IndexError, ValueError):
        return "?"


def _threads_stopped(pid: int) -> bool:
    """Whether every thread of process ``pid`` runs no code. The leader's state is not the process's: a leader that
    has exited reads ``Z`` while its other threads run, and a thread traced by another process can be resumed out
    of the group stop while its leader reads ``T`` (attacker review 25, both ``correct``)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return True  # gone
    except OSError:
        return False
    return all(_stat_state(f"/proc/{pid}/task/{tid}/stat") in _STOPPED for tid in tasks)


def _pid_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


class SandboxMemory:
    """The candidate's sandbox seen from the judge: its processes stopped and resumed, its runner's memory read.

    ``outer_pid`` is the process the sandbox was started as (bubblewrap's outer process, or the runner itself
    without bubblewrap). The runner is the first process inside the sandbox's PID namespace (bubblewrap's init
    starts it), found from ``/proc``, never from what the runner says."""

    def __init__(self, outer_pid: int) -> None:
        self.outer_pid = outer_pid
        self.frozen: list[int] = []
        self._root, self.runner_pid = self._find_runner()  # the sandbox is up: the runner has said hello
        self._available: bool | None = None

    def _find_runner(self) -> tuple[int, int]:
        """(the sandbox's root process, the runner's pid), both as the judge sees them."""
        outer_ns = _pid_namespace(self.outer_pid)
        for child in _children(self.outer_pid):
            if _pid_namespace(child) != outer_ns:  # bubblewrap's init, pid 1 of the sandbox's namespace
                inner = _children(child)
                return child, (min(inner) if inner else child)
        return self.outer_pid, self.outer_pid  # no namespace of its own: the process is the runner

    def available(self) -> bool:
        """Whether the judge can read the runner's memory here: the process found must run this interpreter, and the
        first bytes of its executable's first mapping must read as an ELF header (a process cannot unmap its own
        program and go on running). Checked once."""
        if self._available is None:
            self._available = self._check()
        return self._available

    def _check(self) -> bool:
        try:
            exe = os.readlink(f"/proc/{self.runner_pid}/exe")
            if exe != os.path.realpath(sys.executable):  # not the runner (bubblewrap's own process, say)
                return False
            with open(f"/proc/{self.runner_pid}/maps") as handle:
                for line in handle:
                    fields = line.split()
                    if len(fields) >= 6 and fields[-1] == exe and fields[2] == "00000000":
                        start = int(fields[0].split("-")[0], 16)
                        return bytes(read_bytes(self.runner_pid, start, 4)) == b"\x7fELF"
        except (OSError, ValueError):
            return False
        return False

    def freeze(self) -> None:
        """Stop every process of the sandbox, the runner first, and wait until every thread of each is stopped,
        sending ``SIGSTOP`` to all of them again until then: a thread the candidate traces (``ptrace``) from
        another of its processes can be resumed by that tracer, but not once the tracer is stopped too; a process
        whose leader thread has exited still takes the signal. Done after two walks alike in which every process
        was stopped, so a child forked before its parent's stop is in the second. Raises
        :class:`UnreadableOutput` when they cannot all be stopped within :data:`STOP_WAIT_S`. Whatever runs
        between the runner's answer and its stop, the answer's :func:`commitment` shows what it wrote."""
        deadline = time.monotonic() + STOP_WAIT_S
        settled: list[int] | None = None  # the processes of the last pass in which all were stopped
        while True:
            pids = [self.runner_pid] + [p for p in _descendants(self._root) if p != self.runner_pid]
            running = []
            for pid in pids:
                if pid not in self.frozen:
                    self.frozen.append(pid)
                try:
                    os.kill(pid, signal.SIGSTOP)
                except (ProcessLookupError, PermissionError):
                    continue
            for pid in pids:
                if not _threads_stopped(pid):
                    running.append(pid)
            # done after two passes alike with all stopped: a process that forks and exits at once was never in
            # one walk's list (running 2 ms after 15-40 freezes in 100, attacker review 26); its child is in the next
            if not running and sorted(pids) == settled:
                return
            settled = None if running else sorted(pids)
            if not running:
                continue
            if time.monotonic() > deadline:
                raise UnreadableOutput(f"{len(running)} of the candidate's processes could not be stopped for the "
                                       "judge's reads")
            time.sleep(0.0002)

    def thaw(self) -> None:
        """Let the sandbox's processes run again."""
        for pid in self.frozen:
            try:
                os.kill(pid, signal.SIGCONT)
            except (ProcessLookupError, PermissionError):
                pass
        self.frozen = []

    def read(self, where: dict[str, Any], like: torch.Tensor) -> torch.Tensor:
        """The tensor the runner described (:func:`location`), read from its memory: it must have ``like``'s dtype
        and shape (the reference's whole output: a sampled check reads the whole claim and samples it here, so a
        claim can never make the judge hold more than a right answer's size), and the elements read must be those
        the runner committed to in its answer (bytes written after the answer, whenever they ran, break it)."""
        shape, dtype = where.get("shape"), where.get("dtype")
        if shape != list(like.shape):
            raise UnreadableOutput(f"its runner described an output of shape {shape}, the reference's is "
                                   f"{list(like.shape)}")
        if dtype != str(like.dtype).removeprefix("torch."):
            raise UnreadableOutput(f"its runner described a {dtype} output, the reference's is {like.dtype}")
        value = tensor_at(self.runner_pid, where, like.dtype, list(like.shape))
        if where.get("sha256") != commitment(value):
            raise UnreadableOutput("the output's bytes are not those its runner's answer committed to: it changed "
                                   "after the answer")
        return value
