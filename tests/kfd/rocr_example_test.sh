#!/bin/sh
# Milestone B of issue 22: an HSA example, linked against Debian's ROCr, runs on the emulated
# KFD: ROCr's queues are the emulated device's, its dispatches run on the emulator, the example
# checks its own results. Usage: rocr_example_test.sh LIBWAVEKIT_KFD PROGRAM [ARGS...]
# Skips (77) where Debian's ROCr is absent.
set -u
preload=$1
shift
rocr=/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1
[ -e "$rocr" ] || { echo "SKIP: Debian's ROCr is not installed (libhsa-runtime64-1)"; exit 77; }
# The program must resolve libhsa-runtime64 to Debian's, not to wavekit's stand-in.
resolved=$(env -u LD_LIBRARY_PATH ldd "$1" | sed -n 's/.*libhsa-runtime64.so.1 => \([^ ]*\).*/\1/p')
[ "$(readlink -f "$resolved")" = "$(readlink -f "$rocr")" ] ||
  { echo "FAIL: $1 resolves libhsa-runtime64.so.1 to '$resolved', not Debian's $rocr"; exit 1; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
env -u LD_LIBRARY_PATH WAVEKIT_KFD_LOG="$dir/kfd.log" LD_PRELOAD="$preload" timeout 120 "$@"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: $1 exited $rc"; tail -20 "$dir/kfd.log"; exit 1; }
# The dispatches went through the emulated device's queues.
grep -q "^AMDKFD_IOC_CREATE_QUEUE" "$dir/kfd.log" || { echo "FAIL: no queue was created on the emulated KFD"; exit 1; }
grep -q "^queue: dispatch .* -> none" "$dir/kfd.log" ||
  { echo "FAIL: no dispatch ran on the emulated KFD's command processor"; exit 1; }
echo "PASS: $(grep -c '^queue: dispatch' "$dir/kfd.log") dispatches on the emulated KFD"
