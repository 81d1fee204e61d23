#!/bin/bash
# The events backend's own CPU cost per launch (hook_cost_stand_in.cpp) for each --time-every
# setting, against the tests' stand-in driver. usage: hook_cost_stand_in.sh [BUILD_DIR]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
program=$build/bench/profile/profile_hook_cost_stand_in
library=$(find "$build/src/profile" -name libwavekit_profile_events.so | head -1)
stand_in=$build/tests/profile/fake_cuda
[ -x "$program" ] && [ -n "$library" ] || { echo "build the tree first (ninja)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for every in 1 32 256; do
  LD_PRELOAD=$library LD_LIBRARY_PATH=$stand_in WAVEKIT_PROFILE_BACKEND=events \
    WAVEKIT_PROFILE_TIME_EVERY=$every WAVEKIT_PROFILE_QUIET=1 \
    WAVEKIT_PROFILE_OUTPUT=$out/$every "$program"
done
