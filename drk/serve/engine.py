"""The server's evaluation loop: worker threads that take task ids from a FIFO, judge them through
:class:`drk.gym.Pool` and write the result to the :class:`TaskStore`.

Evaluations block (each drives a sandboxed child for seconds to minutes), so they run in plain threads, never on
the event loop; the loop only awaits futures that :meth:`Engine.notify` resolves with ``call_soon_threadsafe``.
``Pool`` schedules GPUs and holds the per-GPU timing lock, so the number of threads is the number of concurrent
evaluations and nothing else. Every failure of the environment becomes a stored ``failed`` result: a task is never
left without an answer unless the process itself dies, and then :meth:`TaskStore.recover` queues it again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import threading
from collections.abc import Iterable

from drk.gym.config import EvalConfig
from drk.gym.pool import Pool
from drk.gym.problem import Problem
from drk.gym.result import EvalResult
from drk.serve.kernelgym import eval_config_for, result_state, strict_json
from drk.serve.store import TaskRow, TaskStore

log = logging.getLogger("drk.serve")
#: A task whose evaluation was cut short by this many server deaths is answered with an environment failure
#: instead of being run again (something in it may be what kills the server).
MAX_ATTEMPTS = 3


class Engine:
    """Runs stored tasks; ``workers`` threads, each judging one task at a time."""

    def __init__(self, store: TaskStore, pool: Pool, base_config: EvalConfig, workers: int) -> None:
        self.store = store
        self.pool = pool
        self.base_config = base_config
        self.workers = workers
        self._queue: queue.Queue[str] = queue.Queue()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._waiters: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future]]] = {}
        self._waiters_lock = threading.Lock()

    def start(self) -> int:
        """Queue the tasks a previous server left unfinished, then start the workers; returns how many."""
        recovered = self.store.recover()
        self.enqueue(row.task_id for row in recovered)
        for i in range(self.workers):
            thread = threading.Thread(target=self._work, name=f"drk-serve-worker-{i}", daemon=True)
            thread.start()
            self._threads.append(thread)
        if recovered:
            log.info("re-queued %d unfinished tasks from %s", len(recovered), self.store.path)
        return len(recovered)

    def stop(self) -> None:
        """Stop taking tasks; evaluations in flight are abandoned (their tasks run again after a restart)."""
        self._stop.set()

    def enqueue(self, task_ids: Iterable[str]) -> None:
        for task_id in task_ids:
            self._queue.put(task_id)

    def waiter(self, task_id: str) -> asyncio.Future:
        """A future of the running loop, resolved when ``task_id`` finishes (register it before reading the row)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._waiters_lock:
            self._waiters.setdefault(task_id, []).append((loop, future))
        return future

    def discard(self, task_id: str, future: asyncio.Future) -> None:
        """Forget a waiter that stopped waiting (its request timed out or went away)."""
        with self._waiters_lock:
            entries = [e for e in self._waiters.get(task_id, []) if e[1] is not future]
            if entries:
                self._waiters[task_id] = entries
            else:
                self._waiters.pop(task_id, None)

    def notify(self, task_id: str) -> None:
        with self._waiters_lock:
            entries = self._waiters.pop(task_id, [])
        for loop, future in entries:
            loop.call_soon_threadsafe(_resolve, future)

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                task_id = self._queue.get(timeout=0.5)
            except queue.Empty:
                continue
            try:
                self.run_task(task_id)
            except Exception:  # noqa: BLE001 - a worker must survive anything (the task is re-queued on restart)
                log.exception("task %s could not be recorded", task_id)

    def run_task(self, task_id: str) -> None:
        """Claim, judge and record one task (no-op when it is finished or unknown)."""
        row = self.store.claim(task_id)
        if row is None:
            return
        if row.attempts > MAX_ATTEMPTS:
            result = EvalResult(status="runtime_error", problem=_problem_name(row), env_error=True,
                                error=f"[drk] the server stopped {row.attempts - 1} times while judging this task; "
                                      "it is not run again")
        else:
            result = self.judge(row)
        self.store.finish(task_id, result_state(result), _storable(result))
        self.notify(task_id)

    def judge(self, row: TaskRow) -> EvalResult:
        """The task's verdict; a bad reference or a drk failure is an ``env_error`` result, never an exception."""
        request = row.request
        name = _problem_name(row)
        try:
            problem = Problem.from_source(request["reference_code"], name=name)
        except Exception as exc:  # noqa: BLE001 - any failure to read the reference ends the task (a RecursionError once left it running forever)
            return EvalResult(status="runtime_error", problem=name, env_error=True,
                              error=f"[drk] bad reference: {type(exc).__name__}: {str(exc)[:500]}")
        try:
            config = eval_config_for(request, self.base_config)
            result = self.pool.evaluate(problem, request["kernel_code"], config)
            result.problem = name  # a cache hit carries the name of whichever task filled the cache entry
            return result
        except Exception as exc:  # noqa: BLE001 - Pool.evaluate should not raise; if it does, the task still ends
            log.exception("task %s: evaluation failed", row.task_id)
            return EvalResult(status="runtime_error", problem=name, env_error=True,
                              error=f"[drk] internal error: {type(exc).__name__}: {exc}")


def _storable(result: EvalResult) -> dict:
    """The result as strict JSON; one that cannot be written becomes an environment failure saying why (a task
    must never stay without an answer because of a field drk failed to keep JSON-able)."""
    data = strict_json(result.to_dict())
    try:
        json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as exc:
        data = EvalResult(status="runtime_error", problem=result.problem, env_error=True,
                          error=f"[drk] the result could not be stored: {exc}").to_dict()
    return data


def _problem_name(row: TaskRow) -> str:
    return str(row.request.get("problem_name") or "task")


def _resolve(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)
