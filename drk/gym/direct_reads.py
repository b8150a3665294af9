"""The judge reads a call's outputs from the candidate's memory itself, with the candidate's processes stopped.

Why: the runner lives in the candidate's process, so any answer it gives is produced by code the candidate can
replace. A runner whose ``fetch`` was wrapped rewrote each output with the exact answer just before the judge read
it, while the kernel's own outputs were four tolerances off at every element of every call: ``correct`` on CPU and
GPU (``attack_lazy_fetch``, session 32). Asked for values, a candidate computes them at the asking; read from its
memory while it cannot run, it is held to what it had written when its call's round ended.

How: after a round (the runner's ``go`` or ``profile``) the runner says where each output tensor lies (its address
and strides: a claim, like everything it says). The judge stops every process of the candidate's sandbox
(``SIGSTOP``: its PID namespace's processes, all descendants of the namespace's init) as soon as the answer
arrives, reads the bytes with ``process_vm_readv(2)`` while they are stopped, and lets them go on
(``SIGCONT``) only with its next request. Whatever memory the claim names, its content is what the candidate had
written before it answered: rewriting outputs right costs time inside the round, where the judge's clock is.

Where it works: CPU tensors (the Triton interpreter), when the judge may read the runner's memory (root, or the owner
of the sandbox's user namespace; :meth:`SandboxMemory.available` checks this on the runner's own executable, which
the candidate cannot unmap and live). Elsewhere the runner's ``fetch`` answers, as before: CUDA outputs need the
device's own sharing of memory between processes (CUDA IPC), not built yet.
"""

from __future__ import annotations

import ctypes
import math
import os
import signal
import sys
import time
from typing import Any

import torch

from drk.gym import rounds, wire

#: Bytes one process_vm_readv call moves at most (it may move less; the rest is asked for again).
_CHUNK_BYTES = 1 << 26
#: How long the judge waits for every process of a sandbox to be stopped before it reads.
STOP_WAIT_S = 2.0
#: A tensor's memory span may exceed its elements' bytes (strided views) by this factor before the judge refuses it.
SPAN_FACTOR = 16


class UnreadableOutput(wire.WireError):
    """The runner's claim about where an output lies cannot be read or does not describe it: a broken protocol (an
    honest runner names the tensor its call returned)."""


class _Iovec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.process_vm_readv.restype = ctypes.c_ssize_t


def location(value: Any) -> dict[str, Any]:
    """(Runner side) where an output lies: a CPU tensor's address of element 0, strides, shape and dtype, or a
    scalar's value. A CUDA tensor gets an empty description (read through ``fetch``)."""
    if isinstance(value, torch.Tensor):
        if value.device.type != "cpu" or value.layout != torch.strided:
            return {}
        return {"ptr": int(value.data_ptr()), "strides": [int(s) for s in value.stride()],
                "shape": list(value.shape), "dtype": str(value.dtype).removeprefix("torch.")}
    return {"value": value if isinstance(value, (int, float, bool)) or value is None else repr(value)[:200]}


def locations(outputs: list[list[Any]]) -> list[list[dict[str, Any]]]:
    """(Runner side) :func:`location` of every output of every call of a round."""
    return [[location(v) for v in out] for out in outputs]


def read_bytes(pid: int, address: int, nbytes: int) -> bytearray:
    """``nbytes`` of process ``pid``'s memory from ``address`` (raises OSError with the call's errno)."""
    buffer = bytearray(nbytes)
    if nbytes == 0:
        return buffer
    base = ctypes.addressof((ctypes.c_char * nbytes).from_buffer(buffer))
    done = 0
    while done < nbytes:
        want = min(_CHUNK_BYTES, nbytes - done)
        local = _Iovec(base + done, want)
        remote = _Iovec(address + done, want)
        got = _libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        if got <= 0:
            err = ctypes.get_errno() if got < 0 else 0
            raise OSError(err, os.strerror(err) if err else "nothing read")
        done += got
    return buffer


