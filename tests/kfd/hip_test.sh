#!/bin/sh
# Issue 22: a HIP program of tests/hsa/hip, built by Debian's hipcc, runs on Debian's HIP (CLR) on
# Debian's ROCr on the emulated KFD: its dispatches run on the emulator, the program checks its
# own results (CPU oracles; the same programs pass on wavekit's own runtime, hsa.hip.*).
# Usage: hip_test.sh LIBWAVEKIT_KFD PROGRAM [ARGS...]; with CHECK_SCRIPT set, runs
# "sh CHECK_SCRIPT PROGRAM" instead (its own output check). Skips (77) where Debian's ROCr or
# HIP is absent.
set -u
preload=$1
shift
rocr=/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1
[ -e "$rocr" ] || { echo "SKIP: Debian's ROCr is not installed (libhsa-runtime64-1)"; exit 77; }
libraries=$(env -u LD_LIBRARY_PATH ldd "$1") || { echo "FAIL: ldd $1"; exit 1; }
hip=$(echo "$libraries" | sed -n 's/.*libamdhip64.so.5 => \([^ ]*\).*/\1/p')
[ -n "$hip" ] || { echo "SKIP: Debian's HIP is not installed (libamdhip64-5)"; exit 77; }
# CLR must reach Debian's ROCr, not wavekit's stand-in.
resolved=$(env -u LD_LIBRARY_PATH ldd "$hip" | sed -n 's/.*libhsa-runtime64.so.1 => \([^ ]*\).*/\1/p')
[ "$(readlink -f "$resolved")" = "$(readlink -f "$rocr")" ] ||
  { echo "FAIL: $hip resolves libhsa-runtime64.so.1 to '$resolved', not Debian's $rocr"; exit 1; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/tmp"
if [ -n "${CHECK_SCRIPT:-}" ]; then
  set -- sh "$CHECK_SCRIPT" "$@"
fi
env -u LD_LIBRARY_PATH TMPDIR="$dir/tmp" WAVEKIT_KFD_LOG="$dir/kfd.log" LD_PRELOAD="$preload" \
  timeout 240 "$@"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: $* exited $rc"; tail -20 "$dir/kfd.log"; exit 1; }
grep -q "^AMDKFD_IOC_CREATE_QUEUE" "$dir/kfd.log" || { echo "FAIL: no queue was created on the emulated KFD"; exit 1; }
grep -q "^queue: dispatch .* -> none" "$dir/kfd.log" ||
  { echo "FAIL: no dispatch ran on the emulated KFD's command processor"; exit 1; }
echo "PASS: $(grep -c '^queue: dispatch' "$dir/kfd.log") dispatches on the emulated KFD," \
  "$(grep -c '^AMDKFD_IOC_ALLOC_MEMORY_OF_GPU userptr .* (translated)' "$dir/kfd.log") host buffers registered at GPU addresses of their own"
