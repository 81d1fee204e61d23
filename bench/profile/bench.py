"""Side-by-side overhead benchmark of wavekit profile, Proton and torch.profiler on one GPU.

`python3 bench.py orchestrate --lib DIR --out DIR` runs every configuration in its own process
(CUPTI allows one subscriber per process), interleaved, `--rounds` times; each process runs
every workload `--reps` times after a warm-up and appends one JSON line to results.jsonl.
Then it prints medians and overhead ratios against the unprofiled runs of the same rounds.
"""

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import time

CONFIGS = ["none", "floor_activity", "floor", "ours_idle", "ours", "ours_graph", "ours_sampled",
           "ours_events_idle", "ours_events", "ours_events_sampled", "ours_events_counted",
           "proton", "proton_hook", "torchprof"]
# The CUPTI-free backend's duty cycle in the benchmark: 1 ms of every 100 (1 %), short enough
# that every run of a workload (~50-300 ms) holds windows in proportion.
EVENTS_DUTY = "1/100"
# The events backend counting every launch and timing about one in this many (--time-every).
EVENTS_TIME_EVERY = "32"


def pin_main_thread():
    """Pins the calling (main) thread to one CPU, after CUDA and the profiler have started their
    threads (which keep the whole set): launch-bound timings otherwise move with the scheduler's
    placement of the launching thread, by 20-30 % between processes on the H200 machine.
    WAVEKIT_BENCH_CPU picks the CPU (an index into the allowed set; default 2, "none": off)."""
    choice = os.environ.get("WAVEKIT_BENCH_CPU", "2")
    if choice == "none":
        return
    allowed = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {allowed[int(choice) % len(allowed)]})


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------------------- workloads

