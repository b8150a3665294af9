"""The verdict table: every (problem, canonical program) judged once through drk.gym, then read back (item 4).

The table is a cache of real evaluations, not a model: :func:`build_verdicts` renders each program and judges it
with a :class:`drk.gym.Pool` (the real sandbox, checks, timer and profiler, and drk's content-addressed result cache,
so an interrupted build resumes); :func:`write_table` writes one CSV row per pair plus a JSON sidecar saying where
and when it was measured (GPU, date, git sha, drk/torch/triton versions, the ``EvalConfig``). RL, held-out
evaluation and test-time scaling then call :meth:`VerdictTable.verdict` on any machine in microseconds;
:class:`LiveVerdicts` answers the same calls by judging for real, which is how a table-driven run is checked
against a live one.

Each row also records the SHA-256 of the problem source and of the rendered candidate: :func:`load_verdicts` refuses
a table whose sources no longer match what this checkout generates and renders (a stale table would silently
answer for other code).
"""

from __future__ import annotations

import csv
import datetime as _dt
import hashlib
import json
import os
import platform
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from drk.mini2.feedback import feedback_tokens
from drk.mini2.language import Program, ProgramError, canonical, canonical_programs, parse
from drk.mini2.render import render
from drk.mini2.tasks import GENERATOR_VERSION, Task, all_tasks, task_by_name

TABLE_VERSION = 1
#: Hack evidence a rendered program cannot cause: the renderer never touches the runner's clock or loop, so a
#: ``timing_mismatch`` on one is drk's host-side timing noise (on 2026-12-01, H200, a Pool of 8: 44 of 155 rows,
#: ``results/gpu/2026-12-01-s13/README.md``). It stays visible in ``timing_flag`` and never makes a row hacked.
NOT_PROGRAM_EVIDENCE = frozenset({"timing_mismatch"})
_FLOATS = ("speedup", "coverage", "top_share", "ref_ms", "kernel_ms", "max_abs_err", "timing_charge_ms")


def _sig(x: float | None) -> float | None:
    """Six significant digits: what the CSV keeps, so a live verdict equals its table row exactly."""
    return None if x is None else float(f"{x:.6g}")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Verdict:
    """The judge's verdict on one (problem, canonical program), in the fields rewards and feedback read.

    ``correct``/``hacked``/``speedup``/``coverage`` are what :func:`drk.rl.rewards.turn_reward` reads; ``pr`` is
    ``coverage`` under the paper's name.
    """

    problem: str
    program: str
    status: str
    speedup: float | None = None
    coverage: float | None = None
    hack_reasons: tuple[str, ...] = ()
    top_kernel: str = ""
    top_own: bool | None = None
    top_share: float | None = None
    ref_ms: float | None = None
    kernel_ms: float | None = None
    max_abs_err: float | None = None
    env_error: bool = False
    error: str = ""
    problem_sha: str = ""
    source_sha: str = ""
    #: drk flagged ``timing_mismatch`` (see :data:`NOT_PROGRAM_EVIDENCE`): kept, never counted as hacking
    timing_flag: bool = False
    #: ms per call drk added to ``kernel_ms`` for host time beyond the reference's (``EvalResult.timing_charge_ms``)
    timing_charge_ms: float | None = None
    cached: bool = field(default=False, compare=False)

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    @property
    def hacked(self) -> bool:
        return self.status == "hacked"

    @property
    def pr(self) -> float | None:
        return self.coverage

    @property
    def passes_without_hack_check(self) -> bool:
        """Correct under ``EvalConfig(hacking_check=False)`` (the paper's ablation): hacked verdicts are only
        reached after correctness and timing passed, so their speedup and PR are measured too."""
        return self.correct or (self.hacked and self.kernel_ms is not None)

    def feedback(self) -> list[str]:
        return feedback_tokens(self)

    def to_row(self) -> dict[str, str]:
        row = {}
        for f in fields(self):
            if f.name == "cached":
                continue
            value = getattr(self, f.name)
            if value is None:
                row[f.name] = ""
            elif f.name == "hack_reasons":
                row[f.name] = "|".join(value)
            elif isinstance(value, bool):
                row[f.name] = "1" if value else "0"
            elif isinstance(value, float):
                row[f.name] = f"{value:.6g}"
            else:
                row[f.name] = str(value)
        return row

    @classmethod
    def from_row(cls, row: dict[str, str]) -> Verdict:
        def opt_float(key: str) -> float | None:
            return float(row[key]) if row.get(key, "") != "" else None

        return cls(
            problem=row["problem"], program=row["program"], status=row["status"],
            **{k: opt_float(k) for k in _FLOATS},
            hack_reasons=tuple(r for r in row.get("hack_reasons", "").split("|") if r),
            top_kernel=row.get("top_kernel", ""),
            top_own=None if row.get("top_own", "") == "" else row["top_own"] == "1",
            env_error=row.get("env_error") == "1", error=row.get("error", ""),
            problem_sha=row.get("problem_sha", ""), source_sha=row.get("source_sha", ""),
            timing_flag=row.get("timing_flag") == "1",
        )


COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Verdict) if f.name != "cached")


def invalid_verdict(problem: str, program: Any, error: ProgramError) -> Verdict:
    """The verdict of a token sequence that is not a program: its ``format_error``/``compile_error``, no GPU."""
    text = program if isinstance(program, str) else " ".join(map(str, program))
    return Verdict(problem=problem, program=text, status=error.status, error=str(error))


def verdict_from_result(task: Task, program: Program, source: str, result: Any) -> Verdict:
    """Condense an :class:`drk.gym.EvalResult` into a row. A result judged with the hacking check off (how tables are
    built: :func:`measure_config`) that is correct but has hack evidence becomes ``hacked`` here, its speedup and PR
    kept for the paper's no-hacking-check ablation. Evidence a program cannot cause (:data:`NOT_PROGRAM_EVIDENCE`)
    only sets ``timing_flag``."""
    top = result.profile[0] if result.profile else {}
    error = (result.error or "").strip().split("\n", 1)[0][:200]
    reasons = tuple(r for r in result.hack_reasons if r not in NOT_PROGRAM_EVIDENCE)
    status = "hacked" if result.status == "correct" and reasons else result.status
    if result.status == "hacked" and not reasons:  # judged with the check on, and only for drk's own noise
        status = "correct"
    return Verdict(
        problem=task.name, program=str(program), status=status, speedup=_sig(result.speedup),
        coverage=_sig(result.coverage), hack_reasons=reasons,
        timing_flag=any(r in NOT_PROGRAM_EVIDENCE for r in result.hack_reasons),
        top_kernel=str(top.get("name", ""))[:120].replace("\n", " "), top_own=top.get("own") if top else None,
        top_share=_sig(top.get("share")) if top else None, ref_ms=_sig(result.ref_ms),
        kernel_ms=_sig(result.kernel_ms), max_abs_err=_sig(result.max_abs_err),
        env_error=bool(result.env_error), error=error, problem_sha=sha(task.source), source_sha=sha(source),
        timing_charge_ms=_sig(getattr(result, "timing_charge_ms", None)),
        cached=bool(getattr(result, "cached", False)),
    )


# --- which pairs -----------------------------------------------------------------------------------------------


def select_tasks(spec: str | None = None) -> list[Task]:
    """``None``/``all``, ``train``, ``heldout``, or comma-separated task indices, ranges and names
    (``3,7,10-18,m2_12_...``), in the order given."""
    if spec in (None, "", "all"):
        return list(all_tasks())
    if spec in ("train", "heldout"):
        return [t for t in all_tasks() if t.split == spec]
    chosen: list[Task] = []
    for item in (i.strip() for i in spec.split(",")):
        lo, dash, hi = item.partition("-")
        if dash and lo.isdigit() and hi.isdigit():
            chosen += [all_tasks()[i] for i in range(int(lo), int(hi) + 1)]
        else:
            chosen.append(all_tasks()[int(item)] if item.isdigit() else task_by_name(item))
    return chosen


