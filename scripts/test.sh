#!/usr/bin/env bash
# Set up (if needed) and run the test suite. GPU tests skip without CUDA; extra pytest args pass through.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec .venv/bin/python -m pytest -q "$@"
