#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: install and build (scripts/setup.sh), then run
# an unmodified HIP program (built by the set-up with Debian's hipcc, run through Debian's
# libamdhip64) whose kernel diverges per lane, with its GPU kernel instrumented by
# `wavekit run --tool bbcount`, on wavekit's emulator (no AMD GPU needed). It prints the
# program's own output, then the per-wave, per-basic-block execution counts as a heatmap;
# the JSON and SVG results land in ./wavekit-demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo
echo "== wavekit run --tool bbcount -- build/examples/hsa/hip/divergent"
exec build/wavekit run --tool bbcount --tool-out wavekit-demo -- build/examples/hsa/hip/divergent
