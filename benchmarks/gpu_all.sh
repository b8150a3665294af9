#!/usr/bin/env bash
# Every GPU measurement of the environment, in device calls of <= 10 minutes each on one H200; logs under ${OUT:-out/gpu}.
#   bash benchmarks/gpu_all.sh cv       timing noise (speedup CV over repeated evaluations), with and without spare
#                                       runners and the profiler warmed in them
#   bash benchmarks/gpu_all.sh noise    drk's round loop alone, quiet host and busy host: raw and charged speedups of
#                                       honest and side-stream candidates, and the synchronise-before-start experiment
#   bash benchmarks/gpu_all.sh checks   every example verdict (attacks, legitimate patterns) in the candidate sandbox,
#                                       with the error of each wrong one (103 examples: all judged in 288 s on an H200, session 24; 101 in 292 s in session 23)
#   bash benchmarks/gpu_all.sh tests    the GPU tests of drk.gym (but the all-examples one: that is `checks`),
#                                       throughput (sequential, Pool) and cache hits
#   bash benchmarks/gpu_all.sh rate     throughput only (sequential, Pool of 8, cache hits) with the mean seconds per stage
#   bash benchmarks/gpu_all.sh scaling  Pool(2, 4, 8) on distinct mini2 pairs, then 8 with shorter exclusive sections:
#                                       is a pool limited by contention, and how much of it is the GPU lock?
#   bash benchmarks/gpu_all.sh mini2    the mini2 verdict table (issue 12) in calls of <= 9 minutes: each resumes from
#                                       runs/mini2/cache.tgz (carry it) and leaves $OUT/cache.tgz (copy it back there);
#                                       MINI2_MODE=compile MINI2_PROBLEMS=heldout: Table 2's rows (runs/mini2c/)
#   bash benchmarks/gpu_all.sh live     the mini2 live check (issue 12): one RL run on the table (TABLE, default
#                                       results/mini2/verdicts.csv) and once judged live, compared (LIVE_STEPS, LIVE_TASKS)
#   bash benchmarks/gpu_all.sh suite    the bundled suite under both timing policies (-> gpu_results.csv; Table 2's
#                                       oracle row: SUITE_POLICIES=drk SUITE_MODES=compile SUITE_APPEND=1 in a call
#                                       of its own, after the eager pass is committed), with evaluations/min and
#                                       seconds per stage (one pass per call; benchmarks/suite_queue.sh runs passes
#                                       level by level across calls on a warm machine, as session 18 did)
#   The sandbox needs bubblewrap (carried as .debs/bubblewrap_*.deb where the machine lacks it).
#   Run from the repository root with drk importable (PYTHONPATH=$PWD).
set -u
PART=${1:-checks}
OUT=${OUT:-out/gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if ! command -v bwrap > /dev/null && compgen -G ".debs/bubblewrap_*.deb" > /dev/null; then
  dpkg -x .debs/bubblewrap_*.deb /tmp/bw && export PATH=/tmp/bw/usr/bin:$PATH
fi
bash scripts/sandbox_permissions.sh python3
python3 -c "from drk.gym.isolation import _probe; print('sandbox probe:', {l: _probe(l) or 'works' for l in ('uid', 'namespace')})" 2>&1 | tee "$OUT/sandbox.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
case $PART in
cv)  # which of a spare runner starting during an evaluation, or the profiler warmed in every runner, moves
     # timings (one evaluation in five was off by ~20 %); then the CV inside a Pool of 8 with other candidates
  for variant in "0 1" "2 1" "2 0"; do
    set -- $variant
    DRK_WARM_PROFILER=$2 timeout 110 python3 benchmarks/gym_timing.py --spread relu2 matmul --policies drk \
      --repeats 5 --batch 0 --spares $1 > "$OUT/cv_spares$1_warm$2.log" 2>&1
    echo "spares=$1 warm_profiler=$2:"; grep -E '^ *(relu2|matmul)' "$OUT/cv_spares$1_warm$2.log"
  done
  timeout 150 python3 benchmarks/gym_timing.py --spread relu2 matmul --repeats 0 --batch 0 --workers 8 \
    --pool-copies 8 > "$OUT/cv_pool.log" 2>&1; echo "pool exit $?"; grep -E '^pool|Error' "$OUT/cv_pool.log" ;;
noise)  # matmul varied 5 % between full evaluations but 0.1 % in the loop alone on a quiet host (2026-12-01)
  # then: the flush charge (work a side stream runs during the L2 flush, 2026-12-03) on a quiet host and a busy one,
  # and the synchronise before start it replaced (the host's launch latency inside every call)
  for variant in "0 -" "24 -" "0 --sync-before-start"; do
    set -- $variant
    sync=${2#-}
    timeout 100 python3 benchmarks/timing_noise.py --processes 2 --repeats 3 --cpu-load $1 ${sync:+-$sync} \
      --candidates good side_stream attack_side_stream_launder 2>&1 | tee "$OUT/noise_load$1$sync.log"
  done ;;
checks)
  timeout 540 python3 benchmarks/examples_check.py > "$OUT/examples.log" 2>&1; echo "examples exit $?"
  grep -E "^BAD|NOT REP|pairs" "$OUT/examples.log" | tail -8 ;;
