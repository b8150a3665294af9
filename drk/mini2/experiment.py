"""The seeds x variants x settings grid of ``results/mini2/PLAN.md`` (issue 12, item 6): one driver, one output tree.

For every setting (:data:`~drk.mini2.config.SETTINGS`) and seed, the grid runs

1. **SFT once** (``sft``): the cold start every variant of that (setting, seed) starts from (PLAN: "one SFT
   checkpoint per seed, shared by every variant of that seed");
2. **RL per variant** (``rl``): :func:`drk.mini2.rl.run_rl` with held-out evaluation points every
   ``Mini2Config.eval_every`` steps (the primary endpoint averages those in the last 20 %);
3. **STTS** (``stts``) on the final ``trloo`` checkpoint: 8 turns, vanilla history vs the best w = 4 turns, same
   sampling seed for both (paired).

The control of PLAN.md (TRLOO vs GRPO on single-turn episodes, fixed group sizes) is the pair of variants
``single_turn`` / ``single_turn_grpo``, run like any other.

Jobs run in ``jobs`` worker processes (spawned, one torch thread each), in dependency order. The grid is
**resumable**: a job's folder gets ``done.json`` last, holding a fingerprint of everything that determines the job
(its Mini2Config without ``out_dir``/``threads``, the variant, the verdict table's SHA-256); a finished job with the
same fingerprint is skipped, a folder without ``done.json`` (killed half-way) is deleted and redone, and a finished
job with another fingerprint stops the grid before anything runs (mixing configs in one tree would pair unlike runs).
Layout: :mod:`drk.mini2.runs`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pandas as pd

from drk.mini2.config import SETTINGS, VARIANTS, Mini2Config
from drk.mini2.runs import DONE, is_done, rl_dir, sft_dir, stts_dir

JOB_KINDS: tuple[str, ...] = ("sft", "rl", "stts")


@dataclass(frozen=True)
class Job:
    """One unit of the grid: the SFT of a (setting, seed), an RL run of a variant, or the STTS evaluation."""

    kind: str
    setting: str
    seed: int
    variant: str = ""

    @property
    def name(self) -> str:
        return {"sft": f"{self.setting}/sft/seed{self.seed}", "rl": f"{self.setting}/{self.variant}/seed{self.seed}",
                "stts": f"{self.setting}/trloo/seed{self.seed}/stts"}[self.kind]

    def path(self, root: str | Path) -> Path:
        if self.kind == "sft":
            return sft_dir(root, self.setting, self.seed)
        if self.kind == "rl":
            return rl_dir(root, self.setting, self.variant, self.seed)
        return stts_dir(root, self.setting, self.seed)

    def deps(self) -> tuple[Job, ...]:
        if self.kind == "rl":
            return (Job("sft", self.setting, self.seed),)
        if self.kind == "stts":
            return (Job("rl", self.setting, self.seed, "trloo"),)
        return ()


@dataclass
class Grid:
    """What to run: ``variants`` x ``seeds`` x ``settings`` from the ``base`` config, into ``root``.

    Args:
        base: the main setting's Mini2Config (``seed`` and ``out_dir`` are set per job).
        root: the output tree's root.
        stts: run the STTS evaluation of each trloo run (needs ``trloo`` among the variants).
        keep_episodes: keep each run's ``episodes.jsonl`` (every training turn: ~10 MB per run).
    """

    base: Mini2Config
    root: str
    variants: tuple[str, ...] = tuple(VARIANTS)
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    settings: tuple[str, ...] = ("main",)
    stts: bool = True
    keep_episodes: bool = False

    def __post_init__(self) -> None:
        self.variants, self.seeds, self.settings = tuple(self.variants), tuple(self.seeds), tuple(self.settings)
        if unknown := sorted(set(self.variants) - set(VARIANTS)):
            raise ValueError(f"unknown variants {unknown}; known: {sorted(VARIANTS)}")
        if unknown := sorted(set(self.settings) - set(SETTINGS)):
            raise ValueError(f"unknown settings {unknown}; known: {sorted(SETTINGS)}")
        for name, values in (("variants", self.variants), ("seeds", self.seeds), ("settings", self.settings)):
            if not values or len(set(values)) != len(values):
                raise ValueError(f"{name}={list(values)}: give at least one, none twice")
        if any(not isinstance(s, int) or s < 0 for s in self.seeds):
            raise ValueError(f"seeds={list(self.seeds)}: ints >= 0")
        if self.stts and "trloo" not in self.variants:
            raise ValueError("STTS evaluates the trloo checkpoints: add trloo to the variants or switch stts off")

    def config(self, setting: str, seed: int) -> Mini2Config:
        """The Mini2Config of every job of (``setting``, ``seed``)."""
        cfg = self.base.with_setting(setting)
        return Mini2Config.from_dict({**asdict(cfg), "seed": seed, "out_dir": str(Path(self.root) / setting)})

    def jobs(self) -> list[Job]:
        """Every job, each after the jobs it needs: all SFTs, then RL seed by seed, then STTS."""
        sft = [Job("sft", st, s) for st in self.settings for s in self.seeds]
        rl = [Job("rl", st, s, v) for st in self.settings for s in self.seeds for v in self.variants]
        stts = [Job("stts", st, s) for st in self.settings for s in self.seeds] if self.stts else []
        return sft + rl + stts


@dataclass
class JobResult:
    """What happened to one job: ``done`` (ran now), ``skipped`` (finished before), ``failed``, ``blocked`` (a job
    it needs failed)."""

    job: str
    status: str
    seconds: float = 0.0
    error: str = ""


# --- one job ----------------------------------------------------------------------------------------------------


def table_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def fingerprint(job: Job, cfg: Mini2Config) -> str:
    """SHA-256 of what determines ``job``'s outputs: its config (but where it is written and how many threads),
    the variant, the verdict table's content and, for STTS, its turns and window."""
    from drk.mini2.endpoints import STTS_TURNS, STTS_WINDOW

    data = {k: v for k, v in asdict(cfg).items() if k not in ("out_dir", "threads")}
    payload = {"kind": job.kind, "variant": job.variant, "config": data, "table": table_sha256(cfg.table)}
    if cfg.heldout_table:
        payload["heldout_table"] = table_sha256(cfg.heldout_table)
    else:  # trees made before the field existed keep their fingerprints
        del data["heldout_table"]
    if job.kind == "stts":
        payload["stts"] = [STTS_TURNS, STTS_WINDOW]
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def recorded_fingerprint(path: Path) -> str | None:
    return json.loads((path / DONE).read_text()).get("fingerprint") if is_done(path) else None


