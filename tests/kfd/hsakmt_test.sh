#!/bin/sh
# Issue 22: a program of our own drives the emulated /dev/kfd through Debian's libhsakmt with no
# HSA runtime in the process: its queue is the emulated device's, its dispatch runs on the
# emulator, the program checks the results on the CPU. Usage: hsakmt_test.sh LIBWAVEKIT_KFD
# PROGRAM [ARGS...]. Skips (77) where Debian's libhsakmt is absent.
set -u
preload=$1
shift
libraries=$(env -u LD_LIBRARY_PATH ldd "$1") || { echo "FAIL: ldd $1"; exit 1; }
echo "$libraries" | grep -q "libhsakmt.so.1 => /" ||
  { echo "SKIP: Debian's libhsakmt is not installed (libhsakmt1)"; exit 77; }
# No HSA runtime, Debian's or wavekit's: the program reaches the device through the thunk alone.
if echo "$libraries" | grep -q libhsa-runtime64; then
  echo "FAIL: $1 links an HSA runtime:"
  echo "$libraries"
  exit 1
fi
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/tmp"
env -u LD_LIBRARY_PATH TMPDIR="$dir/tmp" WAVEKIT_KFD_LOG="$dir/kfd.log" LD_PRELOAD="$preload" \
  timeout 120 "$@"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: $1 exited $rc"; tail -20 "$dir/kfd.log"; exit 1; }
fail=0
for line in "^AMDKFD_IOC_CREATE_QUEUE" "^AMDKFD_IOC_ALLOC_MEMORY_OF_GPU" "^AMDKFD_IOC_CREATE_EVENT" \
            "^queue: dispatch .* -> none" "^queue: completion signal .* event [1-9]" \
            "^AMDKFD_IOC_WAIT_EVENTS .* -> complete" "^AMDKFD_IOC_DESTROY_QUEUE"; do
  grep -q "$line" "$dir/kfd.log" || { echo "FAIL: the emulated KFD's log has no line matching $line"; fail=1; }
done
# Exactly the program's one dispatch: no runtime dispatched anything of its own.
dispatches=$(grep -c '^queue: dispatch' "$dir/kfd.log")
[ "$dispatches" -eq 1 ] || { echo "FAIL: $dispatches dispatches on the emulated KFD, expected 1"; fail=1; }
[ -z "$(ls -A "$dir/tmp")" ] || { echo "FAIL: a topology tree was left behind"; fail=1; }
[ $fail -eq 0 ] && echo "PASS: one dispatch through libhsakmt alone on the emulated KFD"
exit $fail