tests)
  timeout 200 python3 -m pytest -p no:cacheprovider -o addopts="" -m gpu tests/gym/test_gpu.py -q --tb=short \
    -k "not every_example" > "$OUT/gpu_tests.log" 2>&1; echo "gpu tests exit $?"
  grep -E "passed|failed|Error|assert" "$OUT/gpu_tests.log" | tail -12
  timeout 320 python3 benchmarks/gym_timing.py --spread --batch 32 --workers 8 --out "$OUT/bench.json" \
    > "$OUT/bench.log" 2>&1; echo "throughput exit $?"; grep -vi warn "$OUT/bench.log" | tail -4 ;;  # 16 sequential took > 200 s (s16)
rate)
  timeout "${RATE_S:-240}" python3 benchmarks/gym_timing.py --spread relu2 matmul --repeats 3 --policies drk \
    --batch 24 --workers 8 --out "$OUT/bench.json" > "$OUT/bench.log" 2>&1; echo "throughput exit $?"
  grep -vi warn "$OUT/bench.log" | tail -12 ;;
scaling)
  timeout 300 python3 benchmarks/pool_scaling.py --workers 2 4 8 --pairs 24 --out "$OUT/scaling.json" \
    > "$OUT/scaling.log" 2>&1; echo "scaling exit $?"; cat "$OUT/scaling.log" | grep workers
  timeout 120 python3 benchmarks/pool_scaling.py --workers 8 --pairs 24 --offset 72 --timing-trials 30 \
    --out "$OUT/scaling_short.json" > "$OUT/scaling_short.log" 2>&1
  echo "short exclusive sections exit $?"; grep workers "$OUT/scaling_short.log"
  DRK_WARM_PROFILER=0 timeout 120 python3 benchmarks/pool_scaling.py --workers 8 --pairs 24 --offset 96 \
    --out "$OUT/scaling_cold_profiler.json" > "$OUT/scaling_cold_profiler.log" 2>&1  # half the runners never profile
  echo "profiler not warmed in spares exit $?"; grep workers "$OUT/scaling_cold_profiler.log" ;;
mini2)  # MINI2_MODE=compile MINI2_PROBLEMS=heldout: the held-out rows against torch.compile (Table 2's mini2 row)
  MODE=${MINI2_MODE:-eager}; DIR=runs/mini2$([ "$MODE" = compile ] && echo c)
  mkdir -p "$DIR"
  if [ -f "$DIR/cache.tgz" ]; then tar xzf "$DIR/cache.tgz" -C "$DIR"; fi
  timeout "${MINI2_S:-520}" python3 benchmarks/mini2_verdicts.py --device cuda --workers 8 --cache-dir "$DIR/cache" \
    --reference-mode "$MODE" ${MINI2_PROBLEMS:+--problems "$MINI2_PROBLEMS"} \
    --out "$OUT/verdicts.csv" ${MINI2_NOTE:+--note "$MINI2_NOTE"} > "$OUT/mini2.log" 2>&1; echo "mini2 exit $? ($(find "$DIR/cache" -name '*.json' | wc -l) cached)"
  tar czf "$OUT/cache.tgz" -C "$DIR" cache; tr '\r' '\n' < "$OUT/mini2.log" | tail -3 ;;
live)
  timeout "${LIVE_S:-540}" python3 -m drk.mini2 live-check --steps "${LIVE_STEPS:-2}" --out "$OUT/live" \
    --set table="${TABLE:-results/mini2/verdicts.csv}" --set train_tasks="${LIVE_TASKS:-0-5}" > "$OUT/live.log" 2>&1
  echo "live check exit $?"; tail -25 "$OUT/live.log" ;;
suite)  # SUITE_APPEND=1: start from the committed drk/problems/gpu_results.csv and keep the rows not re-measured;
        # SUITE_SPEC=drk:level1 (etc.) measures one level: a pass split over device calls
  if [ "${SUITE_APPEND:-0}" = 1 ]; then cp drk/problems/gpu_results.csv "$OUT/gpu_results.csv"; fi
  timeout "${SUITE_S:-560}" python3 benchmarks/suite_gpu.py --spec "${SUITE_SPEC:-drk:all}" \
    --policies ${SUITE_POLICIES:-drk authors} \
    --reference-modes ${SUITE_MODES:-eager} --workers 8 --out "$OUT/gpu_results.csv" \
    $([ "${SUITE_APPEND:-0}" = 1 ] && echo --append) > "$OUT/suite.log" 2>&1; echo "suite exit $?"
  grep -E "^\[|wrote" "$OUT/suite.log" ;;
*) echo "usage: bash benchmarks/gpu_all.sh cv|noise|checks|tests|rate|scaling|mini2|live|suite" >&2; exit 2 ;;
esac
