"""Which memory can a judge and a sandboxed GPU runner share without CUDA IPC? A feasibility probe for direct reads
of CUDA outputs.

Legacy CUDA IPC handles do not open across our sandbox (``benchmarks/cuda_ipc_probe.py``: "mapping of buffer object
failed" at the ``uid`` and ``namespace`` levels, an H200, session 33): the handle names the exporting process, which
lives in another PID namespace. Two kinds of shared memory name no process, only a file descriptor, and a file
descriptor crosses bubblewrap (inherited, or sent over a Unix socket with ``SCM_RIGHTS``):

* ``host``: a ``memfd`` the judge creates (the way the output area of ``drk.gym.wire`` is made), mapped by a
  sandboxed child that pins it (``cudaHostRegister``) and copies a CUDA tensor into it. Printed: whether the pin
  works in the sandbox, the copy's time, the child's SHA-256 of it (what a commitment to a round's outputs would
  cost), and whether the judge reads the right values.
* ``vmm``: a device allocation made with the driver's virtual-memory API (``cuMemCreate`` with a POSIX file
  descriptor as its shareable handle), exported by the child (``cuMemExportToShareableHandle``), sent to the judge
  with ``SCM_RIGHTS``, imported and mapped there (``cuMemImportFromShareableHandle``, ``cuMemMap``). Printed: whether
  each step works, the judge's full read time, and whether a later write of the child shows through (it must, for a
  read after a stop to mean anything).
* ``torch``: no allocation of the probe's own. The child runs torch's caching allocator with expandable segments
  (``PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True``: segments made with ``cuMemCreate``), computes a tensor the
  usual way, and exports the physical allocations under it (``cuMemGetAddressRange`` and
  ``cuMemRetainAllocationHandle`` piece by piece, each as a file descriptor); the judge maps the pieces side by
  side and reads the tensor at its offset. This is what reading a module's own outputs would take.

    python benchmarks/gpu_shared_memory_probe.py                  # levels uid, namespace, process; 256 MiB
    python benchmarks/gpu_shared_memory_probe.py --mb 1024 --levels namespace --kinds vmm,torch

One line per (kind, level). Without CUDA it says so and exits 0. Nothing here is used by ``drk.gym`` yet: its lines
decide how the judge could read a GPU runner's outputs itself (docs/environment.md, What remains).
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import os
import socket
import subprocess
import sys
import time

#: The driver's virtual-memory API through ctypes (the same code runs in the child, sent as its source).
DRIVER = r"""
import ctypes

cuda = ctypes.CDLL("libcuda.so.1")
POSIX_FD, PINNED, ON_DEVICE, READ_WRITE = 1, 1, 1, 3


class Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class AllocationProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", ctypes.c_ubyte * 8)]


class AccessDesc(ctypes.Structure):
    _fields_ = [("location", Location), ("flags", ctypes.c_int)]


def check(name, *args):
    code = getattr(cuda, name)(*args)
    if code != 0:
        raise RuntimeError(f"{name} returned {code}")


def prop(device):
    p = AllocationProp()
    p.type, p.requestedHandleTypes, p.location = PINNED, POSIX_FD, Location(ON_DEVICE, device)
    return p


def rounded(size, device):
    granularity = ctypes.c_size_t()
    check("cuMemGetAllocationGranularity", ctypes.byref(granularity), ctypes.byref(prop(device)), 0)
    g = granularity.value
    return (size + g - 1) // g * g


def map_handle(handle, size, device):
    address = ctypes.c_uint64()
    check("cuMemAddressReserve", ctypes.byref(address), ctypes.c_size_t(size), ctypes.c_size_t(0), ctypes.c_uint64(0),
          ctypes.c_uint64(0))
    check("cuMemMap", address, ctypes.c_size_t(size), ctypes.c_size_t(0), handle, ctypes.c_uint64(0))
    access = AccessDesc(Location(ON_DEVICE, device), READ_WRITE)
    check("cuMemSetAccess", address, ctypes.c_size_t(size), ctypes.byref(access), ctypes.c_size_t(1))
    return address.value


def map_pieces(handles, sizes, device):
    total = sum(sizes)
    address = ctypes.c_uint64()
    check("cuMemAddressReserve", ctypes.byref(address), ctypes.c_size_t(total), ctypes.c_size_t(0), ctypes.c_uint64(0),
          ctypes.c_uint64(0))
    at = address.value
    for handle, size in zip(handles, sizes):
        check("cuMemMap", ctypes.c_uint64(at), ctypes.c_size_t(size), ctypes.c_size_t(0), handle, ctypes.c_uint64(0))
        at += size
    access = AccessDesc(Location(ON_DEVICE, device), READ_WRITE)
    check("cuMemSetAccess", address, ctypes.c_size_t(total), ctypes.byref(access), ctypes.c_size_t(1))
    return address.value


def as_tensor(address, numel):
    import torch

    class View:
        __cuda_array_interface__ = {"shape": (numel,), "typestr": "<f4", "data": (address, False), "version": 3}

    return torch.as_tensor(View(), device="cuda")
