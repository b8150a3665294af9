"""Evaluate many (problem, candidate) pairs concurrently, cached, one timing at a time per GPU.

Each evaluation still runs in its own sandboxed runners (started ahead of time, two per evaluation, killed after it),
judged by its own child of a warm server that has imported torch, so a crash or a monkey-patch never outlives its
candidate. Concurrency comes from threads that each drive one child:
compilation, correctness checks and profiling overlap freely, while a per-GPU file lock (``GpuTimingLock``), held by
the child only around timing, keeps timings from ever overlapping on a GPU — also across pools and processes.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from drk.gym.cache import ResultCache, cache_key
from drk.gym.config import EvalConfig
from drk.gym.evaluate import ProblemError, evaluate, resolve_device
from drk.gym.isolation import IsolationUnavailable, available_level
from drk.gym.problem import Problem
from drk.gym.result import EvalResult
from drk.gym.warm import shared_runners

Pair = tuple[Problem, str]
#: How often a reference that ran out of GPU memory is retried before the result is an ``env_error``.
ENV_RETRIES = 2


def ran_out_of_gpu_memory(result: EvalResult) -> bool:
    """Whether the candidate's process failed with a GPU out-of-memory error (torch's or the CUDA driver's)."""
    text = (result.error or "").lower()
    return result.status == "runtime_error" and not result.env_error and (
        "cuda out of memory" in text or "outofmemoryerror" in text or "cuda_error_out_of_memory" in text)


class Pool:
    """A reusable evaluator for batches.

    Args:
        device: ``"auto"``, ``"cuda"`` (all visible GPUs) or ``"cpu"`` (interpreter workers).
        workers: concurrent evaluations; default 4 per GPU, or the number of CPU cores.
        cache_dir: where results are cached (``None``: no cache).
        config: the default :class:`EvalConfig` for :meth:`map`.
        gpus: GPU indices to use (default: all visible).
        progress: show a progress bar for batches of more than a few pairs.
    """

    def __init__(self, device: str = "auto", workers: int | None = None, cache_dir: str | Path | None = None,
                 config: EvalConfig | None = None, gpus: Sequence[int] | None = None, progress: bool = True) -> None:
        self.device = resolve_device(device)
        self.config = config or EvalConfig()
        self.gpus = list(gpus) if gpus is not None else self._visible_gpus()
        if self.device == "cuda" and not self.gpus:
            raise ValueError("device='cuda' but no GPU is visible; use device='cpu' or 'auto'")
        default_workers = 4 * len(self.gpus) if self.device == "cuda" else (os.cpu_count() or 1)
        self.workers = workers or default_workers
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        self.cache = ResultCache(cache_dir) if cache_dir else None
        self.progress = progress
        self._device_kind = self._describe_device()
        self._next_gpu = 0
        self._gpu_lock = threading.Lock()
        self._warm_up()

    def _warm_up(self) -> None:
        """Have started runners ready for every worker (:mod:`drk.gym.warm`): start-up leaves the critical path."""
        try:
            level = available_level(self.config.isolation).level
        except IsolationUnavailable:
            return  # each evaluation reports it as an environment failure
        runners = shared_runners()
        per_gpu = -(-self.workers // max(len(self.gpus), 1))
        runners.reserve(per_gpu)  # per role: an evaluation takes the candidate's runner and the probes'
        for gpu in (self.gpus if self.device == "cuda" else [0]):
            runners.warm(self.device, gpu, level)

    def _visible_gpus(self) -> list[int]:
        if self.device != "cuda":
            return []
        import torch

        return list(range(torch.cuda.device_count()))

    def _describe_device(self) -> str:
        if self.device == "cpu":
            return "cpu"
        import torch

        return "cuda:" + ",".join(sorted({torch.cuda.get_device_name(g) for g in self.gpus}))

    def _pick_gpu(self) -> int:
        with self._gpu_lock:
            gpu = self.gpus[self._next_gpu % len(self.gpus)]
            self._next_gpu += 1
            return gpu

    def evaluate(self, problem: Problem, candidate_src: str, config: EvalConfig | None = None) -> EvalResult:
        """One pair, through the cache; never raises (a broken reference becomes a ``runtime_error``)."""
        config = config or self.config
        key = cache_key(problem, candidate_src, config, self._device_kind)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return hit
        result = self._evaluate_uncached(problem, candidate_src, config)
        if self.cache is not None:
            self.cache.put(key, result)
        return result

    def _evaluate_uncached(self, problem: Problem, candidate_src: str, config: EvalConfig) -> EvalResult:
        """One evaluation; the environment's own failures become ``env_error`` results, never exceptions.

        A reference that runs out of GPU memory (other evaluations or a trainer hold it) is retried after a pause,
        :data:`ENV_RETRIES` times: that failure says nothing about the candidate. A candidate that runs out of GPU
        memory is retried the same way, and charged (``runtime_error``) only if it still does: on a shared GPU the
        memory may have been other evaluations' (22 of 408 held-out evaluations of an earlier run were such failures
        scored against the policy). A candidate that fakes the message only costs the environment the retries.
        """
        for attempt in range(ENV_RETRIES + 1):
            try:
                if self.device == "cpu":
                    result = evaluate(problem, candidate_src, device="cpu", config=config)
                else:
                    # evaluate's default timing lock is the host-wide GpuTimingLock of that GPU
                    result = evaluate(problem, candidate_src, device="cuda", config=config, gpu_index=self._pick_gpu())
                if attempt < ENV_RETRIES and ran_out_of_gpu_memory(result):
                    time.sleep(2.0 * (attempt + 1))
                    continue
                return result
            except ProblemError as exc:
                if "out of memory" in str(exc).lower() and attempt < ENV_RETRIES:
                    time.sleep(2.0 * (attempt + 1))
                    continue
                return EvalResult(status="runtime_error", problem=problem.name, error=f"[drk] {exc}", env_error=True)
            except Exception as exc:  # noqa: BLE001 - a drk bug must not lose the rest of the batch
                return EvalResult(status="runtime_error", problem=problem.name, env_error=True,
                                  error=f"[drk] internal error: {type(exc).__name__}: {exc}")
        raise AssertionError("unreachable")

    def map(self, pairs: Iterable[Pair], config: EvalConfig | None = None) -> list[EvalResult]:
        """Evaluate every pair; results come back in input order, exactly one per pair.

        Identical pairs in one batch are evaluated once.
        """
        pairs = list(pairs)
        config = config or self.config
        keys = [cache_key(p, c, config, self._device_kind) for p, c in pairs]
        first_index: dict[str, int] = {}
        for i, key in enumerate(keys):
            first_index.setdefault(key, i)
        unique = sorted(first_index.values())
        with ThreadPoolExecutor(max_workers=self.workers) as executor:
            futures = {i: executor.submit(self.evaluate, *pairs[i], config) for i in unique}
            done = {i: f.result() for i, f in self._progress(futures)}
        return [done[first_index[key]] for key in keys]

    def _progress(self, futures: dict):
        from concurrent.futures import as_completed

        index_of = {f: i for i, f in futures.items()}
        iterator = as_completed(index_of)
        if self.progress and len(futures) > 4:
            try:
                from tqdm.auto import tqdm

                iterator = tqdm(iterator, total=len(futures), desc="drk eval", leave=False)
            except ImportError:  # pragma: no cover
                pass
        for future in iterator:
            yield index_of[future], future
