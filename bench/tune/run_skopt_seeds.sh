#!/bin/sh
# skopt (the study's tuner, as tuner_quality.py configures it) on many seeds at once: one
# process per (function, seed), JOBS of them side by side, each single-threaded
# (OMP_NUM_THREADS=1), so a machine of many cores runs the seeds that take 6-10 minutes each on
# 2 cores. Each run writes its CSV row to OUT_DIR/rows/FUNCTION_SEED.csv and its whole value
# sequence to OUT_DIR/trace/ (TUNER_QUALITY_TRACE); at the end OUT_DIR/skopt.csv holds every row
# that finished (summarise_quality.py reads it) and OUT_DIR/trace.tsv every sequence.
#
# usage: bench/tune/run_skopt_seeds.sh PYTHON SEEDS JOBS OUT_DIR [budget=128] [in_flight=4]
#   SEEDS as tuner_quality.py takes it ("1,9-20"); PYTHON must import skopt. Runs still going
#   at DEADLINE (below) are left out of the CSV.
# docs/benchmarks/tune.md section 3, seeds 9-20 on this 2-core machine, one run at a time
# (VENV: the venv run_tuner_quality.sh makes):
#   nice -n 10 bench/tune/run_skopt_seeds.sh $VENV/bin/python 9-20 1 /tmp/skopt-seeds
set -eu
py=$1
seeds=$2
jobs=$3
out=$4
budget=${5:-128}
flight=${6:-4}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/rows" "$out/trace"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 TUNER_QUALITY_TRACE="$out/trace"
list=$("$py" -c "import sys; sys.path.insert(0, sys.argv[1]); import tuner_quality as t
print(*t.parse_seeds(sys.argv[2]))" "$here" "$seeds")
# seed by seed, both functions, so that a run cut short still covers both evenly
for s in $list; do echo "hartmann6 $s"; echo "branin $s"; done > "$out/jobs.txt"
# DEADLINE=S (seconds) stops starting and waiting after S, so that the rows that finished are
# still gathered inside a time limit
timeout "${DEADLINE:-0}" xargs -P "$jobs" -L 1 sh -c '
  start=$(date +%s)
  "$0" "$1/tuner_quality.py" "$4-$4" '"$budget"' '"$flight"' skopt "$3" > "$2/rows/$3_$4.csv.part" &&
    mv "$2/rows/$3_$4.csv.part" "$2/rows/$3_$4.csv" &&
    echo "$3 seed $4: $(( $(date +%s) - start )) s"
' "$py" "$here" "$out" < "$out/jobs.txt" || echo "stopped at the deadline"
echo "function,tuner,seed,best_at_64,best_at_128" > "$out/skopt.csv"
for f in "$out"/rows/*.csv; do [ -e "$f" ] && tail -n +2 "$f"; done >> "$out/skopt.csv"
for f in "$out"/trace/*.txt; do [ -e "$f" ] || continue; printf '%s\t%s\n' "$(basename "$f" .txt)" "$(paste -sd, "$f")"; done > "$out/trace.tsv"
