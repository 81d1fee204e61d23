#!/usr/bin/env python3
"""Build HeCBench's HIP programs with Debian's hipcc and run them on wavekit's emulator.

For every program of bench/hecbench/programs.txt (or --only NAME...):
  1. build it with `make CC="hipcc --offload-arch=gfx90a"` in a scratch copy of
     ../shared/data/hecbench/src (third-party code: it never enters the repository);
  2. run it plainly on the emulator's HSA runtime, recording the ground truth of every dispatch
     (WAVEKIT_EMU_TRACE_BLOCKS / _SEQUENCE, docs/hsa.md), and judge its own check;
  3. run it under `wavekit run --tool bbcount|callret|blocktrace`, judge its check again, collect
     the shim's messages (a kernel it refused, a fallback) and compare bbcount's and blocktrace's
     per-dispatch results with the plain run's ground truth, file by file.

Writes a JSON document (--json) and a markdown table (--markdown). Standard library only.
docs/hecbench.md describes the method and the results.
"""

import argparse
import concurrent.futures
import datetime
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TOOLS = ("bbcount", "callret", "blocktrace")
PRINT_LOCK = threading.Lock()


def say(text):
    with PRINT_LOCK:
        print(text, flush=True)


# ---------------------------------------------------------------------------------------------
# The data file


class Program:
    def __init__(self, name, args, check, notes, setup):
        self.name = name
        self.args = args
        self.check = check
        self.notes = notes
        self.setup = setup


def read_programs(path):
    programs = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = [field.strip() for field in line.split("|")]  # no field holds a "|"
            while len(fields) < 5:
                fields.append("")
            name, args, check, notes, setup = fields[:5]
            if not name or not (check in ("auto", "pass", "abort") or check.startswith(("re:", "skip:"))):
                sys.exit(f"{path}:{number}: expected 'name | args | check | notes [| setup]' "
                         f"with check auto, pass, abort, re:REGEX or skip:WHY; got {line!r}")
            programs.append(Program(name, args, check, notes, setup))
    return programs


# ---------------------------------------------------------------------------------------------
# Running a command with a timeout, its whole process group killed at the end


RUNNING = set()  # process groups of the runs in flight, killed when the survey is stopped


def stop(signum, frame):
    for group in list(RUNNING):
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os._exit(128 + signum)


def run(command, cwd, env, timeout, log_path):
    start = time.monotonic()
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        RUNNING.add(process.pid)
        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        finally:
            RUNNING.discard(process.pid)
    seconds = time.monotonic() - start
    with open(log_path, "rb") as log:
        output = log.read().decode("utf-8", "replace")
    return process.returncode, timed_out, seconds, output


def tail(text, lines=6, width=240):
    kept = [line[:width] for line in text.strip().splitlines()[-lines:]]
    return "\n".join(kept)


# ---------------------------------------------------------------------------------------------
# Building


BUILD_CAUSES = [
    (r"hipcub/hipcub\.hpp", "needs hipcub (not in Debian 12)"),
    (r"rocprim/", "needs rocPRIM (not in Debian 12)"),
    (r"hipblas|hipblaslt", "needs hipBLAS (not in Debian 12)"),
    (r"rocblas", "needs rocBLAS (not in Debian 12)"),
    (r"hiprand|rocrand", "needs hipRAND/rocRAND (not in Debian 12)"),
    (r"hipfft|rocfft", "needs hipFFT (not in Debian 12)"),
    (r"hipsparse|rocsparse", "needs hipSPARSE (not in Debian 12)"),
    (r"hipsolver|rocsolver", "needs hipSOLVER (not in Debian 12)"),
    (r"rocwmma", "needs rocWMMA (not in Debian 12)"),
    (r"hip/hip_fp8\.h", "needs hip/hip_fp8.h (HIP 6.2; Debian has 5.2)"),
    (r"miopen", "needs MIOpen (not in Debian 12)"),
    (r"thrust/", "needs rocThrust (not in Debian 12)"),
    (r"hip/hip_bf16\.h", "needs hip/hip_bf16.h (HIP 6; Debian has 5.2)"),
    (r"refdata_2J14_W\.h", "its reference data header refdata_2J14_W.h is not in the snapshot"),
    (r"heat2d-hip/main\.cu|main\.cu:106:3: error: expected '\)'",
     "a syntax error in its own main.cu (a missing comma at line 105)"),
    (r"cannot initialize a parameter of type 'hipStream_t'",
     "its own hipLaunchKernelGGL call passes no block size (a float* lands on the stream)"),
    (r"cannot find -lomp|omp\.h' file not found",
     "needs LLVM's OpenMP runtime (-lomp), which Debian's hipcc set-up does not install"),
    (r"unsupported option '--hipstdpar'", "needs --hipstdpar (ROCm 6's C++ parallel algorithms)"),
    (r"Opaque pointers are only supported in -opaque-pointers mode",
     "-fgpu-rdc: the device link runs LLVM 14's lld on clang-15 bitcode (Debian's hipcc)"),
]


