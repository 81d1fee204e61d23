"""What a `wavekit` process costs before it does any work: each binary runs each command once
per round, the binaries' order turning round by round so that none always runs first (or
right after another's process freed its memory), over ROUNDS rounds; then per binary and
command the median wall time with its IQR and a distribution-free 95 % interval of the
median, the median CPU time (user + system), and each binary's per-round speed-up over the
first. The commands: the overview (`--help`), a subcommand's `--help`, and `svm-train` and
`svm-predict` on a four-row data set (the fixed cost of each of a tuning evaluation's two
processes: study_eval_rounds.py).

usage: python3 startup_rounds.py ROUNDS WAVEKIT [WAVEKIT...]
"""
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from speed_common import median_interval, quartiles, timed_cpu  # noqa: E402

rounds, binaries = int(sys.argv[1]), sys.argv[2:]

tmp = tempfile.mkdtemp(prefix="tune_startup_")
data, model, out = (os.path.join(tmp, name) for name in ("tiny.txt", "tiny.model", "tiny.out"))
with open(data, "w") as f:
    f.write("1 1:0.5 2:1\n-1 1:-0.5 2:-1\n1 1:1 2:0.25\n-1 1:-1 2:-0.25\n")
subprocess.run([binaries[0], "svm-train", "-q", data, model], check=True)
commands = {
    "--help": ["--help"],
    "svm-predict --help": ["svm-predict", "--help"],
    "svm-train (4 rows)": ["svm-train", "-q", data, model + ".own"],
    "svm-predict (4 rows)": ["svm-predict", "-q", data, model, out],
}


wall = {(b, c): [] for b in binaries for c in commands}
cpu = {(b, c): [] for b in binaries for c in commands}
load = [os.getloadavg()[0]]
for k in range(rounds):
    order = binaries[k % len(binaries):] + binaries[:k % len(binaries)]
    for c, args in commands.items():
        for b in order:
            w, u = (seconds * 1e3 for seconds in timed_cpu([b] + args))  # in ms
            wall[b, c].append(w)
            cpu[b, c].append(u)
    load.append(os.getloadavg()[0])

print("%d rounds, load average %.2f-%.2f" % (rounds, min(load), max(load)))
for c in commands:
    print(c)
    for b in binaries:
        v = wall[b, c]
        print("  %s: wall median %.2f ms (IQR %.2f-%.2f, 95%% interval of the median %.2f-%.2f), "
              "CPU median %.2f ms" % ((b, statistics.median(v)) + quartiles(v) +
                                     median_interval(v) + (statistics.median(cpu[b, c]),)))
        if b != binaries[0]:
            up = [x / y for x, y in zip(wall[binaries[0], c], v)]
            print("    speed-up over %s, per round: median %.2fx (IQR %.2f-%.2f, 95%% interval "
                  "%.2f-%.2f)" % ((binaries[0], statistics.median(up)) + quartiles(up) +
                                  median_interval(up)))
