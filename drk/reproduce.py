"""Regenerate every figure and table: execute the notebooks with papermill.

``python -m drk.reproduce --quick`` runs each notebook with small parameters (CPU, minutes);
without ``--quick`` it uses the full parameters (a GPU is used when present). Executed notebooks go to
``<out>/notebooks``; figures and tables to ``<figures>`` (default ``figures/``), each with a caption file saying
where its data came from.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

#: notebook -> (quick parameters, full parameters). ``out_dir`` and ``device`` are added for every notebook.
NOTEBOOKS: dict[str, tuple[dict, dict]] = {
    "01_environment.ipynb": ({"quick": True}, {"quick": False}),
    "02_grpo_bias_vs_trloo.ipynb": ({"quick": True}, {"quick": False}),
    "03_rl_training.ipynb": ({"quick": True}, {"quick": False}),
    "04_evaluation_and_tts.ipynb": ({"quick": True}, {"quick": False}),
    "05_figures_and_tables.ipynb": ({"quick": True}, {"quick": False}),
}


def run_notebooks(names: Sequence[str], *, quick: bool, out: Path, figures: Path, device: str) -> list[Path]:
    """Execute ``names`` in order; returns the executed notebook paths. Raises on the first failure."""
    import papermill

    executed = []
    (out / "notebooks").mkdir(parents=True, exist_ok=True)
    for name in names:
        quick_params, full_params = NOTEBOOKS[name]
        params = {**(quick_params if quick else full_params), "out_dir": str(figures.resolve()), "device": device}
        target = out / "notebooks" / name
        start = time.monotonic()
        print(f"[drk.reproduce] {name} ...", flush=True)
        papermill.execute_notebook(
            str(REPO_ROOT / "notebooks" / name), str(target), parameters=params, kernel_name="python3",
            cwd=str(REPO_ROOT), progress_bar=False,
        )
        print(f"[drk.reproduce] {name} done in {time.monotonic() - start:.0f} s -> {target}", flush=True)
        executed.append(target)
    return executed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m drk.reproduce", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small parameters: CPU-friendly, minutes")
    parser.add_argument("--out", type=Path, default=Path("out"), help="executed notebooks go here")
    parser.add_argument("--figures", type=Path, default=REPO_ROOT / "figures", help="figures and tables go here")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    parser.add_argument("--only", nargs="*", help="notebook name prefixes to run, e.g. 01 05")
    args = parser.parse_args(argv)
    names = [n for n in NOTEBOOKS if not args.only or any(n.startswith(p) for p in args.only)]
    missing = [n for n in names if not (REPO_ROOT / "notebooks" / n).is_file()]
    if missing:
        print(f"[drk.reproduce] notebooks not found: {missing}", file=sys.stderr)
        return 2
    run_notebooks(names, quick=args.quick, out=args.out, figures=args.figures, device=args.device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
