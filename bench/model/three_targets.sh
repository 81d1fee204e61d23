#!/bin/bash
# The model benchmark's HeCBench kernels (bench/model/hecbench_kernels.txt) on the emulator's
# three targets (issue 17; docs/hecbench.md, "Three targets"): each kernel's HIP source built
# with clang-22 for gfx908, gfx90a and gfx942 (`wavekit model --target`), run on the emulator at
# a small size (the first --fit value, or the direct run's parameters), its counts compared
# across the targets (the same source does the same floating-point work and moves the same
# bytes whatever the ISA: a mismatch names an emulator or counting fault), each code object
# rewritten with bbcount, callret and blocktrace (`wavekit rewrite`), and the bbcount and
# blocktrace objects run with `wavekit launch` against the emulator's ground truth of the
# original on the same inputs (the generated buffers zeroed: `wavekit launch` has no generated
# forms, and the oracle needs only the same inputs on both sides).
#   bash bench/model/three_targets.sh BUILD [OUT]
# Writes OUT (default BUILD/three-targets)/results.tsv, one line a kernel and target:
# program kernel target run fp32 fp64 load_bytes store_bytes wave_instructions rewrite exact.
# KERNELS=FILE takes another kernel list of the same format.
set -u
BUILD=$(realpath "${1:?build directory with the wavekit binary}")
OUT=$(realpath -m "${2:-$BUILD/three-targets}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=${WAVEKIT_SHARED_DATA:-$ROOT/../shared/data}/hecbench/src
mkdir -p "$OUT"
printf 'program\tkernel\ttarget\trun\tfp32\tfp64\tload_bytes\tstore_bytes\twave_instructions\trewrite\texact\n' > "$OUT/results.tsv"
# The kernel-list line's launch as `wavekit launch` options: grid = blocks x block, braces
# evaluated at the parameters, generated buffers as zeroed ones of their size.
launch_options() {  # BLOCK BLOCKS PARAMS LDS ARGS...
  /usr/bin/python3 - "$@" <<'PY'
import math, re, sys
block, blocks, params, lds, *args = sys.argv[1:]
env = {k: float(v) for k, v in (p.split("=") for p in params.split())}
def value(expr):
    return eval(expr.replace("^", "**"), {"__builtins__": {}}, env)
def braces(text):
    def one(m):
        v = value(m.group(1))
        return str(int(v)) if float(v).is_integer() else repr(float(v))
    return re.sub(r"\{([^}]*)\}", one, text)
def size(expr):
    return int(math.ceil(value(expr.strip("{}"))))
out = []
grid = [size(b) * size(t) for b, t in zip(blocks.split(","), block.split(","))]
out += ["--grid", ",".join(map(str, grid)), "--block", ",".join(str(size(t)) for t in block.split(","))]
if lds:
    out += ["--lds", str(size(lds))]
width = {"f32rand": 4, "f64rand": 8, "i32rand": 4, "u32iota": 4, "f32fill": 4, "f64fill": 8, "i32fill": 4}
for arg in args:
    kind, _, rest = arg.partition(":")
    if kind in width:
        out += ["--arg", "zeros:%d" % (width[kind] * size(rest.split(":")[0]))]
    elif kind == "zeros":
        out += ["--arg", "zeros:%d" % size(rest)]
    else:
        out += ["--arg", braces(arg)]
print("\n".join(out))
PY
}
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
    exact=""
    if [ "$run" = ok ] && [ -n "$co" ]; then
      symbol=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["kernels"][0]["model"]["symbol"])' "$base.json")
      mapfile -t options < <(launch_options "$block" "$blocks" "$params" "$lds" $args)
      common=(--kernel "$symbol" --threads 2 --timeout 120 "${options[@]}")
      rm -rf "$base.truth" "$base.trace"
      if "$BUILD/wavekit" launch "$co" "${common[@]}" --trace-blocks "$base.truth.json" \
           --trace-sequence "$base.truth" > /dev/null 2> "$base.launch.err"; then
        for tool in bbcount blocktrace; do
          result="$base.$tool.out"
          rm -rf "$result"
          if ! "$BUILD/wavekit" launch "$base.$tool.co" "${common[@]}" --tool-out "$result" \
               > /dev/null 2>> "$base.launch.err"; then
            exact+="$tool:failed "
          elif { [ $tool = bbcount ] && cmp -s "$result" "$base.truth.json"; } ||
               { [ $tool = blocktrace ] && diff -r -q "$result" "$base.truth" > /dev/null; }; then
            exact+="$tool:= "
          else
            exact+="$tool:differs "
          fi
        done
      else
        exact="ground-truth-failed"
      fi
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$program" "$kernel" "$target" "$run" "$figures" "$rewrite" \
      "$exact" | tee -a "$OUT/results.tsv"
  done
done < "${KERNELS:-$ROOT/bench/model/hecbench_kernels.txt}"
