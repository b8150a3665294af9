#!/usr/bin/env bash
# Passes of the bundled suite, one level at a time, until a deadline: one device call runs what fits, and the next
# call (on the same warm machine) goes on from where it stopped.
#   DEADLINE_S=560 bash benchmarks/suite_queue.sh drk:eager:level1 drk:eager:level2 drk:compile:level1 ...
# Each item is timing_policy:reference_mode:level. A finished item is marked in runs/suite_queue/done and skipped by a
# later call; the table grows in runs/suite_queue/gpu_results.csv (seeded from the committed
# drk/problems/gpu_results.csv, rows of other passes kept: suite_gpu.py --append) and is copied to $OUT after each item.
# WORKERS (default 8), MEMORY_FACTOR (Pool(memory_factor=...)), BURST (--burst-cycles) and FLUSH_MB (--l2-flush-mb)
# pass through to suite_gpu.py.
# An item is started only when at least MIN_ITEM_S (default 150) seconds remain, so a pass is rarely cut short.
set -u
OUT=${OUT:-out/gpu}
STATE=runs/suite_queue  # repo-relative and git-ignored: kept between calls on the device
mkdir -p "$OUT" "$STATE"
touch "$STATE/done"
[ -f "$STATE/gpu_results.csv" ] || cp drk/problems/gpu_results.csv "$STATE/gpu_results.csv"
for item in "$@"; do
  if grep -qx "$item" "$STATE/done"; then echo "$item: done in an earlier call"; continue; fi
  left=$(( ${DEADLINE_S:-560} - SECONDS ))
  if [ "$left" -lt "${MIN_ITEM_S:-150}" ]; then echo "$item: not started (${left} s left)"; continue; fi
  IFS=: read -r policy mode level <<< "$item"
  log="$OUT/suite_${policy}_${mode}_${level}.log"
  timeout "$left" python3 benchmarks/suite_gpu.py --spec "drk:$level" --policies "$policy" --reference-modes "$mode" \
    --workers "${WORKERS:-8}" ${MEMORY_FACTOR:+--memory-factor "$MEMORY_FACTOR"} ${BURST:+--burst-cycles "$BURST"} ${FLUSH_MB:+--l2-flush-mb "$FLUSH_MB"} --out "$STATE/gpu_results.csv" --append > "$log" 2>&1
  code=$?
  echo "$item: exit $code after ${SECONDS} s"; grep -E "^\[" "$log"
  if [ "$code" = 0 ]; then echo "$item" >> "$STATE/done"; cp "$STATE/gpu_results.csv" "$OUT/gpu_results.csv"; fi
done
