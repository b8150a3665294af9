"""SQLite persistence of every accepted task and its result, so a killed server loses nothing.

A task is written (state ``queued``) before the request is answered, and its result is written in the same row
when the evaluation ends; on start-up, tasks that were ``queued`` or ``running`` when the server died are queued
again (:meth:`TaskStore.recover`). Task ids are the primary key, so a re-submitted id can never create a second
task or a second result. One connection, guarded by a lock, in WAL mode with ``synchronous=FULL``: every commit is
on disk before the HTTP answer that depends on it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT UNIQUE NOT NULL,
    batch_id TEXT,
    digest TEXT NOT NULL,
    request TEXT NOT NULL,
    state TEXT NOT NULL,
    result TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    started REAL,
    finished REAL
)
"""
PENDING = ("queued", "running")


class TaskConflict(ValueError):
    """A task id that exists already with other content."""


class QueueFull(RuntimeError):
    """Accepting the tasks would exceed the bound on unfinished tasks."""


@dataclass(frozen=True)
class NewTask:
    task_id: str
    batch_id: str | None
    digest: str
    request: dict[str, Any]


@dataclass(frozen=True)
class TaskRow:
    """One stored task; ``result`` is the ``EvalResult`` dict once ``state`` is ``completed`` or ``failed``."""

    task_id: str
    batch_id: str | None
    digest: str
    request: dict[str, Any]
    state: str
    result: dict[str, Any] | None
    attempts: int
    created: float
    started: float | None
    finished: float | None


class TaskStore:
    """Tasks and results in one SQLite file; safe to call from any thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # readable by its owner only: every client's candidates and results are in it, and sandboxed candidates see
        # the host's world-readable files (SQLite gives its -wal/-shm files the database file's permissions)
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        os.chmod(self.path, 0o600)
        from drk.gym.isolation import hide_from_sandbox

        # and empty inside the candidates' sandboxes, where the mode does not help (the namespace level: same uid)
        hide_from_sandbox(self.path, f"{self.path}-wal", f"{self.path}-shm", f"{self.path}-journal")
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute(_SCHEMA)
        # counts by state read this index, not every row's request and result: /health (no token needed) took 0.45 s
        # on a store of 20k finished tasks, and a flood of it stalled the server (attacker review, 2026-12-02)
        self._conn.execute("CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks(state)")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def submit(self, tasks: Sequence[NewTask], max_pending: int | None = None) -> tuple[list[TaskRow], list[str]]:
        """Store the tasks not stored yet, all or none; returns every task's row (in order) and the new ids.

        Raises:
            TaskConflict: an id exists with other content (nothing is stored).
            QueueFull: the new tasks would make more than ``max_pending`` unfinished ones (nothing is stored).
        """
        now = time.time()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                new: list[NewTask] = []
                seen: dict[str, str] = {}
                for task in tasks:
                    row = self._row(task.task_id)
                    digest = row.digest if row is not None else seen.get(task.task_id)
                    if digest is not None and digest != task.digest:
                        raise TaskConflict(f"task_id {task.task_id!r} exists with other content; use a new id")
                    if row is None and task.task_id not in seen:
                        new.append(task)
                    seen[task.task_id] = task.digest
                if max_pending is not None and new:
                    pending = self._count_pending()
                    if pending + len(new) > max_pending:
                        raise QueueFull(f"queue full: {pending} unfinished tasks, {len(new)} new, limit "
                                        f"{max_pending}; retry later")
                self._conn.executemany(
                    "INSERT INTO tasks (task_id, batch_id, digest, request, state, created) VALUES (?, ?, ?, ?, ?, ?)",
                    [(t.task_id, t.batch_id, t.digest, json.dumps(t.request), "queued", now) for t in new])
                rows = [self._row(t.task_id) for t in tasks]
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return [r for r in rows if r is not None], [t.task_id for t in new]

    def claim(self, task_id: str) -> TaskRow | None:
        """Mark a queued task running (one more attempt); ``None`` if it is unknown or not queued."""
        with self._lock:
            cursor = self._conn.execute(
                "UPDATE tasks SET state='running', attempts=attempts+1, started=? WHERE task_id=? AND state='queued'",
                (time.time(), task_id))
            return self._row(task_id) if cursor.rowcount else None

    def finish(self, task_id: str, state: str, result: dict[str, Any]) -> bool:
        """Record a result, once: ``False`` if the task was finished already (its first result stands)."""
        text = json.dumps(result, allow_nan=False)
        with self._lock:
            cursor = self._conn.execute(
                "UPDATE tasks SET state=?, result=?, finished=? WHERE task_id=? AND state IN ('queued', 'running')",
                (state, text, time.time(), task_id))
            return cursor.rowcount == 1

    def recover(self) -> list[TaskRow]:
        """After a restart: every unfinished task back to ``queued``, returned oldest first (to be run again)."""
        with self._lock:
            self._conn.execute("UPDATE tasks SET state='queued' WHERE state='running'")
            cursor = self._conn.execute("SELECT * FROM tasks WHERE state='queued' ORDER BY seq")
            return [self._from_db(r) for r in cursor.fetchall()]

    def get(self, task_id: str) -> TaskRow | None:
        with self._lock:
            return self._row(task_id)

    def get_many(self, task_ids: Sequence[str]) -> list[TaskRow | None]:
        with self._lock:
            return [self._row(t) for t in task_ids]

    def counts(self) -> dict[str, int]:
        """Tasks per state (every state present, zeros included)."""
        with self._lock:
            rows = self._conn.execute("SELECT state, COUNT(*) FROM tasks GROUP BY state").fetchall()
        counts = {"queued": 0, "running": 0, "completed": 0, "failed": 0}
        counts.update({state: n for state, n in rows})
        return counts

    def pending(self) -> int:
        with self._lock:
            return self._count_pending()

    def _count_pending(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM tasks WHERE state IN (?, ?)", PENDING).fetchone()[0]

    def _row(self, task_id: str) -> TaskRow | None:
        row = self._conn.execute("SELECT * FROM tasks WHERE task_id=?", (task_id,)).fetchone()
        return self._from_db(row) if row is not None else None

    @staticmethod
    def _from_db(row: tuple) -> TaskRow:
        _seq, task_id, batch_id, digest, request, state, result, attempts, created, started, finished = row
        return TaskRow(task_id=task_id, batch_id=batch_id, digest=digest, request=json.loads(request), state=state,
                       result=json.loads(result) if result is not None else None, attempts=attempts,
                       created=created, started=started, finished=finished)