_TABLES: dict[tuple[str, bool], Any] = {}  # per worker process: each table is read once


def _table(cfg: Mini2Config):
    from drk.mini2.rl import load_table

    key = (str(Path(cfg.table).resolve()), cfg.check_sources)
    if key not in _TABLES:
        _TABLES[key] = load_table(cfg)
    return _TABLES[key]


def run_stts(cfg: Mini2Config, verdicts, checkpoint: str | Path, out: Path) -> None:
    """PLAN.md's STTS evaluation of one checkpoint: ``stts.jsonl`` (one point per context) and the records."""
    from drk.jsonl import append_jsonl
    from drk.mini2.endpoints import STTS_CONTEXTS, STTS_TURNS, STTS_WINDOW, point_counts
    from drk.mini2.env import resolve_tasks
    from drk.mini2.evaluate import EvalSettings, evaluate
    from drk.mini2.policy import Policy

    policy = Policy.load(checkpoint)
    tasks = resolve_tasks(cfg.heldout_tasks, verdicts)
    for context in STTS_CONTEXTS:  # the same sampling seed for both contexts: a paired comparison
        settings = EvalSettings(samples=cfg.eval_samples, turns=STTS_TURNS, context=context, window=STTS_WINDOW,
                                greedy=cfg.eval_greedy, temperature=cfg.eval_temperature, seed=cfg.seed)
        records = evaluate(policy, tasks, verdicts, settings)
        append_jsonl(out / f"stts_{context}_records.jsonl", records)
        append_jsonl(out / "stts.jsonl", [{"context": context, "window": STTS_WINDOW, "turns": STTS_TURNS,
                                           **point_counts(records, STTS_TURNS)}])


def run_job(job: Job, cfg: Mini2Config, root: str, keep_episodes: bool = False) -> JobResult:
    """Run ``job`` into its folder unless it finished before (same fingerprint); never raises: a failure is a
    ``failed`` result with the traceback, so the grid goes on with the jobs that do not need it."""
    import torch

    from drk.provenance import write_provenance

    path, t0 = job.path(root), time.perf_counter()
    try:
        fp = fingerprint(job, cfg)
        if is_done(path):
            if recorded_fingerprint(path) != fp:
                raise ValueError(f"{path} was made with another config; use a new root or delete it")
            return JobResult(job.name, "skipped")
        if path.exists():
            shutil.rmtree(path)  # half-written: start over
        torch.set_num_threads(cfg.threads)
        verdicts = _table(cfg)
        if job.kind == "sft":
            from drk.mini2.sft import run_sft

            run_sft(cfg, verdicts=verdicts, out_dir=path)
        elif job.kind == "rl":
            from drk.mini2.rl import run_rl

            run_rl(cfg, job.variant, sft_dir(root, job.setting, job.seed) / "checkpoint", verdicts=verdicts,
                   out_dir=path, episodes=keep_episodes)
        else:
            path.mkdir(parents=True)
            from drk.mini2.rl import heldout_table

            run_stts(cfg, heldout_table(cfg, verdicts), rl_dir(root, job.setting, "trloo", job.seed) / "final", path)
        seconds = time.perf_counter() - t0
        write_provenance(path / DONE, {"job": job.name, "kind": job.kind, "setting": job.setting, "seed": job.seed,
                                       "variant": job.variant, "fingerprint": fp, "seconds": seconds,
                                       "threads": cfg.threads, "cpu_count": os.cpu_count()})
        return JobResult(job.name, "done", seconds)
    except Exception:  # noqa: BLE001 - a failed job is reported, the grid continues
        return JobResult(job.name, "failed", time.perf_counter() - t0, traceback.format_exc(limit=8))


