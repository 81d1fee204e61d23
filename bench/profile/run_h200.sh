#!/bin/bash
# One full benchmark call on the GPU machine: build, run every configuration interleaved,
# compare attribution with Proton and kernel counts with the CUPTI floor. Results go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}
rounds=${ROUNDS:-2}
reps=${REPS:-3}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
bash bench/profile/build.sh /tmp/wk .bench-deps || exit 1
export PYTHONPATH=/tmp/wk:$PWD/python
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
python3 bench/profile/bench.py orchestrate --lib /tmp/wk --out /tmp/res --rounds "$rounds" \
  --reps "$reps" --soak-replays "${SOAK_REPLAYS:-10000}" 2>&1 | tee "$out/log.txt"
python3 bench/profile/compare.py /tmp/res/ours-0/profile.hatchet /tmp/res/proton-0.hatchet \
  /tmp/res/floor-0.json 2>&1 | tee "$out/compare.txt"
echo "soak:" | tee -a "$out/compare.txt"
python3 bench/profile/compare.py /tmp/res/ours-soak/profile.hatchet /tmp/res/ours-soak/profile.hatchet \
  /tmp/res/floor-soak.json 2>&1 | tail -2 | tee -a "$out/compare.txt"
python3 -c "
import json; d=json.load(open('/tmp/res/ours-0/profile.hatchet')); print('ours self-metrics:', d[2])" 2>&1 | tee -a "$out/compare.txt"
ls /tmp/res/ours-0 | head; du -sh /tmp/res/ours-0 /tmp/res/*.hatchet
cp /tmp/res/results.jsonl /tmp/res/summary.json "$out/" 2>/dev/null
cp /tmp/res/ours-0/profile.hatchet "$out/ours.hatchet" 2>/dev/null
cp /tmp/res/proton-0.hatchet "$out/proton.hatchet" 2>/dev/null
exit 0
