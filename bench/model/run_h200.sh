#!/bin/bash
# The H200 measurements of the model benchmark (docs/benchmarks/model.md). Run on the device
# machine from the repository root, with the HeCBench CUDA sources staged in $STAGE (an ignored
# directory carried to the machine; never committed):
#   STAGE=.hecbench-stage bash bench/model/run_h200.sh PROGRAMS_FILE [SECONDS]
# PROGRAMS_FILE lists "program|arguments[|kernel regex[|launches]]" lines (program: the -cuda
# directory name; with a regex only the kernels it matches are profiled, ncu -k regex:;
# launches: how many are profiled, 12 unless given). Writes under $OUT: microbench.csv
# (achieved ceilings), ncu.csv (Nsight Compute raw page, one row per profiled launch, with the
# program name prepended), build.log, ncu.log. Environment: PROGRAM_TIMEOUT (seconds per
# program, 60), EXTRA_METRICS (more metrics, comma-separated), NCU_SECTIONS (sections profiled besides the metrics below, e.g. "LaunchStats
# Occupancy"), BUILD_ONLY=1 (build the programs and stop).
set -u
STAGE=${STAGE:-.hecbench-stage}
LIST=$1
BUDGET=${2:-480}
OUT=${OUT:-/tmp/out}
start=$(date +%s)
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/device.txt" 2>&1
ncu --version >> "$OUT/device.txt" 2>&1
# 1. Microbenchmarks.
if [ ! -f "$OUT/microbench.csv" ] && [ -z "${SKIP_MICROBENCH:-}" ]; then
  nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/h200_microbench bench/model/h200_microbench.cu && /tmp/h200_microbench > "$OUT/microbench.csv" 2>&1
  # The kernel floor: Nsight Compute's duration of the empty kernel.
  ncu --clock-control none --metrics gpu__time_duration.sum -k empty -c 5 --csv --page raw /tmp/h200_microbench > "$OUT/empty_kernel_ncu.csv" 2>/dev/null
fi
# 2. Build every listed program (8 at a time): make with nvcc for sm_90, -O3 as their Makefiles.
build() {
  p=$1
  d=$STAGE/src/$p
  [ -x "$d/main" ] && return 0
  timeout 240 make -C "$d" CC=nvcc ARCH=sm_90 -j2 > "$d/build.log" 2>&1 || echo "$p build failed" >> "$STAGE/build_failures.txt"
}
export -f build
export STAGE
cut -d'|' -f1 "$LIST" | xargs -P 8 -I{} bash -c 'build {}'
cat "$STAGE/build_failures.txt" > "$OUT/build.log" 2>/dev/null
[ -n "${BUILD_ONLY:-}" ] && exit 0
# 3. Profile each program's first launches (at most 12 per program) under Nsight Compute.
METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
for op in fadd fmul ffma dadd dmul dfma; do METRICS=$METRICS,smsp__sass_thread_inst_executed_op_${op}_pred_on.sum; done
METRICS=$METRICS${EXTRA_METRICS:+,$EXTRA_METRICS}
sections=()
for s in ${NCU_SECTIONS:-}; do sections+=(--section "$s"); done
touch "$OUT/ncu.csv"
n=0
while IFS='|' read -r p args kernels launches; do
  [ -z "$p" ] && continue
  n=$((n + 1))
  now=$(date +%s)
  if [ $((now - start)) -gt "$BUDGET" ]; then echo "budget reached before $p" >> "$OUT/ncu.log"; break; fi
  grep -q "^$p,$kernels," "$OUT/done.txt" 2>/dev/null && continue
  filter=()
  [ -n "$kernels" ] && filter=(-k "regex:$kernels")
  d=$STAGE/src/$p
  if [ ! -x "$d/main" ]; then echo "$p,$kernels,not built" >> "$OUT/done.txt"; continue; fi
  ( cd "$d" && timeout "${PROGRAM_TIMEOUT:-60}" ncu --clock-control none --metrics "$METRICS" "${sections[@]}" "${filter[@]}" -c "${launches:-12}" --csv --page raw ./main $args < /dev/null > ncu_out.csv 2> ncu_err.txt )
  status=$?
  # Keep the CSV lines, the program's name in front: the header and units rows once.
  if [ -s "$OUT/ncu.csv" ]; then skip=2; else skip=0; fi
  grep '^"' "$d/ncu_out.csv" | awk -v p="$p" -v skip=$skip 'NR<=skip {next} NR==1 {print "\"Program\"," $0; next} NR==2 {print "\"\"," $0; next} {print "\"" p "\"," $0}' >> "$OUT/ncu.csv"
  # Each program's own output and errors too (the sections' columns can differ by kernel).
  mkdir -p "$OUT/raw"
  cp "$d/ncu_out.csv" "$OUT/raw/$p-$n.csv"; cp "$d/ncu_err.txt" "$OUT/raw/$p-$n.err"
  echo "$p,$kernels,$status" >> "$OUT/done.txt"
done < "$LIST"
echo "elapsed $(( $(date +%s) - start )) s" >> "$OUT/ncu.log"
