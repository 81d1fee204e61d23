#!/bin/sh
# Issue 22: `wavekit run --device kfd` instruments a HIP program on Debian's HIP and ROCr over the
# emulated KFD (the shim at ROCr's HSA API and its proxy AQL queue, the emulated device under
# ROCr), and the tool's results are byte-identical to those of the same run on wavekit's own
# runtime (--device emu): a differential test of the two runtimes under the shim. The programs
# used dispatch only kernels of their own (CLR's runtime-compiled blit kernels differ between the
# two runtimes: docs/kfd.md). Usage: run_test.sh WAVEKIT TOOL PROGRAM [RUN_OPTION...] (options of
# `wavekit run` for both runs). Skips (77) where Debian's ROCr or HIP is absent.
set -u
wavekit=$1 tool=$2 program=$3
shift 3
[ -e /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1 ] ||
  { echo "SKIP: Debian's ROCr is not installed (libhsa-runtime64-1)"; exit 77; }
env -u LD_LIBRARY_PATH ldd "$program" | grep -q "libamdhip64.so.5 => /" ||
  { echo "SKIP: Debian's HIP is not installed (libamdhip64-5)"; exit 77; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
fail=0
for device in emu kfd; do
  WAVEKIT_KFD_LOG="$dir/kfd.log" timeout 240 "$wavekit" run --device $device --tool "$tool" \
    --tool-out "$dir/$device" "$@" -- "$program" >"$dir/$device.out" 2>&1
  rc=$?
  cat "$dir/$device.out"
  [ $rc -eq 0 ] || { echo "FAIL: wavekit run --device $device exited $rc"; fail=1; }
done
[ $fail -eq 0 ] || exit 1
# The instrumented kernel ran on the emulated KFD's command processor, under ROCr.
grep -q "^queue: dispatch .* -> none" "$dir/kfd.log" ||
  { echo "FAIL: nothing was dispatched on the emulated KFD"; exit 1; }
# Every result file (per-dispatch JSON, per-wave files) the same, and the same set of them.
results=$(cd "$dir/emu" && find . -type f | sort)
[ -n "$results" ] || { echo "FAIL: --device emu wrote no results"; exit 1; }
[ "$(cd "$dir/kfd" && find . -type f | sort)" = "$results" ] ||
  { echo "FAIL: the two runs wrote different result files"; fail=1; }
diff -r "$dir/emu" "$dir/kfd" >/dev/null || { echo "FAIL: results differ between --device emu and --device kfd:"; diff -rq "$dir/emu" "$dir/kfd" | head; fail=1; }
[ $fail -eq 0 ] && echo "PASS: $tool's $(echo "$results" | wc -l) result files identical on wavekit's runtime and on ROCr over the emulated KFD"
exit $fail
