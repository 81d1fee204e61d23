"""What the tune speed benchmarks (svm_speed.py, study_eval_rounds.py, startup_rounds.py) share:
the study's HEP default point, the test-set size, LIBSVM-format writing, timed process runs and
the statistics they report. Standard library only."""
import math
import resource
import statistics
import subprocess
import time

# the study's HEP default point (run_ytopt.py): a, s, g, coef0, C
A, S, G, C0, C = 1e-4, 1e-4, 1.0, 0.0, 1.0
N_TEST = 2000


def write(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            f.write("%d %s\n" % (label, " ".join("%d:%.17g" % (k + 1, v)
                                                 for k, v in enumerate(row) if v != 0)))


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def timed_cpu(cmd):
    """(wall seconds, CPU seconds: the child's user + system time) of one run of cmd."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def quartiles(v):
    q = statistics.quantiles(v, n=4, method="inclusive") if len(v) > 1 else [v[0]] * 3
    return q[0], q[2]


def median_interval(v):
    """A distribution-free ~95 % interval of the median: order statistics n/2 -+ 0.98 sqrt(n)."""
    v, n = sorted(v), len(v)
    lo = max(int(math.floor(n / 2 - 0.98 * math.sqrt(n))), 0)
    hi = min(int(math.ceil(n / 2 + 0.98 * math.sqrt(n))), n - 1)
    return v[lo], v[hi]
