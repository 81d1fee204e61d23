#!/bin/sh
# Tuner quality at equal budgets: wavekit's tuners (C++) and the comparisons (scikit-optimize,
# the study's tuner, and Optuna's TPE) in a venv this script creates, never in the library.
# usage: bench/tune/run_tuner_quality.sh BUILD_DIR [seeds=20] [budget=128] [in_flight=4]
set -eu
build=$1
seeds=${2:-20}
budget=${3:-128}
flight=${4:-4}
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$build/tune-quality}
venv=${VENV:-$build/tune-bench-venv}
mkdir -p "$out"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q scikit-optimize optuna
fi
"$build/bench/tune/tune_tuner_quality" "$seeds" "$budget" "$flight" random,rf,gp,tpe > "$out/wavekit.csv"
"$venv/bin/python" "$here/tuner_quality.py" "$seeds" "$budget" "$flight" optuna > "$out/optuna.csv"
"$venv/bin/python" "$here/tuner_quality.py" "$seeds" "$budget" "$flight" skopt > "$out/skopt.csv"
python3 "$here/summarise_quality.py" "$out/wavekit.csv" "$out/optuna.csv" "$out/skopt.csv"
