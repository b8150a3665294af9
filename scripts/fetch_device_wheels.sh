#!/usr/bin/env bash
# Download the wheels the GPU device image lacks (trl, datasets and their dill/multiprocess) into ./.whl (git-ignored),
# for the trainer's GPU test. Carry `.whl` in the device call; benchmarks/gpu_all.sh installs them when present.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform any -d .whl trl==1.16.0 datasets==5.2.0 "dill==0.4.1" "multiprocess==0.70.19"
ls -la .whl
