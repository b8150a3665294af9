"""The HTTP service (FastAPI): ``GET /health``, ``POST /evaluate``, ``POST /evaluate/batch``, ``GET /results/{id}``.

Every accepted task is in the :class:`TaskStore` before the request is answered, and is judged by the
:class:`Engine`'s worker threads; routes only validate, store, and wait on futures, so the event loop never blocks
on an evaluation (SQLite calls run in the thread pool too). See ``docs/kernelgym.md`` for the wire format.
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, HTTPException, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from drk import __version__
from drk.gym.pool import Pool
from drk.gym.remote import too_long_detail
from drk.serve.engine import Engine
from drk.serve.guard import Guard
from drk.serve.kernelgym import FINISHED_STATES, eval_config_for, ignored_fields, task_digest, task_response
from drk.serve.models import BatchRequest, BatchResponse, EvalTask, TaskResponse
from drk.serve.settings import ServeSettings, reference_key
from drk.serve.store import NewTask, QueueFull, TaskConflict, TaskRow, TaskStore

_PENDING_NOTE = {202: {"description": "accepted, not finished yet: poll GET /results/{task_id}"}}


class Service:
    """What the routes share: the settings, the store, the ``Pool`` and the engine (started by :meth:`start`)."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.store: TaskStore
        self.pool: Pool
        self.engine: Engine

    def start(self) -> None:
        """Open the store, build the ``Pool`` (imports torch) and start the workers, re-queueing unfinished tasks."""
        s = self.settings
        self.store = TaskStore(s.db)
        self.pool = Pool(device=s.device, workers=s.workers, cache_dir=s.cache_dir, config=s.config, progress=False)
        self.engine = Engine(self.store, self.pool, s.config, self.pool.workers)
        self.engine.start()

    def wait_time(self, wait: bool, wait_s: float | None) -> float:
        if not wait:
            return 0.0
        return self.settings.wait_s if wait_s is None else min(wait_s, self.settings.wait_s)

    async def submit(self, tasks: Sequence[EvalTask], batch_id: str | None) -> list[TaskRow]:
        """Validate against the limits and store the tasks (all or none); new ones are queued for the workers."""
        limit = self.settings.max_queue
        if len(tasks) > limit:
            raise HTTPException(413, f"{len(tasks)} tasks in one request; the queue holds {limit} (--max-queue): "
                                     "split the batch")
        new = [self._new_task(i, task, batch_id) for i, task in enumerate(tasks)]
        try:
            rows, new_ids = await run_in_threadpool(self.store.submit, new, limit)
        except TaskConflict as exc:
            raise HTTPException(409, str(exc)) from None
        except QueueFull as exc:
            raise HTTPException(429, str(exc), headers={"Retry-After": "5"}) from None
        self.engine.enqueue(new_ids)
        return rows

    def _new_task(self, index: int, task: EvalTask, batch_id: str | None) -> NewTask:
        where = f"tasks[{index}]" if batch_id is not None else "task"
        limit = self.settings.max_code_chars
        for name in ("reference_code", "kernel_code"):
            size = len(getattr(task, name))
            if size > limit:
                raise HTTPException(413, too_long_detail(where, name, size, limit))
        allowed = self.settings.allowed_references
        if allowed is not None and reference_key(task.reference_code) not in allowed:
            raise HTTPException(403, f"{where}.reference_code is not one of this server's problems (--problems): "
                                     "references run as trusted code, so this server judges known problems only")
        payload = task.payload()
        try:
            eval_config_for(payload, self.settings.config)
        except (ValueError, TypeError) as exc:
            raise HTTPException(422, f"{where}: {exc}") from None
        task_id = task.task_id or (f"{batch_id}-{index}" if batch_id is not None else uuid.uuid4().hex)
        payload["task_id"] = task_id
        return NewTask(task_id=task_id, batch_id=batch_id, digest=task_digest(payload), request=payload)

    async def wait(self, task_ids: list[str], wait_s: float) -> list[TaskRow]:
        """The rows of ``task_ids``, after waiting up to ``wait_s`` for the unfinished ones."""
        futures = {t: self.engine.waiter(t) for t in dict.fromkeys(task_ids)} if wait_s > 0 else {}
        try:
            rows = await run_in_threadpool(self.store.get_many, task_ids)
            open_ = [futures[r.task_id] for r in rows if futures and r is not None and r.state not in FINISHED_STATES]
            if open_:
                await asyncio.wait(open_, timeout=wait_s)
                rows = await run_in_threadpool(self.store.get_many, task_ids)
        finally:
            for task_id, future in futures.items():
                self.engine.discard(task_id, future)
        return [r for r in rows if r is not None]

    def answer(self, row: TaskRow) -> dict[str, Any]:
        """The KernelGYM-shaped response of a stored task, with drk's bookkeeping in ``metadata``."""
        try:
            config: dict[str, Any] | None = eval_config_for(row.request, self.settings.config).to_dict()
        except (ValueError, TypeError):
            config = None
        serve = {"batch_id": row.batch_id, "attempts": row.attempts, "created": row.created, "started": row.started,
                 "finished": row.finished, "ignored_fields": ignored_fields(row.request)}
        return task_response(row.task_id, row.state, row.result, {"drk_serve": serve, "eval_config": config})


