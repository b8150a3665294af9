#!/usr/bin/env bash
# The mini Dr. Kernel experiment on one GPU, in one device call (~7 minutes on an H200):
#   policy + SFT cold start from the committed results/mini/sft_data.jsonl, then every RL ablation at once
#   (they share the GPU; their timings share the host-wide per-GPU lock), then held-out evaluation.
#   Whatever finished is packed into $OUT/mini_results.tgz (results/mini) and $OUT/mini_runs.tgz (raw logs)
#   even when the budget runs out. Needs trl/datasets: carry .whl (scripts/fetch_device_wheels.sh).
#   Run from the repository root with PYTHONPATH=$PWD. MINI_SECONDS bounds the whole experiment.
set -u
OUT=${OUT:-out/mini}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
nvidia-smi --query-gpu=name,memory.used --format=csv,noheader
timeout "${MINI_SECONDS:-400}" python3 -m drk.mini all --skip data --device cuda --parallel 9 \
  --rl-minutes "${RL_MINUTES:-3}" 2>&1 | grep -v -i "warn" | tee "$OUT/mini.log" | grep -E "^\[drk|Error|error" | tail -40
echo "mini exit ${PIPESTATUS[0]}"
tail -n 3 runs/mini/sft/log.jsonl 2>/dev/null | cut -c1-400
for f in runs/mini/rl/*/seed0/log.jsonl; do echo "$f: $(wc -l < "$f") steps; last: $(tail -n 1 "$f" | cut -c1-300)"; done
tar czf "$OUT/mini_results.tgz" results/mini
tar czf "$OUT/mini_runs.tgz" runs/mini/rl/*/seed*.log runs/mini/rl/*/seed*/log.jsonl runs/mini/rl/*/seed*/episodes.jsonl \
  runs/mini/sft/log.jsonl 2>/dev/null
ls -la "$OUT"