def tensor_at(pid: int, where: dict[str, Any], dtype: torch.dtype, shape: list[int] | tuple[int, ...]
              ) -> torch.Tensor:
    """A copy of the tensor of ``dtype`` and ``shape`` that ``where`` (:func:`location`) says lies in ``pid``'s
    memory. Raises :class:`UnreadableOutput` when the claim cannot be read or spans too much memory."""
    ptr, strides = where.get("ptr"), where.get("strides")
    if not (isinstance(ptr, int) and not isinstance(ptr, bool) and ptr > 0 and isinstance(strides, list)
            and len(strides) == len(shape) and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                                   for s in strides)):
        raise UnreadableOutput("its runner described the output's memory in a malformed way")
    numel = 1
    for size in shape:
        numel *= size
    element = torch.empty((), dtype=dtype).element_size()
    if numel == 0:
        return torch.empty(shape, dtype=dtype)
    span = 1 + sum((size - 1) * stride for size, stride in zip(shape, strides))
    if span > SPAN_FACTOR * numel + 1024:
        raise UnreadableOutput(f"the output spans {span} elements of memory for {numel} values")
    try:
        raw = read_bytes(pid, ptr, span * element)
    except OSError as exc:
        raise UnreadableOutput(f"the output's memory cannot be read where its runner said it is ({exc.strerror})"
                               ) from None
    flat = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
    return torch.as_strided(flat, list(shape), strides).contiguous()  # a private buffer: no copy when dense


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
                with open(f"/proc/{entry}/stat") as handle:
                    if int(handle.read().rsplit(")", 1)[1].split()[1]) == pid:
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


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "X"  # gone


#: /proc states of a process that runs no code: stopped, traced-stopped, zombie, dead.
_STOPPED = frozenset("TtZXx")


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
        """Stop every process of the sandbox and wait until each is stopped, sending ``SIGSTOP`` again to any that
        is not: a process the candidate traces (``ptrace``) from another of its processes can have its stop
        swallowed by that tracer, but not once the tracer is stopped too. New processes are stopped as they
        appear. Raises :class:`UnreadableOutput` when they cannot all be stopped within :data:`STOP_WAIT_S`."""
        deadline = time.monotonic() + STOP_WAIT_S
        while True:
            running = []
            for pid in _descendants(self._root):
                if pid not in self.frozen:
                    self.frozen.append(pid)
                if _state(pid) not in _STOPPED:
                    running.append(pid)
                    try:
                        os.kill(pid, signal.SIGSTOP)
                    except (ProcessLookupError, PermissionError):
                        pass
            if not running:
                return
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

    def read(self, where: dict[str, Any], expected: torch.Tensor, sampled: bool) -> torch.Tensor:
        """The tensor the runner described (:func:`location`), read from its memory: of ``expected``'s dtype and
        shape, or with ``sampled`` (``expected`` is :func:`drk.gym.rounds.sample_values` of the reference's output)
        of its dtype and of a size it can be sampled from, flattened."""
        shape, dtype = where.get("shape"), where.get("dtype")
        if not (isinstance(shape, list) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                                                for n in shape)):
            raise UnreadableOutput("its runner described the output's shape in a malformed way")
        if dtype != str(expected.dtype).removeprefix("torch."):
            raise UnreadableOutput(f"its runner described a {dtype} output, the reference's is {expected.dtype}")
        numel = math.prod(shape)
        if sampled:
            fits = numel == expected.numel() if numel <= rounds.SAMPLE_ELEMENTS else \
                expected.numel() == rounds.SAMPLE_ELEMENTS
            if not fits:
                raise UnreadableOutput(f"its runner described {numel} values where the reference has others")
            return tensor_at(self.runner_pid, where, expected.dtype, shape).reshape(-1)
        if shape != list(expected.shape):
            raise UnreadableOutput(f"its runner described an output of shape {shape}, the reference's is "
                                   f"{list(expected.shape)}")
        return tensor_at(self.runner_pid, where, expected.dtype, shape)
