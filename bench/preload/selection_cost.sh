#!/usr/bin/env bash
# What an unselected dispatch costs under `wavekit run` (docs/benchmarks/preload.md). Runs
# dispatch_loop (N one-wave dispatches of scale_add, each waited for) in ROUNDS interleaved
# rounds of four configurations on the emulator:
#   plain      the program alone (LD_LIBRARY_PATH to the emulator's runtime)
#   none       wavekit run --tool bbcount --first 0: every dispatch chooses the original
#   other      wavekit run --tool bbcount --kernel-regex ^nomatch: the same, by kernel
#   all        wavekit run --tool bbcount: every dispatch instrumented (for scale)
# and prints, per configuration, the median time per dispatch with its range over the rounds,
# the median per-round ratio to plain, and the shim's own host time per packet that wavekit
# run reports (its proxy queue: taking the packet, choosing, preparing).
#   usage: bench/preload/selection_cost.sh [BUILD_DIR] [N] [ROUNDS]
set -euo pipefail
build=${1:-build}
n=${2:-2000}
rounds=${3:-7}
program=$build/bench/preload/dispatch_loop
[[ -x $program ]] || { echo "no $program (build the bench first)" >&2; exit 1; }
runtime=$build/src/hsa/runtime
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
per_dispatch() { sed -n 's/.*, \([0-9.]*\) us per dispatch.*/\1/p'; }
shim_ns() { sed -n 's/.*per packet median \([0-9]*\) ns, p99 \([0-9]*\) ns.*/\1 \2/p'; }
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F)"
for round in $(seq "$rounds"); do
  LD_LIBRARY_PATH=$runtime "$program" "$n" | per_dispatch >> "$scratch/plain"
  for config in none other all; do
    case $config in
      none) select=(--first 0) ;;
      other) select=(--kernel-regex '^nomatch') ;;
      all) select=() ;;
    esac
    "$build/wavekit" run --tool bbcount --tool-out "$scratch/out" "${select[@]}" -- \
      "$program" "$n" > "$scratch/run.out" 2> "$scratch/run.err"
    per_dispatch < "$scratch/run.out" >> "$scratch/$config"
    shim_ns < "$scratch/run.err" >> "$scratch/$config.shim"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$scratch" <<'PY'
import statistics, sys, pathlib
d = pathlib.Path(sys.argv[1])
plain = [float(x) for x in (d / "plain").read_text().split()]
print(f"{'config':8} {'us/dispatch median':>19} {'range':>17} {'ratio to plain (median, range)':>32} {'shim ns/packet median, p99':>28}")
for config in ("plain", "none", "other", "all"):
    values = [float(x) for x in (d / config).read_text().split()]
    ratios = [v / p for v, p in zip(values, plain)]
    shim = ""
    if (d / f"{config}.shim").exists():
        pairs = [line.split() for line in (d / f"{config}.shim").read_text().splitlines() if line]
        shim = f"{statistics.median(int(a) for a, _ in pairs):.0f}, {statistics.median(int(b) for _, b in pairs):.0f}"
    print(f"{config:8} {statistics.median(values):19.2f} {min(values):8.2f}-{max(values):<8.2f} "
          f"{statistics.median(ratios):17.3f} ({min(ratios):.3f}-{max(ratios):.3f}) {shim:>28}")
PY
