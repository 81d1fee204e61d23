"""Median and IQR of best-so-far at 64 and 128 evaluations per function and tuner, from the
CSVs of tune_tuner_quality and tuner_quality.py. usage: python3 summarise_quality.py CSV...
"""
import csv
import statistics
import sys

rows = []
for path in sys.argv[1:]:
    rows += list(csv.DictReader(open(path)))
known = {"branin": 0.397887, "hartmann6": -3.32237}


def q(v, p):
    v = sorted(v)
    k = (len(v) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


print("| function (optimum) | tuner | seeds | median best @64 | IQR @64 | median best @128 | IQR @128 |")
print("|---|---|---|---|---|---|---|")
for fn in ("branin", "hartmann6"):
    tuners = sorted({r["tuner"] for r in rows if r["function"] == fn},
                    key=lambda t: statistics.median(float(r["best_at_128"]) for r in rows
                                                    if r["function"] == fn and r["tuner"] == t))
    for t in tuners:
        a = [float(r["best_at_64"]) for r in rows if r["function"] == fn and r["tuner"] == t]
        b = [float(r["best_at_128"]) for r in rows if r["function"] == fn and r["tuner"] == t]
        print("| %s (%g) | %s | %d | %.4f | %.4f–%.4f | %.4f | %.4f–%.4f |" %
              (fn, known[fn], t, len(a), statistics.median(a), q(a, .25), q(a, .75),
               statistics.median(b), q(b, .25), q(b, .75)))
