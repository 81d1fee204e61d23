#!/bin/sh
# WAVEKIT_EMU_STATS (docs/hsa.md) on the vector_add program ($1), run with 1 and with 2 host
# threads. The oracle is the program and the ground-truth record, not the counter: its kernel's
# line must give the waves of its grid (40 workgroups of 256 work-items: 160 waves), the thread
# count asked for and "ok"; the wave-instructions must be the same in both runs (a count of what
# ran does not depend on the schedule) and at least one per wave (every wave ends with
# s_endpgm); and there must be one line per dispatch, as many as the runtime's ground truth
# (WAVEKIT_EMU_TRACE_BLOCKS) has files.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
WAVEKIT_EMU_THREADS=1 WAVEKIT_EMU_STATS="$dir/one" WAVEKIT_EMU_TRACE_BLOCKS="$dir/truth" "$1" >/dev/null
WAVEKIT_EMU_THREADS=2 WAVEKIT_EMU_STATS="$dir/two" "$1" >/dev/null
kernel=_Z10vector_addPKfS0_Pfi
one=$(awk -F '\t' -v k="$kernel" '$1 == k' "$dir/one")
two=$(awk -F '\t' -v k="$kernel" '$1 == k' "$dir/two")
echo "1 thread:  $one"
echo "2 threads: $two"
fail() { echo "check_stats: $*" >&2; exit 1; }
[ "$(echo "$one" | awk -F '\t' '{print $2, $6, $7}')" = "160 1 ok" ] || fail "1 thread: not '160 waves, 1 thread, ok'"
[ "$(echo "$two" | awk -F '\t' '{print $2, $6, $7}')" = "160 2 ok" ] || fail "2 threads: not '160 waves, 2 threads, ok'"
i1=$(echo "$one" | cut -f3)
i2=$(echo "$two" | cut -f3)
[ "$i1" = "$i2" ] || fail "wave-instructions differ between 1 and 2 threads: $i1, $i2"
[ "$i1" -ge 160 ] || fail "fewer wave-instructions ($i1) than waves"
dispatches=$(ls "$dir/truth" | wc -l)
lines=$(wc -l < "$dir/one")
[ "$lines" -eq "$dispatches" ] || fail "$lines lines for $dispatches dispatches"
[ "$(awk -F '\t' 'NF != 7' "$dir/one" | wc -l)" -eq 0 ] || fail "a line without 7 fields"
echo "check_stats: $lines dispatches, $i1 wave-instructions in the kernel"