def quiet_worker() -> None:
    """One torch thread (the fastest at this size, and the jobs share the cores) and no per-checkpoint progress
    bars from transformers (hundreds of jobs would print thousands)."""
    import torch
    from transformers.utils import logging

    torch.set_num_threads(1)
    logging.disable_progress_bar()


# --- the grid ---------------------------------------------------------------------------------------------------


def check_resumable(grid: Grid) -> None:
    """Raise before anything runs when a finished job of the tree was made with another config."""
    clash = [job.name for job in grid.jobs() if is_done(job.path(grid.root))
             and recorded_fingerprint(job.path(grid.root)) != fingerprint(job, grid.config(job.setting, job.seed))]
    if clash:
        raise ValueError(f"{len(clash)} finished jobs in {grid.root} were made with another config (e.g. "
                         f"{clash[:3]}): use a new root, or delete them to redo them with this one")


def run_grid(grid: Grid, jobs: int = 1, *, progress: bool = False,
             runner: Callable[..., JobResult] = run_job) -> list[JobResult]:
    """Run every job of ``grid`` with ``jobs`` worker processes (1: in this process); returns one result per job.

    ``runner`` is :func:`run_job` (a stand-in in the scheduler's tests; it must be picklable when ``jobs > 1``).
    """
    if jobs < 1:
        raise ValueError(f"jobs={jobs}: at least 1")
    check_resumable(grid)
    Path(grid.root).mkdir(parents=True, exist_ok=True)
    (Path(grid.root) / "grid.json").write_text(json.dumps(
        {"base": asdict(grid.base), "variants": grid.variants, "seeds": grid.seeds, "settings": grid.settings,
         "stts": grid.stts}, indent=1))
    todo = grid.jobs()

    def submit(job: Job, call: Callable[..., Any]):
        return call(runner, job, grid.config(job.setting, job.seed), grid.root, grid.keep_episodes)

    def report(result: JobResult, n_done: int) -> None:
        if progress:
            extra = f" ({result.seconds:.1f} s)" if result.status == "done" else ""
            print(f"[mini2 grid {n_done}/{len(todo)}] {result.status} {result.job}{extra}", flush=True)
            if result.error:
                print(result.error, flush=True)

    if jobs == 1:
        return _run_in_order(todo, lambda job: submit(job, lambda f, *a: f(*a)), report)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"), initializer=quiet_worker) as pool:
        return _run_pooled(todo, jobs, lambda job: submit(job, pool.submit), report)


def _blocked(job: Job, results: dict[str, JobResult]) -> bool:
    return any(d.name in results and results[d.name].status in ("failed", "blocked") for d in job.deps())


def _run_in_order(todo: Sequence[Job], call, report) -> list[JobResult]:
    results: dict[str, JobResult] = {}
    for job in todo:
        results[job.name] = JobResult(job.name, "blocked") if _blocked(job, results) else call(job)
        report(results[job.name], len(results))
    return [results[j.name] for j in todo]


def _run_pooled(todo: Sequence[Job], jobs: int, submit, report) -> list[JobResult]:
    """Keep ``jobs`` jobs running; a job starts once every job it needs has finished (or is blocked for good)."""
    results: dict[str, JobResult] = {}
    pending, running = list(todo), {}  # running: Future -> Job
    while pending or running:
        for job in list(pending):
            if len(running) >= jobs:
                break
            if _blocked(job, results):
                pending.remove(job)
                results[job.name] = JobResult(job.name, "blocked")
                report(results[job.name], len(results))
            elif all(d.name in results for d in job.deps()):
                pending.remove(job)
                running[submit(job)] = job
        if not running:
            if pending:
                raise RuntimeError(f"jobs {[j.name for j in pending]} wait on jobs that are not in the grid")
            break
        finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
        for future in finished:
            job = running.pop(future)
            results[job.name] = _result(job, future)
            report(results[job.name], len(results))
    return [results[j.name] for j in todo]


def _result(job: Job, future: Future) -> JobResult:
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - the worker died (run_job itself never raises)
        return JobResult(job.name, "failed", error=f"{type(exc).__name__}: {exc}")


def timings(root: str | Path) -> pd.DataFrame:
    """Seconds of every finished job under ``root`` (from ``done.json``): ``job, kind, setting, variant, seed,
    seconds, threads, cpu_count``."""
    rows = [json.loads(p.read_text()) for p in sorted(Path(root).rglob(DONE))]
    cols = ["job", "kind", "setting", "variant", "seed", "seconds", "threads", "cpu_count"]
    return pd.DataFrame([{c: r.get(c) for c in cols} for r in rows], columns=cols)


@dataclass
class GridSummary:
    """Counts by status and the failures' messages, for the CLI's last lines."""

    counts: dict[str, int] = field(default_factory=dict)
    failures: list[JobResult] = field(default_factory=list)

    @classmethod
    def of(cls, results: Sequence[JobResult]) -> GridSummary:
        counts: dict[str, int] = {}
        for r in results:
            counts[r.status] = counts.get(r.status, 0) + 1
        return cls(counts, [r for r in results if r.status == "failed"])
