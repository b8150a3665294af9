"""Timing reference and candidate in one process, on one GPU, interleaved.

Why this design (measured on an H200, see ../benchmarks/gym_timing.py and docs/timing.md): timing each model in its
own process with the mean of 100 warm-L2 trials gave 2-7 % run-to-run spread and a *different answer* for memory-
bound kernels (1.72x warm vs 2.00x cold). Interleaving the two models call by call cancels slow drifts (clocks,
power states); zeroing a buffer larger than L2 before every call makes every call start cold, as it would inside a
real network; rotating input sets defeats caching on input identity; medians shrug off the odd preempted call.

The ``"authors"`` policy reproduces the paper code's timer (no flush, the same inputs every call, mean of N) so
that our numbers can be compared with theirs; it is never the default.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

_perf_counter = time.perf_counter
_Event = torch.cuda.Event
_synchronize = torch.cuda.synchronize


@dataclass
class Timing:
    ref_ms: float
    kernel_ms: float
    ref_ms_iqr: float
    kernel_ms_iqr: float
    backend: str
    ref_samples: list[float]
    kernel_samples: list[float]


def _iqr(samples: Sequence[float]) -> float:
    if len(samples) < 4:
        return max(samples) - min(samples) if samples else 0.0
    q = statistics.quantiles(samples, n=4)
    return q[2] - q[0]


def time_pair_cuda(
    ref: Callable[..., Any],
    cand: Callable[..., Any],
    input_sets: Sequence[Sequence[Any]],
    *,
    warmup: int,
    trials: int,
    policy: str,
    flush_mb: int,
    sync_device: bool,
) -> Timing:
    """Median (``"drk"``) or mean (``"authors"``) milliseconds of ``ref`` and ``cand``, interleaved.

    Args:
        input_sets: rotated call by call under ``"drk"``; only the first is used under ``"authors"``.
        sync_device: synchronise the whole device before the end event, so work the candidate launched on
            another stream is inside the measurement.
    """
    device = torch.cuda.current_device()
    flush = torch.empty(flush_mb * 2**20 // 4, dtype=torch.float32, device=device) if policy == "drk" else None
    sets = list(input_sets) if policy == "drk" else [input_sets[0]]
    with torch.inference_mode():
        for i in range(warmup):
            ref(*sets[i % len(sets)])
            cand(*sets[i % len(sets)])
        _synchronize()
        samples: dict[str, list[float]] = {"ref": [], "cand": []}
        events = []
        for t in range(trials):
            args = sets[t % len(sets)]
            order = (("ref", ref), ("cand", cand)) if t % 2 == 0 else (("cand", cand), ("ref", ref))
            for label, fn in order:
                if flush is not None:
                    flush.zero_()
                start, end = _Event(enable_timing=True), _Event(enable_timing=True)
                start.record()
                fn(*args)
                if sync_device:
                    _synchronize()
                end.record()
                events.append((label, start, end))
        _synchronize()
    for label, start, end in events:
        samples[label].append(start.elapsed_time(end))
    return _summarise(samples, policy, "cuda_events" + ("+device_sync" if sync_device else ""))


def time_pair_cpu(ref: Callable[..., Any], cand: Callable[..., Any], args: Sequence[Any], trials: int) -> Timing:
    """Wall-clock medians under the Triton interpreter: informative only, never a GPU speedup."""
    samples: dict[str, list[float]] = {"ref": [], "cand": []}
    with torch.inference_mode():
        for _ in range(trials):
            for label, fn in (("ref", ref), ("cand", cand)):
                t0 = _perf_counter()
                fn(*args)
                samples[label].append((_perf_counter() - t0) * 1e3)
    return _summarise(samples, "drk", "cpu_interpreter_wall")


def _summarise(samples: dict[str, list[float]], policy: str, backend: str) -> Timing:
    centre = statistics.fmean if policy == "authors" else statistics.median
    tag = "mean_noflush" if policy == "authors" else "median_l2flush"
    return Timing(
        ref_ms=centre(samples["ref"]),
        kernel_ms=centre(samples["cand"]),
        ref_ms_iqr=_iqr(samples["ref"]),
        kernel_ms_iqr=_iqr(samples["cand"]),
        backend=f"{backend}:{tag}" if backend.startswith("cuda") else backend,
        ref_samples=samples["ref"],
        kernel_samples=samples["cand"],
    )