def missing_siblings(directory):
    """Paths into sibling directories (../X/...) the Makefile names that do not exist."""
    try:
        with open(os.path.join(directory, "Makefile"), errors="replace") as f:
            makefile = f.read()
    except OSError:
        return []
    paths = sorted(set(re.findall(r"\.\./[A-Za-z0-9_+.-]+/[A-Za-z0-9_+./-]+", makefile)))
    return [p for p in paths if not os.path.exists(os.path.join(directory, p))]


def build_cause(log, directory=None):
    if directory and re.search(r"No rule to make target|file not found", log):
        missing = [p for p in missing_siblings(directory) if "/data/" not in p]
        missing.sort(key=lambda p: p not in log)  # the one make named first
        if missing and re.search(r"No rule to make target", log):
            return f"{missing[0]} is not in the snapshot (a sibling HeCBench directory)"
    for pattern, cause in BUILD_CAUSES:
        if re.search(pattern, log):
            return cause
    rule = re.search(r"No rule to make target '([^']+)'", log)
    if rule:
        return f"{rule.group(1)} is not in the snapshot (a sibling HeCBench directory)"
    library = re.search(r"cannot find -l(\S+)", log)
    if library:
        return f"needs -l{library.group(1)}"
    missing = re.search(r"fatal error: '([^']+)' file not found", log)
    if missing:
        return f"missing header {missing.group(1)}"
    undeclared = sorted(set(re.findall(r"use of undeclared identifier '([^']+)'", log)))
    if undeclared:
        return "HIP 5.2 lacks " + ", ".join(undeclared[:4])
    nomember = sorted(set(re.findall(r"no member named '([^']+)'", log)))
    if nomember:
        return "HIP 5.2 lacks " + ", ".join(nomember[:4])
    nomatch = re.search(r"no matching function for call to '([^']+)'", log)
    if nomatch:
        return f"no matching function {nomatch.group(1)}"
    undefined = sorted(set(re.findall(r"undefined reference to `([^']+)'", log)))
    if undefined:
        return "undefined at link: " + ", ".join(undefined[:3])
    error = re.search(r"error: (.*)", log)
    if error:
        return error.group(1)[:160]
    return tail(log, 1)


def executable_of(directory):
    """The program's executable: `program = X` of its Makefile, else the run rule's ./X."""
    with open(os.path.join(directory, "Makefile"), errors="replace") as f:
        makefile = f.read()
    match = re.search(r"^program\s*=\s*(\S+)", makefile, re.MULTILINE)
    if match:
        return match.group(1)
    match = re.search(r"^run:.*\n(?:\s*#.*\n)*\s*(?:\$\(LAUNCHER\)\s*)?\./(\S+)", makefile,
                      re.MULTILINE)
    if match:
        return match.group(1)
    return "main"


def build(program, options):
    directory = os.path.join(options.work, "src", program.name + "-hip")
    log_path = os.path.join(options.work, "logs", program.name + ".build.log")
    executable = os.path.join(directory, executable_of(directory))
    status_path = log_path + ".json"
    if not options.rebuild and os.path.exists(status_path):
        with open(status_path) as f:
            status = json.load(f)
        if status["built"] == os.path.exists(executable):
            return status
    command = ["nice", "-n", "10", "make", "-C", directory,
               f"CC={options.hipcc} --offload-arch={options.arch}", f"HIP_ARCH={options.arch}"]
    rc, timed_out, seconds, output = run(command, directory, dict(os.environ),
                                         options.build_timeout, log_path)
    built = rc == 0 and not timed_out and os.path.exists(executable)
    status = {"built": built, "seconds": round(seconds, 1), "executable": executable,
              "cause": None if built else (f"build timed out ({options.build_timeout:.0f} s)"
                                           if timed_out else build_cause(output, directory))}
    with open(status_path, "w") as f:
        json.dump(status, f)
    return status


