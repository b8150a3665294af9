"""Problems from tabular datasets: Parquet/JSONL/CSV files, Hugging Face ``datasets`` objects and hub ids.

Training at the paper's scale needs thousands of problems, and they come as datasets (KernelBench's own Hugging
Face release has one problem per row with columns ``code``, ``level``, ``name`` and ``problem_id``). That layout is
read as is; any other layout through a small column mapping (drk field -> dataset column). Every row is validated
exactly like a problem file (:meth:`Problem.from_source`), so a malformed row fails at load time with its row index
and name, not later inside an evaluation.

Only Parquet needs ``pyarrow``; only ``datasets`` objects, ``save_to_disk`` folders and ``hf:`` ids need the
``datasets`` package (the ``train`` extra). Both are imported when used.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from drk.gym.problem import Problem

#: drk field -> the column KernelBench's Hugging Face release uses for it.
DEFAULT_COLUMNS: dict[str, str] = {"code": "code", "name": "name", "level": "level", "problem_id": "problem_id"}
#: File suffixes read as one problem per row.
TABLE_SUFFIXES: tuple[str, ...] = (".parquet", ".jsonl", ".csv")
HF_PREFIX = "hf:"
_ID_PREFIX = re.compile(r"^(\d+)_")
#: Files ``Dataset.save_to_disk`` / ``DatasetDict.save_to_disk`` write: a folder holding one is a saved dataset.
_SAVED_MARKERS = ("dataset_dict.json", "state.json")


def is_dataset_spec(spec: Any) -> bool:
    """Whether ``load_problems`` should read ``spec`` as a dataset (anything but ``drk:``, a checkout or a .py)."""
    if not isinstance(spec, (str, Path)):
        return True
    text = str(spec)
    if text.startswith(HF_PREFIX):
        return True
    path = Path(text)
    return path.suffix.lower() in TABLE_SUFFIXES or (path.is_dir() and _is_saved_dataset(path))


def load_dataset_problems(spec: Any, columns: Mapping[str, str] | None = None,
                          split: str | None = None) -> list[Problem]:
    """Problems from a dataset ``spec`` (see :func:`is_dataset_spec`), sorted like ``load_problems``.

    Args:
        spec: a ``.parquet``/``.jsonl``/``.csv`` file, a ``save_to_disk`` folder, ``"hf:OWNER/NAME[:SPLIT]"``,
            a ``datasets.Dataset``/``DatasetDict``, a ``pandas.DataFrame`` or a list of dicts.
        columns: drk field (``code``, ``name``, ``level``, ``problem_id``) -> column name, for layouts other
            than KernelBench's; fields not given keep their default column.
        split: one split of a ``DatasetDict`` (default: every split, in order).

    Raises:
        ValueError: unreadable source, unknown split or column, or a row that is not a valid problem.
    """
    rows, source = dataset_rows(spec, split)
    return problems_from_rows(rows, columns, source=source)


def dataset_rows(spec: Any, split: str | None = None) -> tuple[Iterable[Mapping[str, Any]], str]:
    """The rows of any dataset spec (see :func:`load_dataset_problems`) and a label for error messages.

    Shared with other row-per-item data (``drk sft`` trajectories), so every loader takes the same sources.
    """
    if not isinstance(spec, (str, Path)):
        return _dataset_rows(spec, split), type(spec).__name__
    text = str(spec)
    if text.startswith(HF_PREFIX):
        return _dataset_rows(_load_hub(text[len(HF_PREFIX):], split), None), text
    if Path(text).is_dir():
        return _dataset_rows(_load_saved(Path(text)), split), text
    if split is not None:
        raise ValueError(f"split={split!r} given, but {text!r} is a single table")
    return _read_table(Path(text)), text


def problems_from_rows(rows: Iterable[Mapping[str, Any]], columns: Mapping[str, str] | None = None,
                       source: str = "dataset") -> list[Problem]:
    """Validate rows into problems; the error for a bad row names ``source``, the row index and its name."""
    mapping = _column_mapping(columns)
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(rows):
        if index == 0:
            _check_columns(row, mapping, columns or {}, source)
        problem = _row_problem(row, index, mapping, source)
        if problem.key in seen:
            raise ValueError(f"{source}: row {index} ({problem.name!r}) repeats problem {problem.key!r} of row "
                             f"{seen[problem.key]}; problem names must be unique within a level")
        seen[problem.key] = index
        problems.append(problem)
    if not problems:
        raise ValueError(f"{source}: no rows")
    return sorted(problems, key=lambda p: (p.level or 0, p.problem_id or 0, p.name))


def _column_mapping(columns: Mapping[str, str] | None) -> dict[str, str]:
    unknown = sorted(set(columns or {}) - set(DEFAULT_COLUMNS))
    if unknown:
        raise ValueError(f"columns={dict(columns)}: unknown drk fields {unknown}; use {sorted(DEFAULT_COLUMNS)}")
    return {**DEFAULT_COLUMNS, **(columns or {})}


def _check_columns(row: Mapping[str, Any], mapping: dict[str, str], explicit: Mapping[str, str],
                   source: str) -> None:
    """The code column, and every column the caller named, must exist (checked once, on the first row)."""
    required = {"code"} | set(explicit)
    missing = [f"{mapping[field]!r} (drk field {field!r})" for field in sorted(required) if mapping[field] not in row]
    if missing:
        raise ValueError(f"{source}: missing column {', '.join(missing)}; the columns are {sorted(row)} "
                         "(map drk fields to your columns with columns={'code': ..., 'name': ...})")


def _row_problem(row: Mapping[str, Any], index: int, mapping: dict[str, str], source: str) -> Problem:
    """One row as a validated problem; a missing name becomes ``row<index>``."""
    raw_name = _missing_to_none(row.get(mapping["name"]))
    name = str(raw_name).strip().removesuffix(".py") if raw_name is not None else f"row{index}"
    where = f"{source}: row {index} ({name!r})"
    code = row.get(mapping["code"])
    if not isinstance(code, str) or not code.strip():
        raise ValueError(f"{where}: column {mapping['code']!r} must hold the reference source, got "
                         f"{type(code).__name__}")
    if not name:
        raise ValueError(f"{where}: empty problem name in column {mapping['name']!r}")
    level = _optional_int(row.get(mapping["level"]), where, mapping["level"])
    problem_id = _optional_int(row.get(mapping["problem_id"]), where, mapping["problem_id"])
    if problem_id is None and (match := _ID_PREFIX.match(name)):
        problem_id = int(match.group(1))
    try:
        return Problem.from_source(code, name=name, level=level, problem_id=problem_id)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from exc


def _optional_int(value: Any, where: str, column: str) -> int | None:
    """Levels and ids arrive as ints, numpy ints, floats (a CSV/pandas gap is NaN) or strings such as ``"2"``."""
    value = _missing_to_none(value)
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number != int(number):
        raise ValueError(f"{where}: column {column!r} must be an integer, got {value!r}")
    return int(number)


def _missing_to_none(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    return value


def _read_table(path: Path) -> list[dict[str, Any]]:
    """Rows of a Parquet/JSONL/CSV file as plain Python values (no type guessing that could mangle names)."""
    if not path.is_file():
        raise ValueError(f"problem dataset {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    if suffix == ".jsonl":
        return _read_jsonl(path)
    if suffix != ".csv":
        raise ValueError(f"{str(path)!r}: a dataset file must end in one of {TABLE_SUFFIXES}")
    csv.field_size_limit(1 << 30)  # reference sources are long fields
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with open(path) as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the parser goes
                raise ValueError(f"{path}:{line_no}: not JSON: {type(exc).__name__}: {str(exc)[:200]}") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{line_no}: each line must be a JSON object")
            rows.append(row)
    return rows


def _is_saved_dataset(path: Path) -> bool:
    return any((path / marker).is_file() for marker in _SAVED_MARKERS)


def _load_saved(path: Path) -> Any:
    import datasets

    return datasets.load_from_disk(str(path))


def _load_hub(name_split: str, split: str | None) -> Any:
    """``OWNER/NAME[:SPLIT]`` through ``datasets.load_dataset`` (a ``split`` argument wins over the suffix)."""
    import datasets

    name, _, spec_split = name_split.partition(":")
    if not name:
        raise ValueError("hf: spec needs a dataset id, e.g. hf:ScalingIntelligence/KernelBench:level_1")
    split = split or spec_split or None
    return datasets.load_dataset(name, split=split) if split else datasets.load_dataset(name)


def _dataset_rows(data: Any, split: str | None) -> Iterable[Mapping[str, Any]]:
    """Rows of a ``Dataset``, ``DatasetDict`` (one split, or every split in order), DataFrame or list of dicts."""
    if hasattr(data, "to_dict") and hasattr(data, "columns") and hasattr(data, "iloc"):  # a pandas DataFrame
        return data.to_dict("records")
    if isinstance(data, Mapping):  # a DatasetDict (a dict of splits)
        if split is not None:
            if split not in data:
                raise ValueError(f"no split {split!r}; the splits are {sorted(data)}")
            return _dataset_rows(data[split], None)
        return [row for part in data.values() for row in _dataset_rows(part, None)]
    if split is not None:
        raise ValueError(f"split={split!r} given, but the data has no splits (a single {type(data).__name__})")
    if isinstance(data, (list, tuple)) or hasattr(data, "column_names"):
        return data
    raise ValueError(f"cannot read problems from a {type(data).__name__}: give a file, a datasets.Dataset/"
                     "DatasetDict, a DataFrame or a list of dicts")