def workloads(scope, advance_phase):
    import torch
    import torch.nn.functional as F
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        tl.store(x_ptr + offsets, x + 1, mask=mask)

    @triton.jit
    def busy_kernel(x_ptr, iters, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offsets)
        for _ in range(iters):
            x = x * 0.999 + 0.001
        tl.store(x_ptr + offsets, x)

    dev = "cuda"
    small = torch.zeros(256, device=dev)
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    c = torch.empty(8192, 8192, device=dev, dtype=torch.bfloat16)
    busy = torch.rand(132 * 8 * 1024, device=dev)

    def launch_torch():
        for _ in range(20000):
            small.add_(1.0)
        return 20000

    def launch_triton():
        for _ in range(10000):
            add_kernel[(1,)](small, 256, BLOCK=256)
        return 10000

    def gpu_torch():
        for _ in range(40):
            torch.matmul(a, b, out=c)
        return 40

    def gpu_triton():
        for _ in range(40):
            busy_kernel[(132 * 8,)](busy, 100000, BLOCK=1024)
        return 40

    # CUDA graph of 999 small kernels: matmul, elementwise, Triton.
    ga = torch.randn(256, 256, device=dev, dtype=torch.bfloat16)
    gc = torch.empty(256, 256, device=dev, dtype=torch.bfloat16)
    gx = torch.zeros(256, device=dev)

    def graph_body():
        for _ in range(333):
            torch.matmul(ga, ga, out=gc)
            gx.mul_(0.5)
            add_kernel[(1,)](gx, 256, BLOCK=256)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        graph_body()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with scope("capture"):
        with torch.cuda.graph(graph):
            graph_body()
    torch.cuda.synchronize()
    graph_times = []

    def graph_replay():
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with scope("replay"):
            start.record()
            for r in range(30):
                graph.replay()
                if r % 10 == 9:
                    advance_phase()
            end.record()
        end.synchronize()
        graph_times.append(start.elapsed_time(end) / 30)
        return 30

    # A random-weight Llama-style decoder (8 layers, d=2048), batch 1, static KV cache.
    L, d, H, ffn, V, S = 8, 2048, 16, 5632, 32000, 256
    Dh = d // H
    gen = torch.Generator(device=dev).manual_seed(0)

    def W(*shape):
        return torch.randn(*shape, device=dev, dtype=torch.bfloat16, generator=gen) * 0.02

    layers = [dict(wqkv=W(3 * d, d), wo=W(d, d), w1=W(2 * ffn, d), w2=W(d, ffn),
                   n1=torch.ones(d, device=dev, dtype=torch.bfloat16),
                   n2=torch.ones(d, device=dev, dtype=torch.bfloat16)) for _ in range(L)]
    emb, head = W(V, d), W(V, d)
    norm = torch.ones(d, device=dev, dtype=torch.bfloat16)
    kcache = torch.zeros(L, 1, H, S, Dh, device=dev, dtype=torch.bfloat16)
    vcache = torch.zeros_like(kcache)
    pos = torch.zeros(1, dtype=torch.long, device=dev)
    tok = torch.zeros(1, dtype=torch.long, device=dev)
    positions = torch.arange(S, device=dev)

    def rms(x, w):
        return (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w

    def step():
        x = emb[tok]
        mask = (positions <= pos).view(1, 1, 1, S)
        for i, l in enumerate(layers):
            h = rms(x, l["n1"])
            q, k, v = (h @ l["wqkv"].T).view(1, 3, H, Dh).unbind(1)
            kcache[i].index_copy_(2, pos, k.unsqueeze(2))
            vcache[i].index_copy_(2, pos, v.unsqueeze(2))
            o = F.scaled_dot_product_attention(q.unsqueeze(2), kcache[i], vcache[i], attn_mask=mask)
            x = x + o.reshape(1, d) @ l["wo"].T
            gate, up = (rms(x, l["n2"]) @ l["w1"].T).chunk(2, -1)
            x = x + (F.silu(gate) * up) @ l["w2"].T
        tok.copy_((rms(x, norm) @ head.T).argmax(-1))
        pos.add_(1)

    tokens = 64

    def decode_eager():
        pos.zero_()
        for _ in range(tokens):
            step()
        return tokens

    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    decode_graph = torch.cuda.CUDAGraph()
    with scope("decode_capture"):
        with torch.cuda.graph(decode_graph):
            step()

    def decode_graphed():
        pos.zero_()
        for _ in range(tokens):
            decode_graph.replay()
        return tokens

    return {"launch_torch": launch_torch, "launch_triton": launch_triton, "gpu_torch": gpu_torch,
            "gpu_triton": gpu_triton, "graph_replay": graph_replay, "decode_eager": decode_eager,
            "decode_graphed": decode_graphed}, graph_times


def scopes_for(config):
    if config.startswith("ours"):
        import wavekit_profile as wp
        return wp.scope, wp.advance_phase
    if config.startswith("proton"):
        import triton.profiler as proton
        return proton.scope, lambda: None
    return (lambda name: contextlib.nullcontext()), (lambda: None)


def run(args):
    import torch
    config, out = args.config, args.out
    torch.cuda.init()
    profiler = None
    if config in ("proton", "proton_hook"):
        import triton.profiler as proton
        proton.start(os.path.join(out, f"{config}-{args.round}"), context="shadow",
                     hook="triton" if config == "proton_hook" else None)
    elif config == "torchprof":
        profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                      torch.profiler.ProfilerActivity.CUDA])
        profiler.__enter__()
    scope, advance = scopes_for(config)
    fns, graph_times = workloads(scope, advance)
    pin_main_thread()
    result = {"config": config, "round": args.round, "workloads": {}}
    for name, fn in fns.items():  # warm-up: compilation, autotuning, handles
        with scope(name):
            fn()
    torch.cuda.synchronize()
    graph_times.clear()
    for rep in range(args.reps):
        for name, fn in fns.items():
            torch.cuda.synchronize()
            t0, c0 = time.perf_counter(), time.process_time()
            with scope(name):
                n = fn()
            torch.cuda.synchronize()
            t1, c1 = time.perf_counter(), time.process_time()
            w = result["workloads"].setdefault(name, {"wall": [], "cpu": [], "n": n})
            w["wall"].append(t1 - t0)
            w["cpu"].append(c1 - c0)
    result["graph_gpu_ms_per_replay"] = graph_times
    result["rss_bytes"] = rss_bytes()
    with open(os.path.join(out, "results.jsonl"), "a") as f:
        f.write(json.dumps(result) + "\n")
    if config in ("proton", "proton_hook"):
        import triton.profiler as proton
        proton.finalize()
    if profiler is not None:
        os._exit(0)  # skip the trace post-processing: only the collection overhead is measured


