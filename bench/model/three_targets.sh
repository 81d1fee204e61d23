#!/bin/bash
# The model benchmark's HeCBench kernels (bench/model/hecbench_kernels.txt) on the emulator's
# three targets (issue 17; docs/hecbench.md, "Three targets"): each kernel's HIP source built
# with clang-22 for gfx908, gfx90a and gfx942 (`wavekit model --target`), run on the emulator at
# a small size (the first --fit value, or the direct run's parameters), its counts compared
# across the targets (the same source does the same floating-point work and moves the same
# bytes whatever the ISA: a mismatch names an emulator or counting fault), and each code object
# rewritten with bbcount, callret and blocktrace (`wavekit rewrite`).
#   bash bench/model/three_targets.sh BUILD [OUT]
# Writes OUT (default BUILD/three-targets)/results.tsv, one line a kernel and target:
# program kernel target run fp32 fp64 load_bytes store_bytes wave_instructions rewrite.
set -u
BUILD=$(realpath "${1:?build directory with the wavekit binary}")
OUT=$(realpath -m "${2:-$BUILD/three-targets}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=${WAVEKIT_SHARED_DATA:-$ROOT/../shared/data}/hecbench/src
mkdir -p "$OUT"
printf 'program\tkernel\ttarget\trun\tfp32\tfp64\tload_bytes\tstore_bytes\twave_instructions\trewrite\n' > "$OUT/results.tsv"
i=0
while IFS='|' read -r program source kernel block blocks fit check at args lds flags _; do
  case "$program" in ''|'#'*) continue;; esac
  i=$((i + 1))
  params=$at
  [ -n "$fit" ] && params=$(echo "$fit" | sed 's/,.*//')  # n=4096,8192 -> n=4096
  for target in gfx908 gfx90a gfx942; do
    base="$OUT/$(printf %02d $i)-$program.$target"
    cmd=("$BUILD/wavekit" model "$SRC/$source" --kernel "$kernel" --block "$block" --blocks "$blocks"
         --target "$target" --threads 2 --no-cache-model --json --build-dir "$base.build"
         --hip-flag=-std=c++17 --hip-flag=-I"$SRC/$program")
    [ -n "$lds" ] && cmd+=(--lds "$lds")
    for f in $flags; do cmd+=(--hip-flag="$f"); done
    for a in $args; do cmd+=(--arg "$a"); done
    for p in $params; do cmd+=(--param "$p"); done
    if timeout 300 "${cmd[@]}" > "$base.json" 2> "$base.err"; then
      figures=$(/usr/bin/python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["kernels"][0]["model"]["counts"]
print("\t".join("%.0f" % c.get(k, 0) for k in ("flops.fp32", "flops.fp64",
      "memory.global.load.bytes", "memory.global.store.bytes", "instructions.wave")))' "$base.json")
      run=ok
    else
      figures=$(printf -- '-\t-\t-\t-\t-')
      run="failed: $(grep -m1 -v '^$' "$base.err" | cut -c1-120)"
    fi
    rewrite=""
    co=$(ls "$base.build"/*."$target".co 2> /dev/null | head -1)
    for tool in bbcount callret blocktrace; do
      if [ -z "$co" ]; then rewrite+="$tool:no-object "; continue; fi
      if "$BUILD/wavekit" rewrite "$co" --processor "$target" --tool "$tool" -o "$base.$tool.co" \
           > "$base.$tool.log" 2>&1; then rewrite+="$tool:ok "; else rewrite+="$tool:refused "; fi
    done
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$program" "$kernel" "$target" "$run" "$figures" "$rewrite" \
      | tee -a "$OUT/results.tsv"
  done
done < "$ROOT/bench/model/hecbench_kernels.txt"
