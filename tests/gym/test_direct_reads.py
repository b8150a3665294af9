"""The judge's own reads of a runner's outputs (drk.gym.direct_reads): what a claim about an output's memory may
say, and the sandbox's processes stopped while the judge reads."""

import os
import subprocess
import sys
import time

import pytest
import torch

from drk.gym import direct_reads as D
from drk.gym import wire

# a process that holds twelve float32 values, says where, forks a child and waits
HOLDER = r"""
import ctypes, os, sys, time
x = (ctypes.c_float * 12)(*range(12))
child = os.fork()
if child == 0:
    time.sleep(60); os._exit(0)
print(ctypes.addressof(x), child, flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def holder():
    proc = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    ptr, child = (int(v) for v in proc.stdout.readline().split())
    yield proc, ptr, child
    for pid in (child, proc.pid):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    proc.wait()


def _can_read_children() -> bool:
    proc = subprocess.Popen([sys.executable, "-c", "print(1, flush=True); import sys; sys.stdin.readline()"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        proc.stdout.readline()  # running python, not the fork before it
        return D.SandboxMemory(proc.pid).available()
    finally:
        proc.kill()
        proc.wait()


needs_reads = pytest.mark.skipif(not _can_read_children(), reason="this machine does not let a process read "
                                                                  "its child's memory (process_vm_readv)")


def test_location_says_where_a_cpu_tensor_lies_and_gives_scalars_as_values():
    x = torch.zeros(2, 5)[:, 1:]
    assert D.location(x) == {"ptr": x.data_ptr(), "strides": [5, 1], "shape": [2, 4], "dtype": "float32"}
    assert D.location(3.5) == {"value": 3.5}
    assert D.location(object())["value"].startswith("<object")


def test_a_tensor_is_read_back_with_its_strides_from_this_process():
    base = torch.randn(6, 8)
    view = base.t()[2:5]  # strided, not contiguous
    got = D.tensor_at(os.getpid(), D.location(view), view.dtype, list(view.shape))
    assert torch.equal(got, view) and got.is_contiguous()
    empty = torch.empty(0, 3)
    assert D.tensor_at(os.getpid(), {"ptr": 1, "strides": [3, 1]}, empty.dtype, [0, 3]).shape == (0, 3)


@pytest.mark.parametrize("where", [{}, {"ptr": "1", "strides": [1]}, {"ptr": 4096, "strides": [-1]},
                                   {"ptr": 4096, "strides": [1, 1]}, {"ptr": True, "strides": [1]}])
def test_a_malformed_claim_is_a_broken_protocol(where):
    with pytest.raises(wire.WireError):
        D.tensor_at(os.getpid(), where, torch.float32, [4])


def test_an_address_that_cannot_be_read_or_a_span_too_wide_is_refused():
    with pytest.raises(D.UnreadableOutput, match="cannot be read"):
        D.tensor_at(os.getpid(), {"ptr": 8, "strides": [1]}, torch.float32, [16])
    x = torch.zeros(4)
    with pytest.raises(D.UnreadableOutput, match="spans"):  # four values claimed to lie 10**7 elements apart
        D.tensor_at(os.getpid(), {"ptr": x.data_ptr(), "strides": [10**7]}, torch.float32, [4])


@needs_reads
def test_the_judge_reads_a_stopped_process_and_every_process_it_started_stops_with_it(holder):
    proc, ptr, child = holder
    memory = D.SandboxMemory(proc.pid)  # no namespace of its own: the process is the runner
    assert memory.runner_pid == proc.pid and memory.available()
    memory.freeze()
    try:
        assert set(memory.frozen) >= {proc.pid, child}
        assert D._state(proc.pid) in "Tt" and D._state(child) in "Tt"
        where = {"ptr": ptr, "strides": [4, 1], "shape": [3, 4], "dtype": "float32"}
        right = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        assert torch.equal(memory.read(where, right, sampled=False), right)
        assert torch.equal(memory.read(where, right.reshape(-1), sampled=True), right.reshape(-1))
    finally:
        memory.thaw()
    deadline = time.monotonic() + 2
    while D._state(proc.pid) in "Tt" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert D._state(proc.pid) not in "Tt" and D._state(child) not in "Tt" and memory.frozen == []


@needs_reads
def test_a_process_that_does_not_stop_is_stopped_again_and_then_the_reads_are_refused(holder, monkeypatch):
    proc, _, child = holder
    memory = D.SandboxMemory(proc.pid)
    sent = []
    monkeypatch.setattr(D.os, "kill", lambda pid, sig: sent.append((pid, sig)))  # signals that never land
    monkeypatch.setattr(D, "STOP_WAIT_S", 0.05)
    with pytest.raises(D.UnreadableOutput, match="could not be stopped"):
        memory.freeze()
    stops = [pid for pid, sig in sent if sig == D.signal.SIGSTOP]
    assert stops.count(proc.pid) > 1 and stops.count(child) > 1  # sent again while they ran


@needs_reads
@pytest.mark.parametrize("claim, why", [({"shape": [4, 3]}, "shape"), ({"dtype": "float64"}, "float64"),
                                        ({"shape": [3, "4"]}, "malformed"), ({"shape": [2, 4]}, "shape")])
def test_a_claim_that_does_not_describe_the_reference_s_layout_is_refused(holder, claim, why):
    proc, ptr, _ = holder
    memory = D.SandboxMemory(proc.pid)
    where = {"ptr": ptr, "strides": [4, 1], "shape": [3, 4], "dtype": "float32", **claim}
    right = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    with pytest.raises(D.UnreadableOutput, match=why):
        memory.read(where, right, sampled=False)
    if claim.get("shape") == [2, 4]:  # fewer values than the reference's: not a sample of it either
        with pytest.raises(D.UnreadableOutput, match="values"):
            memory.read(where, right.reshape(-1), sampled=True)


def test_children_are_found_without_procs_children_files(holder, monkeypatch):
    proc, _, child = holder
    assert D._children(proc.pid) == [child]
    real_listdir = os.listdir
    monkeypatch.setattr(D.os, "listdir", lambda path: (_ for _ in ()).throw(FileNotFoundError(path))
                        if path.endswith("/task") else real_listdir(path))
    assert D._children(proc.pid) == [child]  # a kernel without /proc/<pid>/task/*/children: the parents' scan


def test_a_process_that_is_not_this_interpreter_is_not_read():
    """bubblewrap's own process (or any other program) is never taken for the runner: its memory holds no output."""
    proc = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.2)
        assert not D.SandboxMemory(proc.pid).available()
    finally:
        proc.kill()
        proc.wait()
