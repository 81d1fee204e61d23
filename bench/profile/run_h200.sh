#!/bin/bash
# One full benchmark call on the GPU machine: build, run every configuration interleaved,
# compare attribution with Proton and kernel counts with the CUPTI floor. Results go to $OUT.
# CONFIGS (space-separated, default: all of bench.py's) picks configurations; SOAK (default
# "ours floor", empty for none) the soak runs.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}
rounds=${ROUNDS:-2}
reps=${REPS:-3}
# Which code this is: a git checkout, or a copy made with a COMMIT file beside it.
echo "code: $(cat COMMIT 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
bash bench/profile/build.sh /tmp/wk .bench-deps || exit 1
export PYTHONPATH=/tmp/wk:$PWD/python
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
# AB (default 10 pairs, 0: skip): each profiler enabled and disabled in one process.
if [ "${AB:-10}" != 0 ]; then
  python3 bench/profile/bench.py ab-orchestrate --lib /tmp/wk --out /tmp/res --pairs "${AB:-10}" \
    2>&1 | tee "$out/ab.txt"
  cp /tmp/res/ab.jsonl /tmp/res/ab_summary.json "$out/" 2>/dev/null
fi
python3 bench/profile/bench.py orchestrate --lib /tmp/wk --out /tmp/res --rounds "$rounds" \
  --reps "$reps" --soak-replays "${SOAK_REPLAYS:-10000}" ${CONFIGS:+--configs $CONFIGS} \
  --soak ${SOAK-ours floor} 2>&1 | tee "$out/log.txt"
python3 bench/profile/compare.py /tmp/res/ours-0/profile.hatchet /tmp/res/proton-0.hatchet \
  /tmp/res/floor_activity-0.json 2>&1 | tee "$out/compare.txt"
for events in ours_events ours_events_counted; do
  [ -f /tmp/res/$events-0/profile.hatchet ] && [ -f /tmp/res/ours-0/profile.hatchet ] || continue
  echo "== $events vs ours (CUPTI), round 0" | tee -a "$out/compare.txt"
  python3 bench/profile/compare_events.py /tmp/res/$events-0/profile.hatchet \
    /tmp/res/ours-0/profile.hatchet 2>&1 | tee -a "$out/compare.txt"
done
for run in ours ours_graph ours_sampled ours_events ours_events_sampled ours_events_counted; do
  [ -f /tmp/res/$run-0/profile.hatchet ] || continue
  echo "== $run, round 0" | tee -a "$out/compare.txt"
  python3 bench/profile/inspect_profile.py /tmp/res/$run-0/profile.hatchet 2>&1 |
    tee -a "$out/compare.txt"
done
if [ -f /tmp/res/floor-soak.json ]; then
  echo "soak:" | tee -a "$out/compare.txt"
  python3 bench/profile/compare.py /tmp/res/ours-soak/profile.hatchet \
    /tmp/res/ours-soak/profile.hatchet /tmp/res/floor-soak.json 2>&1 | tail -2 |
    tee -a "$out/compare.txt"
fi
du -sh /tmp/res/ours-0 /tmp/res/*.hatchet
cp /tmp/res/results.jsonl /tmp/res/summary.json "$out/" 2>/dev/null
cp /tmp/res/ours-0/profile.hatchet "$out/ours.hatchet" 2>/dev/null
cp /tmp/res/ours_graph-0/profile.hatchet "$out/ours_graph.hatchet" 2>/dev/null
cp /tmp/res/ours_events-0/profile.hatchet "$out/ours_events.hatchet" 2>/dev/null
cp /tmp/res/proton-0.hatchet "$out/proton.hatchet" 2>/dev/null
exit 0