def prepare_sources(options):
    """A writable copy of the HeCBench tree: the programs' Makefiles build in place and some
    read their siblings (../X-cuda/)."""
    destination = os.path.join(options.work, "src")
    if not os.path.isdir(destination):
        shutil.copytree(options.hecbench, destination, symlinks=True)
        for root, dirs, files in os.walk(destination):
            for name in dirs + files:
                path = os.path.join(root, name)
                if not os.path.islink(path):
                    os.chmod(path, os.stat(path).st_mode | 0o200)


# ---------------------------------------------------------------------------------------------
# Judging a run


def program_output(output):
    """The program's own lines: without the emulator's and the shim's messages and without the
    summary `wavekit run` prints after the program ended (its "0 failed" is no verdict)."""
    kept = []
    for line in output.splitlines():
        if re.match(r"wavekit run: ", line):
            break
        if not line.startswith("wavekit"):
            kept.append(line)
    return "\n".join(kept)


def judge(program, rc, timed_out, output):
    """(passed, kind, reason): kind is "self-check" when the program printed a PASS/FAIL
    verdict, "exit status" when it printed none."""
    all_output = output
    output = program_output(output)
    fail_line = re.search(r"^.*\bFAIL.*$", output, re.IGNORECASE | re.MULTILINE)
    pass_line = re.search(r"\bPASS", output, re.IGNORECASE)
    kind = "self-check" if (fail_line or pass_line or program.check.startswith("re:")) \
        else "exit status"
    if timed_out:
        return False, kind, "timed out"
    if program.check == "abort":
        # A failing device assert is an s_trap: CLR aborts the process, on a GPU as here.
        # Plainly the process dies of SIGABRT; `wavekit run` exits with 128 + 6.
        if rc in (-signal.SIGABRT, 128 + signal.SIGABRT) and "s_trap" in all_output:
            return True, "expected abort", ""
        return False, "expected abort", f"exit status {rc}, not an abort after an s_trap"
    if rc != 0:
        reason = f"exit status {rc}" if rc > 0 else f"killed by signal {-rc}"
        return False, kind, reason
    if fail_line:
        return False, kind, "printed " + fail_line.group(0).strip()[:120]
    if program.check == "pass" and not pass_line:
        return False, kind, "no PASS line"
    if program.check.startswith("re:") and not re.search(program.check[3:], output,
                                                         re.MULTILINE):
        return False, kind, f"output does not match {program.check[3:]!r}"
    return True, kind, ""


def emulator_messages(output):
    lines = [line for line in output.splitlines() if line.startswith("wavekit emulator:")]
    return lines[:8]


def shim_messages(output):
    seen = []
    for line in output.splitlines():
        if line.startswith("wavekit: ") and line not in seen:
            seen.append(line)
    return seen[:12]


def why_failed(reason, output):
    """The emulator's own words when it stopped a dispatch, else the reason."""
    for line in output.splitlines():
        if line.startswith("wavekit emulator:") and "terminating" not in line:
            return f"{reason}: {line[len('wavekit emulator:'):].strip()[:200]}"
    return reason


# ---------------------------------------------------------------------------------------------
# Ground truth against the tools' results


def wave_blocks(path):
    with open(path) as f:
        document = json.load(f)
    return {wave["id"]: wave["blocks"] for wave in document.get("waves", [])}


def compare_blocks(truth, results):
    """Per dispatch file <kernel>.<n>.json of the plain run: equal, differing, missing."""
    summary = {"dispatches": 0, "equal": 0, "differ": [], "missing": []}
    for path in sorted(glob.glob(os.path.join(truth, "*.json"))):
        name = os.path.basename(path)
        summary["dispatches"] += 1
        other = os.path.join(results, name)
        if not os.path.exists(other):
            summary["missing"].append(name[:-5])
            continue
        if wave_blocks(path) == wave_blocks(other):
            summary["equal"] += 1
        else:
            summary["differ"].append(name[:-5])
    return summary


