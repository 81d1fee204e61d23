#!/bin/sh
# Milestone A of issue 22: Debian's rocminfo, on Debian's ROCr and libhsakmt, lists the emulated
# agent beside the CPU agent. Usage: rocminfo_test.sh LIBWAVEKIT_KFD TARGET NAME CUS MARKETING
# Skips (77) where rocminfo or ROCr is absent.
set -u
preload=$1 target=$2 cus=$3 marketing=$4
rocminfo=$(command -v rocminfo) || { echo "SKIP: rocminfo is not installed (Debian package rocminfo)"; exit 77; }
[ -e /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1 ] ||
  { echo "SKIP: Debian's ROCr is not installed (libhsa-runtime64-1)"; exit 77; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
# Debian's ROCr, not wavekit's runtime: nothing of ours on the library path.
mkdir "$dir/tmp"
env -u LD_LIBRARY_PATH TMPDIR="$dir/tmp" WAVEKIT_KFD_TARGET="$target" WAVEKIT_KFD_LOG="$dir/kfd.log" LD_PRELOAD="$preload" \
  timeout 120 "$rocminfo" >"$dir/out" 2>"$dir/err"
rc=$?
cat "$dir/out" "$dir/err"
[ $rc -eq 0 ] || { echo "FAIL: rocminfo exited $rc"; exit 1; }
fail=0
expect() {
  grep -Eq "$1" "$dir/out" || { echo "FAIL: rocminfo printed no line matching: $1"; fail=1; }
}
expect "^ +Name: +$target +\$"
expect "^ +Marketing Name: +$marketing"
expect "^ +Device Type: +CPU"
expect "^ +Device Type: +GPU"
expect "^ +Compute Unit: +$cus +\$"
expect "^ +Name: +amdgcn-amd-amdhsa--$target"
expect "Segment: +GLOBAL; FLAGS: COARSE GRAINED"
# The emulated device was asked for what the real one is asked for, and logged it.
for call in AMDKFD_IOC_GET_VERSION AMDKFD_IOC_GET_PROCESS_APERTURES_NEW AMDKFD_IOC_ACQUIRE_VM \
            AMDKFD_IOC_ALLOC_MEMORY_OF_GPU AMDKFD_IOC_MAP_MEMORY_TO_GPU AMDKFD_IOC_CREATE_EVENT; do
  grep -q "^$call" "$dir/kfd.log" || { echo "FAIL: the log has no $call"; fail=1; }
done
# The topology tree is removed when the process exits.
[ -z "$(ls -A "$dir/tmp")" ] || { echo "FAIL: a topology tree was left behind: $(ls "$dir/tmp")"; fail=1; }
[ $fail -eq 0 ] && echo "PASS: rocminfo lists the emulated $target"
exit $fail
