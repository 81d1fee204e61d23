#!/bin/sh
# Evaluations per second of `wavekit tune --mpi` at 1, 2 and 4 ranks (rank 0 manages, the
# others evaluate; alone, rank 0 evaluates itself). Two objectives: a command that sleeps
# 0.2 s (latency-bound: shows the loop's concurrency) and the SVM objective on 3,000 rows of
# the HEP surrogate with 3-fold CV (CPU-bound: shows this machine's cores).
# usage: bench/tune/mpi_scaling.sh BUILD_DIR [budget=24]
set -eu
build=$1
budget=${2:-24}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
/usr/bin/python3 "$here/make_hep_surrogate.py" 3000 3 "$tmp/hep.txt"
cat > "$tmp/space.json" <<'JSON'
{"parameters": [
  {"name": "a", "low": 0.0, "high": 1.0}, {"name": "s", "low": 1e-4, "high": 1e-1, "log": true},
  {"name": "g", "low": 1e-3, "high": 1.0, "log": true}, {"name": "coef0", "low": -1, "high": 1},
  {"name": "C", "low": 0.1, "high": 100, "log": true}]}
JSON
echo "objective,ranks,workers,evaluations,seconds,evals_per_s"
for np in 1 2 4; do
  for obj in sleep svm; do
    if [ $obj = sleep ]; then
      args="--command 'sleep 0.2; echo {a}' --metric-regex '([0-9.]+)'"
    else
      args="--svm $tmp/hep.txt --folds 3"
    fi
    t0=$(date +%s.%N)
    eval mpirun --allow-run-as-root --oversubscribe --bind-to none -np $np "$build/wavekit" tune --mpi \
      --space "$tmp/space.json" $args --tuner random --budget "$budget" --quiet --no-chart \
      > "$tmp/out.txt" 2>&1
    t1=$(date +%s.%N)
    workers=$(( np > 1 ? np - 1 : 1 ))
    echo "$obj,$np,$workers,$budget,$(echo "$t1 - $t0" | bc),$(echo "scale=2; $budget / ($t1 - $t0)" | bc)"
  done
done
rm -rf "$tmp"