def compare_sequences(truth, results):
    summary = {"dispatches": 0, "equal": 0, "differ": [], "missing": []}
    for directory in sorted(glob.glob(os.path.join(truth, "*/"))):
        name = os.path.basename(directory.rstrip("/"))
        summary["dispatches"] += 1
        other = os.path.join(results, name)
        if not os.path.isdir(other):
            summary["missing"].append(name)
            continue
        waves = sorted(os.listdir(directory))
        same = waves == sorted(os.listdir(other))
        for wave in waves if same else []:
            with open(os.path.join(directory, wave), "rb") as a, \
                 open(os.path.join(other, wave), "rb") as b:
                if a.read() != b.read():
                    same = False
                    break
        if same:
            summary["equal"] += 1
        else:
            summary["differ"].append(name)
    return summary


def schedule_dependent(tool, differing, command, directory, plain_env, options, out):
    """The differing dispatches whose ground truth a second plain run, with another
    interleaving of the waves (at most 16 resident, one host thread), does not reproduce:
    their control flow depends on the schedule (atomics, spin-waits, memo tables other waves
    fill), so an instrumented run, whose timing differs, can take other paths as two plain runs
    with different schedules do."""
    second = os.path.join(out, "truth2-" + tool)
    env = dict(plain_env)
    env["WAVEKIT_EMU_THREADS"] = "1"
    env["WAVEKIT_EMU_MAX_RESIDENT_WAVES"] = "16"  # a 1024-item workgroup still fits
    env.pop("WAVEKIT_EMU_STATS", None)
    env.pop("WAVEKIT_EMU_TRACE_BLOCKS", None)
    env.pop("WAVEKIT_EMU_TRACE_SEQUENCE", None)
    if tool == "bbcount":
        env["WAVEKIT_EMU_TRACE_BLOCKS"] = second
    else:
        env["WAVEKIT_EMU_TRACE_SEQUENCE"] = second
    run(command, directory, env, options.timeout, os.path.join(out, "truth2-" + tool + ".log"))
    first = os.path.join(out, "truth-blocks" if tool == "bbcount" else "truth-sequence")
    compare = compare_blocks if tool == "bbcount" else compare_sequences
    again = compare(first, second)
    shutil.rmtree(second, ignore_errors=True)
    return [name for name in differing if name in again["differ"] or name in again["missing"]]


def compare_presence(truth, results):
    """callret: its values have no ground truth here; that every dispatch has its result."""
    summary = {"dispatches": 0, "equal": 0, "differ": [], "missing": [], "presence": True}
    for path in sorted(glob.glob(os.path.join(truth, "*.json"))):
        name = os.path.basename(path)
        summary["dispatches"] += 1
        if os.path.exists(os.path.join(results, name)):
            summary["equal"] += 1
        else:
            summary["missing"].append(name[:-5])
    return summary


def summarise_comparison(comparison):
    if comparison is None:
        return ""
    text = f"{comparison['equal']}/{comparison['dispatches']} dispatches " + (
        "have results" if comparison.get("presence") else "equal the ground truth")
    if comparison["differ"]:
        text += "; differ: " + ", ".join(comparison["differ"][:4])
        if len(comparison["differ"]) > 4:
            text += f" (+{len(comparison['differ']) - 4})"
        if "schedule_dependent" in comparison:
            text += (f" ({len(comparison['schedule_dependent'])} of them differ between two "
                     f"plain runs too)")
    if comparison["missing"]:
        text += "; missing: " + ", ".join(comparison["missing"][:4])
        if len(comparison["missing"]) > 4:
            text += f" (+{len(comparison['missing']) - 4})"
    return text


# ---------------------------------------------------------------------------------------------
# One program


def read_stats(path):
    """The emulator's WAVEKIT_EMU_STATS lines summed: kernel dispatches, waves,
    wave-instructions, and the wall and process CPU seconds inside them."""
    totals = {"dispatches": 0, "waves": 0, "wave_instructions": 0, "emu_wall_s": 0.0,
              "emu_cpu_s": 0.0, "failed_dispatches": 0}
    if not os.path.exists(path):
        return totals
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 7:
                continue
            totals["dispatches"] += 1
            totals["waves"] += int(fields[1])
            totals["wave_instructions"] += int(fields[2])
            totals["emu_wall_s"] += int(fields[3]) / 1e9
            totals["emu_cpu_s"] += int(fields[4]) / 1e9
            totals["failed_dispatches"] += fields[6] != "ok"
    totals["emu_wall_s"] = round(totals["emu_wall_s"], 3)
    totals["emu_cpu_s"] = round(totals["emu_cpu_s"], 3)
    return totals


