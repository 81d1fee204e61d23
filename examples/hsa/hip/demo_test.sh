#!/bin/sh
# The README's main job (scripts/demo.sh): the HIP program under `wavekit run --tool bbcount`
# passes its own check, and bbcount's per-wave block counts of every dispatch (CLR's blit kernels
# included) equal the emulator's ground truth of the plain run (WAVEKIT_EMU_TRACE_BLOCKS).
# Usage: demo_test.sh WAVEKIT PROGRAM HSA_RUNTIME_DIR
set -u
wavekit=$1 program=$2 runtime=$3
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
LD_LIBRARY_PATH=$runtime WAVEKIT_EMU_TRACE_BLOCKS="$dir/truth" "$program" ||
  { echo "FAIL: the plain run failed"; exit 1; }
"$wavekit" run --tool bbcount --tool-out "$dir/bbcount" -- "$program" ||
  { echo "FAIL: the run under bbcount failed"; exit 1; }
/usr/bin/python3 - "$dir/truth" "$dir/bbcount" <<'PY'
import glob, json, os, sys
truth, tool = sys.argv[1:]
def waves(path):
    with open(path) as f:
        return {wave["id"]: wave["blocks"] for wave in json.load(f)["waves"]}
files = sorted(glob.glob(os.path.join(truth, "*.json")))
differ = [os.path.basename(p) for p in files
          if not os.path.exists(os.path.join(tool, os.path.basename(p)))
          or waves(p) != waves(os.path.join(tool, os.path.basename(p)))]
if not files or not any(os.path.basename(p).startswith("divergent.") for p in files):
    sys.exit("FAIL: the plain run recorded no dispatch of divergent")
if differ:
    sys.exit("FAIL: bbcount differs from the ground truth in " + ", ".join(differ))
print(f"PASS: {len(files)} dispatches, bbcount equal to the ground truth in each")
PY
