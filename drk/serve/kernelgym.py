"""The KernelGYM wire format, mapped onto drk's ``EvalConfig`` and ``EvalResult`` (pure functions, no server).

A client written for the authors' KernelGYM service sends ``reference_code``, ``kernel_code``,
``num_correct_trials``, ``num_perf_trials`` and ``timeout`` and reads ``correctness``, ``decoy_kernel``,
``speedup``, ``reference_runtime``, ``kernel_runtime``, ``error_message`` and ``metadata``. These functions are the
one place where those names meet drk's, so the server (:mod:`drk.serve.app`) and the client
(:class:`drk.gym.RemoteEvaluator`) cannot disagree about them; ``docs/kernelgym.md`` documents the same table.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from drk.gym.config import EvalConfig
from drk.gym.result import EvalResult

#: KernelGYM request field -> the ``EvalConfig`` field it sets.
REQUEST_TO_CONFIG: dict[str, str] = {
    "num_correct_trials": "correctness_trials",
    "num_perf_trials": "timing_trials",
    "timeout": "timeout_s",
}
#: EvalConfig fields only the server decides: a request must not weaken the sandbox or the parser's limits.
SERVER_ONLY_KEYS: tuple[str, ...] = ("isolation", "direct_reads", "max_source_chars", "max_output_bytes")
#: Fields of a task request that are drk's or KernelGYM's own; anything else is accepted and reported as ignored.
TASK_FIELDS: frozenset[str] = frozenset(
    {"task_id", "reference_code", "kernel_code", "problem_name", "drk_config", *REQUEST_TO_CONFIG})
#: ``status`` of a task: waiting, being judged, judged (any verdict), or the environment could not judge it.
TASK_STATES: tuple[str, ...] = ("queued", "running", "completed", "failed")
FINISHED_STATES: frozenset[str] = frozenset({"completed", "failed"})
#: drk needs one eval/no-grad and one train/grad pass: fewer correctness trials are raised to this.
MIN_CORRECT_TRIALS = 2


def eval_config_for(task: dict[str, Any], base: EvalConfig) -> EvalConfig:
    """The ``EvalConfig`` a task asks for: ``base`` (the server's), then ``drk_config``, then KernelGYM fields.

    Raises:
        ValueError: an unknown ``drk_config`` key, a server-only key set to another value than the server's,
            or a value ``EvalConfig`` refuses. The message says which.
    """
    settings = base.to_dict()
    overrides = dict(task.get("drk_config") or {})
    for key in SERVER_ONLY_KEYS:
        if key in overrides and overrides[key] != settings[key]:
            raise ValueError(f"drk_config[{key!r}] is set by the server ({settings[key]!r}); a request cannot "
                             f"change it (got {overrides[key]!r})")
    settings.update(EvalConfig.from_dict({**settings, **overrides}).to_dict())
    for field, target in REQUEST_TO_CONFIG.items():
        value = task.get(field)
        if value is not None:
            settings[target] = max(int(value), MIN_CORRECT_TRIALS) if field == "num_correct_trials" else value
    config = EvalConfig.from_dict(settings)
    for key, limit in REQUEST_LIMITS.items():  # whichever way a request set them (drk_config or KernelGYM fields)
        if getattr(config, key) > max(limit, getattr(base, key)):
            raise ValueError(f"{key}={getattr(config, key)!r} is over this server's limit ({limit!r})")
    return config


#: The most a request may ask for of what costs the server time or memory (a request once set
#: ``drk_config.timeout_s = 1e9`` and held a worker with a hanging kernel past every bound). The server's own
#: settings may be higher.
REQUEST_LIMITS: dict[str, float] = {
    "timeout_s": 3600.0, "correctness_trials": 100, "timing_trials": 100_000, "warmup": 1000,
    "timing_round_calls": 1000, "calibration_rounds": 20, "l2_flush_mb": 4096, "max_output_bytes": 4 * 2**30,
    "max_source_chars": 200_000,
    "timing_burst_cycles": 10**8,  # GPU busy-wait per timed round, both sides (~50 ms at 2 GHz)
}


def ignored_fields(task: dict[str, Any]) -> list[str]:
    """Request fields drk accepted but does not use (other KernelGYM options, typos): reported in ``metadata``."""
    return sorted(set(task) - TASK_FIELDS)


def task_digest(task: dict[str, Any]) -> str:
    """SHA-256 of a task's content (everything but its id): a re-submitted id must carry the same task."""
    content = {k: v for k, v in task.items() if k != "task_id"}
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()


def strict_json(value: Any) -> Any:
    """``value`` with every NaN/inf float replaced by ``None``: strict JSON (no ``NaN``/``Infinity`` tokens)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    return value


def result_state(result: EvalResult) -> str:
    """``failed`` when the environment could not judge (``env_error``), else ``completed`` (any verdict)."""
    return "failed" if result.env_error else "completed"


def task_response(task_id: str, state: str, result: dict[str, Any] | None,
                  extra_metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """The KernelGYM-shaped answer for a task; ``result`` is an ``EvalResult.to_dict()`` or ``None`` (pending).

    ``correctness`` is drk's ``correct`` (outputs match *and* no hacking verdict); ``decoy_kernel`` is drk's
    ``hacked`` (any hack reason: they are listed in ``metadata.drk.hack_reasons``); runtimes are milliseconds.
    """
    metadata: dict[str, Any] = {"drk": strict_json(result) if result is not None else None, **(extra_metadata or {})}
    if result is None:
        return {"task_id": task_id, "status": state, "correctness": False, "decoy_kernel": False, "speedup": None,
                "reference_runtime": None, "kernel_runtime": None, "error_message": None, "metadata": metadata}
    metadata["drk_status"] = result.get("status")
    metadata["hack_reasons"] = list(result.get("hack_reasons") or [])
    return {
        "task_id": task_id,
        "status": state,
        "correctness": bool(result.get("correct")),
        "decoy_kernel": bool(result.get("hacked")),
        "speedup": _finite(result.get("speedup")),
        "reference_runtime": _finite(result.get("ref_ms")),
        "kernel_runtime": _finite(result.get("kernel_ms")),
        "error_message": result.get("error"),
        "metadata": metadata,
    }


def result_from_response(response: dict[str, Any]) -> EvalResult:
    """The real ``EvalResult`` inside a finished response (``metadata.drk``).

    Raises:
        ValueError: the response carries no drk result (the task is not finished, or the server is not drk).
    """
    drk = (response.get("metadata") or {}).get("drk")
    if not isinstance(drk, dict) or "status" not in drk:
        raise ValueError(f"task {response.get('task_id')!r} has no drk result (status {response.get('status')!r})")
    return EvalResult.from_dict(drk)


def _finite(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else None