def create_app(settings: ServeSettings) -> FastAPI:
    """The service for ``settings``; the store, the ``Pool`` and the workers start with the app's lifespan."""
    service = Service(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(service.start)
        yield
        service.engine.stop()  # in-flight tasks stay 'running' in the store and are queued again at the next start

    app = FastAPI(title="drk serve", version=__version__, lifespan=lifespan,
                  description="Judges Triton kernels with drk.gym; KernelGYM-compatible field names.")
    app.add_middleware(Guard, token=settings.token, max_body_bytes=settings.max_body_bytes)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(sqlite3.Error, _store_failed)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        """Liveness and load (no token needed): task counts, limits, device."""
        counts = await run_in_threadpool(service.store.counts)
        return {"status": "ok", "version": __version__, "device": service.pool.device,
                "workers": service.pool.workers, "tasks": counts, "max_queue": settings.max_queue,
                "max_code_chars": settings.max_code_chars, "max_body_bytes": settings.max_body_bytes,
                "wait_s": settings.wait_s}

    @app.post("/evaluate", response_model=TaskResponse, responses=_PENDING_NOTE)
    async def evaluate(task: EvalTask, response: Response, wait: bool = True,
                       wait_s: float | None = Query(None, ge=0)) -> dict[str, Any]:
        """Judge one task; waits for the verdict (200) up to ``wait_s`` (else 202: poll ``/results``)."""
        rows = await service.submit([task], None)
        rows = await service.wait([r.task_id for r in rows], service.wait_time(wait, wait_s))
        response.status_code = 200 if rows[0].state in FINISHED_STATES else 202
        return service.answer(rows[0])

    @app.post("/evaluate/batch", response_model=BatchResponse, responses=_PENDING_NOTE)
    async def evaluate_batch(batch: BatchRequest, response: Response, wait: bool = False,
                             wait_s: float | None = Query(None, ge=0)) -> dict[str, Any]:
        """Queue many tasks (all or none); answers at once (202) unless ``wait``; 200 when all are finished."""
        batch_id = batch.batch_id or uuid.uuid4().hex
        rows = await service.submit(batch.tasks, batch_id)
        rows = await service.wait([r.task_id for r in rows], service.wait_time(wait, wait_s))
        response.status_code = 200 if all(r.state in FINISHED_STATES for r in rows) else 202
        return {"batch_id": batch_id, "results": [service.answer(r) for r in rows]}

    @app.get("/results/{task_id}", response_model=TaskResponse)
    async def results(task_id: str, wait_s: float = Query(0.0, ge=0)) -> dict[str, Any]:
        """A task's state and verdict; ``wait_s`` > 0 waits that long for an unfinished one (long polling)."""
        if await run_in_threadpool(service.store.get, task_id) is None:
            raise HTTPException(404, f"no task {task_id!r}")
        rows = await service.wait([task_id], min(wait_s, settings.wait_s))
        return service.answer(rows[0])

    return app


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    """422 naming each bad field (the default answer echoes every bad input back: megabytes of code)."""
    assert isinstance(exc, RequestValidationError)
    errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")} for e in exc.errors()]
    message = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors)
    return JSONResponse({"detail": errors, "message": f"invalid request: {message}"[:4000]}, status_code=422)


async def _store_failed(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse({"detail": f"the task store failed: {exc}"}, status_code=503)
