#!/usr/bin/env bash
# The mini2 experiment on CPU once the verdict table is complete (issue 12; results/mini2/PLAN.md, amendment 2):
# the grid (10 seeds in the main setting, 5 in the sensitivity one; ~3-4 h at JOBS=2, resumable: run it again to
# finish it), then the claims table, the figures with bands over seeds, and the small files notebook 05 draws them
# from (results/mini2/curves: the tree itself is ~60 MB and is not committed).
#   bash scripts/mini2_results.sh            # TABLE=results/mini2/verdicts.csv ROOT=runs/m2grid JOBS=2
set -euo pipefail
cd "$(dirname "$0")/.."
TABLE=${TABLE:-results/mini2/verdicts.csv}
ROOT=${ROOT:-runs/m2grid}
JOBS=${JOBS:-2}
[ -f "$TABLE" ] || { echo "no verdict table at $TABLE (build it: benchmarks/mini2_verdicts.py on a GPU)" >&2; exit 2; }
PY=${PYTHON:-.venv/bin/python}
"$PY" -m drk.mini2 grid --out "$ROOT" --seeds 0-9 --settings main --jobs "$JOBS" --set table="$TABLE"
"$PY" -m drk.mini2 grid --out "$ROOT" --seeds 0-4 --settings sensitivity --jobs "$JOBS" --set table="$TABLE"
"$PY" -m drk.mini2 claims --runs "$ROOT" --out results/mini2/claims.csv
"$PY" -m drk.mini2 figures --runs "$ROOT" --out results/mini2/figures
"$PY" -m drk.mini2 export --runs "$ROOT" --out results/mini2/curves
