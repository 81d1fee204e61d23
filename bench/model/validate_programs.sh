#!/bin/bash
# The model's whole-program path against Nsight Compute (docs/benchmarks/model.md, "Whole
# programs"): each HeCBench program of bench/model/h200/programs_whole.txt, its HIP version
# built with Debian's hipcc (bench/hecbench/survey.py --build-only --work WORK), runs whole under
# `wavekit model run` at the arguments the H200 run used (run_h200.sh on the same list gave
# bench/model/h200/ncu_whole.csv), and the predictions meet the measured launches one by one.
#   bash bench/model/validate_programs.sh BUILD WORK [OUT]
# BUILD: the wavekit build directory; WORK: the survey's work directory; OUT (default
# WORK/model-programs): one JSON per program, predictions.json (all of them), comparison.txt
# and comparison.json. Environment: PROGRAM_TIMEOUT (seconds, 300), LAUNCHES (counted per
# kernel, 12: ncu profiled each program's first 12).
set -u
BUILD=$(realpath "$1")
WORK=$(realpath "$2")
OUT=$(realpath -m "${3:-$WORK/model-programs}")
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUT"
while IFS='|' read -r program args _; do
  [ -z "$program" ] && continue
  name=${program%-cuda}
  directory=$WORK/src/$name-hip
  if [ ! -x "$directory/main" ]; then
    echo "$program: not built (see $WORK/logs/$name.build.log)" | tee -a "$OUT/log.txt"
    continue
  fi
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # the arguments are words
  (cd "$directory" && WAVEKIT_EMU_THREADS=2 "$BUILD/wavekit" model run --json --machine h200 \
    --program "$program" --launches "${LAUNCHES:-12}" --timeout "${PROGRAM_TIMEOUT:-300}" \
    -- ./main $args > "$OUT/$program.json" 2> "$OUT/$program.err")
  status=$?
  echo "$program: exit $status, $(echo "$(date +%s.%N) - $start" | bc) s" | tee -a "$OUT/log.txt"
done < "$HERE/h200/programs_whole.txt"
/usr/bin/python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
kernels = []
for path in sorted(glob.glob(os.path.join(out, "*-cuda.json"))):
    try:
        with open(path) as f:
            kernels += json.load(f)["kernels"]
    except (ValueError, KeyError):
        print(f"{os.path.basename(path)}: no model (the program failed: see its .err)")
with open(os.path.join(out, "predictions.json"), "w") as f:
    json.dump({"kernels": kernels}, f)
PY
"$BUILD/wavekit" model compare "$OUT/predictions.json" "$HERE/h200/ncu_whole.csv" --machine h200 \
  | tee "$OUT/comparison.txt"
"$BUILD/wavekit" model compare --json "$OUT/predictions.json" "$HERE/h200/ncu_whole.csv" \
  --machine h200 > "$OUT/comparison.json"
