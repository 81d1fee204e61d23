"""Checks on the GPU that declared work reaches the profile: FLOPs and bytes from a Triton
kernel's `launch_metadata` (through wp.install_triton_hook) and from set_next_launch_work before
PyTorch matmuls, under the CUPTI backend and the CUPTI-free one. Each backend runs in its own
process; the parent compares the hatchet's flops/bytes with what was declared and prints the
achieved rates. usage: flops_check.py --lib DIR --out DIR (exit status 1 on a mismatch)."""

import argparse
import json
import os
import subprocess
import sys

import bench

LAUNCHES, N = 50, 1 << 22
M = K = NN = 4096
MATMULS = 20


def child():
    import torch
    import triton
    import triton.language as tl
    import wavekit_profile as wp

    def axpy_work(grid, kernel, args):
        n = args["n"]
        return {"name": f"axpy n={n}", "flops32": 2.0 * n, "bytes": 12.0 * n}

    @triton.jit(launch_metadata=axpy_work)
    def axpy(x, y, out, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out + offsets, 2.0 * tl.load(x + offsets, mask=mask) +
                 tl.load(y + offsets, mask=mask), mask=mask)

    x, y, out = (torch.rand(N, device="cuda") for _ in range(3))
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, NN, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, NN, device="cuda", dtype=torch.bfloat16)
    wp.install_triton_hook()
    grid = (triton.cdiv(N, 1024),)
    with wp.scope("axpy"):
        for _ in range(LAUNCHES):
            axpy[grid](x, y, out, N, BLOCK=1024)
    with wp.scope("matmul"):
        for _ in range(MATMULS):
            wp.set_next_launch_work({"bf16": 2.0 * M * NN * K}, bytes=2.0 * (M * K + K * NN + M * NN))
            torch.matmul(a, b, out=c)
    torch.cuda.synchronize()


def sums(node, path=()):
    """(path, metrics) of every leaf."""
    children = node.get("children", [])
    if not children:
        yield path, node.get("metrics", {})
    for c in children:
        yield from sums(c, path + (c["frame"]["name"],))


def check(hatchet, label):
    tree = json.load(open(hatchet))[0]
    found = {"axpy": [0.0, 0.0, 0.0, 0], "matmul": [0.0, 0.0, 0.0, 0]}
    for path, m in sums(tree):
        if path and path[0] in found:
            f = found[path[0]]
            f[0] += m.get("flops32", 0) + m.get("flops16", 0)
            f[1] += m.get("bytes", 0)
            f[2] += m.get("time (ns)", 0)
            f[3] += m.get("count", 0)
    want = {"axpy": (LAUNCHES * 2.0 * N, LAUNCHES * 12.0 * N),
            "matmul": (MATMULS * 2.0 * M * NN * K, MATMULS * 2.0 * (M * K + K * NN + M * NN))}
    ok = True
    for name, (flops, nbytes) in want.items():
        got_flops, got_bytes, ns, count = found[name]
        match = abs(got_flops - flops) <= 1e-6 * flops and abs(got_bytes - nbytes) <= 1e-6 * nbytes
        ok &= match
        rate = got_flops / ns if ns else float("nan")
        bw = got_bytes / ns if ns else float("nan")
        print(f"{label:7s} {name:7s} kernels {count:4d} flops {got_flops:.4g} (declared {flops:.4g}) "
              f"bytes {got_bytes:.4g} (declared {nbytes:.4g}) -> {rate:.1f} GFLOP/s, {bw:.1f} GB/s "
              f"{'ok' if match else 'MISMATCH'}")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--lib")
    p.add_argument("--out")
    p.add_argument("--child", action="store_true")
    a = p.parse_args()
    if a.child:
        child()
        return 0
    ok = True
    for config, label in [("ours", "cupti"), ("ours_events", "events")]:
        env = bench.config_env(config, a.lib, a.out, "flops")
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], env=env,
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            print(f"{label}: rc={proc.returncode}\n{proc.stderr[-3000:]}")
            ok = False
            continue
        ok &= check(os.path.join(a.out, f"{config}-flops", "profile.hatchet"), label)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
