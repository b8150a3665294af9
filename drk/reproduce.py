"""Regenerate every figure and table: execute the notebooks with papermill.

``python -m drk.reproduce --quick`` runs each notebook with small parameters (CPU, minutes);
without ``--quick`` it uses the full parameters (a GPU is used when present). Executed notebooks go to
``<out>/notebooks``; our measured data to ``<out>/ours`` (training logs, evaluation records, profiling cases);
figures and tables to ``--figures``, each with a caption file saying where its data came from. The default
``--figures`` is the committed ``figures/`` for a full run and ``<out>/figures`` for a quick one, so a quick run
never replaces the committed full-parameter figures; naming ``figures/`` explicitly with ``--quick`` does, and
the run says so before it starts.

The training ablations behind Figs. 2 (left), 4, 5/7, 8 and 9 (:data:`drk.mini.TRAINING_RUNS`) are the runs of the
mini experiment (``drk.mini``): their logs, made on an H200, are committed in ``results/mini`` and plotted as they are
(CPU, ``--quick``); the full parameter set re-runs the experiment first when a GPU is present. Notebook 03 runs
once (TRLOO) to exercise the training notebook itself.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from drk.device import cuda_available

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The committed logs of the mini experiment (drk.mini, run on an H200): the training figures' default data.
MINI_RESULTS = str(REPO_ROOT / "results" / "mini")
MINI2_CURVES = str(REPO_ROOT / "results" / "mini2" / "curves")  # the mini2 grid's export (python -m drk.mini2 export)



#: The committed figures and tables, made with the full parameters.
COMMITTED_FIGURES = REPO_ROOT / "figures"


def figures_dir(figures: Path | None, *, quick: bool, out: Path) -> Path:
    """Where a run writes its figures: ``figures`` when given, else the committed folder for a full run and
    ``<out>/figures`` for a quick one (quick figures must not silently replace the committed full-parameter ones)."""
    if figures is not None:
        return figures
    return out / "figures" if quick else COMMITTED_FIGURES


#: What a complete run must leave in the figures folder (each stem as .png and .pdf unless it is a table).
EXPECTED_FIGURES: tuple[str, ...] = (
    "fig1_fast_p_overview", "fig2_left_hacking_check", "fig3_architecture", "fig4_fast_p_vs_step",
    "fig4_fast_p_vs_turn", "fig5_7_training_dynamics", "fig6_stts", "fig8_hacking_ratio", "fig9_prs",
    "fig10_profiling_examples", "bias_shrink_factor", "bias_per_turn_shrink", "bias_bandit_curves",
    # mini2 (issue 12), drawn from the committed export results/mini2/curves
    *(f"mini2_main_{stem}" for stem in ("estimators", "hacking_check", "turns", "mrs", "prs", "stts")),
)
EXPECTED_TABLES: tuple[str, ...] = ("table_mini_summary.md", "table_timing_policy.md",
                                    "table1_fast_p_eager.md", "table1_fast_p_eager.tex",
                                    "table2_fast_p_torch_compile.md", "table2_fast_p_torch_compile.tex")


def missing_outputs(figures: Path) -> list[str]:
    """Expected figure/table files that are absent or empty under ``figures``."""
    names = [f"{stem}.{ext}" for stem in EXPECTED_FIGURES for ext in ("png", "pdf", "txt")] + list(EXPECTED_TABLES)
    return [n for n in names if not (figures / n).is_file() or (figures / n).stat().st_size == 0]


@dataclass
class Run:
    """One papermill execution: a notebook, a label, and its quick/full parameters."""

    notebook: str
    label: str
    quick: dict = field(default_factory=dict)
    full: dict = field(default_factory=dict)


def plan(out: Path, figures: Path, device: str) -> list[Run]:
    """Every notebook execution, in order; paths are resolved so notebooks can run from any directory.

    Each run passes only parameters its notebook declares (papermill would add the others as unused variables).
    """
    ours, figs = str(out.resolve() / "ours"), str(figures.resolve())
    common = {"out_dir": figs, "device": device}
    runs = [
        Run("01_environment.ipynb", "01", {**common, "quick": True}, {**common, "quick": False}),
        Run("02_grpo_bias_vs_trloo.ipynb", "02", {"out_dir": figs, "quick": True}, {"out_dir": figs, "quick": False}),
    ]
    # Notebook 03 once (TRLOO), to exercise the training notebook; the ablations behind Figs 2 (left), 4, 5/7, 8
    # and 9 are the mini experiment's runs (drk.mini): committed H200 logs in results/mini, re-run in full mode.
    base = {"out_dir": ours, "method": "trloo", "estimator": "trloo"}
    runs.append(Run("03_rl_training.ipynb", "03:trloo", {**base, "overrides": {}, "quick": True, "device": "cpu"},
                    {**base, "overrides": {}, "quick": False, "device": device}))
    runs += [
        Run("04_evaluation_and_tts.ipynb", "04", {**common, "results_dir": ours, "quick": True},
            {**common, "results_dir": ours, "quick": False}),
        Run("05_figures_and_tables.ipynb", "05",
            {"out_dir": figs, "our_results_dir": ours, "training_logs_dir": MINI_RESULTS,
             "mini2_runs_dir": MINI2_CURVES},
            {"out_dir": figs, "our_results_dir": ours, "training_logs_dir": MINI_RESULTS, "mini2_runs_dir": MINI2_CURVES,
             "rerun_mini": device != "cpu" and cuda_available()}),
    ]
    return runs


def execute(runs: Sequence[Run], *, quick: bool, out: Path) -> list[Path]:
    """Execute ``runs`` in order; returns the executed notebook paths. Raises on the first failure."""
    import papermill

    executed = []
    (out / "notebooks").mkdir(parents=True, exist_ok=True)
    for run in runs:
        target = out / "notebooks" / f"{run.label.replace(':', '_')}_{run.notebook}"
        start = time.monotonic()
        print(f"[drk.reproduce] {run.label} {run.notebook} ...", flush=True)
        papermill.execute_notebook(str(REPO_ROOT / "notebooks" / run.notebook), str(target),
                                   parameters=run.quick if quick else run.full, kernel_name="python3",
                                   cwd=str(REPO_ROOT), progress_bar=False)
        print(f"[drk.reproduce] {run.label} done in {time.monotonic() - start:.0f} s -> {target}", flush=True)
        executed.append(target)
    return executed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m drk.reproduce", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small parameters: CPU-friendly, minutes")
    parser.add_argument("--out", type=Path, default=Path("out"), help="executed notebooks and our data go here")
    parser.add_argument("--figures", type=Path, default=None,
                        help="figures and tables go here (default: figures/ for a full run, <out>/figures with --quick)")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    parser.add_argument("--only", nargs="*", help="run labels to run, by prefix, e.g. 01 03:trloo 05")
    args = parser.parse_args(argv)
    args.figures = figures_dir(args.figures, quick=args.quick, out=args.out)
    if args.quick and args.figures.resolve() == COMMITTED_FIGURES:
        print(f"[drk.reproduce] note: --quick writes CPU/CI-sized figures over the committed full-parameter ones in "
              f"{COMMITTED_FIGURES.relative_to(REPO_ROOT)}/ (git shows them modified; `git checkout figures` restores "
              "them)", file=sys.stderr)
    runs = [r for r in plan(args.out, args.figures, args.device)
            if not args.only or any(r.label.startswith(p) for p in args.only)]
    missing = sorted({r.notebook for r in runs if not (REPO_ROOT / "notebooks" / r.notebook).is_file()})
    if missing:
        print(f"[drk.reproduce] notebooks not found: {missing}", file=sys.stderr)
        return 2
    start = time.monotonic()
    execute(runs, quick=args.quick, out=args.out)
    print(f"[drk.reproduce] {len(runs)} notebook runs in {time.monotonic() - start:.0f} s; figures in {args.figures}")
    missing = missing_outputs(args.figures) if not args.only else []
    if missing:
        print(f"[drk.reproduce] expected outputs missing or empty: {missing}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
