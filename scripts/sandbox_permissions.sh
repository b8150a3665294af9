#!/usr/bin/env bash
# Let the candidate sandbox's users (uids >= 200000, drk/gym/isolation.py) run PYTHON and import drk from this checkout:
# as root, give every parent directory of the interpreter, its libraries and the checkout the traverse bit (o+x;
# not read, so nothing becomes listable). A no-op for non-root users (their sandbox keeps their own uid).
#   bash scripts/sandbox_permissions.sh [PYTHON]
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) == 0 ]] || exit 0
PY=${1:-python3}
paths=("$PWD" "$(readlink -f "$(command -v "$PY")")")
paths+=($("$PY" -c 'import sys, sysconfig; print(sys.base_prefix, sys.prefix, *sysconfig.get_paths().values())' 2>/dev/null || true))
for path in "${paths[@]}"; do
  dir=$path
  [[ -d $dir ]] || dir=$(dirname "$dir")
  while [[ $dir != / && $dir != . ]]; do chmod o+x "$dir" 2>/dev/null || true; dir=$(dirname "$dir"); done
done
