"""Can the judge read a sandboxed runner's CUDA memory itself? A feasibility probe for direct reads on a GPU.

On CPU the judge reads a runner's outputs from its stopped process (``drk.gym.direct_reads``); on a GPU the outputs
still come through the runner's ``fetch``, which a runner rewritten from inside answers with values its kernel never
produced (``attack_lazy_fetch``). The way to read another process's device memory is CUDA IPC: the owner exports a
handle of an allocation, the reader opens it. Whether that works between the judge and a runner in our sandbox (its
own PID, user, IPC and network namespaces, and as root another uid) is what this measures, at each isolation level:

    python benchmarks/cuda_ipc_probe.py                 # levels uid, namespace, process; 256 MiB
    python benchmarks/cuda_ipc_probe.py --mb 1024 --levels uid

For each level it starts a sandboxed child that fills a CUDA tensor with known values and exports it with torch's
own sharing (``torch.multiprocessing.reductions.reduce_tensor``: the handle, offset and size as bytes and ints, sent
as JSON, never pickle), then opens the handle here, reads the tensor, checks the values, times the open and a full
read, and says whether the child's later writes show through (they must, for a read after a stop to mean anything).
It prints one line per level. Without CUDA it says so and exits 0.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import base64, json, sys, time, torch
from torch.multiprocessing.reductions import reduce_tensor
n = int(sys.argv[1])
x = torch.arange(n, device="cuda", dtype=torch.float32)
torch.cuda.synchronize()
rebuild, args = reduce_tensor(x)
out = []
for a in args:
    if isinstance(a, bytes):
        out.append({"bytes": base64.b64encode(a).decode()})
    elif isinstance(a, (int, float, bool)) or a is None:
        out.append({"value": a})
    elif isinstance(a, torch.dtype):
        out.append({"dtype": str(a).removeprefix("torch.")})
    elif isinstance(a, type):
        out.append({"type": a.__name__})
    elif isinstance(a, (tuple, list, torch.Size)):
        out.append({"tuple": list(a)})
    else:
        out.append({"repr": repr(a)})
share = x.untyped_storage()._share_cuda_()  # (device, handle, size, offset, ref counter..., event...)
raw = {"handle": base64.b64encode(share[1]).decode(), "offset": share[3]}
print(json.dumps({"rebuild": rebuild.__name__, "args": out, "raw": raw}), flush=True)
sys.stdin.readline()           # the reader has opened and read it
x.fill_(7.0); torch.cuda.synchronize()
print("written", flush=True)
sys.stdin.readline()
"""


def _decode(arg: dict):
    import torch

    if "type" in arg:
        allowed = {"Tensor": torch.Tensor, "UntypedStorage": torch.UntypedStorage,
                   "TypedStorage": torch.storage.TypedStorage}
        return allowed[arg["type"]]
    if "bytes" in arg:
        return base64.b64decode(arg["bytes"])
    if "dtype" in arg:
        return getattr(torch, arg["dtype"])
    if "tuple" in arg:
        return tuple(arg["tuple"])
    if "value" in arg:
        return arg["value"]
    raise ValueError(f"cannot rebuild {arg}")


def _cudart():
    """libcudart from torch's own CUDA libraries (pip wheels ship it under nvidia/cuda_runtime), or the system's."""
    import ctypes
    import glob
    import site

    names = [p for base in site.getsitepackages() for p in glob.glob(f"{base}/nvidia/cuda_runtime/lib/libcudart.so*")]
    for name in names + ["libcudart.so", "libcudart.so.12", "libcudart.so.13"]:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def open_raw(handle: bytes, offset: int, numel: int):
    """The child's tensor opened with ``cudaIpcOpenMemHandle`` directly (no torch reference counter, whose file lives
    in the sandbox's private /dev/shm), wrapped by ``__cuda_array_interface__``."""
    import ctypes

    import torch

    cudart = _cudart()
    if cudart is None:
        raise RuntimeError("no libcudart found")

    class IpcHandle(ctypes.Structure):
        _fields_ = [("reserved", ctypes.c_char * 64)]

    base = ctypes.c_void_p()
    code = cudart.cudaIpcOpenMemHandle(ctypes.byref(base), IpcHandle(handle[-64:]), 1)
    if code != 0:
        raise RuntimeError(f"cudaIpcOpenMemHandle returned {code}")

    class View:
        __cuda_array_interface__ = {"shape": (numel,), "typestr": "<f4", "data": (base.value + offset, False),
                                    "version": 3}

    return torch.as_tensor(View(), device="cuda")


def probe(level: str, numel: int) -> str:
    import torch
    from torch.multiprocessing import reductions

    from drk.gym import isolation

    argv = [sys.executable, "-s", "-c", CHILD, str(numel)]
    cmd = isolation.sandbox_command(level, argv) if level != "process" else argv
    env = isolation.sandbox_env("cuda")
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env)
    try:
        line = child.stdout.readline()
        if not line:
            return f"{level}: the child did not start: {child.stderr.read()[-400:]}"
        message = json.loads(line)
        args = [_decode(a) for a in message["args"]]
        rebuild = getattr(reductions, message["rebuild"])
        t0 = time.perf_counter()
        how = "torch"
        try:
            y = rebuild(*args)
        except Exception as exc:  # noqa: BLE001 - the answer this probe is for
            failed = f"torch's rebuild FAILED ({type(exc).__name__}: {str(exc)[:160]})"
            try:
                raw = message["raw"]
                y, how = open_raw(base64.b64decode(raw["handle"]), int(raw["offset"]), numel), "cudart"
            except Exception as exc2:  # noqa: BLE001
                return f"{level}: {failed}; cudaIpcOpenMemHandle FAILED ({type(exc2).__name__}: {str(exc2)[:160]})"
        t1 = time.perf_counter()
        total = float(y.sum(dtype=torch.float64))
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        # float32 holds integers exactly only to 2**24: the same arange made here is the expected sum
        right = total == float(torch.arange(numel, device="cuda", dtype=torch.float32).sum(dtype=torch.float64))
        child.stdin.write("\n")
        child.stdin.flush()
        child.stdout.readline()  # "written"
        later = float(y[:16].sum())
        return (f"{level}: opened by {how} in {1e3 * (t1 - t0):.2f} ms, full read {1e3 * (t2 - t1):.2f} ms of "
                f"{numel * 4 / 2**20:.0f} MiB, values {'right' if right else 'WRONG'}, the child's later write "
                f"{'seen' if later == 16 * 7.0 else 'NOT seen'}")
    finally:
        child.kill()
        child.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--levels", default="uid,namespace,process")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device here: nothing to probe")
        return
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, pid namespace {os.readlink('/proc/self/ns/pid')}")
    for level in args.levels.split(","):
        print(probe(level, args.mb * 2**20 // 4), flush=True)


if __name__ == "__main__":
    main()
