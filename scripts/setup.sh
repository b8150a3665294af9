#!/usr/bin/env bash
# Create ./.venv with drk and everything its tests, notebooks and figures need. Idempotent.
#   bash scripts/setup.sh          CPU machine (torch 2.13 CPU build, Triton interpreter)
#   bash scripts/setup.sh --gpu    keep the CUDA torch/triton already importable by python3 (no torch pin)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${DRK_VENV:-.venv}
if [[ ! -x $VENV/bin/python ]]; then
  if [[ ${1:-} == --gpu ]]; then python3 -m venv --system-site-packages "$VENV"; else python3 -m venv "$VENV"; fi
fi
PIP="$VENV/bin/python -m pip"
$PIP install -q --upgrade pip
if [[ ${1:-} == --gpu ]]; then
  $PIP install -q -e ".[train,figures,notebooks,test,ray,serve]"
else
  $PIP install -q -c constraints.txt torch==2.13.0 triton==3.7.1 numpy
  $PIP install -q -c constraints.txt -e ".[train,figures,notebooks,test,ray,serve]"
fi
# Candidates run as other users (uids >= 200000) in a bubblewrap sandbox (drk/gym/isolation.py). That user must be able
# to run this Python: as root, give the interpreter's parent directories the traverse bit (not read) if they lack it.
if [[ $(id -u) == 0 ]]; then
  command -v bwrap >/dev/null || (apt-get install -y -q bubblewrap >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q bubblewrap >/dev/null)) || echo "warning: could not install bubblewrap"
  bash scripts/sandbox_permissions.sh "$VENV/bin/python"
fi
echo "drk environment ready in $VENV"
