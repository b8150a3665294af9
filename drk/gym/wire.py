"""The wire between the judge and the candidate's runner: length-prefixed frames of JSON plus raw tensor bytes.

Everything that crosses from the candidate's process to the judge is *data*: a JSON header (validated by the
judge, never executed, never unpickled) and byte blobs that the judge turns into tensors of a dtype it names from
an allow-list. A frame is ``magic | header length | blob lengths | header | blobs``; sizes are checked against
limits before anything is read, so a candidate that floods or garbles the pipe gets a :class:`WireError`, not the
judge's memory.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import select
import struct
import time
import warnings
from collections.abc import Iterable
from typing import Any

import torch

MAGIC = b"DRK1"
_HEAD = struct.Struct(">4sII")  # magic, header bytes, number of blobs
_BLOB = struct.Struct(">Q")
MAX_HEADER_BYTES = 4 * 2**20
MAX_BLOBS = 256

#: dtypes a tensor may arrive as; anything else is refused.
DTYPES: dict[str, torch.dtype] = {
    str(d).removeprefix("torch."): d
    for d in (torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
              torch.int8, torch.uint8, torch.bool, torch.complex64)
}


class WireError(RuntimeError):
    """The peer sent something that is not a well-formed frame within the limits (or went away)."""


class WireTimeout(WireError):
    """No complete frame arrived in time."""


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data).cast("B")
    while view:
        written = os.write(fd, view)
        view = view[written:]


def encode_frame(header: dict[str, Any]) -> bytes:
    """One frame without blobs, as bytes (for :func:`write_within`)."""
    head = json.dumps(header, allow_nan=False, separators=(",", ":")).encode()
    return _HEAD.pack(MAGIC, len(head), 0) + head


def write_within(fd: int, data: bytes | memoryview, deadline: float) -> memoryview:
    """Write ``data`` to the *non-blocking* ``fd`` until it is all written or ``deadline`` (``time.monotonic()``)
    passes; returns what is left unwritten (empty when done).

    The judge writes its requests this way: a candidate that stops reading its request pipe (and shrinks and fills
    it) made a blocking write wait forever, and the judge's job end as an uncharged ``env_error`` (attacker review,
    2026-12-02).

    Raises:
        WireError: the reader is gone.
    """
    view = memoryview(data).cast("B")
    while view:
        try:
            view = view[os.write(fd, view):]
            continue
        except BlockingIOError:
            pass
        except (BrokenPipeError, OSError) as exc:
            raise WireError(f"the pipe is closed ({type(exc).__name__})") from None
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([], [fd], [], remaining)[1]:
            break
    return view


def send_frame(fd: int, header: dict[str, Any], blobs: list[bytes | memoryview] = ()) -> None:
    """Write one frame (blocking). ``header`` must be JSON-able with finite numbers."""
    head = json.dumps(header, allow_nan=False, separators=(",", ":")).encode()
    sizes = b"".join(_BLOB.pack(memoryview(b).nbytes) for b in blobs)
    _write_all(fd, _HEAD.pack(MAGIC, len(head), len(blobs)) + sizes + head)
    for blob in blobs:
        _write_all(fd, blob)


def close_quietly(fds: Iterable[int]) -> None:
    """Close each descriptor, ignoring ones already closed (every end of a runner's pipes is closed exactly once by
    its owner; this is for the owner)."""
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def readable(fd: int, timeout_s: float) -> bool:
    """Whether ``fd`` has something to read (or its writer closed it) within ``timeout_s``."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    return bool(poller.poll(max(0, int(timeout_s * 1000))))


