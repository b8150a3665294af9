"""One evaluated turn of one sample, and the run config saved beside every record file."""

from __future__ import annotations

from dataclasses import MISSING, asdict, field, fields, make_dataclass
from pathlib import Path
from typing import Any

from drk.gym.result import EvalResult
from drk.jsonl import append_jsonl, read_jsonl
from drk.provenance import write_provenance

#: EvalResult fields a record leaves out: per-kernel detail that stays in the environment's cache, and ``problem``
#: (a record names its problem by key, an episode field). Every other result field is a record field, so a new
#: ``EvalResult`` field reaches the records with no edit here.
LEFT_OUT_RESULT_FIELDS: frozenset[str] = frozenset({"problem", "profile", "triton_kernels", "stage_s"})

#: The episode's own fields: which sample and turn the verdict belongs to, the reply, and how it was asked for.
EPISODE_FIELDS: tuple[tuple[str, Any, Any], ...] = (
    ("problem", "str", MISSING),  # the problem's key, e.g. "L1/01_ReLU"
    ("level", "int | None", MISSING),
    ("sample", "int", MISSING),
    ("turn", "int", MISSING),  # 1-based
    ("reward", "float", 0.0),  # drk.rl.turn_reward of the result: the context-management ranking key
    ("reply", "str", ""),  # the policy's whole reply (the environment judged its answer part)
    ("context", "str", "vanilla"),  # drk.eval.context strategy the reply was asked with
    ("policy", "str", ""),  # the policy's model, else its kind
)


class _RecordMethods:
    """Construction and (de)serialisation of :class:`EvalRecord`."""

    @classmethod
    def from_result(cls, result: Any, **keys: Any) -> EvalRecord:
        """Build from an ``EvalResult`` (or its dict) plus the episode keys (problem, level, sample, turn ...)."""
        data = result.to_dict() if hasattr(result, "to_dict") else dict(result)
        names = {f.name for f in fields(cls)} - set(keys)
        return cls(**{k: v for k, v in data.items() if k in names}, **keys)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalRecord:
        """Inverse of :meth:`to_dict`; unknown keys are ignored (records from newer versions still load)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def _record_fields() -> list[tuple[str, Any, Any]]:
    """The episode fields, then every ``EvalResult`` field not left out, with the result's types and defaults."""
    own = [(name, kind, field() if default is MISSING else field(default=default))
           for name, kind, default in EPISODE_FIELDS]
    taken = {name for name, _, _ in EPISODE_FIELDS}
    result = [(f.name, f.type, field(default=f.default, default_factory=f.default_factory))
              for f in fields(EvalResult) if f.name not in LEFT_OUT_RESULT_FIELDS | taken]
    return own + result


#: Verdict on the reply of one sample at one turn (what :mod:`drk.metrics` and the figures read): the episode fields
#: (:data:`EPISODE_FIELDS`) and the fields of its ``EvalResult`` (``correct`` means correct and not hacked;
#: ``speedup``/``coverage`` are None on CPU). Keyword construction only.
EvalRecord = make_dataclass("EvalRecord", _record_fields(), bases=(_RecordMethods,), kw_only=True,
                            namespace={"__module__": __name__, "__doc__": (
                                "Verdict on the reply of one sample at one turn: the episode fields "
                                "(drk.eval.records.EPISODE_FIELDS) and its EvalResult's fields, less "
                                "drk.eval.records.LEFT_OUT_RESULT_FIELDS.")})


def config_path(records_path: str | Path) -> Path:
    """Where the run config of a record file lives: ``records.jsonl`` -> ``records.config.json``."""
    path = Path(records_path)
    return path.with_name(path.name.removesuffix(".jsonl") + ".config.json")


def write_run_config(records_path: str | Path, config: dict[str, Any]) -> Path:
    """Save the resolved run config beside the records, stamped by :func:`drk.provenance.write_provenance`."""
    return write_provenance(config_path(records_path), config)


def append_records(path: str | Path, records: list[EvalRecord]) -> None:
    """Append records to a JSONL file (one object per line)."""
    append_jsonl(path, (record.to_dict() for record in records), default=str)


def load_records(path: str | Path) -> list[EvalRecord]:
    """Read records from JSONL (as :func:`drk.eval.runner.evaluate_policy` writes them) or Parquet."""
    if str(path).endswith(".parquet"):
        import pandas as pd

        rows = pd.read_parquet(path).to_dict("records")
        return [EvalRecord.from_dict({k: _from_parquet(v) for k, v in row.items()}) for row in rows]
    return [EvalRecord.from_dict(row) for row in read_jsonl(path)]


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
