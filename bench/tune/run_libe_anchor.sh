#!/bin/sh
# The study's pipeline end to end (libEnsemble manager/workers + scikit-optimize as ytopt
# configures it + sklearn's callable-kernel SVC, a fresh Python process per evaluation) against
# `wavekit tune`, same task, budget and workers: bench/tune/libe_anchor.py says what is measured.
# The comparison software goes into a venv this script creates (over Debian's python3 and its
# sklearn, --system-site-packages), never into the library.
# usage: bench/tune/run_libe_anchor.sh WAVEKIT [out=/tmp/libe-anchor] [n=3000] [budget=32]
#        [workers=2] [libe_seeds=2345,1,2] [wavekit_runs=gp:1,gp:2,gp:3,rf:1,rf:2,rf:3]
# docs/benchmarks/tune.md section 3 ran: bench/tune/run_libe_anchor.sh build-tune/wavekit
set -eu
wavekit=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=${2:-/tmp/libe-anchor}
here=$(cd "$(dirname "$0")" && pwd)
venv=${VENV:-$(dirname "$wavekit")/tune-anchor-venv}
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/pip" install -q libensemble scikit-optimize
fi
"$venv/bin/pip" list 2>/dev/null | grep -iE '^(libensemble|scikit-optimize|scikit-learn|numpy|scipy) '
# one thread per process: WORKERS evaluations side by side on as many cores, on both sides
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
"$venv/bin/python" "$here/libe_anchor.py" "$wavekit" "$out" "${3:-3000}" "${4:-32}" "${5:-2}" \
  "${6:-2345,1,2}" "${7:-gp:1,gp:2,gp:3,rf:1,rf:2,rf:3}"
