#!/usr/bin/env bash
# Every GPU measurement of the environment in one device call (~6 minutes on one H200); logs under ${OUT:-out/gpu}.
#   GPU tests of drk.gym, the bundled suite under both timing policies (-> gpu_results.csv), the timing-noise
#   and throughput benchmark, and with TRAINER_TEST=1 and .whl carried (scripts/fetch_device_wheels.sh) the trainer's GPU test.
#   Run from the repository root with drk importable (PYTHONPATH=$PWD). SPREAD picks the CV examples.
set -u
OUT=${OUT:-out/gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
timeout 240 python3 -m pytest -p no:cacheprovider -o addopts="" -m gpu tests/gym/test_gpu.py -q --tb=short \
  > "$OUT/gpu_tests.log" 2>&1; echo "gpu tests exit $?"; grep -E "passed|failed" "$OUT/gpu_tests.log" | tail -1
timeout 240 python3 benchmarks/suite_gpu.py --policies drk authors --workers 8 --out "$OUT/gpu_results.csv" \
  > "$OUT/suite.log" 2>&1; echo "suite exit $?"; grep -E "^\[|wrote" "$OUT/suite.log"
timeout 120 python3 benchmarks/gym_timing.py --spread ${SPREAD:-matmul} --repeats 4 --batch 32 --workers 8 \
  --out "$OUT/bench.json" > "$OUT/bench.log" 2>&1; echo "bench exit $?"; grep -vi warn "$OUT/bench.log" | tail -8
if [ -n "${TRAINER_TEST:-}" ] && compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site
  timeout 100 python3 -m pytest -p no:cacheprovider -o addopts="" -m gpu tests/train/test_gpu.py -q --tb=short -s \
    > "$OUT/train_gpu.log" 2>&1; echo "trainer gpu test exit $?"; tail -5 "$OUT/train_gpu.log"
fi
