#!/usr/bin/env bash
# What instrumenting a many-kernel program costs at start-up (docs/benchmarks/preload.md): a HIP
# program whose one code object holds KERNELS kernels (generated here, built with Debian's hipcc
# for gfx90a) and which launches only one of them, once, and checks its result. ROUNDS
# interleaved rounds of three configurations on the emulator:
#   plain       the program alone (LD_LIBRARY_PATH to the emulator's runtime)
#   at-load     wavekit run --tool bbcount --rewrite-at-load: every kernel rewritten at load
#   at-dispatch wavekit run --tool bbcount: the launched kernel rewritten at its first dispatch
#   none        wavekit run --tool bbcount --first 0: nothing rewritten (wavekit run's own cost)
# and prints per configuration the median wall time with its range, the median per-round ratio
# to plain, and the rewriting and loading time the shim reports for the at-dispatch runs.
#   usage: bench/preload/startup_cost.sh [BUILD_DIR] [KERNELS] [ROUNDS]
set -euo pipefail
build=$(realpath "${1:-build}")
kernels=${2:-1000}
rounds=${3:-5}
runtime=$build/src/hsa/runtime
[[ -x $build/wavekit ]] || { echo "no $build/wavekit (build wavekit first)" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Kernel k runs a loop of 16 * (k % 13 + 2) multiply-add steps, unrolled: kernels of 60 to 450
# instructions with different constants, as a library of many kernels has.
{
  echo '#include <hip/hip_runtime.h>'
  echo '#include <cstdio>'
  for ((k = 0; k < kernels; ++k)); do
    echo "__global__ void k$k(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x;"
    echo "  if (i < n) { float v = x[i];"
    echo "#pragma unroll"
    echo "    for (int j = 0; j < $((16 * (k % 13 + 2))); ++j)"
    echo "    v = v * 1.5f + $k.0f; x[i] = v; } }"
  done
  cat <<'EOF'
int main() {
  const int n = 256;
  float host[n], *device = nullptr;
  for (int i = 0; i < n; ++i) host[i] = float(i);
  if (hipMalloc(&device, sizeof host) != hipSuccess) return 2;
  hipMemcpy(device, host, sizeof host, hipMemcpyHostToDevice);
  hipLaunchKernelGGL(k0, dim3(n / 64), dim3(64), 0, 0, device, n);
  hipMemcpy(host, device, sizeof host, hipMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) {
    float v = float(i);
    for (int j = 0; j < 32; ++j) v = v * 1.5f;  // k0: 32 steps adding 0
    if (host[i] != v) { std::printf("FAIL at %d\n", i); return 1; }
  }
  std::printf("PASS\n");
  return 0;
}
EOF
} > "$scratch/many_kernels.hip"
echo "building $kernels kernels with hipcc (gfx90a)..." >&2
hipcc --offload-arch=gfx90a -O2 "$scratch/many_kernels.hip" -o "$scratch/many_kernels"
"$build/wavekit" rewrite --tool bbcount --processor gfx90a "$scratch/many_kernels" \
  -o "$scratch/whole.co" > /dev/null
# The rewriter keeps the original code in .text: its instructions are the object's.
instructions=$(llvm-objdump-22 -d --section=.text "$scratch/whole.co" |
  grep -cE '^\s+[a-z_0-9]+ .*// [0-9A-F]+:' || true)
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F); $kernels kernels, $instructions instructions in the gfx90a object"

now() { date +%s.%N; }
for round in $(seq "$rounds"); do
  echo "round $round of $rounds" >&2
  start=$(now)
  LD_LIBRARY_PATH=$runtime "$scratch/many_kernels" > "$scratch/out" || { cat "$scratch/out"; exit 1; }
  echo "$(now) - $start" | bc >> "$scratch/plain"
  for config in none at-load at-dispatch; do
    flags=(--tool bbcount --tool-out "$scratch/results")
    [[ $config == at-load ]] && flags+=(--rewrite-at-load)
    [[ $config == none ]] && flags+=(--first 0)
    start=$(now)
    "$build/wavekit" run "${flags[@]}" -- "$scratch/many_kernels" > "$scratch/out" 2> "$scratch/err" ||
      { cat "$scratch/out" "$scratch/err"; exit 1; }
    echo "$(now) - $start" | bc >> "$scratch/$config"
    grep -q PASS "$scratch/out" || { echo "$config: the program failed its check" >&2; exit 1; }
    sed -n 's/.*first instrumented dispatch (rewrite \([0-9]*\) ms, load \([0-9]*\) ms).*/\1 \2/p' \
      "$scratch/err" >> "$scratch/$config.rewrite"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$scratch" <<'PY'
import statistics, sys, pathlib
d = pathlib.Path(sys.argv[1])
plain = [float(x) for x in (d / "plain").read_text().split()]
print(f"{'config':12} {'wall s median':>14} {'range':>15} {'ratio to plain (median, range)':>32} {'shim rewrite, load ms':>22}")
for config in ("plain", "none", "at-load", "at-dispatch"):
    values = [float(x) for x in (d / config).read_text().split()]
    ratios = [v / p for v, p in zip(values, plain)]
    rewrite = d / f"{config}.rewrite"
    pairs = [line.split() for line in rewrite.read_text().splitlines()] if rewrite.exists() else []
    shim = (f"{statistics.median(int(a) for a, _ in pairs):.0f}, "
            f"{statistics.median(int(b) for _, b in pairs):.0f}" if pairs else "")
    print(f"{config:12} {statistics.median(values):14.3f} {min(values):7.3f}-{max(values):<7.3f} "
          f"{statistics.median(ratios):17.3f} ({min(ratios):.3f}-{max(ratios):.3f}) {shim:>22}")
PY
