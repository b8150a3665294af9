"""The result of evaluating one candidate: a closed status set, JSON round-trip."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

#: Every evaluation ends in exactly one of these, ordered from "never ran" to "passed".
STATUSES: tuple[str, ...] = (
    "format_error",  # no code found, or no `class ModelNew`
    "compile_error",  # syntax error, import failure, constructor failure, Triton compilation failure
    "runtime_error",  # forward raised, or the child process died (segfault, os._exit, out of memory)
    "timeout",  # wall-clock limit exceeded
    "incorrect",  # ran, but outputs differ from the reference (or shapes, or inputs were mutated)
    "hacked",  # outputs may match, but the hacking checks say the Triton kernels are not doing the work
    "correct",  # matches the reference and passes every hacking check
)


def mentions_out_of_memory(text: str | None) -> bool:
    """Whether an error text is torch's or the CUDA driver's out-of-memory error (or Python's ``MemoryError``).

    The text may be the candidate's: a match is a reason to look again (run alone, or charge the candidate), never
    a reason to trust it."""
    text = (text or "").lower()
    return any(mark in text for mark in ("out of memory", "outofmemoryerror", "cuda_error_out_of_memory",
                                         "memoryerror"))


def mentions_cuda_fault(text: str | None) -> bool:
    """Whether an error text is one of CUDA's errors that stay with the process's context once raised (a device-side
    assert, an illegal address, a launch failure): every later CUDA call of that process fails too. The text may be
    the candidate's; a match only ever buys it a fresh process."""
    text = (text or "").lower()
    return any(mark in text for mark in ("cuda error", "device-side assert", "illegal memory access",
                                         "unspecified launch failure", "cudaerror"))


@dataclass
class EvalResult:
    """Verdict on one candidate for one problem.

    Times are milliseconds (medians, with interquartile ranges as the spread). ``speedup`` is only set for GPU
    timings; under the Triton interpreter ``ref_ms``/``kernel_ms`` are interpreter wall times and
    ``timing_backend`` says so.
    """

    status: str
    problem: str = ""
    correct: bool = False
    hacked: bool = False
    hack_reasons: list[str] = field(default_factory=list)
    speedup: float | None = None
    ref_ms: float | None = None
    kernel_ms: float | None = None
    ref_ms_iqr: float | None = None
    kernel_ms_iqr: float | None = None
    coverage: float | None = None
    triton_kernels: dict[str, int] = field(default_factory=dict)
    profile: list[dict[str, Any]] = field(default_factory=list)
    max_abs_err: float | None = None
    num_correct_trials: int = 0
    num_trials: int = 0
    error: str | None = None
    feedback: str = ""
    device: str = ""
    timing_backend: str = ""
    reference_mode: str = "eager"
    timing_policy: str = "drk"
    stage: str = ""
    elapsed_s: float = 0.0
    stage_s: dict[str, float] = field(default_factory=dict)  # wall seconds per pipeline stage (where time goes)
    cached: bool = False
    env_error: bool = False  # the environment failed (e.g. GPU out of memory in the reference), not the candidate
    isolation: str = ""  # how the candidate's process was sandboxed (drk.gym.isolation levels)
    #: how the judge got the candidate's outputs: "memory" (read from its stopped process, drk.gym.direct_reads) or
    #: "runner" (its runner's answers: a GPU, or a machine where the judge may not read another process's memory)
    outputs_read: str = ""
    unaccounted_calibrated_ms: float | None = None  # the same against the runner's own loop, timed on trusted code
    unaccounted_ms: float | None = None  # wall ms per timed call the candidate's reported times did not cover
    timing_quiet: bool | None = None  # whether other evaluations' GPU work had stopped when the timing began
    settle_excess_ms: float | None = None  # median end->settled, candidate minus reference (work left running)
    flush_excess_ms: float | None = None  # median L2-flush time, candidate minus reference (work run before start)
    timing_charge_ms: float | None = None  # GPU: unaccounted ms per call beyond the slack, added to kernel_ms
    #: GPU burst rounds (``EvalConfig.timing_burst_cycles``): the busy-wait the last round ran behind (it doubles after
    #: a round the host could not queue within it) and how many rounds that happened in (None: synced rounds)
    burst_cycles: int | None = None
    burst_starved_rounds: int | None = None
    candidate_output_bytes: int = 0  # bytes the candidate's process wrote to stdout/stderr (kept: the last 64 KiB)
    judge_gpu_mb: float | None = None  # GPU: the judge process's peak reserved memory (how a Pool sizes admissions)
    #: GPU: the judge's peak of memory in live tensors (MiB); far below ``judge_gpu_mb``, the rest is the caching
    #: allocator's unused reserve (fragmentation), not data the judge needs
    judge_gpu_allocated_mb: float | None = None
    #: GPU: the judge's running peak (MiB) as each stage ended: which stage its footprint comes from (None on CPU:
    #: an empty mapping has no Parquet type)
    judge_gpu_mb_by_stage: dict[str, float] | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status={self.status!r}: must be one of {STATUSES}")
        # text from the candidate's process (exception messages, kernel names) can hold lone surrogates, which no
        # UTF-8 writer accepts: the CLI, Parquet and the HTTP service once failed on one `raise RuntimeError("\ud800")`
        for name, value in vars(self).items():
            clean = _clean(value)
            if clean is not value:
                object.__setattr__(self, name, clean)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalResult:
        """Inverse of :meth:`to_dict`; keys this version does not know are ignored (forward compatibility)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b.*$")


def error_headline(error: str | None, limit: int = 240) -> str:
    """The line of an error text that says what happened: the last exception line of a traceback (``RuntimeError:
    CUDA error: ...``) where there is one, else the first line. A traceback's first line says nothing and its tail
    is often boilerplate (CUDA's advice on ``CUDA_LAUNCH_BLOCKING``): tables and logs show this line."""
    lines = (error or "").splitlines()
    exception_lines = [line.strip() for line in lines if _EXCEPTION_LINE.match(line.strip())]
    head = lines[0] if lines else ""
    if exception_lines:
        prefix = head.split("Traceback", 1)[0].strip() if "Traceback" in head else ""
        return f"{prefix} {exception_lines[-1]}".strip()[:limit]
    return head[:limit]


def results_frame(results: list[EvalResult], labels: list[str] | None = None):
    """A tidy ``pandas.DataFrame`` of results (one row each), for tables, notebooks and figure data."""
    import pandas as pd

    rows = []
    for i, result in enumerate(results):
        row = result.to_dict()
        row["label"] = labels[i] if labels else result.problem
        row["hack_reasons"] = ",".join(result.hack_reasons)
        row["error"] = error_headline(result.error, 160)
        row["triton_kernels"] = ",".join(f"{k}x{v}" for k, v in result.triton_kernels.items())
        rows.append(row)
    columns = ["label", "status", "correct", "hacked", "hack_reasons", "speedup", "coverage", "ref_ms", "kernel_ms",
               "max_abs_err", "triton_kernels", "timing_backend", "device", "elapsed_s", "judge_gpu_mb", "error"]
    return pd.DataFrame(rows, columns=columns)


def mean_stage_seconds(results: list[EvalResult]) -> dict[str, float]:
    """Mean wall seconds per pipeline stage (``EvalResult.stage_s``) over ``results``, a stage an evaluation never
    reached counting 0: where a batch's time went."""
    names = sorted({k for r in results for k in (r.stage_s or {})})
    return {k: round(sum((r.stage_s or {}).get(k, 0.0) for r in results) / len(results), 2) for k in names}


def clean_text(text: str) -> str:
    """``text`` as valid UTF-8 (lone surrogates replaced by ``?``)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _clean(value: Any) -> Any:
    """``value`` with every string in it made valid UTF-8 (the same object when nothing needed it)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        items = [_clean(v) for v in value]
        return value if items == value else items
    if isinstance(value, dict):
        items = {_clean(k): _clean(v) for k, v in value.items()}
        return value if items == value else items
    return value
