#!/bin/bash
# Runs every kernel of bench/model/hecbench_kernels.txt through `wavekit model` (HIP source
# built for gfx90a with clang-22 through wavekit's HIP shim, run on the emulator at small sizes,
# counts fitted and checked at a held-out size, evaluated at the gpuFLOPBench sizes), then
# compares the predictions with gpuFLOPBench's RTX 3080 table and with our H200 Nsight Compute
# table (bench/model/h200/ncu.csv).
#   bench/model/validate_gpuflopbench.sh BUILD_DIR [OUTPUT_DIR]
# KERNELS=FILE runs another list of the same form (a few kernels while adding them);
# REPREDICT=1 re-predicts from the application models of an earlier run in OUTPUT_DIR.
# A kernel whose list line names the device-code flags of gpuFLOPBench's build (its last
# column) is run twice: with the Makefile's flags for the H200 table (our nvcc builds follow the
# Makefiles) and with gpuFLOPBench's for the RTX 3080 table (NN-program.rtx3080.json).
set -u
BUILD=${1:?build directory with the wavekit binary}
OUTDIR=${2:-$BUILD/model-validation}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DATA=${WAVEKIT_SHARED_DATA:-$ROOT/../shared/data}
SRC=$DATA/hecbench/src
mkdir -p "$OUTDIR"
: > "$OUTDIR/failures.txt"
i=0
# run_kernel OUT FLAGS CODE_OBJECT_DIR: one kernel's run (the list line's fields are in the
# loop's variables).
run_kernel() {
  local out=$1 flags=$2 co=$3 f a
  local cmd=("$BUILD/wavekit" model "$SRC/$source" --kernel "$kernel" --block "$block" --blocks "$blocks"
       --machine rtx3080 --machine h200 --program "$program" --threads 2 --json
       --build-dir "$co" --hip-flag=-std=c++17 --save-model "${out%.json}.model.json"
       --hip-flag=-I"$SRC/$program")
  # (The HIP programs' Makefiles take headers they share with the CUDA version from there.)
  [ -n "$lds" ] && cmd+=(--lds "$lds")
  for f in $flags; do cmd+=(--hip-flag="$f"); done
  for a in $args; do cmd+=(--arg "$a"); done
  if [ -n "$fit" ]; then
    cmd+=(--fit "$fit" --check "$check" --at "$at")
  else
    for p in $at; do cmd+=(--param "$p"); done
  fi
  # REPREDICT=1: predict again from the application models an earlier run saved (after a
  # change of the predictor or a machine file; the counts are not taken again).
  [ -n "${REPREDICT:-}" ] && cmd=("$BUILD/wavekit" model predict "${out%.json}.model.json"
                                  --machine rtx3080 --machine h200 --json)
  # Without address-space randomisation, where the machine allows it: the emulator's buffers
  # are host memory, and the L2 model's sets follow their addresses, which ASLR moves (hypterm_2's
  # DRAM bytes changed between identical runs by 15 % once extrapolated).
  setarch -R true 2> /dev/null && cmd=(setarch -R "${cmd[@]}")
  local start
  start=$(date +%s.%N)
  if "${cmd[@]}" > "$out" 2> "${out%.json}.err"; then
    printf '%-26s %-28s %-10s %6.1f s\n' "$program" "$kernel" "$flags" "$(echo "$(date +%s.%N) - $start" | bc)"
  else
    echo "$program|$kernel|$flags|$(head -c 300 "${out%.json}.err" | tr '\n' ' ')" >> "$OUTDIR/failures.txt"
    rm -f "$out"
    printf '%-26s %-28s %-10s FAILED\n' "$program" "$kernel" "$flags"
  fi
}
while IFS='|' read -r program source kernel block blocks fit check at args lds flags gpuflopbench_flags; do
  case "$program" in ''|'#'*) continue;; esac
  i=$((i + 1))
  base="$OUTDIR/$(printf %02d $i)-${program}"
  run_kernel "$base.json" "$flags" "$OUTDIR/co"
  if [ -n "$gpuflopbench_flags" ]; then
    run_kernel "$base.rtx3080.json" "$gpuflopbench_flags" "$OUTDIR/co-gpuflopbench"
  fi
done < "${KERNELS:-$ROOT/bench/model/hecbench_kernels.txt}"
# One predictions document, then the comparisons.
# (predictions.json from the Makefiles' builds; predictions-rtx3080.json with gpuFLOPBench's
# builds where a kernel has its own run for them.)
python3 - "$OUTDIR" <<'PY'
import json, sys, glob, os
d = sys.argv[1]
ours, theirs = [], []
for f in sorted(glob.glob(os.path.join(d, '[0-9][0-9]-*.json'))):
    if f.endswith('.model.json') or f.endswith('.rtx3080.json'): continue
    kernels = json.load(open(f))['kernels']
    ours += kernels
    rtx = f[:-len('.json')] + '.rtx3080.json'
    theirs += json.load(open(rtx))['kernels'] if os.path.exists(rtx) else kernels
json.dump({'kernels': ours}, open(os.path.join(d, 'predictions.json'), 'w'), indent=1)
json.dump({'kernels': theirs}, open(os.path.join(d, 'predictions-rtx3080.json'), 'w'), indent=1)
PY
"$BUILD/wavekit" model compare "$OUTDIR/predictions-rtx3080.json" "$DATA/gpuflopbench/profiling-data.csv" --machine rtx3080 | tee "$OUTDIR/rtx3080.txt"
"$BUILD/wavekit" model compare "$OUTDIR/predictions.json" "$ROOT/bench/model/h200/ncu.csv" --machine h200 | tee "$OUTDIR/h200.txt"
cat "$OUTDIR/failures.txt"