def soak(args):
    """10^7 kernel launches through CUDA graphs; RSS and timing every 500 replays."""
    import torch
    x = torch.zeros(256, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        for _ in range(10):
            x.add_(1.0)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(1000):
            x.add_(1.0)
    samples = []
    t0 = time.perf_counter()
    for r in range(args.replays):
        graph.replay()
        if r % 500 == 499:
            torch.cuda.synchronize()
            samples.append((r + 1, time.perf_counter() - t0, rss_bytes()))
    torch.cuda.synchronize()
    with open(os.path.join(args.out, "results.jsonl"), "a") as f:
        f.write(json.dumps({"soak": args.config, "replays": args.replays, "kernels_per_replay": 1000,
                            "samples": samples}) + "\n")


def config_env(config, lib, out, tag):
    env = dict(os.environ)
    here = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = os.path.join(here, "..", "..", "python") + ":" + env.get("PYTHONPATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    if config.startswith("floor"):
        env["CUDA_INJECTION64_PATH"] = os.path.join(lib, "libcupti_floor.so")
        env["WAVEKIT_FLOOR_OUTPUT"] = os.path.join(out, f"{config}-{tag}.json")
        if config == "floor_activity":
            env["WAVEKIT_FLOOR_CALLBACKS"] = "0"
    elif config.startswith("ours_events"):  # launches timed with event pairs, no CUPTI: preloaded
        library = os.path.join(lib, "libwavekit_profile_events.so")
        env["LD_PRELOAD"] = library
        env["WAVEKIT_PROFILE_LIBRARY"] = library
        env["WAVEKIT_PROFILE_BACKEND"] = "events"
        env["WAVEKIT_PROFILE_OUTPUT"] = os.path.join(out, f"{config}-{tag}")
        if config == "ours_events_sampled":
            env["WAVEKIT_PROFILE_DUTY"] = EVENTS_DUTY
        if config == "ours_events_counted":
            env["WAVEKIT_PROFILE_TIME_EVERY"] = EVENTS_TIME_EVERY
        if config == "ours_events_idle":  # hooks in place, never timing: the cost of being there
            env["WAVEKIT_PROFILE_START_DISABLED"] = "1"
    elif config.startswith("ours"):
        library = os.path.join(lib, "libwavekit_profile_cupti.so")
        env["CUDA_INJECTION64_PATH"] = library
        env["WAVEKIT_PROFILE_LIBRARY"] = library
        env["WAVEKIT_PROFILE_NO_AUTOSTART"] = "1"
        env["WAVEKIT_PROFILE_OUTPUT"] = os.path.join(out, f"{config}-{tag}")
        if config == "ours_sampled":
            env["WAVEKIT_PROFILE_DUTY"] = "50/1000"
        if config == "ours_graph":  # graph launches as one GRAPH_TRACE record each
            env["WAVEKIT_PROFILE_GRAPHS"] = "graph"
        if config == "ours_idle":  # attached, never collecting: the cost of being there
            env["WAVEKIT_PROFILE_START_DISABLED"] = "1"
        if tag.startswith("soak"):
            env["WAVEKIT_PROFILE_PHASE_MS"] = "1000"
    return env


def orchestrate(args):
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(7)
    me = os.path.abspath(__file__)
    for rnd in range(args.rounds):
        order = list(args.configs)
        rng.shuffle(order)
        for config in order:
            t = time.time()
            cmd = [sys.executable, me, "run", "--config", config, "--out", args.out,
                   "--reps", str(args.reps), "--round", str(rnd)]
            try:
                proc = subprocess.run(cmd, env=config_env(config, args.lib, args.out, str(rnd)),
                                      capture_output=True, text=True, timeout=args.timeout)
            except subprocess.TimeoutExpired as e:
                print(f"round {rnd} {config}: timed out after {args.timeout} s\n"
                      f"{(e.stderr or b'')[-2000:]}", flush=True)
                continue
            status = "ok" if proc.returncode == 0 else f"FAILED rc={proc.returncode}"
            print(f"round {rnd} {config:21s} {time.time() - t:6.1f} s {status}", flush=True)
            if proc.returncode != 0 or "wavekit profile:" in proc.stderr:
                print(proc.stderr[-3000:], flush=True)
    for config in args.soak:
        t = time.time()
        cmd = [sys.executable, me, "soak", "--config", config, "--out", args.out,
               "--replays", str(args.soak_replays)]
        try:
            proc = subprocess.run(cmd, env=config_env(config, args.lib, args.out, "soak"),
                                  capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"soak {config}: timed out after {args.timeout} s", flush=True)
            continue
        print(f"soak {config} {time.time() - t:.1f} s rc={proc.returncode} {proc.stderr[-1500:]}",
              flush=True)
    summarise(args.out)


def ab(args):
    """In one process: blocks of each workload with the profiler enabled and disabled,
    alternating (ABBA), so that the ratio is taken between neighbouring blocks of the same
    process rather than across processes (whose launch-bound timings differ by 20-30 % on the
    H200 machine). wavekit is switched with enable()/disable() (CUPTI: kernel activity and launch
    callbacks off, still subscribed; events backend: the hooks only forward, which is also what
    a sampled run does between windows). Proton's deactivate() keeps most of its cost (run G), so
    Proton is started before each "on" block and finalized before each "off" block: whatever
    CUPTI keeps costing after finalize() then counts against "off", so Proton's measured cost
    is, if anything, too low -- a conservative figure to compare wavekit's with. A block repeats
    the workload for about --block-s seconds, so that a sampled block holds many windows."""
    import torch
    torch.cuda.init()
    if args.config == "proton":
        import contextlib
        import triton.profiler as proton
        sessions = []

        def scope(name):  # Proton's scopes only while a session runs
            return proton.scope(name) if sessions else contextlib.nullcontext()

        def switch(on):
            if on and not sessions:
                name = f"ab-proton-{args.index}-{len(sessions)}"
                sessions.append(proton.start(os.path.join(args.out, name), context="shadow"))
            elif not on and sessions:
                proton.finalize()
                sessions.clear()
    else:
        import wavekit_profile as wp
        scope = wp.scope

        def switch(on):
            wp.enable() if on else wp.disable()
    fns, _ = workloads(scope, lambda: None)
    pin_main_thread()
    names = [n for n in args.workloads if n in fns]
    repeats = {}
    for name in names:  # warm-up, and how many runs make a block
        fns[name]()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fns[name]()
        torch.cuda.synchronize()
        repeats[name] = max(1, round(args.block_s / (time.perf_counter() - t0)))
    blocks = {name: {"on": [], "off": [], "n": 0, "repeats": repeats[name]} for name in names}
    for pair in range(args.pairs):
        for name in names:
            order = (True, False) if pair % 2 == 0 else (False, True)
            for on in order:
                switch(on)
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                n = sum(fns[name]() for _ in range(repeats[name]))
                torch.cuda.synchronize()
                blocks[name]["on" if on else "off"].append(time.perf_counter() - t0)
                blocks[name]["n"] = n
    switch(args.config != "proton")
    with open(os.path.join(args.out, "ab.jsonl"), "a") as f:
        f.write(json.dumps({"label": args.label, "config": args.config, "index": args.index,
                            "blocks": blocks}) + "\n")


# What the A/B runs compare: (label, configuration, extra environment, seconds per block,
# processes). Full modes cost tens of percent, so shorter blocks resolve them; the sampled mode
# is meant to cost under 1 %, so its blocks are long (many windows each).
AB_SETTINGS = [
    ("events full", "ours_events", {}, 0.3, 1),
    (f"events sampled {EVENTS_DUTY}", "ours_events", {"WAVEKIT_PROFILE_DUTY": EVENTS_DUTY}, 1.0, 1),
    (f"events counted 1/{EVENTS_TIME_EVERY}", "ours_events",
     {"WAVEKIT_PROFILE_TIME_EVERY": EVENTS_TIME_EVERY}, 0.5, 2),
    ("events counted 1/256", "ours_events", {"WAVEKIT_PROFILE_TIME_EVERY": "256"}, 0.5, 1),
    ("cupti full", "ours", {}, 0.5, 2),
    ("proton start/finalize", "proton", {}, 0.5, 2),
]


def ab_orchestrate(args):
    os.makedirs(args.out, exist_ok=True)
    me = os.path.abspath(__file__)
    for label, config, extra_env, block_s, processes in AB_SETTINGS:
        if args.only and not any(label.startswith(o) for o in args.only):
            continue
        for index in range(processes):
            env = config_env(config, args.lib, args.out, f"ab{index}-" + label.replace(" ", "-").replace("/", "-"))
            env.update(extra_env)
            t = time.time()
            cmd = [sys.executable, me, "ab", "--out", args.out, "--pairs", str(args.pairs),
                   "--block-s", str(block_s), "--config", config, "--label", label,
                   "--index", str(index), "--workloads", *args.workloads]
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                                  timeout=args.timeout)
            print(f"ab {label} #{index} {time.time() - t:.1f} s rc={proc.returncode}", flush=True)
            if proc.returncode != 0:
                print(proc.stderr[-3000:], flush=True)
    summarise_ab(args.out)


def summarise_ab(out):
    rng = random.Random(2)
    print("\nA/B in one process: median of paired ratios on/off [95% CI]; host ns per launch")
    print("setting                 # workload        off median   on median   ratio [95% CI]"
          "          ns/launch [95% CI]")
    summary = {}
    for line in open(os.path.join(out, "ab.jsonl")):
        row = json.loads(line)
        setting = f"{row['label']} #{row['index']}"
        for name, b in row["blocks"].items():
            ratios = [on / off for on, off in zip(b["on"], b["off"])]
            m, lo, hi = median_ci(ratios, rng)
            per_launch = [(on - off) / b["n"] * 1e9 for on, off in zip(b["on"], b["off"])]
            c, clo, chi = median_ci(per_launch, rng)
            off, on = statistics.median(b["off"]), statistics.median(b["on"])
            summary[f"{setting}/{name}"] = {"ratio": m, "ci": [lo, hi], "off_s": off, "on_s": on,
                                           "ns_per_launch": c, "ns_ci": [clo, chi],
                                           "pairs": len(ratios)}
            print(f"{setting:25s} {name:15s} {off*1e3:8.1f} ms {on*1e3:8.1f} ms  {m:7.4f} "
                  f"[{lo:.4f}, {hi:.4f}]  {c:8.0f} [{clo:.0f}, {chi:.0f}]")
    with open(os.path.join(out, "ab_summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


def median_ci(values, rng, n=2000):
    boots = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(n))
    return statistics.median(values), boots[int(0.025 * n)], boots[int(0.975 * n)]


def summarise(out):
    rows = [json.loads(l) for l in open(os.path.join(out, "results.jsonl"))]
    runs = [r for r in rows if "config" in r]
    rng = random.Random(1)
    by = {}
    for r in runs:
        for name, w in r["workloads"].items():
            entry = by.setdefault((r["config"], name), {"wall": [], "cpu": [], "n": w["n"]})
            entry["wall"] += w["wall"]
            entry["cpu"] += w["cpu"]
    names = sorted({k[1] for k in by})
    summary = {}
    # Host cost per launch, two ways: over the unprofiled run (everything the profiler costs)
    # and over floor_activity (what it costs beyond CUPTI's own kernel tracing).
    print("\nworkload        config          wall median [95% CI]        ratio   cpu ratio"
          "  ns/launch  over floor")
    for name in names:
        base = by.get(("none", name))
        if not base:
            continue
        bw, bc = statistics.median(base["wall"]), statistics.median(base["cpu"])
        floor = by.get(("floor_activity", name))
        fw = statistics.median(floor["wall"]) if floor else None
        for config in CONFIGS:
            e = by.get((config, name))
            if not e:
                continue
            m, lo, hi = median_ci(e["wall"], rng)
            c = statistics.median(e["cpu"])
            per_launch = (m - bw) / e["n"] * 1e9
            over_floor = (m - fw) / e["n"] * 1e9 if fw is not None else float("nan")
            summary[f"{name}/{config}"] = {"wall_s": m, "ci": [lo, hi], "ratio": m / bw,
                                           "cpu_ratio": c / bc, "ns_per_launch": per_launch,
                                           "ns_per_launch_over_floor": over_floor,
                                           "samples": len(e["wall"])}
            print(f"{name:15s} {config:21s} {m*1e3:9.2f} ms [{lo*1e3:8.2f}, {hi*1e3:8.2f}]"
                  f"  {m/bw:7.4f}  {c/bc:8.3f}  {per_launch:9.0f}  {over_floor:10.0f}")
    graph = {}
    for r in runs:
        graph.setdefault(r["config"], []).extend(r.get("graph_gpu_ms_per_replay", []))
    print("\ngraph replay GPU ms/replay (CUDA events), median:")
    for config, values in graph.items():
        if values:
            print(f"  {config:21s} {statistics.median(values):.4f}")
            summary[f"graph_gpu/{config}"] = statistics.median(values)
    for r in rows:
        if "soak" in r:
            s = r["samples"]
            first, last = s[min(1, len(s) - 1)], s[-1]
            print(f"soak {r['soak']}: {last[0] * r['kernels_per_replay']:.3g} kernels in {last[1]:.1f} s; "
                  f"RSS {first[2] / 2**20:.1f} MiB after {first[0]} replays -> {last[2] / 2**20:.1f} MiB at end")
            summary[f"soak/{r['soak']}"] = {"kernels": last[0] * r["kernels_per_replay"], "seconds": last[1],
                                            "rss_first_mib": first[2] / 2**20, "rss_last_mib": last[2] / 2**20}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("orchestrate")
    o.add_argument("--lib", required=True)
    o.add_argument("--out", required=True)
    o.add_argument("--rounds", type=int, default=2)
    o.add_argument("--reps", type=int, default=3)
    o.add_argument("--configs", nargs="+", choices=CONFIGS, default=CONFIGS)
    o.add_argument("--soak", nargs="*", default=["ours", "floor"])
    o.add_argument("--soak-replays", type=int, default=10000)
    o.add_argument("--timeout", type=int, default=150, help="seconds per process")
    r = sub.add_parser("run")
    r.add_argument("--config", choices=CONFIGS, required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("--round", type=int, default=0)
    s = sub.add_parser("soak")
    s.add_argument("--config", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--replays", type=int, default=10000)
    ab_workloads = ["launch_torch", "launch_triton", "decode_eager"]
    ao = sub.add_parser("ab-orchestrate")
    ao.add_argument("--lib", required=True)
    ao.add_argument("--out", required=True)
    ao.add_argument("--pairs", type=int, default=10)
    ao.add_argument("--only", nargs="*", help="settings whose label starts so (default: all)")
    ao.add_argument("--workloads", nargs="+", default=ab_workloads)
    ao.add_argument("--timeout", type=int, default=300, help="seconds per process")
    ar = sub.add_parser("ab")
    ar.add_argument("--out", required=True)
    ar.add_argument("--config", required=True, choices=["ours_events", "ours", "proton"])
    ar.add_argument("--label", required=True)
    ar.add_argument("--index", type=int, default=0)
    ar.add_argument("--pairs", type=int, default=10)
    ar.add_argument("--block-s", type=float, default=1.0)
    ar.add_argument("--workloads", nargs="+", default=ab_workloads)
    sm = sub.add_parser("summarise")
    sm.add_argument("--out", required=True)
    sa = sub.add_parser("summarise-ab")
    sa.add_argument("--out", required=True)
    a = p.parse_args()
    {"orchestrate": orchestrate, "run": run, "soak": soak, "ab-orchestrate": ab_orchestrate,
     "ab": ab, "summarise": lambda a: summarise(a.out),
     "summarise-ab": lambda a: summarise_ab(a.out)}[a.cmd](a)


if __name__ == "__main__":
    main()
