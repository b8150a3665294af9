"""``RemoteEvaluator``: :class:`drk.gym.Pool`'s interface, answered by a ``drk serve`` on another host.

A trainer on machines without spare GPUs (or with a different Python) can judge its samples on an evaluation host
by swapping ``Pool`` for ``RemoteEvaluator(url, token)``. Tasks are submitted in batches and polled until done;
submissions are idempotent (each pair gets a task id once), so a retry after a dropped connection or a server
restart never judges a pair twice and never loses one. Whatever goes wrong on the way (network down, server gone,
the overall deadline) becomes an ``env_error`` result for the pairs concerned, never an exception that loses the
batch: the same contract as ``Pool``.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Iterable
from typing import Any

from drk.gym.cache import cache_key
from drk.gym.config import EvalConfig
from drk.gym.evaluate import decided_without_judge
from drk.gym.problem import Problem
from drk.gym.result import EvalResult

Pair = tuple[Problem, str]
#: HTTP answers worth retrying: too many tasks queued, or the server (or a proxy in front of it) is unwell.
_RETRY_STATUSES = frozenset({429, 502, 503, 504})


class RemoteError(RuntimeError):
    """The server refused the token (HTTP 401): a configuration error, not a failure of some pairs."""


class RemoteEvaluator:
    """Evaluate pairs on a ``drk serve`` service; ``evaluate`` and ``map`` behave like :class:`drk.gym.Pool`'s.

    Args:
        url: the service, e.g. ``"http://10.0.0.5:8000"``.
        token: its bearer token (``drk serve --token``).
        timeout: seconds one ``map`` (or ``evaluate``) may take in all; pairs unfinished then are ``env_error``.
        config: the default :class:`EvalConfig` (the server's sandbox settings apply whatever it says).
        batch_size: tasks per request (kept below the server's ``max_queue``).
        poll_s: how long one request waits on the server for results (long polling).
        retry_s: how long the service may stay unreachable before the unfinished pairs become ``env_error``.
        client: an ``httpx.Client`` to use instead of a new one (tests, proxies, TLS settings).
    """

    def __init__(self, url: str, token: str, timeout: float = 3600.0, config: EvalConfig | None = None,
                 batch_size: int = 64, poll_s: float = 20.0, retry_s: float = 120.0, client: Any = None) -> None:
        import httpx  # the optional 'serve' extra: only the client's users need it

        if batch_size < 1 or timeout <= 0 or poll_s < 0 or retry_s < 0:
            raise ValueError("batch_size must be >= 1, timeout > 0, poll_s and retry_s >= 0")
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.config = config or EvalConfig()
        self.batch_size = batch_size
        self.poll_s = poll_s
        self.retry_s = retry_s
        self._http = client or httpx.Client(timeout=httpx.Timeout(poll_s + 60.0, connect=10.0))
        self._http.headers["Authorization"] = f"Bearer {token}"
        self._prefix = f"drk-{uuid.uuid4().hex[:12]}"
        self._counter = itertools.count()

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RemoteEvaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def health(self) -> dict[str, Any]:
        """The server's ``/health`` answer (raises ``httpx`` errors: this is a check, not an evaluation)."""
        response = self._http.get(f"{self.url}/health")
        response.raise_for_status()
        return response.json()

    def evaluate(self, problem: Problem, candidate_src: str, config: EvalConfig | None = None) -> EvalResult:
        """One pair; never raises for the candidate or the network (see :meth:`map`)."""
        return self.map([(problem, candidate_src)], config)[0]

    def map(self, pairs: Iterable[Pair], config: EvalConfig | None = None) -> list[EvalResult]:
        """Every pair's result, in input order; identical pairs are judged once.

        Raises:
            RemoteError: the server refused the token (retrying cannot help; nothing can be judged). A task the
                server refuses (too large, malformed) gets an ``env_error`` result with the server's reason.
        """
        from drk.serve.kernelgym import SERVER_ONLY_KEYS

        # text that is not UTF-8 (a lone surrogate, from a JSONL "\\udc80" escape) cannot be sent: httpx raised out of
        # map and the batch was lost (attacker review 8, 2026-12-02); each such character becomes U+FFFD first, so
        # the local checks and the server see the same text
        pairs = [(problem, candidate.encode("utf-8", "replace").decode("utf-8")) for problem, candidate in pairs]
        config = config or self.config
        drk_config = {k: v for k, v in config.to_dict().items() if k not in SERVER_ONLY_KEYS}
        keys = [cache_key(p, c, config, "remote") for p, c in pairs]
        tasks: dict[str, dict[str, Any]] = {}
        id_of: dict[str, str] = {}
        local: dict[str, EvalResult] = {}
        for (problem, candidate), key in zip(pairs, keys):
            if key in id_of or key in local:
                continue
            # what evaluate() decides before any judge (no code, too long, no ModelNew) is decided here the same
            # way, charged: sent, an oversized reply came back as the server's refusal, an uncharged env_error
            # (attacker review 7, 2026-12-02)
            early = decided_without_judge(problem, candidate, config, device="remote (decided locally)")
            if early is not None:
                local[key] = early
                continue
            id_of[key] = f"{self._prefix}-{next(self._counter)}"
            tasks[id_of[key]] = {"task_id": id_of[key], "reference_code": problem.source,
                                 "kernel_code": candidate, "problem_name": problem.name, "drk_config": drk_config}
        done = self._run(tasks) if tasks else {}
        return [local[key] if key in local else done[id_of[key]] for key in keys]

    def _run(self, tasks: dict[str, dict[str, Any]]) -> dict[str, EvalResult]:
        """Submit and poll until every task has a result or the deadline passes."""
        from drk.serve.kernelgym import FINISHED_STATES, result_from_response

        deadline = time.monotonic() + self.timeout
        pending = dict(tasks)
        done: dict[str, EvalResult] = {}
        last_error = ""
        failing_since: float | None = None
        while pending and time.monotonic() < deadline:
            chunks = _chunks(list(pending), self.batch_size)
            progressed = False
            for i, chunk in enumerate(chunks):
                wait_s = min(self.poll_s, max(0.0, deadline - time.monotonic())) if i == len(chunks) - 1 else 0.0
                try:
                    answers = self._post_batch([pending[t] for t in chunk], wait_s)
                except _Retry as exc:
                    last_error = str(exc)
                    continue
                except _Refused:  # one task the server will not take must not sink the others: one by one
                    answers = self._post_each([pending[t] for t in chunk], done)
                    for task_id in chunk:
                        if task_id in done:
                            del pending[task_id]
                failing_since = None
                progressed = True
                for answer in answers:
                    task_id = answer.get("task_id") if isinstance(answer, dict) else None
                    if isinstance(task_id, str) and task_id in pending and answer.get("status") in FINISHED_STATES:
                        try:
                            done[task_id] = result_from_response(answer)
                        except Exception as exc:  # noqa: BLE001 - whatever the server sent, one pair's env_error
                            done[task_id] = _env_error(tasks[task_id], f"unreadable answer from {self.url}: "
                                                       f"{type(exc).__name__}: {str(exc)[:300]}")
                        del pending[task_id]
            if not progressed:
                failing_since = failing_since or time.monotonic()
                if time.monotonic() - failing_since > self.retry_s:
                    break
                time.sleep(min(2.0, max(0.0, deadline - time.monotonic())))
        why = last_error or f"not finished within timeout={self.timeout:g} s"
        for task_id in pending:
            done[task_id] = _env_error(tasks[task_id], f"remote evaluation at {self.url} failed: {why}")
        return done

    def _post_batch(self, tasks: list[dict[str, Any]], wait_s: float) -> list[dict[str, Any]]:
        """POST the tasks (idempotent: existing ids answer their state); their answers."""
        import httpx

        try:
            response = self._http.post(f"{self.url}/evaluate/batch", json={"tasks": tasks},
                                       params={"wait": str(wait_s > 0).lower(), "wait_s": wait_s})
        except httpx.HTTPError as exc:
            raise _Retry(f"{type(exc).__name__}: {exc}") from None
        if response.status_code in _RETRY_STATUSES:
            raise _Retry(f"HTTP {response.status_code}: {response.text[:300]}")
        if response.status_code == 401:
            raise RemoteError(f"{self.url} refused the token: HTTP {response.status_code}: {response.text[:300]}")
        if response.status_code >= 400:  # incl. 403: a task whose problem is not on the server's list
            raise _Refused(f"HTTP {response.status_code}: {response.text[:1000]}")
        try:
            return list(response.json()["results"])
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise _Retry(f"unreadable answer: {type(exc).__name__}: {str(exc)[:300]}") from None

    def _post_each(self, tasks: list[dict[str, Any]], done: dict[str, EvalResult]) -> list[dict[str, Any]]:
        """Submit tasks one at a time (after the server refused their batch): a refused task's result is an
        ``env_error`` naming the server's reason, written into ``done``; the others' answers are returned."""
        import httpx

        answers = []
        for task in tasks:
            try:
                response = self._http.post(f"{self.url}/evaluate", json=task, params={"wait": "false"})
            except httpx.HTTPError:
                continue  # the next round tries again
            if response.status_code == 401:
                raise RemoteError(f"{self.url} refused the token: HTTP {response.status_code}")
            if response.status_code == 413 and _KERNEL_CODE_TOO_LONG in response.text:
                # the reply's own size (drk serve's --max-code-chars): the candidate's, charged as evaluate()
                # charges code over max_source_chars
                done[task["task_id"]] = EvalResult(status="format_error", problem=str(task.get("problem_name") or ""),
                                                   error=f"the server refused the answer: {response.text[:500]}")
            elif 400 <= response.status_code and response.status_code not in _RETRY_STATUSES:
                done[task["task_id"]] = _env_error(task, f"{self.url} refused the task: HTTP {response.status_code}: "
                                                         f"{response.text[:1000]}")
            elif response.status_code < 300:
                try:
                    answers.append(response.json())
                except (ValueError, RecursionError):
                    continue  # unreadable: the next round asks again
        return answers


def too_long_detail(where: str, field: str, size: int, limit: int) -> str:
    """drk serve's 413 detail for a task field over ``--max-code-chars``, in the one wording
    :class:`RemoteEvaluator` reads back (a ``kernel_code`` refusal is the candidate's)."""
    return f"{where}.{field} is {size} characters; the limit is {limit} (--max-code-chars)"


_KERNEL_CODE_TOO_LONG = ".kernel_code is "  # in too_long_detail(..., "kernel_code", ...)


class _Retry(Exception):
    """A failure a later attempt may not have (network, server busy or restarting)."""


class _Refused(Exception):
    """The server refused a batch for its content (size, a malformed or conflicting task)."""


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _env_error(task: dict[str, Any], why: str) -> EvalResult:
    return EvalResult(status="runtime_error", problem=str(task.get("problem_name") or ""), env_error=True,
                      error=f"[drk] {why}")
