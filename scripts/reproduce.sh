#!/usr/bin/env bash
# Set up (if needed) and regenerate every figure and table. --full for the full parameters; other args pass through.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
if [[ ${1:-} == --full ]]; then shift; exec .venv/bin/python -m drk.reproduce "$@"; fi
exec .venv/bin/python -m drk.reproduce --quick "$@"
