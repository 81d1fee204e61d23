#!/bin/bash
# Input files for the listed programs whose arguments name files that the HeCBench sources do
# not ship (docs/benchmarks/model.md): written into the staging directory, on the device
# machine, before run_h200.sh. The values are generated; the kernels measured here have no
# data-dependent control flow (hotspot3d is a stencil whose branches depend on indices only).
#   STAGE=.hecbench-stage bash bench/model/h200_inputs.sh
set -eu
STAGE=${STAGE:-.hecbench-stage}
# hotspot3D: 512 x 512 x 8 temperatures (K) and powers, one value a line (readinput's format).
# (The program reads them at ../data/hotspot3D/ from its own directory.)
mkdir -p "$STAGE/src/data/hotspot3D"
awk 'BEGIN { srand(1); for (i = 0; i < 512 * 512 * 8; ++i) printf "%.4f\n", 320 + 20 * rand() }' > "$STAGE/src/data/hotspot3D/temp_512x8"
awk 'BEGIN { srand(2); for (i = 0; i < 512 * 512 * 8; ++i) printf "%.6f\n", 0.001 * rand() }' > "$STAGE/src/data/hotspot3D/power_512x8"
