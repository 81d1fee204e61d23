#!/bin/bash
# The model benchmark's HeCBench kernels (bench/model/hecbench_kernels.txt) on the emulator's
# three targets (issue 17; docs/hecbench.md, "Three targets"): each kernel's HIP source built
# with clang-22 for gfx908, gfx90a and gfx942 (`wavekit model --target`), run on the emulator at
# a small size (the first --fit value, or the direct run's parameters), its counts compared
# across the targets (the same source does the same floating-point work and moves the same
# bytes whatever the ISA: a mismatch names an emulator or counting fault), each code object
# rewritten with bbcount, callret and blocktrace (`wavekit rewrite`), and the original, bbcount
# and blocktrace objects run with `wavekit launch` on one set of inputs per kernel (the
# generated buffers written to files, seeded, the same for the three targets): the tools'
# reports against the emulator's ground truth of the original, and the values the original
# computes on each target against the other targets' (values.tsv).
#   bash bench/model/three_targets.sh BUILD [OUT]
# Writes OUT (default BUILD/three-targets)/results.tsv, one line a kernel and target:
# program kernel target run fp32 fp64 load_bytes store_bytes wave_instructions rewrite exact.
# KERNELS=FILE takes another kernel list of the same format; HIP_FLAGS adds clang flags to every
# build (-fno-inline-functions: real device-function calls).
set -u
BUILD=$(realpath "${1:?build directory with the wavekit binary}")
OUT=$(realpath -m "${2:-$BUILD/three-targets}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=${WAVEKIT_SHARED_DATA:-$ROOT/../shared/data}/hecbench/src
mkdir -p "$OUT"
printf 'program\tkernel\ttarget\trun\tfp32\tfp64\tload_bytes\tstore_bytes\twave_instructions\trewrite\texact\n' > "$OUT/results.tsv"
# The kernel-list line's launch as `wavekit launch` options: grid = blocks x block, braces
# evaluated at the parameters, generated buffers as files in INPUTS (written once, seeded by
# their position, in the model's value ranges).
launch_options() {  # INPUTS BLOCK BLOCKS PARAMS LDS ARGS...
  /usr/bin/python3 - "$@" <<'PY'
import math, os, re, sys
import numpy as np
inputs, block, blocks, params, lds, *args = sys.argv[1:]
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
def generated(kind, fields, seed):
    rng = np.random.default_rng(seed)
    count = size(fields[0])
    if kind in ("f32rand", "f64rand"):
        lo, hi = (float(fields[1]), float(fields[2])) if len(fields) == 3 else (0.0, 1.0)
        values = rng.uniform(lo, hi, count)
        return values.astype(np.float32 if kind == "f32rand" else np.float64)
    if kind == "i32rand":
        return rng.integers(int(fields[1]), int(fields[2]) + 1, count).astype(np.int32)
    if kind == "u32iota":
        return np.arange(count, dtype=np.uint32)
    dtype = {"f32fill": np.float32, "f64fill": np.float64, "i32fill": np.int32}[kind]
    return np.full(count, float(fields[1])).astype(dtype)
kinds = ("f32rand", "f64rand", "i32rand", "u32iota", "f32fill", "f64fill", "i32fill")
os.makedirs(inputs, exist_ok=True)
for position, arg in enumerate(args):
    kind, _, rest = arg.partition(":")
    if kind in kinds:
        path = os.path.join(inputs, "arg%d.bin" % position)
        if not os.path.exists(path):
            generated(kind, rest.split(":"), position).tofile(path)
        out += ["--arg", "file:" + path]
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
    for f in $flags ${HIP_FLAGS:-}; do cmd+=(--hip-flag="$f"); done
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
      mapfile -t options < <(launch_options "$OUT/$(printf %02d $i)-$program.inputs" "$block" \
                               "$blocks" "$params" "$lds" $args)
      # One host thread: the emulator's deterministic schedule (docs/emu.md), so that kernels
      # whose blocks depend on the interleaving (lebesgue's atomics) compare exactly.
      common=(--kernel "$symbol" --threads 1 --timeout 120 "${options[@]}")
      rm -rf "$base.truth" "$base.values"
      if "$BUILD/wavekit" launch "$co" "${common[@]}" --trace-blocks "$base.truth.json" \
           --trace-sequence "$base.truth" --out "$base.values" > /dev/null 2> "$base.launch.err"; then
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
# The values each kernel computed on the three targets, buffer by buffer: equal bytes, or the
# largest relative difference against gfx90a's with the buffers read as f32 (a rough figure
# for f64 or integer buffers: the bytes differ either way).
/usr/bin/python3 - "$OUT" <<'PY'
import glob, os, sys
import numpy as np
out = sys.argv[1]
rows = ["kernel\tbuffers\tresult"]
for inputs in sorted(glob.glob(os.path.join(out, "*.inputs"))):
    stem = inputs[: -len(".inputs")]
    dirs = {t: stem + "." + t + ".values" for t in ("gfx908", "gfx90a", "gfx942")}
    if not all(os.path.isdir(d) for d in dirs.values()):
        rows.append(os.path.basename(stem) + "\t-\tnot run on every target")
        continue
    worst, differing, names = 0.0, [], sorted(os.listdir(dirs["gfx90a"]))
    for name in names:
        data = {t: open(os.path.join(d, name), "rb").read() for t, d in dirs.items()}
        if len(set(data.values())) == 1:
            continue
        differing.append(name)
        if len(data["gfx90a"]) % 4:
            continue
        ref = np.frombuffer(data["gfx90a"], np.float32).astype(np.float64)
        for t in ("gfx908", "gfx942"):
            if len(data[t]) != len(data["gfx90a"]):
                continue
            other = np.frombuffer(data[t], np.float32).astype(np.float64)
            with np.errstate(all="ignore"):
                rel = np.abs(other - ref) / np.maximum(np.abs(ref), 1e-30)
            rel = rel[np.isfinite(rel)]
            if rel.size:
                worst = max(worst, float(rel.max()))
    result = "equal" if not differing else "%s differ (largest relative difference as f32 %.3g)" % (
        ",".join(differing), worst)
    rows.append("%s\t%d\t%s" % (os.path.basename(stem), len(names), result))
open(os.path.join(out, "values.tsv"), "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
PY
