#!/bin/bash
# Measures what each CUPTI feature costs when attached (attach_cost.cu, one process per
# configuration, shuffled in every round) and which driver entry points PyTorch's and Triton's
# launches take (launch_probe.c). Results: $OUT/attach_cost.jsonl and $OUT/probe.txt.
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}
rounds=${ROUNDS:-4}
cuda=${CUDA_HOME:-/usr/local/cuda}
bin=/tmp/attach_cost; mkdir -p $bin
nvcc -std=c++17 -O2 -arch=sm_90 -o $bin/attach_cost attach_cost.cu -I"$cuda/include" \
  -L"$cuda/lib64" -lcupti -lcuda -Xlinker -rpath -Xlinker "$cuda/lib64" 2>&1 || exit 1
gcc -O2 -fPIC -shared -Wall -Wextra -Werror -I"$cuda/include" -o $bin/launch_probe.so \
  launch_probe.c -ldl || exit 1
configs=(none S SR SN SL B BD BG SRNBD BK BKG SLBK SRNLBDK SRNLBDKG SRNBDX SRNBDY SRNBDZ SRNBDU P E)
for round in $(seq "$rounds"); do
  for config in $(printf '%s\n' "${configs[@]}" | shuf); do
    arg=$config; [ "$config" = none ] && arg=
    $bin/attach_cost "$arg" | sed "s/^{/{\"round\": $round, /" >>"$out/attach_cost.jsonl" ||
      echo "config $config failed" >>"$out/attach_cost.jsonl"
  done
done
python3 - "$out/attach_cost.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
by = {}
for r in rows:
    by.setdefault(r["config"] or "none", []).append(r)
base = statistics.median(r["replay_ms"] for r in by["none"])
ebase = statistics.median(r["eager_launch_ns"] for r in by["none"])
print(f"{'config':10} {'replay ms':>9} {'ratio':>6} {'min ms':>7} {'graph ns':>8} {'eager ns':>8} {'+ns':>6} kernels graphs")
for c, rs in by.items():
    m = lambda k: statistics.median(r[k] for r in rs)
    print(f"{c:10} {m('replay_ms'):9.4f} {m('replay_ms')/base:6.3f} {m('replay_ms_min'):7.4f} "
          f"{m('graph_launch_ns'):8.0f} {m('eager_launch_ns'):8.1f} {m('eager_launch_ns')-ebase:6.0f} "
          f"{m('kernel_records'):.0f} {m('graph_records'):.0f}")
PY
PYTHONPATH=${PROBE_PYTHONPATH:-} LD_PRELOAD=$bin/launch_probe.so python3 - <<'PY' 2>&1 | sort | uniq -c | tee "$out/probe.txt"
import torch, triton, triton.language as tl
@triton.jit
def add(x_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n) + 1, mask=o < n)
x = torch.zeros(256, device="cuda")
for _ in range(1000): x.add_(1)
for _ in range(500): add[(1,)](x, 256, BLOCK=256)
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    x.add_(1)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(10): x.add_(1)
for _ in range(7): g.replay()
torch.cuda.synchronize()
print("probe: expected 1000+ torch launches, 500 triton launches, 7 graph launches")
PY
