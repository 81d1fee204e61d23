"""`wavekit profile --hsa` on the emulator: the unmodified HSA example programs run under the
profiler (HSA_TOOLS_LIB, intercept queues, dispatch times, async handlers of the emulator's
libhsa-runtime64.so.1), and the profile must hold what the programs dispatch.

The oracle is the programs' own sources (examples/hsa/*.c): vector_add and divergent dispatch
their kernel once, two_objects dispatches vector_add then divergent (with a barrier packet
between, which is not a kernel), many_dispatches dispatches scale_add 300 times (and says so
on stdout, which is checked too). Each program also checks its own results, so the profiler
must not have disturbed the packets or their completion signals.

usage: hsa_emulator_test.py WAVEKIT EXAMPLES_DIR RUNTIME_DIR SCRATCH_DIR
"""
import json
import os
import pathlib
import re
import subprocess
import sys

WAVEKIT, EXAMPLES, RUNTIME, SCRATCH = sys.argv[1:5]

EXPECTED = {
    "vector_add": {"vector_add": 1},
    "divergent": {"divergent": 1},
    "two_objects": {"vector_add": 1, "divergent": 1},
    "many_dispatches": {"scale_add": 300},
}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def kernels(node, path=()):
    """(context path, kernel name, metrics) for every leaf of a hatchet tree."""
    name = node["frame"]["name"]
    children = node.get("children", [])
    if not children and path:
        yield path, name, node["metrics"]
    for child in children:
        yield from kernels(child, path + (name,))


def run(example, extra_options=()):
    out = pathlib.Path(SCRATCH) / f"{example}{'-' + extra_options[0].strip('-') if extra_options else ''}"
    env = dict(os.environ, LD_LIBRARY_PATH=RUNTIME, WAVEKIT_EMU_TARGET="gfx90a",
               WAVEKIT_PROFILE_QUIET="1")
    result = subprocess.run(
        [WAVEKIT, "profile", "--hsa", "-o", str(out), *extra_options, "--",
         os.path.join(EXAMPLES, example)],
        env=env, capture_output=True, text=True, timeout=300)
    return out, result


for example, expected in EXPECTED.items():
    out, result = run(example)
    check(result.returncode == 0,
          f"{example}: exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    check(re.search(r"\b0 wrong\b", result.stdout), f"{example}: results wrong: {result.stdout}")
    check("does not route" not in result.stderr and "HSA_TOOLS_LIB" not in result.stderr,
          f"{example}: tools library trouble: {result.stderr}")
    if example == "many_dispatches":
        check("300 dispatches" in result.stdout, f"{example}: stdout: {result.stdout}")
    hatchet = out / "profile.hatchet"
    if not hatchet.exists():
        failures.append(f"{example}: no {hatchet}")
        continue
    tree, devices = json.loads(hatchet.read_text())[:2]  # then wavekit's self-metrics
    # Proton's layout for AMD: device_info["HIP"][id], the emulated agent's description.
    check(devices.get("HIP", {}).get("0", {}).get("arch") == "gfx90a",
          f"{example}: device_info {devices}")
    seen = {}
    for path, name, metrics in kernels(tree):
        seen[name] = seen.get(name, 0) + metrics["count"]
        check(metrics["time (ns)"] > 0, f"{example}: {name} has no time: {metrics}")
        check(metrics.get("device_type") == "HIP", f"{example}: {name}: {metrics}")
        check(metrics.get("min_time (ns)", 1) > 0, f"{example}: {name} min time 0: {metrics}")
    check(seen == expected, f"{example}: kernels {seen}, the program dispatches {expected}")
    check(any(out.glob("phase-*.wkp")), f"{example}: no phase file in {out}")
    # The same outputs as the CUDA path: the viewer reads the directory and a phase file.
    view = subprocess.run([WAVEKIT, "profile-view", "--top", str(out)], capture_output=True,
                          text=True, timeout=60)
    check(view.returncode == 0 and all(k in view.stdout for k in expected),
          f"{example}: profile-view: {view.returncode}\n{view.stdout}\n{view.stderr}")

# A Chrome trace: one complete event per dispatch, in dispatch order, each with a duration.
out, result = run("many_dispatches", ("--trace", "1000"))
check(result.returncode == 0, f"many_dispatches --trace: exit {result.returncode}: {result.stderr}")
trace_file = out / "trace.json"
if trace_file.exists():
    trace = json.loads(trace_file.read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    dispatches = [e for e in events if e.get("ph") == "X"]
    check(len(dispatches) == 300, f"trace: {len(dispatches)} events, expected 300")
    check(all(e["name"] == "scale_add" and e["dur"] > 0 for e in dispatches),
          "trace: an event is not a timed scale_add")
    starts = [e["ts"] for e in dispatches]
    check(starts == sorted(starts), "trace: the emulator runs one queue in order, the trace does not")
else:
    failures.append(f"no {trace_file}")

for failure in failures:
    print("FAIL:", failure)
print("hsa_emulator_test:", "failed" if failures else "passed")
sys.exit(1 if failures else 0)