def runtime_library_directory(prefix):
    for path in glob.glob(os.path.join(prefix, "**", "libhsa-runtime64.so.1"), recursive=True):
        return os.path.dirname(path)
    sys.exit(f"no libhsa-runtime64.so.1 under {prefix}")


def survey(program, options):
    record = {"name": program.name, "args": program.args, "check": program.check,
              "notes": program.notes}
    if program.check.startswith("skip:"):
        record["skipped"] = program.check[5:]
        say(f"{program.name}: skipped ({record['skipped']})")
        return record
    status = build(program, options)
    record["build"] = status
    if not status["built"]:
        say(f"{program.name}: does not build: {status['cause']}")
        return record
    if options.build_only:
        say(f"{program.name}: built ({status['seconds']} s)")
        return record
    directory = os.path.dirname(status["executable"])
    out = os.path.join(options.work, "runs", program.name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    if program.setup:
        subprocess.run(program.setup, shell=True, cwd=directory, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    command = [status["executable"]] + program.args.split()
    env = dict(os.environ)
    env["WAVEKIT_EMU_TIMEOUT"] = str(options.emu_timeout)
    env["WAVEKIT_EMU_THREADS"] = str(options.threads)
    runs = {}
    record["runs"] = runs

    plain_env = dict(env)
    plain_env["LD_LIBRARY_PATH"] = options.runtime_dir + (
        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    truth_blocks = os.path.join(out, "truth-blocks")
    truth_sequence = os.path.join(out, "truth-sequence")
    if options.ground_truth:
        plain_env["WAVEKIT_EMU_TRACE_BLOCKS"] = truth_blocks
        plain_env["WAVEKIT_EMU_TRACE_SEQUENCE"] = truth_sequence
    stats_path = os.path.join(out, "stats.tsv")
    plain_env["WAVEKIT_EMU_STATS"] = stats_path  # docs/hsa.md: a line per dispatch
    rc, timed_out, seconds, output = run(command, directory, plain_env, options.timeout,
                                         os.path.join(out, "plain.log"))
    passed, kind, reason = judge(program, rc, timed_out, output)
    runs["plain"] = {"passed": passed, "kind": kind, "rc": rc, "timed_out": timed_out,
                     "seconds": round(seconds, 2),
                     "reason": "" if passed else why_failed(reason, output),
                     "emulator": emulator_messages(output), "tail": tail(output)}
    dispatches = len(glob.glob(os.path.join(truth_blocks, "*.json")))
    runs["plain"]["dispatches"] = dispatches
    runs["plain"]["stats"] = read_stats(stats_path)
    say(f"{program.name}: plain {'PASS' if passed else 'FAIL'} ({kind}, {seconds:.1f} s, "
        f"{dispatches} dispatches){'' if passed else ': ' + runs['plain']['reason']}")

    if not passed and not options.tools_always:
        return record
    # Instrumented kernels run slower: the emulator's budget grows with the run's.
    env["WAVEKIT_EMU_TIMEOUT"] = str(max(options.emu_timeout,
                                         int(options.tool_timeout) - 10))
    for tool in options.tools:
        tool_out = os.path.join(out, tool)
        tool_command = [options.wavekit, "run", "--tool", tool, "--tool-out", tool_out, "--"] + \
            command
        rc, timed_out, seconds, output = run(tool_command, directory, env, options.tool_timeout,
                                             os.path.join(out, tool + ".log"))
        passed, kind, reason = judge(program, rc, timed_out, output)
        comparison = None
        if options.ground_truth and not timed_out and dispatches:
            if tool == "bbcount":
                comparison = compare_blocks(truth_blocks, tool_out)
            elif tool == "blocktrace":
                comparison = compare_sequences(truth_sequence, tool_out)
            else:
                comparison = compare_presence(truth_blocks, tool_out)
        if comparison and comparison["differ"] and not comparison.get("presence"):
            comparison["schedule_dependent"] = schedule_dependent(
                tool, comparison["differ"], command, directory, plain_env, options, out)
        messages = shim_messages(output)
        runs[tool] = {"passed": passed, "kind": kind, "rc": rc, "timed_out": timed_out,
                      "seconds": round(seconds, 2),
                      "reason": "" if passed else why_failed(reason, output),
                      "shim": messages, "truth": comparison, "tail": tail(output, 10)}
        say(f"{program.name}: {tool} {'PASS' if passed else 'FAIL'} ({seconds:.1f} s)"
            f"{'' if passed else ': ' + runs[tool]['reason']}"
            f"{'; ' + summarise_comparison(comparison) if comparison else ''}"
            f"{'; ' + str(len(messages)) + ' shim messages' if messages else ''}")
        if not options.keep:
            shutil.rmtree(tool_out, ignore_errors=True)
    if not options.keep:
        shutil.rmtree(truth_blocks, ignore_errors=True)
        shutil.rmtree(truth_sequence, ignore_errors=True)
    return record


# ---------------------------------------------------------------------------------------------
# Reports


def cell(record, run_name):
    if "skipped" in record:
        return "skip" if run_name == "plain" else ""
    if not record.get("build", {}).get("built"):
        return ""
    result = record.get("runs", {}).get(run_name)
    if result is None:
        return ""
    if result["passed"]:
        text = {"self-check": "PASS", "exit status": "ok"}.get(result["kind"], "abort")
        truth = result.get("truth")
        if truth and truth.get("presence"):
            text += f" ({truth['equal']}/{truth['dispatches']} results)" if truth["missing"] \
                else ""
        elif truth and (truth["differ"] or truth["missing"]):
            scheduled = len(truth.get("schedule_dependent", []))
            text += f" ({truth['equal']}/{truth['dispatches']} = truth"
            text += f", {scheduled} schedule-dependent)" if scheduled else ")"
        elif truth:
            text += f" ({truth['dispatches']} = truth)" if truth["dispatches"] else ""
        if any(m.startswith("wavekit: running the original code object")
               for m in result.get("shim", [])):
            text += " (orig)"  # the shim refused an object: its kernels ran uninstrumented
        elif result.get("shim"):
            text += " *"
        return text
    return "timeout" if result["timed_out"] else "FAIL"


def markdown(records, meta):
    lines = [f"Generated by bench/hecbench/survey.py on {meta['date']} ({meta['machine']}); "
             f"PASS: the program's own check passed; ok: exit status 0, the program prints no "
             f"verdict; (n = truth): n dispatches equal the plain run's ground truth; "
             f"(orig): the shim ran an object's original code (it could not instrument it); "
             f"*: the shim printed other messages (see the JSON).", "",
             "| program | build | plain | bbcount | callret | blocktrace | notes |",
             "|---|---|---|---|---|---|---|"]
    for record in records:
        built = record.get("build", {})
        if "skipped" in record:
            build_cell, note = "", record["skipped"]
        elif built.get("built"):
            build_cell, note = "yes", ""
            plain = record.get("runs", {}).get("plain")
            if plain and not plain["passed"]:
                note = plain["reason"]
            else:
                for tool in TOOLS:
                    result = record.get("runs", {}).get(tool)
                    if result and not result["passed"]:
                        note = f"{tool}: {result['reason']}"
                        break
        else:
            build_cell, note = "no", built.get("cause", "")
        note = note.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {record['name']} | {build_cell} | {cell(record, 'plain')} | "
                     f"{cell(record, 'bbcount')} | {cell(record, 'callret')} | "
                     f"{cell(record, 'blocktrace')} | {note[:200]} |")
    return "\n".join(lines) + "\n"


def counts(records):
    total = len(records)
    skipped = sum(1 for r in records if "skipped" in r)
    attempted = [r for r in records if "build" in r]
    built = [r for r in attempted if r["build"]["built"]]
    ran = [r for r in built if "plain" in r.get("runs", {})]
    result = {"programs": total, "build attempted": len(attempted), "built": len(built),
              "not run (input missing)": skipped, "run plainly": len(ran),
              "pass plainly": sum(1 for r in ran if r["runs"]["plain"]["passed"])}
    for tool in TOOLS:
        result[f"pass under {tool}"] = sum(
            1 for r in ran if r["runs"].get(tool, {}).get("passed"))
    return result


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.path.join(HERE, "programs.txt"))
    parser.add_argument("--hecbench",
                        default=os.path.normpath(os.path.join(REPO, "..", "shared", "data",
                                                              "hecbench", "src")))
    parser.add_argument("--work", default="/work/hecbench-work",
                        help="scratch directory (outside the repository): sources, logs, runs")
    parser.add_argument("--wavekit", default="/work/wk-survey",
                        help="an installed wavekit (cmake --install PREFIX) or a build tree")
    parser.add_argument("--only", nargs="+", metavar="NAME")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60, help="seconds per plain run")
    parser.add_argument("--tool-timeout", type=float, default=120,
                        help="seconds per run under a tool")
    parser.add_argument("--emu-timeout", type=int, default=50,
                        help="WAVEKIT_EMU_TIMEOUT: the emulator's budget per dispatch")
    parser.add_argument("--threads", type=int, default=2, help="WAVEKIT_EMU_THREADS")
    parser.add_argument("--build-timeout", type=float, default=600)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--tools-always", action="store_true",
                        help="run the tools also after a plain run that failed")
    parser.add_argument("--no-ground-truth", dest="ground_truth", action="store_false")
    parser.add_argument("--keep", action="store_true", help="keep ground truth and tool results")
    parser.add_argument("--hipcc", default="hipcc")
    parser.add_argument("--arch", default="gfx90a")
    parser.add_argument("--json", default=None, help="default: WORK/results.json")
    parser.add_argument("--markdown", default=None, help="default: WORK/results.md")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other programs' results already in --json")
    parser.add_argument("--resume", action="store_true",
                        help="run only the programs --json has no result for (implies --merge)")
    options = parser.parse_args()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    options.tools = [t for t in options.tools.split(",") if t]
    options.json = options.json or os.path.join(options.work, "results.json")
    options.markdown = options.markdown or os.path.join(options.work, "results.md")

    programs = read_programs(options.data)
    if options.only:
        unknown = set(options.only) - {p.name for p in programs}
        if unknown:
            sys.exit("not in the data file: " + ", ".join(sorted(unknown)))
        programs = [p for p in programs if p.name in options.only]

    if not options.build_only:
        prefix = os.path.abspath(options.wavekit)
        options.wavekit = os.path.join(prefix, "bin", "wavekit")
        if not os.path.exists(options.wavekit):
            options.wavekit = os.path.join(prefix, "wavekit")
        if not os.path.exists(options.wavekit):
            sys.exit(f"no wavekit under {prefix}")
        options.runtime_dir = runtime_library_directory(prefix)

    os.makedirs(os.path.join(options.work, "logs"), exist_ok=True)
    prepare_sources(options)
    say(f"survey: {len(programs)} programs, {options.jobs} jobs, work in {options.work}")

    earlier = {}
    if (options.merge or options.resume) and os.path.exists(options.json):
        with open(options.json) as f:
            earlier = {r["name"]: r for r in json.load(f)["programs"]}
    if options.resume:
        programs = [p for p in programs if p.name not in earlier]
        say(f"survey: --resume: {len(programs)} programs left")
    records = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=options.jobs) as pool:
        futures = {pool.submit(survey, p, options): p for p in programs}
        done = 0
        for future in concurrent.futures.as_completed(futures):
            program = futures[future]
            try:
                records[program.name] = future.result()
            except Exception as error:  # a survey bug must not lose the other programs
                records[program.name] = {"name": program.name, "error": repr(error)}
                say(f"{program.name}: survey error {error!r}")
            done += 1
            if done % 10 == 0:
                say(f"survey: {done}/{len(programs)} done")
            # Written after every program, so a survey stopped half-way keeps what it did
            # (and --resume goes on from there).
            write_reports(options, earlier, records)
    write_reports(options, earlier, records, final=True)


def write_reports(options, earlier, records, final=False):
    merged = dict(earlier)
    merged.update(records)
    ordered = [merged[p.name] for p in read_programs(options.data) if p.name in merged]
    uname = os.uname()
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{uname.nodename}, {os.cpu_count()} CPUs, {uname.sysname} "
                       f"{uname.release}",
            "wavekit": options.wavekit if not options.build_only else None,
            "timeout": options.timeout, "tool_timeout": options.tool_timeout,
            "emu_timeout": options.emu_timeout, "threads": options.threads}
    document = {"meta": meta, "counts": counts(ordered), "programs": ordered}
    with open(options.json + ".tmp", "w") as f:
        json.dump(document, f, indent=1)
    os.replace(options.json + ".tmp", options.json)
    with open(options.markdown, "w") as f:
        f.write(markdown(ordered, meta))
    if not final:
        return
    for key, value in document["counts"].items():
        say(f"  {key}: {value}")
    say(f"survey: wrote {options.json} and {options.markdown}")


if __name__ == "__main__":
    main()
