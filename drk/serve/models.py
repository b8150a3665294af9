"""Request and response bodies of ``drk serve`` (pydantic), in the KernelGYM field names.

Validation here is about shape (types, ranges, id syntax); limits that depend on the server's settings (code size,
queue room) and ``EvalConfig``'s own checks are applied by the routes, so their messages can name the setting.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr

#: Task and batch ids: what fits in a URL path segment and a log line.
#: Ids of tasks and batches: one path segment that HTTP clients do not rewrite, so never starting with a dot (``.``
#: and ``..`` were accepted, and then could not be fetched: clients normalise them out of ``/results/<id>``).
ID_PATTERN = r"^[A-Za-z0-9_:@-][A-Za-z0-9_.:@-]{0,127}$"
#: The largest per-task ``timeout`` (seconds) a request may ask for.
MAX_TIMEOUT_S = 3600.0


class EvalTask(BaseModel):
    """One candidate to judge against one reference. Unknown fields are accepted and reported as ignored."""

    model_config = ConfigDict(extra="allow")

    task_id: str | None = Field(None, pattern=ID_PATTERN,
                                description="unique id; re-submitting it returns the existing task (default: new)")
    reference_code: StrictStr = Field(description="the PyTorch reference in KernelBench form (Model, get_inputs, "
                                                  "get_init_inputs)")
    kernel_code: StrictStr = Field(description="the candidate module, or a whole LLM reply (last ```python block)")
    num_correct_trials: int | None = Field(None, ge=1, le=1000, description="-> EvalConfig.correctness_trials (>= 2)")
    num_perf_trials: int | None = Field(None, ge=1, le=100_000, description="-> EvalConfig.timing_trials (GPU)")
    timeout: float | None = Field(None, gt=0, le=MAX_TIMEOUT_S, description="-> EvalConfig.timeout_s (seconds)")
    problem_name: str | None = Field(None, max_length=200, description="drk: the result's problem name")
    drk_config: dict[str, Any] | None = Field(None, description="drk: EvalConfig fields (server-only keys excepted)")

    def payload(self) -> dict[str, Any]:
        """The task as stored and hashed: declared fields that are set, plus the extra ones."""
        return self.model_dump(exclude_none=True)


class BatchRequest(BaseModel):
    """Many tasks in one request; ids default to ``<batch_id>-<index>``."""

    batch_id: str | None = Field(None, pattern=ID_PATTERN)
    tasks: list[EvalTask] = Field(min_length=1)


class TaskResponse(BaseModel):
    """A task's state and, once finished, its verdict (KernelGYM names; drk's whole result in ``metadata.drk``)."""

    task_id: str
    status: str = Field(description="queued | running | completed (any verdict) | failed (the environment failed)")
    correctness: bool
    decoy_kernel: bool
    speedup: float | None
    reference_runtime: float | None = Field(description="milliseconds")
    kernel_runtime: float | None = Field(description="milliseconds")
    error_message: str | None
    metadata: dict[str, Any]


class BatchResponse(BaseModel):
    batch_id: str
    results: list[TaskResponse]
