#!/bin/sh
# Issue 22: under `wavekit run --device kfd`, CLR compiles its blit kernels for the agent's full
# target ID (gfx90a:sramecc-:xnack- on Debian's ROCr) and the ready-made probe libraries are
# built for plain gfx90a: the shim instruments them (the targets are compatible), it does not
# run their original code. The program (memcpy) checks the data the blit kernels moved.
# Usage: blit_test.sh WAVEKIT TOOL PROGRAM. Skips (77) where Debian's ROCr or HIP is absent.
set -u
wavekit=$1 tool=$2 program=$3
[ -e /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1 ] ||
  { echo "SKIP: Debian's ROCr is not installed (libhsa-runtime64-1)"; exit 77; }
env -u LD_LIBRARY_PATH ldd "$program" | grep -q "libamdhip64.so.5 => /" ||
  { echo "SKIP: Debian's HIP is not installed (libamdhip64-5)"; exit 77; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
timeout 400 "$wavekit" run --device kfd --tool "$tool" --tool-out "$dir/out" -- "$program" \
  >"$dir/run.out" 2>&1
rc=$?
cat "$dir/run.out"
[ $rc -eq 0 ] || { echo "FAIL: wavekit run --device kfd exited $rc"; exit 1; }
fail=0
if grep -q "running the original code object of __amd_rocclr" "$dir/run.out"; then
  echo "FAIL: a blit kernel ran its original code"
  fail=1
fi
for kernel in __amd_rocclr_copyBuffer __amd_rocclr_fillBufferAligned; do
  grep -q "^  $kernel: [1-9][0-9]* dispatches" "$dir/run.out" ||
    { echo "FAIL: $kernel's dispatches were not all instrumented"; fail=1; }
  ls "$dir/out" | grep -q "^$kernel\.0" || { echo "FAIL: no $tool result for $kernel"; fail=1; }
done
[ $fail -eq 0 ] && echo "PASS: CLR's blit kernels ran instrumented under $tool on ROCr"
exit $fail