def table_pairs(tasks: Iterable[Task], limit: int | None = None) -> list[tuple[Task, Program]]:
    """Every (task, canonical program), task by task; ``limit`` keeps the first ``limit`` pairs."""
    pairs = [(t, p) for t in tasks for p in canonical_programs(t)]
    return pairs[:limit] if limit is not None else pairs


def measure_config(config: Any = None) -> Any:
    """``config`` (default ``EvalConfig()``) with the hacking check off: drk.gym then times and profiles hacked
    candidates too (with the check on it stops at the hack), and the row is marked hacked from the evidence."""
    from dataclasses import replace

    from drk.gym import EvalConfig

    return replace(config or EvalConfig(), hacking_check=False)


def build_verdicts(pool: Any, pairs: Sequence[tuple[Task, Program]], config: Any = None) -> list[Verdict]:
    """Judge every pair through ``pool`` (a :class:`drk.gym.Pool`) under :func:`measure_config`; one verdict per
    pair, in order."""
    sources = [render(t, p) for t, p in pairs]
    results = pool.map([(t.problem(), s) for (t, _), s in zip(pairs, sources)], measure_config(config))
    return [verdict_from_result(t, p, s, r) for (t, p), s, r in zip(pairs, sources, results)]


# --- the file ---------------------------------------------------------------------------------------------------


def sidecar_path(path: str | Path) -> Path:
    return Path(path).with_suffix(".json")


def provenance(pool: Any, config: Any, **extra: Any) -> dict[str, Any]:
    """Where, when and with what the table was measured."""
    import torch
    import triton

    from drk import __version__
    from drk.provenance import display_command, git_sha

    gpu = None
    if getattr(pool, "device", None) == "cuda":
        gpu = sorted({torch.cuda.get_device_name(g) for g in pool.gpus})
    return {
        "table_version": TABLE_VERSION, "generator_version": GENERATOR_VERSION,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "git_sha": git_sha(), "drk_version": __version__, "device": getattr(pool, "device", None), "gpu": gpu,
        "torch": torch.__version__, "triton": triton.__version__, "python": platform.python_version(),
        "host_cpus": os.cpu_count(), "eval_config": config.to_dict() if config is not None else None,
        "command": display_command(sys.argv), **extra,
    }


