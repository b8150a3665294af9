"""Evaluate many (problem, candidate) pairs concurrently, cached, one timing at a time per GPU.

Each evaluation still runs in its own sandboxed runners (started ahead of time, two per evaluation, killed after it),
judged by its own child of a warm server that has imported torch, so a crash or a monkey-patch never outlives its
candidate. Concurrency comes from threads that each drive one child:
compilation, correctness checks and profiling overlap freely, while a per-GPU file lock (``GpuTimingLock``), held by
the child only around timing, keeps timings from ever overlapping on a GPU — also across pools and processes.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from drk.gym.cache import ResultCache, cache_key, read_weaker_than_asked
from drk.gym.config import EvalConfig
from drk.gym.evaluate import ProblemError, evaluate, resolve_device
from drk.gym.isolation import IsolationUnavailable, available_level
from drk.gym.problem import Problem
from drk.gym.result import EvalResult, mentions_out_of_memory
from drk.gym.warm import shared_runners

Pair = tuple[Problem, str]


def ran_out_of_gpu_memory(result: EvalResult) -> bool:
    """Whether an evaluation failed for GPU memory (torch's or the CUDA driver's out-of-memory error), in the
    candidate's process or in the environment's (its reference, a runner's start, a stage of the judge)."""
    return result.status == "runtime_error" and mentions_out_of_memory(result.error)


#: An evaluation's GPU memory, as a multiple of its judge's peak: the judge and two runners hold about the same data
#: (inputs, outputs, checksum weights, the L2 flush buffer). On an H200 (2026-12-02) processes of level-1 evaluations
#: peaked at 10-16 GiB each (nvidia-smi).
PROCESSES_PER_EVALUATION = 3
#: Seconds an evaluation waits at most for the first of its problem (or of its pool) to learn a size; then it goes
#: on with the size expected so far (a first that hangs to its limit held every sibling's worker: attacker review 7).
FIRST_SIGHT_WAIT_S = 30.0
#: The share of a GPU's memory a pool plans to fill with evaluations whose size it has seen.
GPU_MEMORY_SHARE = 0.85
#: Seconds a lone retry waits once the GPU is its own: the processes of the evaluations that just ended (its own
#: first attempt among them) were killed, and the driver frees their memory asynchronously.
LONE_RETRY_PAUSE_S = 2.0


class MemoryGate:
    """Per GPU: which evaluations may start. Side by side while the memory they are expected to need fits; alone
    for one retried after running out of memory.

    Eight evaluations of problems with 512 MB tensors filled an H200's 139.8 GiB (2026-12-02: 10 of 45 bundled level-1
    evaluations under a Pool of 8 failed for memory, one of them charged to its candidate). So admissions are sized:
    each evaluation states what it expects to need (the pool learns it per problem from the judges' own peaks,
    :data:`PROCESSES_PER_EVALUATION`), and it starts when that fits in the GPU's budget beside those running, or
    when none runs; a first evaluation of a problem needs ``0`` (unknown). Admission is first come, first served,
    so a large evaluation is not starved by small ones. Whatever still runs out of memory is retried alone, which
    also decides what a candidate that still runs out is charged with: the memory was its own. A waiting lone retry
    keeps new evaluations from starting on its GPU. Only this pool's evaluations are held back (a trainer or another
    pool on the same GPU is not).
    """

    def __init__(self, budget_bytes: dict[int, int] | None = None) -> None:
        self._cond = threading.Condition()
        self._budget = dict(budget_bytes or {})
        self._running: dict[int, int] = {}
        self._running_bytes: dict[int, int] = {}
        self._queue: dict[int, list[object]] = {}
        self._waiting_alone: dict[int, int] = {}
        self._alone: set[int] = set()

    def _fits(self, gpu: int, need: int) -> bool:
        budget = self._budget.get(gpu)
        return not self._running.get(gpu) or budget is None or self._running_bytes.get(gpu, 0) + need <= budget

    @contextlib.contextmanager
    def shared(self, gpu: int, need_bytes: int = 0) -> Iterator[None]:
        ticket = object()
        with self._cond:
            queue = self._queue.setdefault(gpu, [])
            queue.append(ticket)
            try:
                self._cond.wait_for(lambda: queue[0] is ticket and gpu not in self._alone
                                    and not self._waiting_alone.get(gpu) and self._fits(gpu, need_bytes))
            except BaseException:  # interrupted while waiting (KeyboardInterrupt): never block those behind
                queue.remove(ticket)
                self._cond.notify_all()
                raise
            queue.pop(0)
            self._running[gpu] = self._running.get(gpu, 0) + 1
            self._running_bytes[gpu] = self._running_bytes.get(gpu, 0) + need_bytes
            self._cond.notify_all()  # the next in the queue may fit too
        try:
            yield
        finally:
            with self._cond:
                self._running[gpu] -= 1
                self._running_bytes[gpu] -= need_bytes
                self._cond.notify_all()

    @contextlib.contextmanager
    def alone(self, gpu: int) -> Iterator[None]:
        with self._cond:
            self._waiting_alone[gpu] = self._waiting_alone.get(gpu, 0) + 1
            try:
                self._cond.wait_for(lambda: gpu not in self._alone and not self._running.get(gpu))
            finally:
                self._waiting_alone[gpu] -= 1
                self._cond.notify_all()
            self._alone.add(gpu)
        try:
            yield
        finally:
            with self._cond:
                self._alone.discard(gpu)
                self._cond.notify_all()


class Pool:
    """A reusable evaluator for batches.

    Args:
        device: ``"auto"``, ``"cuda"`` (all visible GPUs) or ``"cpu"`` (interpreter workers).
        workers: concurrent evaluations; default 4 per GPU, or the number of CPU cores.
        cache_dir: where results are cached (``None``: no cache).
        config: the default :class:`EvalConfig` for :meth:`map`.
        gpus: GPU indices to use (default: all visible).
        progress: show a progress bar for batches of more than a few pairs.
        memory_factor: on a GPU, the memory an evaluation is planned to need, as a multiple of its judge's peak
            (default :data:`PROCESSES_PER_EVALUATION`): lower admits more evaluations side by side, and what then
            runs out of memory is retried alone.
    """

    def __init__(self, device: str = "auto", workers: int | None = None, cache_dir: str | Path | None = None,
                 config: EvalConfig | None = None, gpus: Sequence[int] | None = None, progress: bool = True,
                 memory_factor: float = PROCESSES_PER_EVALUATION) -> None:
        if not memory_factor > 0:
            raise ValueError(f"memory_factor must be > 0, got {memory_factor}")
        self.memory_factor = memory_factor
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
        self._memory = MemoryGate(self._gpu_budgets())
        self._needs: dict[str, int] = {}  # problem source -> bytes an evaluation of it is expected to need (learned)
        self._estimates: dict[str, int | None] = {}  # problem source -> the same read off its sizes, or None (unread)
        self._unestimated: dict[str, None] = {}  # sources map() queued for the next estimate (ordered set)
        self._estimating: dict[str, threading.Event] = {}  # sources a child reads now -> set when it is done
        self._needs_lock = threading.Condition()
        self._first_sights: set[str] = set()  # problems whose first evaluation runs now (cuda: the others wait)
        self._seen: set[str] = set()  # problems with a finished evaluation (learned or not)
        self._warm_up()

    def _warm_up(self) -> None:
        """Have started runners ready for every worker (:mod:`drk.gym.warm`): start-up leaves the critical path."""
        try:
            level = available_level(self.config.isolation).level
        except IsolationUnavailable:
            return  # each evaluation reports it as an environment failure
        runners = shared_runners()
        per_gpu = -(-self.workers // max(len(self.gpus), 1))
        # per role: an evaluation takes the candidate's runner and (once its checks pass) the probes'; without a
        # profile both come from the role that never warms the profiler up
        runners.reserve(per_gpu if self.config.profile else 2 * per_gpu)
        for gpu in (self.gpus if self.device == "cuda" else [0]):
            runners.warm(self.device, gpu, level, profiler=self.config.profile)

    def _gpu_budgets(self) -> dict[int, int]:
        if self.device != "cuda":
            return {}
        import torch

        return {g: int(GPU_MEMORY_SHARE * torch.cuda.get_device_properties(g).total_memory) for g in self.gpus}

    def _need(self, problem: Problem) -> int:
        """The memory an evaluation of ``problem`` is expected to need: its own learned footprint; for a problem never
        measured, the estimate read off its sizes (:meth:`_estimate`), else the largest footprint learned so far (a
        batch's problems tend to be alike: on 2026-12-02 a bundled level-1 pass admitted eight unseen 512 MB problems
        at once, and each that ran out was retried alone)."""
        with self._needs_lock:
            if problem.source in self._needs:
                return self._needs[problem.source]
            estimate = self._estimates.get(problem.source)
            return estimate if estimate is not None else max(self._needs.values(), default=0)

    def _estimate(self, problem: Problem) -> None:
        """On a GPU, before ``problem``'s first evaluation: read its sizes (:mod:`drk.gym.footprint`, in a child
        process with no GPU, nothing allocated), and those of every problem :meth:`map` has queued, in one child, so
        first evaluations are admitted at a size instead of waiting for one to be learned (:meth:`_first_sight`). Only
        an evaluation that is not a cache hit gets here: a batch served from the cache starts no child."""
        if self.device != "cuda":
            return
        from drk.gym import footprint  # here, so `python -m drk.gym.footprint` finds it unimported

        with self._needs_lock:
            def unknown(source: str) -> bool:
                return source not in self._estimates and source not in self._needs and source not in self._estimating

            pending = self._estimating.get(problem.source)
            if pending is None and not unknown(problem.source):
                return
            if pending is None:
                todo = [problem.source] + [s for s in self._unestimated if s != problem.source and unknown(s)]
                self._unestimated.clear()
                pending = threading.Event()
                for source in todo:
                    self._estimating[source] = pending
            else:
                todo = []
        if not todo:  # another evaluation's child reads it now
            pending.wait(footprint.ESTIMATE_TIMEOUT_S + 5)
            return
        sizes: list[int | None] = [None] * len(todo)
        try:
            sizes = footprint.call_bytes(todo)  # never raises; the finally is for an interrupt (no waiter hangs)
        finally:
            with self._needs_lock:
                for source, size in zip(todo, sizes):
                    self._estimates[source] = None if size is None else \
                        int(footprint.judge_peak_bytes(size) * self.memory_factor)
                    self._estimating.pop(source, None)
            pending.set()

    @contextlib.contextmanager
    def _first_sight(self, problem: Problem) -> Iterator[None]:
        """On a GPU, for a problem whose sizes could not be read (:meth:`_estimate`; the others are admitted at their
        estimate): while its first evaluation runs, its other evaluations wait for the footprint it
        learns: a group of G samples of one new problem would otherwise start together at an unknown size. And the
        pool's very first evaluation runs before any other starts, so unseen problems have a size to be expected at
        (:meth:`_need`): on 2026-12-02 eight unseen level-1 problems started together and four ran out of memory, each
        retried alone after a ~65 s wait for the GPU to drain (``results/gpu/2026-12-02-s18``)."""
        if self.device != "cuda" or self._estimates.get(problem.source) is not None:  # a size to admit it at
            yield
            return
        key = problem.source
        with self._needs_lock:  # bounded: a first evaluation that hangs to its time limit must not idle the pool
            self._needs_lock.wait_for(lambda: (key in self._seen or key not in self._first_sights)
                                      and (bool(self._seen) or not self._first_sights), timeout=FIRST_SIGHT_WAIT_S)
            first = key not in self._seen
            if first:
                self._first_sights.add(key)
        try:
            yield
        finally:
            if first:
                with self._needs_lock:
                    self._first_sights.discard(key)
                    self._seen.add(key)
                    self._needs_lock.notify_all()

    def _learn(self, problem: Problem, result: EvalResult) -> None:
        """Remember the largest footprint seen for ``problem`` (from its judge's peak: trusted, never the
        candidate's claim)."""
        if result.judge_gpu_mb:
            need = int(result.judge_gpu_mb * 2**20 * self.memory_factor)
            with self._needs_lock:
                self._needs[problem.source] = max(self._needs.get(problem.source, 0), need)

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
        result = self.cache.get(key) if self.cache is not None else None
        if result is None:
            result = self._evaluate_uncached(problem, candidate_src, config)  # learns from each attempt
            if self.cache is not None and not read_weaker_than_asked(result, config, self._device_kind):
                self.cache.put(key, result)
        else:
            self._learn(problem, result)  # a cached result's judge peak counts as much as a fresh one's
        return result

    def _evaluate_uncached(self, problem: Problem, candidate_src: str, config: EvalConfig) -> EvalResult:
        """One evaluation; the environment's own failures become ``env_error`` results, never exceptions.

        An evaluation that runs out of GPU memory, wherever (its reference, a runner, the candidate), is run once
        more alone on its GPU (:class:`MemoryGate`): side by side, the memory may have been other evaluations'.
        The second attempt's result stands: a candidate still out of memory is charged (``runtime_error``), the
        environment's own failure is an ``env_error``. A candidate that fakes the message only costs the pool
        one lone retry.
        """
        gpu = self._pick_gpu() if self.device == "cuda" else 0
        waits: dict[str, float] = {}
        start = time.monotonic()
        self._estimate(problem)  # the first uncached one of a batch reads every queued problem's sizes
        with self._first_sight(problem), self._memory.shared(gpu, self._need(problem)):
            waits["memory_gate"] = time.monotonic() - start
            result = self._attempt(problem, candidate_src, config, gpu)
            self._learn(problem, result)  # before the evaluations waiting on this first sight go on
        if ran_out_of_gpu_memory(result):
            start = time.monotonic()
            with self._memory.alone(gpu):
                waits["lone_retry_wait"] = time.monotonic() - start
                if self.device == "cuda":  # killed processes free their GPU memory a moment after they are gone
                    time.sleep(LONE_RETRY_PAUSE_S)
                start = time.monotonic()
                result = self._attempt(problem, candidate_src, config, gpu)
                waits["lone_retry"] = time.monotonic() - start
            self._learn(problem, result)
        if self.device == "cuda":  # where a pool's time goes (benchmarks/suite_gpu.py prints the stage means)
            result.stage_s = {**(result.stage_s or {}), **{k: round(v, 3) for k, v in waits.items()}}
        return result

    def _attempt(self, problem: Problem, candidate_src: str, config: EvalConfig, gpu: int) -> EvalResult:
        try:
            if self.device == "cpu":
                return evaluate(problem, candidate_src, device="cpu", config=config)
            # evaluate's default timing lock is the host-wide GpuTimingLock of that GPU
            return evaluate(problem, candidate_src, device="cuda", config=config, gpu_index=gpu)
        except ProblemError as exc:
            return EvalResult(status="runtime_error", problem=problem.name, error=f"[drk] {exc}", env_error=True)
        except Exception as exc:  # noqa: BLE001 - a drk bug must not lose the rest of the batch
            return EvalResult(status="runtime_error", problem=problem.name, env_error=True,
                              error=f"[drk] internal error: {type(exc).__name__}: {exc}")

    def map(self, pairs: Iterable[Pair], config: EvalConfig | None = None,
            on_result: Callable[[int, EvalResult], None] | None = None) -> list[EvalResult]:
        """Evaluate every pair; results come back in input order, exactly one per pair.

        Identical pairs in one batch are evaluated once. ``on_result(index, result)`` is called as each evaluation
        finishes (in the order they finish, once per pair, ``index`` in ``pairs``): a run cut short by a time
        limit (a device call) keeps what it printed or stored of the finished ones.
        """
        pairs = list(pairs)
        config = config or self.config
        keys = [cache_key(p, c, config, self._device_kind) for p, c in pairs]
        first_index: dict[str, int] = {}
        for i, key in enumerate(keys):
            first_index.setdefault(key, i)
        unique = sorted(first_index.values())
        copies: dict[int, list[int]] = {}  # each evaluated pair's index -> the indices of the pairs it answers
        for j, key in enumerate(keys):
            copies.setdefault(first_index[key], []).append(j)
        with self._needs_lock:
            self._unestimated.update(dict.fromkeys(pairs[i][0].source for i in unique))
        with ThreadPoolExecutor(max_workers=self.workers) as executor:
            futures = {i: executor.submit(self.evaluate, *pairs[i], config) for i in unique}
            done: dict[int, EvalResult] = {}
            for i, future in self._progress(futures):
                done[i] = future.result()
                for j in copies.get(i, ()) if on_result is not None else ():
                    on_result(j, done[i])
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
