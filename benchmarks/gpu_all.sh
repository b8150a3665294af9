#!/usr/bin/env bash
# Every GPU measurement of the environment in one device call (~9 minutes on one H200); logs under ${OUT:-out/gpu}.
#   GPU tests of drk.gym, the bundled suite under both timing policies (-> gpu_results.csv), and the timing-noise
#   and throughput benchmark. Run from the repository root with drk importable (PYTHONPATH=$PWD).
set -u
OUT=${OUT:-out/gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
timeout 170 python3 -m pytest -p no:cacheprovider -o addopts="" -m gpu tests/gym/test_gpu.py -q --tb=short \
  > "$OUT/gpu_tests.log" 2>&1; echo "gpu tests exit $?"; grep -E "passed|failed" "$OUT/gpu_tests.log" | tail -1
timeout 200 python3 benchmarks/suite_gpu.py --policies drk authors --workers 8 --out "$OUT/gpu_results.csv" \
  > "$OUT/suite.log" 2>&1; echo "suite exit $?"; grep -E "^\[|wrote" "$OUT/suite.log"
timeout 170 python3 benchmarks/gym_timing.py --repeats 8 --batch 24 --out "$OUT/bench.json" \
  > "$OUT/bench.log" 2>&1; echo "bench exit $?"; grep -vi warn "$OUT/bench.log" | tail -8