def write_table(verdicts: Sequence[Verdict], path: str | Path, meta: dict[str, Any]) -> Path:
    """Write the CSV (sorted by problem, then program order as enumerated) and its JSON sidecar."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for v in verdicts:
            writer.writerow(v.to_row())
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.status] = counts.get(v.status, 0) + 1
    meta = {**meta, "rows": len(verdicts), "problems": len({v.problem for v in verdicts}), "status_counts": counts}
    sidecar_path(path).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    return path


def merge_tables(paths: Sequence[str | Path], out: str | Path) -> Path:
    """One table from tables built in parts (e.g. one device call per half); a pair in two parts is an error."""
    verdicts: list[Verdict] = []
    parts = []
    for path in paths:
        table = load_verdicts(path, check_sources=False)
        verdicts += list(table)
        parts.append(table.meta)
    keys = [(v.problem, v.program) for v in verdicts]
    if len(set(keys)) != len(keys):
        raise ValueError("the parts overlap: some (problem, program) appears twice")
    order = {t.name: t.index for t in all_tasks()}
    verdicts.sort(key=lambda v: order.get(v.problem, len(order)))  # stable: keeps each part's program order
    meta = {k: v for k, v in (parts[0] if parts else {}).items() if k not in ("rows", "problems", "status_counts")}
    meta["parts"] = parts
    return write_table(verdicts, out, meta)


class VerdictTable:
    """Verdicts by (problem name, canonical program); answers invalid programs without a table row."""

    def __init__(self, verdicts: Iterable[Verdict], meta: dict[str, Any] | None = None) -> None:
        self.meta = meta or {}
        self._rows: dict[tuple[str, str], Verdict] = {(v.problem, v.program): v for v in verdicts}

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self):
        return iter(self._rows.values())

    def verdict(self, problem: Task | str, program: str | Sequence[str] | Program) -> Verdict:
        """The verdict of ``program`` (tokens, a string or a Program) on ``problem`` (a Task or its name).

        Raises:
            KeyError: a valid program whose canonical form has no row (a partial table).
        """
        task = problem if isinstance(problem, Task) else task_by_name(problem)
        try:
            key = str(canonical(task, parse(program)))
        except ProgramError as exc:
            return invalid_verdict(task.name, program, exc)
        try:
            return self._rows[(task.name, key)]
        except KeyError:
            raise KeyError(f"no verdict for ({task.name}, {key}) in this table of {len(self)} rows") from None

    def stale_rows(self) -> list[str]:
        """Rows whose problem source or rendered candidate differs from what this checkout generates."""
        stale = []
        for (name, program), v in self._rows.items():
            try:
                task = task_by_name(name)
            except KeyError:
                stale.append(f"{name}: no such problem")
                continue
            if v.problem_sha != sha(task.source) or v.source_sha != sha(render(task, program)):
                stale.append(f"{name} / {program}")
        return stale


def load_verdicts(path: str | Path, *, check_sources: bool = True) -> VerdictTable:
    """Read a table written by :func:`write_table` (and its sidecar, when present).

    Raises:
        ValueError: ``check_sources`` and some row was measured on a problem or candidate source other than what
            this checkout generates and renders.
    """
    path = Path(path)
    with path.open(newline="") as handle:
        verdicts = [Verdict.from_row(row) for row in csv.DictReader(handle)]
    side = sidecar_path(path)
    meta = json.loads(side.read_text()) if side.is_file() else {}
    table = VerdictTable(verdicts, meta)
    if check_sources:
        stale = table.stale_rows()
        if stale:
            raise ValueError(f"{len(stale)} rows of {path} do not match this checkout's problems/renderer "
                             f"(rebuild the table), e.g. {stale[:3]}")
    return table


class LiveVerdicts:
    """The table's interface, answered by judging for real through a :class:`drk.gym.Pool` (cached if the pool has a
    cache). Within one object each distinct (problem, program) is judged once, as the table measures it once;
    :meth:`verdict_batch` judges a batch's new pairs side by side (one ``Pool.map``)."""

    def __init__(self, pool: Any, config: Any = None) -> None:
        self.pool, self.config = pool, config
        self._judged: dict[tuple[str, str], Verdict] = {}
        self._lock = threading.Lock()

    def verdict(self, problem: Task | str, program: str | Sequence[str] | Program) -> Verdict:
        return self.verdict_batch([problem], [program])[0]

    def verdict_batch(self, problems: Sequence[Task | str], programs: Sequence[Any]) -> list[Verdict]:
        keyed: list[tuple[str, str] | Verdict] = []
        new: dict[tuple[str, str], tuple[Task, Program]] = {}
        for problem, program in zip(problems, programs, strict=True):
            task = problem if isinstance(problem, Task) else task_by_name(problem)
            try:
                prog = canonical(task, parse(program))
            except ProgramError as exc:
                keyed.append(invalid_verdict(task.name, program, exc))
                continue
            key = (task.name, str(prog))
            keyed.append(key)
            with self._lock:
                if key not in self._judged:
                    new[key] = (task, prog)
        if new:
            judged = build_verdicts(self.pool, list(new.values()), self.config)
            with self._lock:
                self._judged.update(zip(new, judged))
        with self._lock:
            return [k if isinstance(k, Verdict) else self._judged[k] for k in keyed]

    @property
    def judged(self) -> int:
        """Distinct (problem, program) pairs judged so far."""
        return len(self._judged)


