"""Profiling ratio (PR, the paper's "coverage"): the candidate's own kernels' share of device time."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class Profile:
    coverage: float | None
    kernels: list[dict[str, Any]]  # [{name, device_ms, share, own}], by device time, descending


def kernel_times(cand: Callable[..., Any], args: Sequence[Any], calls: int = 3) -> dict[str, float]:
    """Device milliseconds per call of every kernel ``cand`` runs, by kernel name, under ``torch.profiler``.

    Only device-side kernel events count (no CPU time in the denominator, unlike the paper's code). This runs in
    the candidate's process: the judge treats the table as the candidate's claim (see docs/environment.md).
    """
    return profiled_calls(cand, args, calls)[0]


def profiled_calls(cand: Callable[..., Any], args: Sequence[Any], calls: int = 3,
                   cuda: bool = True) -> tuple[dict[str, float], Any]:
    """:func:`kernel_times` and the output of the last profiled call (the judge checks it: a module can tell that
    it is profiled, and a lazy one that launched only its own kernel then claimed PR ~1, an RL-side review,
    2026-12-02). ``cuda=False`` (the Triton interpreter): the calls run under the autograd profiler without
    kineto (the same "profiler enabled" state a module can read, in ~1 ms instead of kineto's ~1.4 s start-up in a
    fresh process), no table."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    # no_grad, as the checked and timed eval calls run (rounds.call_model): inference_mode here was a state only the
    # profiled calls had, so a module could tell them apart by it too (attack_inference_mode_detect)
    with torch.no_grad():
        cand(*args)  # compile outside the profile
        sync()
        profiler = profile(activities=[ProfilerActivity.CUDA]) if cuda else \
            torch.autograd.profiler.profile(use_kineto=False)
        with profiler as prof:
            for _ in range(calls):
                out = cand(*args)
            sync()
    per_kernel: dict[str, float] = defaultdict(float)
    for event in prof.events() if cuda else ():
        if event.device_type == DeviceType.CUDA:
            per_kernel[event.name] += _device_us(event) / 1e3 / calls  # us -> ms per call
    return dict(per_kernel), out


def _device_us(event: Any) -> float:
    """Device time of a kernel event in microseconds (the attribute's name moved across torch versions)."""
    for attr in ("device_time_total", "cuda_time_total", "device_time", "cuda_time"):
        value = getattr(event, attr, None)
        if value:
            return float(value)
    return 0.0


def summarise_kernels(per_kernel_ms: dict[str, float], own_names: set[str]) -> Profile:
    """Coverage and a share table from per-kernel device milliseconds.

    A kernel is the candidate's own only if its name equals the name of a Triton function defined in the
    candidate's source (no substring matching).
    """
    total = sum(per_kernel_ms.values())
    if total <= 0:
        return Profile(coverage=None, kernels=[])
    own = sum(ms for name, ms in per_kernel_ms.items() if name in own_names)
    kernels = [
        {"name": name, "device_ms": ms, "share": ms / total, "own": name in own_names}
        for name, ms in sorted(per_kernel_ms.items(), key=lambda kv: -kv[1])
    ]
    return Profile(coverage=own / total, kernels=kernels)
