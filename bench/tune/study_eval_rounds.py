"""One study evaluation at one size, timed in interleaved rounds: per round the ANL study's
pipeline (study_eval.py: a fresh Python process, sklearn's callable-kernel SVC with
probability=True) once, then each wavekit binary's `svm-train -b 1` + `svm-predict` at 1 and 2
threads, with the load average before and after; then medians of the times and of the
per-round ratios, over all rounds and over those with load below 2. For a machine shared with
other work, where svm_speed.py's single pass depends on the moment: the rounds interleave the
binaries, so before and after meet the same load. Data, split, scaling and hyperparameters as
svm_speed.py's (the labelled HEP SURROGATE). Run with /usr/bin/python3 (Debian's sklearn 1.2).

Wall time is what the ratios are; each process's CPU time (user + system, from the child's
rusage) is printed beside it, less dependent on what else runs. Per binary it also times a
process that does nothing (`svm-predict --help`): the start-up
that each of an evaluation's two processes pays before any SVM work. Summaries give medians
with the interquartile range and a distribution-free 95 % interval of the median ratio (order
statistics), and, with several binaries, each one's per-round speed-up over the first.

usage: /usr/bin/python3 study_eval_rounds.py ROUNDS N_TRAIN WAVEKIT [WAVEKIT...]
"""
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from speed_common import (A, C, C0, G, N_TEST, S, median_interval, quartiles, timed,  # noqa: E402
                          timed_cpu, write)

here = os.path.dirname(os.path.abspath(__file__))
rounds, n, binaries = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]


tmp = tempfile.mkdtemp(prefix="tune_rounds_")
raw = os.path.join(tmp, "hep.txt")
subprocess.run([sys.executable, os.path.join(here, "make_hep_surrogate.py"), str(n + N_TEST), "7",
                raw], check=True)
X, y = load_svmlight_file(raw, n_features=14)
X, y = X.toarray(), y.astype(int)
sc = StandardScaler().fit(X[:n])
train, test = os.path.join(tmp, "train.txt"), os.path.join(tmp, "test.txt")
write(train, sc.transform(X[:n]), y[:n])
write(test, sc.transform(X[n:]), y[n:])
lines = open(raw).readlines()
raw_tr, raw_te = os.path.join(tmp, "raw_train.txt"), os.path.join(tmp, "raw_test.txt")
open(raw_tr, "w").writelines(lines[:n])
open(raw_te, "w").writelines(lines[n:])

results = []
for k in range(rounds):
    r = {"load": os.getloadavg()[0]}
    r["sklearn"], r["sklearn", "cpu"] = timed_cpu(
        [sys.executable, os.path.join(here, "study_eval.py"), raw_tr, raw_te, raw_te + ".pred"])
    theirs = np.loadtxt(raw_te + ".pred").astype(int)
    for b in binaries:
        for threads in (1, 2):
            opts = ["-q", "-t", "5", "-a", repr(A), "-g", repr(S), "-r", repr(C0), "-G", repr(G),
                    "-c", repr(C), "-B", "1", "-b", "1", "-j", str(threads)]
            model, out = train + ".model", test + ".out"
            s, c = timed_cpu([b, "svm-train"] + opts + [train, model])
            s2, c2 = timed_cpu([b, "svm-predict", "-q", "-j", str(threads), test, model, out])
            r[b, threads] = s + s2
            r[b, threads, "cpu"] = c + c2
            r[b, threads, "same"] = int((np.loadtxt(out).astype(int) == theirs).sum())
        r[b, "start"] = timed([b, "svm-predict", "--help"])
    r["load_after"] = os.getloadavg()[0]
    results.append(r)
    print("round %d, load %.2f-%.2f: sklearn %.3f s; " % (k + 1, r["load"], r["load_after"],
                                                          r["sklearn"]) +
          "; ".join("%s %d t %.3f s %.1fx (%d/%d same)" %
                    (b, t, r[b, t], r["sklearn"] / r[b, t], r[b, t, "same"], N_TEST)
                    for b in binaries for t in (1, 2)), flush=True)


def summary(rows, what):
    if not rows:
        print("%s: no rounds" % what)
        return
    sk = [x["sklearn"] for x in rows]
    print("%s: %d rounds, load %.2f-%.2f, sklearn median %.3f s (IQR %.3f-%.3f)" %
          ((what, len(rows), min(x["load"] for x in rows), max(x["load_after"] for x in rows),
            statistics.median(sk)) + quartiles(sk)))
    for b in binaries:
        st = [x[b, "start"] for x in rows]
        print("  %s: start-up of a process that does nothing, median %.4f s" %
              (b, statistics.median(st)))
        for t in (1, 2):
            ratios = [x["sklearn"] / x[b, t] for x in rows]
            times = [x[b, t] for x in rows]
            print("  %s %d t: median %.3f s (IQR %.3f-%.3f), ratio median %.1fx (IQR %.1f-%.1f, "
                  "95%% interval of the median %.1f-%.1f, range %.1f-%.1f), same predictions "
                  "%d-%d of %d" % ((b, t, statistics.median(times)) + quartiles(times) +
                                   (statistics.median(ratios),) + quartiles(ratios) +
                                   median_interval(ratios) + (min(ratios), max(ratios),
                                   min(x[b, t, "same"] for x in rows),
                                   max(x[b, t, "same"] for x in rows), N_TEST)))
            cpu = [x["sklearn", "cpu"] / x[b, t, "cpu"] for x in rows]
            print("    CPU time (user + system): median %.3f s against sklearn's %.3f s, ratio "
                  "median %.1fx (IQR %.1f-%.1f)" %
                  ((statistics.median(x[b, t, "cpu"] for x in rows),
                    statistics.median(x["sklearn", "cpu"] for x in rows),
                    statistics.median(cpu)) + quartiles(cpu)))
            if b != binaries[0]:
                up = [x[binaries[0], t] / x[b, t] for x in rows]
                print("    speed-up over %s, per round: median %.2fx (IQR %.2f-%.2f)" %
                      ((binaries[0], statistics.median(up)) + quartiles(up)))


summary(results, "all rounds")
summary([x for x in results if max(x["load"], x["load_after"]) < 2], "rounds with load < 2")
