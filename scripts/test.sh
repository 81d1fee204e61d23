#!/usr/bin/env bash
# Sets up and builds if needed, then runs every test (unit, integration, fuzz smoke runs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j "${WAVEKIT_JOBS:-$(nproc)}" "$@"