def recv_frame(fd: int, *, deadline: float | None, max_blob_bytes: int) -> tuple[dict[str, Any], list[bytearray]]:
    """Read one frame; ``deadline`` is a ``time.monotonic()`` instant (None: wait forever).

    Raises:
        WireTimeout: the deadline passed.
        WireError: EOF, bad magic, a size over the limits, or a header that is not a JSON object.
    """
    magic, head_len, n_blobs = _HEAD.unpack(_read_exact(fd, _HEAD.size, deadline))
    if magic != MAGIC:
        raise WireError("bad frame magic")
    if head_len > MAX_HEADER_BYTES or n_blobs > MAX_BLOBS:
        raise WireError(f"frame too large: header {head_len} bytes, {n_blobs} blobs")
    sizes = [_BLOB.unpack(_read_exact(fd, _BLOB.size, deadline))[0] for _ in range(n_blobs)]
    if sum(sizes) > max_blob_bytes:
        raise WireError(f"frame carries {sum(sizes)} bytes; the limit is {max_blob_bytes}")
    raw = bytes(_read_exact(fd, head_len, deadline))
    try:
        header = json.loads(raw, parse_constant=_refuse_constant, parse_int=_bounded_int)
    except (ValueError, UnicodeDecodeError, RecursionError, OverflowError) as exc:
        # a peer's frame that cannot be parsed is its protocol error, whatever the parser raised
        raise WireError(f"frame header is not strict JSON: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(header, dict):
        raise WireError("frame header is not a JSON object")
    return header, [_read_exact(fd, size, deadline) for size in sizes]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # NaN/Infinity: a check such as abs(a - b) > bound is False for NaN


def _bounded_int(text: str) -> int:
    if len(text) > 20:
        raise ValueError("integer too large")
    return int(text)


#: Bytes of a frame's part allocated ahead of their arrival; a bigger part grows as its bytes come in, so a peer that
#: announces gigabytes and sends nothing costs the reader nothing (the judge reads the candidate's frames).
READ_AHEAD_BYTES = 64 * 2**20


def _read_exact(fd: int, size: int, deadline: float | None) -> bytearray:
    buf = bytearray(min(size, READ_AHEAD_BYTES))
    got = 0
    while got < size:
        if got == len(buf):  # grow by doubling, never past what was announced
            buf.extend(bytes(min(len(buf), size - len(buf))))
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise WireTimeout("no answer in time")
        n = os.readv(fd, [memoryview(buf)[got:]])
        if n == 0:
            raise WireError("the other side closed the pipe")
        got += n
    return buf


# --- tensors as data ----------------------------------------------------------------------------------------------


def scalar_meta(value: Any) -> dict[str, Any]:
    """A non-tensor output as the runner describes it: a number, a bool or None as itself, anything else as the
    start of its ``repr`` (never an object)."""
    return {"value": value if isinstance(value, (int, float, bool)) or value is None else repr(value)[:200]}


def tensor_meta(t: torch.Tensor) -> dict[str, Any]:
    return {"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape)}


def tensor_to_blob(t: torch.Tensor) -> memoryview:
    """The bytes of ``t`` (any device, any allowed dtype), row-major. Runs in the runner: plain torch calls."""
    flat = t.detach().contiguous().reshape(-1).cpu()
    return memoryview(flat.view(torch.uint8).numpy()) if flat.numel() else memoryview(b"")


def _described(meta: Any) -> tuple[torch.dtype, list[int], int, int]:
    """A peer's tensor description checked: ``(dtype, shape, numel, nbytes)``; a WireError when it is not allowed."""
    if not isinstance(meta, dict) or not isinstance(meta.get("dtype"), str) or meta["dtype"] not in DTYPES \
            or not isinstance(meta.get("shape"), list):
        raise WireError(f"bad tensor description {str(meta)[:200]}")
    shape = meta["shape"]
    if len(shape) > 16 or not all(type(s) is int and 0 <= s < 2**40 for s in shape):
        raise WireError(f"bad tensor shape {shape[:20]}")
    if math.prod(max(s, 1) for s in shape) >= 2**48:  # an empty tensor with absurd sizes overflows torch's strides
        raise WireError(f"bad tensor shape {shape[:20]}")
    dtype = DTYPES[meta["dtype"]]
    numel = math.prod(shape)
    return dtype, shape, numel, numel * torch.empty((), dtype=dtype).element_size()


def _copy_to(host: torch.Tensor, device: torch.device | str) -> torch.Tensor:
    """A copy of ``host`` (a view of a peer's bytes) on ``device``, or in host memory when the device is full (a
    candidate can fill it: the comparison then runs in host memory instead)."""
    if torch.device(device).type == "cpu":
        return host.clone()
    try:
        return host.to(device)
    except torch.OutOfMemoryError:
        return host.clone()


def tensor_from_blob(meta: Any, blob: bytearray, device: torch.device | str = "cpu") -> torch.Tensor:
    """Rebuild a tensor from a peer's ``meta`` and bytes; a WireError when they do not agree or are not allowed."""
    dtype, shape, numel, nbytes = _described(meta)
    if len(blob) != nbytes:
        raise WireError(f"tensor bytes ({len(blob)}) do not match {meta['dtype']}{shape}")
    try:
        if numel == 0:
            return torch.empty(shape, dtype=dtype, device=device)
        return _copy_to(torch.frombuffer(blob, dtype=torch.uint8).view(dtype).reshape(shape), device)
    except (RuntimeError, ValueError, OverflowError) as exc:  # the peer's description, not our failure
        raise WireError(f"tensor {meta['dtype']}{shape[:8]} cannot be built: {str(exc)[:200]}") from None


#: Bytes of a runner's output area: a sealed ``memfd`` the caller creates and both the runner (read-write) and the
#: judge (read-only) map, through which fetched outputs travel instead of the pipe (a 256 MB output took ~0.5 s
#: through the pipe on the H200: 4.2 s of relu2's 5.5 s correctness stage). Its size is sealed (no shrink, no grow),
#: so the runner cannot make the judge's reads fault. Sparse, but a runner can fill it (``fallocate``) with memory no
#: process's footprint shows: 256 MiB bounds that like the sandbox's tmpfs sizes (a 4 GiB area let two evaluations'
#: runners get their caller killed by the OOM killer, attacker review 2026-12-01). Bigger outputs use the pipe.
OUTPUT_AREA_BYTES = 256 * 2**20
#: Alignment of each tensor in the area.
AREA_ALIGN = 64


def make_output_area(size: int = OUTPUT_AREA_BYTES) -> int:
    """A new sealed memfd of ``size`` bytes (not inheritable); the caller passes it to a runner and its judge."""
    fd = os.memfd_create("drk-outputs", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, size)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
    except OSError:
        os.close(fd)
        raise
    return fd


def area_is_sealed(fd: int, size: int = OUTPUT_AREA_BYTES) -> bool:
    """Whether ``fd`` is an output area the judge may map: its size is ``size`` and can never change."""
    try:
        seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        return os.fstat(fd).st_size == size and seals & fcntl.F_SEAL_SHRINK and seals & fcntl.F_SEAL_GROW
    except OSError:
        return False


def tensor_from_area(meta: Any, area: Any, device: torch.device | str = "cpu",
                     budget: int | None = None) -> tuple[torch.Tensor, int]:
    """Copy a tensor that a peer described at ``meta["area"]`` (a byte offset) out of the mapped output ``area``;
    returns it (a copy: the peer may write the area again at any time) and its byte size. ``budget``: the most bytes
    the caller will read, checked before anything is copied (a runner that described a 4 GiB tensor for a 16 KiB
    answer made the judge copy it, and the OOM killer then took the judge)."""
    dtype, shape, numel, nbytes = _described(meta)
    offset = meta.get("area")
    if type(offset) is not int or offset < 0 or offset % AREA_ALIGN:
        raise WireError(f"bad output area offset {str(offset)[:40]}")
    if offset + nbytes > len(area):
        raise WireError(f"tensor {meta['dtype']}{shape[:8]} at {offset} runs past the output area")
    if budget is not None and nbytes > budget:
        raise WireError(f"tensor {meta['dtype']}{shape[:8]} has {nbytes} bytes; a right answer has {budget} left")
    if numel == 0:
        return torch.empty(shape, dtype=dtype, device=device), 0
    try:
        with warnings.catch_warnings():  # the judge maps the area read-only; it copies at once
            warnings.simplefilter("ignore", UserWarning)
            view = torch.frombuffer(area, dtype=dtype, count=numel, offset=offset).reshape(shape)
        copy = _copy_to(view, device)
    except (RuntimeError, ValueError, OverflowError) as exc:  # the peer's description, not our failure
        raise WireError(f"tensor {meta['dtype']}{shape[:8]} cannot be built: {str(exc)[:200]}") from None
    del view
    return copy, nbytes


def tensor_into_area(t: torch.Tensor, area: Any, offset: int) -> dict[str, Any] | None:
    """Runner side: write ``t`` into the mapped ``area`` at ``offset`` (device to host straight into it); its
    description, or None when it does not fit (the caller sends it over the pipe instead)."""
    flat = t.detach().reshape(-1)
    nbytes = flat.numel() * flat.element_size()
    if area is None or offset + nbytes > len(area):
        return None
    if flat.numel():
        dst = torch.frombuffer(area, dtype=flat.dtype, count=flat.numel(), offset=offset)
        dst.copy_(flat)
        del dst
    return {**tensor_meta(t), "area": offset}


def area_next(offset: int, nbytes: int) -> int:
    """The offset after a tensor of ``nbytes`` at ``offset``, aligned."""
    end = offset + nbytes
    return -(-end // AREA_ALIGN) * AREA_ALIGN


def finite_or_none(value: Any) -> float | None:
    """A float that JSON can carry (``None`` for NaN/inf/non-numbers): results never contain ``Infinity``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def json_safe(value: Any) -> Any:
    """``value`` with NaN/inf floats as strings (``"nan"``, ``"inf"``) so that strict JSON can carry it."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
