#!/bin/sh
# Issue 22: `wavekit run --device kfd` instruments a HIP program on Debian's HIP and ROCr over the
# emulated KFD (the shim at ROCr's HSA API and its proxy AQL queue, the emulated device under
# ROCr), and the tool's per-dispatch results are byte-identical to those of the same run on
# wavekit's own runtime (--device emu): a differential test of the two runtimes under the shim.
# Usage: run_test.sh WAVEKIT PROGRAM. Skips (77) where Debian's ROCr or HIP is absent.
set -u
wavekit=$1 program=$2
[ -e /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1 ] ||
  { echo "SKIP: Debian's ROCr is not installed (libhsa-runtime64-1)"; exit 77; }
env -u LD_LIBRARY_PATH ldd "$program" | grep -q "libamdhip64.so.5 => /" ||
  { echo "SKIP: Debian's HIP is not installed (libamdhip64-5)"; exit 77; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
fail=0
for device in emu kfd; do
  WAVEKIT_KFD_LOG="$dir/kfd.log" timeout 240 "$wavekit" run --device $device --tool bbcount \
    --tool-out "$dir/$device" -- "$program" >"$dir/$device.out" 2>&1
  rc=$?
  cat "$dir/$device.out"
  [ $rc -eq 0 ] || { echo "FAIL: wavekit run --device $device exited $rc"; fail=1; }
done
[ $fail -eq 0 ] || exit 1
# The instrumented kernel ran on the emulated KFD's command processor, under ROCr.
grep -q "^queue: dispatch .* -> none" "$dir/kfd.log" ||
  { echo "FAIL: nothing was dispatched on the emulated KFD"; exit 1; }
results=$(cd "$dir/emu" && ls *.json)
[ -n "$results" ] || { echo "FAIL: --device emu wrote no results"; exit 1; }
for result in $results; do
  cmp "$dir/emu/$result" "$dir/kfd/$result" ||
    { echo "FAIL: $result differs between --device emu and --device kfd"; fail=1; }
done
[ "$(cd "$dir/kfd" && ls *.json)" = "$results" ] ||
  { echo "FAIL: the two runs wrote different result files"; fail=1; }
[ $fail -eq 0 ] && echo "PASS: bbcount results identical on wavekit's runtime and on ROCr over the emulated KFD:" $results
exit $fail