"""

CHILD = DRIVER + r"""
import hashlib, json, mmap, socket, sys, time
import torch

kind, numel, fd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.zeros(1, device="cuda")  # the primary context, current on this thread
x = torch.arange(numel, device="cuda", dtype=torch.float32)
torch.cuda.synchronize()
say = lambda **kw: print(json.dumps(kw), flush=True)
if kind == "host":
    size = numel * 4
    area = mmap.mmap(fd, size)
    host = torch.frombuffer(area, dtype=torch.float32, count=numel)
    code = torch.cuda.cudart().cudaHostRegister(host.data_ptr(), size, 0)
    if int(code) != 0:
        say(step="cudaHostRegister", error=int(code))
        sys.exit(0)
    t0 = time.perf_counter(); host.copy_(x, non_blocking=True); torch.cuda.synchronize(); t1 = time.perf_counter()
    host.copy_(x, non_blocking=True); torch.cuda.synchronize(); t2 = time.perf_counter()
    digest = hashlib.sha256(memoryview(area)).hexdigest(); t3 = time.perf_counter()
    say(copy_ms=[1e3 * (t1 - t0), 1e3 * (t2 - t1)], sha256_ms=1e3 * (t3 - t2), sha256=digest)
    sys.stdin.readline()
elif kind == "torch":
    sock = socket.socket(fileno=fd)
    start, end = x.data_ptr(), x.data_ptr() + numel * 4
    pieces, fds, at, first = [], [], start, None
    while at < end:
        base, size = ctypes.c_uint64(), ctypes.c_size_t()
        check("cuMemGetAddressRange_v2", ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(at))
        handle = ctypes.c_uint64()
        check("cuMemRetainAllocationHandle", ctypes.byref(handle), ctypes.c_void_p(at))
        shared = ctypes.c_int(-1)
        check("cuMemExportToShareableHandle", ctypes.byref(shared), handle, POSIX_FD, ctypes.c_uint64(0))
        first = at - base.value if first is None else first
        pieces.append(size.value)
        fds.append(shared.value)
        at = base.value + size.value
    socket.send_fds(sock, [json.dumps({"sizes": pieces, "offset": first}).encode()], fds)
    say(exported=len(pieces))
    sys.stdin.readline()
    x.fill_(7.0); torch.cuda.synchronize()
    say(written=True)
    sys.stdin.readline()
else:
    sock = socket.socket(fileno=fd)
    device = torch.cuda.current_device()
    size = rounded(numel * 4, device)
    handle = ctypes.c_uint64()
    check("cuMemCreate", ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(prop(device)), ctypes.c_uint64(0))
    y = as_tensor(map_handle(handle, size, device), numel)
    y.copy_(x); torch.cuda.synchronize()
    shared = ctypes.c_int(-1)
    check("cuMemExportToShareableHandle", ctypes.byref(shared), handle, POSIX_FD, ctypes.c_uint64(0))
    socket.send_fds(sock, [json.dumps({"size": size}).encode()], [shared.value])
    say(exported=size)
    sys.stdin.readline()           # the judge has read it
    y.fill_(7.0); torch.cuda.synchronize()
    say(written=True)
    sys.stdin.readline()
