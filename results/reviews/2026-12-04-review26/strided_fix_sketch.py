"""Not an evaluation, and not a patch to drk: a sketch of reading a strided claim run by run *without Python objects per
run*: the runs' (address, length) pairs built with torch ops into one uint64 array that is itself the iovec array
process_vm_readv takes (IOV_MAX at a time). Compared with direct_reads.tensor_at on the same claim."""
import ctypes, os, resource, sys, time
import numpy as np
import torch
from drk.gym import direct_reads as d

libc = ctypes.CDLL(None, use_errno=True)
libc.process_vm_readv.restype = ctypes.c_ssize_t
libc.process_vm_readv.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                                  ctypes.c_ulong]


def read_claim(pid, ptr, strides, shape, dtype):
    element = torch.empty((), dtype=dtype).element_size()
    offsets = d._element_offsets(shape, strides)
    unique, inverse = torch.unique(offsets, sorted=True, return_inverse=True)
    breaks = torch.nonzero(unique[1:] - unique[:-1] != 1).reshape(-1) + 1
    starts = torch.cat([torch.zeros(1, dtype=torch.int64), breaks])
    ends = torch.cat([breaks, torch.tensor([unique.numel()])])
    iov = np.empty((starts.numel(), 2), dtype=np.uint64)            # struct iovec {void *base; size_t len;}
    iov[:, 0] = (ptr + unique[starts] * element).numpy().astype(np.uint64)
    iov[:, 1] = ((ends - starts) * element).numpy().astype(np.uint64)
    out = np.empty(unique.numel() * element, dtype=np.uint8)
    done = 0
    for at in range(0, len(iov), 1024):
        batch = iov[at:at + 1024]
        want = int(batch[:, 1].sum())
        local = (ctypes.c_uint64 * 2)(out.ctypes.data + done, want)
        got = libc.process_vm_readv(pid, ctypes.addressof(local), 1, batch.ctypes.data, len(batch), 0)
        if got != want:
            raise OSError(ctypes.get_errno(), "short read")
        done += want
    return torch.from_numpy(out).view(dtype)[inverse].reshape(shape)


n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20
y = torch.randn(2 * n)[::2]
where = d.location(y)
peak0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter()
v = read_claim(os.getpid(), where["ptr"], where["strides"], [n], torch.float32)
t1 = time.perf_counter()
peak1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"sketch: {n} stride-2 floats in {t1 - t0:.3f} s, peak RSS +{peak1 - peak0:.0f} MiB, equal={torch.equal(v, y)}, "
      f"commitment ok={d.commitment(v) == where['sha256']}")
