"""Batch evaluation of stored replies: ``drk eval PROBLEMS CANDIDATES --out results.parquet``.

Replies come from elsewhere (another sampler, a trainer's dump, a folder of hand-written kernels) as rows of
``{problem, reply}``; each is judged against the problem of that name through :class:`drk.gym.Pool`, whose cache
makes an interrupted run resume where it stopped (finished evaluations are cache hits). A row that cannot be judged
(unknown problem, no reply) becomes an *input error* record instead of stopping the batch, and is left out of the
scores: it says nothing about any candidate.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from drk import metrics
from drk.gym import EvalConfig, EvalResult, Pool, Problem
from drk.gym.result import clean_text
from drk.gym.wire import json_safe

#: Candidate files suffixes: a ``CANDIDATES`` that is one of these files, or a folder, selects the batch form.
CANDIDATE_TABLES: tuple[str, ...] = (".jsonl", ".parquet")
#: Reply files in a candidates folder, named ``<problem name><suffix>``.
CANDIDATE_FILES: tuple[str, ...] = (".py", ".md")
#: Output formats of :func:`write_records`.
OUTPUT_SUFFIXES: tuple[str, ...] = (".parquet", ".jsonl")
_RESULT_FIELDS = tuple(f.name for f in fields(EvalResult) if f.name != "problem")


@dataclass
class CandidateRow:
    """One reply to judge; ``error`` is set when the row itself is malformed (it is then not evaluated)."""

    row: int
    problem: str
    reply: str | None
    source: str
    error: str | None = None


def is_batch_spec(candidates: str | Path) -> bool:
    """The batch form: ``CANDIDATES`` is a JSONL/Parquet file or a folder (else one candidate file)."""
    path = Path(candidates)
    return path.is_dir() or path.suffix.lower() in CANDIDATE_TABLES


def load_candidates(spec: str | Path) -> list[CandidateRow]:
    """Rows of a JSONL/Parquet file of ``{problem, reply}`` (other columns ignored) or of a folder of replies.

    Raises:
        ValueError: the file or folder does not exist, or holds no candidates.
    """
    path = Path(spec)
    if path.is_dir():
        rows = _folder_rows(path)
    elif not path.is_file():
        raise ValueError(f"candidates {str(path)!r}: no such file or folder")
    elif path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        rows = [_table_row(i, row, f"{path.name}[{i}]") for i, row in enumerate(pq.read_table(path).to_pylist())]
    else:
        rows = _jsonl_rows(path)
    if not rows:
        raise ValueError(f"candidates {str(path)!r}: no rows (need {{problem, reply}} rows or <problem>.py files)")
    return rows


def _folder_rows(folder: Path) -> list[CandidateRow]:
    files = sorted(f for f in folder.iterdir() if f.is_file() and f.suffix.lower() in CANDIDATE_FILES)
    rows = []
    for i, file in enumerate(files):
        try:
            rows.append(CandidateRow(i, file.stem, file.read_text(), file.name))
        except (OSError, UnicodeDecodeError) as exc:
            rows.append(CandidateRow(i, file.stem, None, file.name, f"unreadable reply file: {exc}"))
    return rows


def _jsonl_rows(path: Path) -> list[CandidateRow]:
    rows = []
    with open(path, "rb") as handle:  # decoded line by line: one bad line is that row's error, not the batch's
        for line_no, raw in enumerate(handle, 1):
            where = f"{path.name}:{line_no}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                rows.append(CandidateRow(len(rows), "", None, where, f"not UTF-8: {exc}"[:300]))
                continue
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the parser goes
                rows.append(CandidateRow(len(rows), "", None, where, f"not JSON: {type(exc).__name__}: {exc}"[:300]))
                continue
            rows.append(_table_row(len(rows), data, where))
    return rows


def _table_row(index: int, data: Any, where: str) -> CandidateRow:
    """A ``{problem, reply}`` row; anything else is kept as an error row so the batch goes on."""
    if not isinstance(data, dict):
        return CandidateRow(index, "", None, where, "a row must be an object with 'problem' and 'reply'")
    problem, reply = data.get("problem"), data.get("reply")
    name = problem if isinstance(problem, str) else ""
    if not name.strip():
        return CandidateRow(index, name, None, where, "the row has no 'problem' (the problem's name)")
    if not isinstance(reply, str):
        return CandidateRow(index, name, None, where, "the row has no 'reply' text")
    return CandidateRow(index, name, reply, where)


def problem_resolver(problems: Sequence[Problem]) -> Callable[[str], Problem | str]:
    """A lookup from the name a row gives to its problem (by ``name``, or by ``key`` such as ``L2/07_X`` when
    names repeat across levels), returning an error message instead when there is no single match."""
    by_key = {p.key: p for p in problems}
    by_name: dict[str, list[Problem]] = {}
    for problem in problems:
        by_name.setdefault(problem.name, []).append(problem)

    def resolve(name: str) -> Problem | str:
        matches = [by_key[name]] if name in by_key else by_name.get(name.removesuffix(".py"), [])
        if len(matches) == 1:
            return matches[0]
        if matches:
            return f"problem name {name!r} is ambiguous: use one of {[p.key for p in matches]}"
        known = sorted(by_name)
        shown = ", ".join(known[:8]) + (f", ... ({len(known)} in all)" if len(known) > 8 else "")
        return f"unknown problem {name!r}; the problems are: {shown}"

    return resolve


def evaluate_batch(problems: Sequence[Problem], rows: Sequence[CandidateRow], pool: Pool,
                   config: EvalConfig | None = None) -> list[dict[str, Any]]:
    """One record per row, in row order: row, problem, problem_key, source, input_error and every result field.

    Rows that resolve to a problem go through ``pool.map`` in one batch (concurrent, cached, deduplicated).
    """
    resolve = problem_resolver(problems)
    targets = [resolve(r.problem) if r.error is None else r.error for r in rows]
    todo = [i for i, t in enumerate(targets) if isinstance(t, Problem)]
    results = pool.map([(targets[i], rows[i].reply) for i in todo], config)
    by_row = dict(zip(todo, results, strict=True))
    return [_record(row, targets[i], by_row.get(i)) for i, row in enumerate(rows)]


def _record(row: CandidateRow, target: Problem | str, result: EvalResult | None) -> dict[str, Any]:
    # the row's own text as valid UTF-8: a lone surrogate in one row's problem name once lost the whole Parquet file
    base = {"row": row.row, "problem": _text(row.problem), "problem_key": None, "source": _text(row.source)}
    if result is None:
        return base | {"input_error": True} | dict.fromkeys(_RESULT_FIELDS) | {"error": clean_text(str(target))}
    data = result.to_dict()
    return base | {"problem_key": target.key, "input_error": False} | {k: data[k] for k in _RESULT_FIELDS}


def _text(value: Any) -> Any:
    return clean_text(value) if isinstance(value, str) else value


def check_output_path(path: str | Path) -> Path:
    """Refuse an output format we cannot write before a long batch runs, not after."""
    path = Path(path)
    if path.suffix.lower() not in OUTPUT_SUFFIXES:
        raise ValueError(f"--out {str(path)!r}: must end in one of {OUTPUT_SUFFIXES}")
    return path


def write_records(records: list[dict[str, Any]], path: str | Path) -> Path:
    """Write records as Parquet or JSONL (by suffix), strictly JSON-safe: no NaN or Infinity anywhere.

    Non-finite top-level numbers become null; in Parquet, list and dict fields (``hack_reasons``,
    ``triton_kernels``, ``profile``, ``stage_s``) are JSON strings, so that every column has one plain type.
    """
    path = check_output_path(path)
    suffix = path.suffix.lower()
    path.parent.mkdir(parents=True, exist_ok=True)
    clean = [json_safe({k: _finite(v) for k, v in r.items()}) for r in records]
    if suffix == ".jsonl":
        with open(path, "w") as handle:
            handle.writelines(json.dumps(r, allow_nan=False) + "\n" for r in clean)
        return path
    import pandas as pd

    flat = [{k: json.dumps(v, allow_nan=False) if isinstance(v, (dict, list)) else v for k, v in r.items()}
            for r in clean]
    pd.DataFrame(flat, columns=list(records[0]) if records else None).to_parquet(path, index=False)
    return path


def _finite(value: Any) -> Any:
    """A non-finite number in a numeric column is null (``json_safe`` would make it the string ``"nan"``)."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def batch_summary(records: list[dict[str, Any]], ps: Sequence[float] = metrics.FAST_P_THRESHOLDS) -> dict[str, Any]:
    """Counts and scores of a batch; input-error rows are counted but not scored (they judge no candidate).

    Every evaluated row is one sample (``drk.metrics``): Fast@p, correct, compiled and hacked are shares of them.
    """
    judged = [r for r in records if not r["input_error"]]
    statuses: dict[str, int] = {}
    for r in judged:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    summary: dict[str, Any] = {
        "rows": len(records), "evaluated": len(judged), "input_errors": len(records) - len(judged),
        "cached": sum(bool(r["cached"]) for r in judged), "env_errors": sum(bool(r["env_error"]) for r in judged),
        "statuses": statuses,
        "speedup_measured": sum(r["speedup"] is not None for r in judged),
    }
    if judged:
        samples = [{"problem": r["problem_key"], "sample": r["row"], "turn": 1, "correct": r["correct"],
                    "hacked": r["hacked"], "speedup": r["speedup"], "status": r["status"]} for r in judged]
        summary |= {"correct": metrics.correct_rate(samples), "compiled": metrics.compile_rate(samples),
                    "hacked": metrics.hacking_ratio(samples)}
        summary |= {f"fast@{p:g}": metrics.fast_p(samples, p) for p in ps}
    return summary


