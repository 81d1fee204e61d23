#!/usr/bin/env bash
# Builds the CUDA hostcall benchmark with nvcc (CMake does not: CI has no GPU and no nvcc).
#   bench/hostcall/build_cuda.sh [output-binary]     (default: build-cuda/hostcall_cuda)
# NVCC_DEFINES adds nvcc options, e.g. NVCC_DEFINES=-DWAVEKIT_HOSTCALL_CUDA_MAX_SLEEP_NS=32768
# to measure another device back-off cap.
# The host runtime is compiled with the host C++ compiler, the benchmark with nvcc for sm_90
# (H100/H200) plus PTX for newer GPUs.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/build-cuda/hostcall_cuda}"
mkdir -p "$(dirname "$out")"
nvcc="${NVCC:-nvcc}"
cxx="${CXX:-g++}"
objects=()
for source in "$root"/src/hostcall/src/*.cpp "$root"/src/support/src/*.cpp; do
  object="$(dirname "$out")/$(basename "$source" .cpp).o"
  "$cxx" -std=c++20 -O2 -Wall -Wextra -Werror -I"$root/src/hostcall/include" -I"$root/src/support/include" \
    -c "$source" -o "$object"
  objects+=("$object")
done
# shellcheck disable=SC2086 # NVCC_DEFINES holds several words
"$nvcc" -std=c++20 -O2 ${NVCC_DEFINES:-} -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
  -Xcompiler -Wall,-Wextra -I"$root/src/hostcall/include" -I"$root/src/support/include" \
  "$root/bench/hostcall/hostcall_cuda.cu" "${objects[@]}" -o "$out" -lpthread
echo "$out"
