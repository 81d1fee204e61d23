#!/usr/bin/env bash
# The sanitizer stage: the parsers, the rewriter, the emulator and their fuzz smoke runs built
# with ASan+UBSan (UB fatal) into ./build-asan, then their tests (docs/development.md,
# "Sanitizers"). Needs what scripts/setup.sh installs. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
parts="support;corpus;codeobj;isa;analysis;hostcall;emu;hsa;rewrite"
jobs=${WAVEKIT_JOBS:-$(nproc)}
if [[ ! -f build-asan/build.ninja ]]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DWAVEKIT_BUILD_BENCH=OFF \
    -DWAVEKIT_SANITIZE=address,undefined -DWAVEKIT_ONLY="$parts" >/dev/null
fi
echo "wavekit sanitize: building build-asan (${jobs} jobs; ASan+UBSan: $parts)"
cmake --build build-asan -j "$jobs"
# Leaks are reported and fail the test; the stack of a report is symbolized.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir build-asan --output-on-failure -j "$jobs" "$@"