def format_summary(summary: dict[str, Any]) -> str:
    """The summary as a few lines for the terminal."""
    lines = [f"{summary['rows']} rows: {summary['evaluated']} evaluated ({summary['cached']} from the cache), "
             f"{summary['input_errors']} input errors, {summary['env_errors']} environment errors"]
    if summary["statuses"]:
        lines.append("statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["statuses"].items())))
    if summary["evaluated"]:
        scores = [f"{k} {summary[k]:.3f}" for k in summary if k.startswith("fast@")]
        lines.append(f"correct {summary['correct']:.3f}  compiled {summary['compiled']:.3f}  "
                     f"hacked {summary['hacked']:.3f}  " + "  ".join(scores))
        if not summary["speedup_measured"]:
            lines.append("(no speedups measured: CPU interpreter timings are not GPU speedups, so Fast@p is 0)")
    return "\n".join(lines)


def input_error_lines(records: list[dict[str, Any]], limit: int = 10) -> list[str]:
    """One line per row that was not judged (the first ``limit``), naming where the row came from."""
    errors = [r for r in records if r["input_error"]]
    lines = [f"row {r['row']} ({r['source']}): {r['error']}" for r in errors[:limit]]
    if len(errors) > limit:
        lines.append(f"... and {len(errors) - limit} more input errors (see the records' 'error' column)")
    return lines
