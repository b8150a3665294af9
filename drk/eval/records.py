"""One evaluated turn of one sample, and the run config saved beside every record file."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from drk.provenance import git_sha

#: EvalResult fields copied into each record (the rest of the result stays in the environment's cache).
RESULT_FIELDS: tuple[str, ...] = (
    "status", "correct", "hacked", "hack_reasons", "speedup", "coverage", "ref_ms", "kernel_ms", "max_abs_err",
    "error", "feedback", "device", "timing_backend", "reference_mode", "timing_policy", "elapsed_s", "cached",
)


@dataclass
class EvalRecord:
    """Verdict on the reply of one sample at one turn (what :mod:`drk.metrics` and the figures read).

    ``correct`` means correct and not hacked; ``speedup``/``coverage`` are None on CPU; ``reward`` is
    :func:`drk.rl.rewards.turn_reward` of the result (the context-management ranking key).
    """

    problem: str
    level: int | None
    sample: int
    turn: int
    status: str
    correct: bool = False
    hacked: bool = False
    hack_reasons: list[str] = field(default_factory=list)
    speedup: float | None = None
    coverage: float | None = None
    ref_ms: float | None = None
    kernel_ms: float | None = None
    max_abs_err: float | None = None
    reward: float = 0.0
    error: str | None = None
    feedback: str = ""
    reply: str = ""
    device: str = ""
    timing_backend: str = ""
    reference_mode: str = "eager"
    timing_policy: str = "drk"
    context: str = "vanilla"
    policy: str = ""
    elapsed_s: float = 0.0
    cached: bool = False

    @classmethod
    def from_result(cls, result: Any, **keys: Any) -> EvalRecord:
        """Build from an ``EvalResult`` (or its dict) plus the episode keys (problem, level, sample, turn ...)."""
        data = result.to_dict() if hasattr(result, "to_dict") else dict(result)
        return cls(**{k: data[k] for k in RESULT_FIELDS if k in data}, **keys)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalRecord:
        """Inverse of :meth:`to_dict`; unknown keys are ignored (records from newer versions still load)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def config_path(records_path: str | Path) -> Path:
    """Where the run config of a record file lives: ``records.jsonl`` -> ``records.config.json``."""
    path = Path(records_path)
    return path.with_name(path.name.removesuffix(".jsonl") + ".config.json")


def write_run_config(records_path: str | Path, config: dict[str, Any]) -> Path:
    """Save the resolved run config, git SHA, drk version and start time beside the records."""
    import drk

    meta = {"git_sha": git_sha(), "drk_version": drk.__version__, "written_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    path = config_path(records_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config | meta, indent=2, default=str) + "\n")
    return path


def append_records(path: str | Path, records: list[EvalRecord]) -> None:
    """Append records to a JSONL file (one object per line)."""
    with open(path, "a") as fh:
        for record in records:
            fh.write(json.dumps(record.to_dict(), default=str) + "\n")


def load_records(path: str | Path) -> list[EvalRecord]:
    """Read records from JSONL (as :func:`drk.eval.runner.evaluate_policy` writes them) or Parquet."""
    if str(path).endswith(".parquet"):
        import pandas as pd

        rows = pd.read_parquet(path).to_dict("records")
        return [EvalRecord.from_dict({k: _from_parquet(v) for k, v in row.items()}) for row in rows]
    with open(path) as fh:
        return [EvalRecord.from_dict(json.loads(line)) for line in fh if line.strip()]


def save_parquet(records: list[EvalRecord], path: str | Path) -> Path:
    """Write records as one Parquet table (columnar, for large evaluations and dataframe tools)."""
    import pandas as pd

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([r.to_dict() for r in records]).to_parquet(path, index=False)
    return path


def _from_parquet(value: Any) -> Any:
    """Parquet gives back numpy arrays for lists and NaN for missing floats: restore lists and None."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, float) and value != value:
        return None
    return value