"""


@functools.cache
def _driver() -> dict:
    """The driver helpers of :data:`DRIVER`, run here too (loaded on first use: libcuda is there only with CUDA)."""
    namespace: dict = {}
    exec(DRIVER, namespace)  # noqa: S102 - this file's own source, shared with the child's
    return namespace


def _child(level: str, argv: list[str], fds: tuple[int, ...], **env: str) -> subprocess.Popen:
    from drk.gym import isolation

    cmd = isolation.sandbox_command(level, argv) if level != "process" else argv
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**isolation.sandbox_env("cuda"), **env}, pass_fds=fds)


def _answer(child: subprocess.Popen) -> dict | None:
    line = child.stdout.readline()
    return json.loads(line) if line else None


def _later_write(child: subprocess.Popen, mapped) -> str:
    """Lets the child fill its tensor with 7.0 and says whether the judge's mapping ``mapped`` shows it: a read
    after the runner is stopped means something only if the memory read is the memory the runner writes."""
    child.stdin.write("\n")
    child.stdin.flush()
    _answer(child)  # written
    return "seen" if float(mapped[:16].sum()) == 16 * 7.0 else "NOT seen"


def probe_host(level: str, numel: int) -> str:
    import hashlib
    import mmap

    import torch

    size = numel * 4
    fd = os.memfd_create("drk-probe")
    os.ftruncate(fd, size)
    child = _child(level, [sys.executable, "-s", "-c", CHILD, "host", str(numel), str(fd)], (fd,))
    try:
        said = _answer(child)
        if said is None:
            return f"host/{level}: the child did not answer: {child.stderr.read()[-400:]}"
        if "error" in said:
            return f"host/{level}: {said['step']} FAILED in the sandbox (cudaError {said['error']})"
        area = mmap.mmap(fd, size)
        t0 = time.perf_counter()
        mine = hashlib.sha256(memoryview(area)).hexdigest()
        t1 = time.perf_counter()
        values = torch.frombuffer(area, dtype=torch.float32, count=numel)
        right = bool(torch.equal(values, torch.arange(numel, dtype=torch.float32)))
        del values
        area.close()
        return (f"host/{level}: pinned in the sandbox; copy of {size / 2**20:.0f} MiB into it "
                f"{said['copy_ms'][0]:.1f} ms then {said['copy_ms'][1]:.1f} ms, the child's SHA-256 "
                f"{said['sha256_ms']:.0f} ms, the judge's {1e3 * (t1 - t0):.0f} ms, digests "
                f"{'agree' if mine == said['sha256'] else 'DIFFER'}, values {'right' if right else 'WRONG'}")
    finally:
        child.kill()
        child.wait()
        os.close(fd)


def probe_vmm(level: str, numel: int) -> str:
    import torch

    namespace = _driver()
    judge_end, runner_end = socket.socketpair()
    child = _child(level, [sys.executable, "-s", "-c", CHILD, "vmm", str(numel), str(runner_end.fileno())],
                   (runner_end.fileno(),))
    runner_end.close()
    try:
        said = _answer(child)
        if said is None:
            return f"vmm/{level}: the child did not export: {child.stderr.read()[-400:]}"
        message, fds, _, _ = socket.recv_fds(judge_end, 1024, 1)
        size = json.loads(message)["size"]
        torch.zeros(1, device="cuda")
        device = torch.cuda.current_device()
        handle = ctypes.c_uint64()
        t0 = time.perf_counter()
        try:
            namespace["check"]("cuMemImportFromShareableHandle", ctypes.byref(handle), ctypes.c_void_p(fds[0]),
                               namespace["POSIX_FD"])
            y = namespace["as_tensor"](namespace["map_handle"](handle, size, device), numel)
        except RuntimeError as exc:
            return f"vmm/{level}: the child exported a file descriptor; the judge's import FAILED ({exc})"
        t1 = time.perf_counter()
        right = bool(torch.equal(y, torch.arange(numel, device="cuda", dtype=torch.float32)))
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        return (f"vmm/{level}: imported and mapped in {1e3 * (t1 - t0):.2f} ms, a full compare "
                f"{1e3 * (t2 - t1):.2f} ms of {numel * 4 / 2**20:.0f} MiB, values {'right' if right else 'WRONG'}, "
                f"the child's later write {_later_write(child, y)}")
    finally:
        child.kill()
        child.wait()
        judge_end.close()


def probe_torch(level: str, numel: int) -> str:
    import torch

    namespace = _driver()
    judge_end, runner_end = socket.socketpair()
    child = _child(level, [sys.executable, "-s", "-c", CHILD, "torch", str(numel), str(runner_end.fileno())],
                   (runner_end.fileno(),), PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
    runner_end.close()
    try:
        said = _answer(child)
        if said is None:
            return f"torch/{level}: the child did not export: {child.stderr.read()[-400:]}"
        message, fds, _, _ = socket.recv_fds(judge_end, 1 << 16, 4096)
        layout = json.loads(message)
        torch.zeros(1, device="cuda")
        device = torch.cuda.current_device()
        t0 = time.perf_counter()
        handles = []
        try:
            for fd in fds:
                handle = ctypes.c_uint64()
                namespace["check"]("cuMemImportFromShareableHandle", ctypes.byref(handle), ctypes.c_void_p(fd),
                                   namespace["POSIX_FD"])
                handles.append(handle)
            base = namespace["map_pieces"](handles, layout["sizes"], device)
        except RuntimeError as exc:
            return f"torch/{level}: {len(fds)} pieces exported; the judge's import or map FAILED ({exc})"
        y = namespace["as_tensor"](base + layout["offset"], numel)
        t1 = time.perf_counter()
        right = bool(torch.equal(y, torch.arange(numel, device="cuda", dtype=torch.float32)))
        return (f"torch/{level}: a torch tensor of {numel * 4 / 2**20:.0f} MiB in {len(fds)} exported pieces "
                f"(sizes {sorted(set(layout['sizes']))}), imported and mapped in {1e3 * (t1 - t0):.2f} ms, values "
                f"{'right' if right else 'WRONG'}, the child's later write {_later_write(child, y)}")
    finally:
        child.kill()
        child.wait()
        judge_end.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--levels", default="uid,namespace,process")
    parser.add_argument("--kinds", default="host,vmm,torch")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device here: nothing to probe")
        return
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    numel = args.mb * 2**20 // 4
    for kind in args.kinds.split(","):
        for level in args.levels.split(","):
            try:
                line = {"host": probe_host, "vmm": probe_vmm, "torch": probe_torch}[kind](level, numel)
            except Exception as exc:  # noqa: BLE001 - one probe's failure is its line, the others still run
                line = f"{kind}/{level}: the probe raised {type(exc).__name__}: {str(exc)[:300]}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