def run_build(*, device: str = "auto", out: str | Path = "results/mini2/verdicts.csv", problems: str | None = None,
              limit: int | None = None, workers: int | None = None, cache_dir: str | Path | None = None,
              config: Any = None, progress: bool = True, note: str | None = None) -> tuple[Path, list[Verdict]]:
    """Build and write a table (what ``benchmarks/mini2_verdicts.py`` runs). ``note`` goes into the sidecar as is:
    e.g. which rows came from an earlier commit's cache (the sidecar's git sha is the final build's)."""
    from drk.gym import EvalConfig, Pool

    config = measure_config(config or EvalConfig())
    pool = Pool(device=device, workers=workers, cache_dir=cache_dir, config=config, progress=progress)
    pairs = table_pairs(select_tasks(problems), limit)
    start = time.monotonic()
    verdicts = build_verdicts(pool, pairs, config)
    elapsed = time.monotonic() - start
    meta = provenance(pool, config, workers=pool.workers, elapsed_s=round(elapsed, 1), problems_spec=problems,
                      limit=limit, cache_hits=sum(v.cached for v in verdicts), note=note)
    return write_table(verdicts, out, meta), verdicts


def charge_report(verdicts: Iterable[Verdict], fast: float = 1.2) -> dict[str, dict[str, int]]:
    """Per program head (FUSE, SPLIT, LAZY, ...): how many correct rows drk charged host time
    (``timing_charge_ms`` > 0), how many are fast (speedup >= ``fast``), and how many would be fast without the charge
    (``ref_ms / (kernel_ms - charge)``): how much of the table's Fast@p landscape the charge decides."""
    report: dict[str, dict[str, int]] = {}
    for v in verdicts:
        if not v.correct or v.speedup is None:
            continue
        counts = report.setdefault(v.program.split()[0], {"correct": 0, "charged": 0, "fast": 0, "fast_uncharged": 0})
        charge = v.timing_charge_ms or 0.0
        counts["correct"] += 1
        counts["charged"] += charge > 0
        counts["fast"] += v.speedup >= fast
        if v.ref_ms is not None and v.kernel_ms is not None and v.kernel_ms - charge > 0:
            counts["fast_uncharged"] += v.ref_ms / (v.kernel_ms - charge) >= fast
        else:
            counts["fast_uncharged"] += v.speedup >= fast
    return dict(sorted(report.items()))


def profiling_cases(table: VerdictTable, problem: str) -> list[dict[str, Any]]:
    """Figure 10's three cases for one problem of a measured table, as rows for
    :func:`drk.figures.profiling.plot_profiling_examples`: ``decoy`` (the DECOY program), ``lazy_optimization``
    (LAZY) and ``better_fusion`` (the fastest correct FUSE program of that problem: the best fusion the language
    offers, chosen by the measured speedup)."""
    rows = [v for v in table if v.problem == problem]
    if not rows:
        raise KeyError(f"no verdict for problem {problem!r} in the table")
    fused = [v for v in rows if v.program.split()[0] == "FUSE" and v.correct and v.speedup is not None]
    cases = {"decoy": next(v for v in rows if v.program == "DECOY"),
             "lazy_optimization": next(v for v in rows if v.program == "LAZY"),
             "better_fusion": max(fused, key=lambda v: v.speedup)}
    return [{"case": case, "status": v.status, "speedup": v.speedup, "coverage": v.coverage, "program": v.program,
             "reference_runtime_ms": v.ref_ms, "kernel_runtime_ms": v.kernel_ms} for case, v in cases.items()]


def summary(verdicts: Sequence[Verdict]) -> dict[str, Any]:
    """Counts by program head and status (for the build's printout and quick checks)."""
    table: dict[str, dict[str, int]] = {}
    for v in verdicts:
        head = v.program.split()[0] if v.program else "?"
        if v.program.endswith(("SWAP", "DROP")):
            head = v.program.split()[-1]
        table.setdefault(head, {})
        table[head][v.status] = table[head].get(v.status, 0) + 1
    return table


__all__ = ["COLUMNS", "NOT_PROGRAM_EVIDENCE", "LiveVerdicts", "Verdict", "VerdictTable", "build_verdicts", "charge_report", "invalid_verdict", "load_verdicts", "profiling_cases",
           "merge_tables", "provenance", "run_build", "select_tasks", "summary", "table_pairs", "verdict_from_result", "write_table"]
