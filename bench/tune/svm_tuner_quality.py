"""wavekit's tuners on the SVM task at equal budgets: the HEP SURROGATE (3,000 rows, 70/30
stratified holdout as study_experiment.py), the study's narrowed space, objective 3-fold CV
balanced accuracy with balanced class weights; per tuner and seed the best CV score at half
and the whole budget and the held-out balanced accuracy of the chosen configuration.
Prints CSV. usage: /usr/bin/python3 svm_tuner_quality.py WAVEKIT [seeds=5] [budget=32]
"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
wavekit = sys.argv[1]
seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
budget = int(sys.argv[3]) if len(sys.argv) > 3 else 32
tmp = tempfile.mkdtemp(prefix="tune_svmq_")
raw = os.path.join(tmp, "hep.txt")
subprocess.run(["/usr/bin/python3", os.path.join(here, "make_hep_surrogate.py"), "3000", "11",
                raw], check=True)
by = {}
for l in open(raw):
    by.setdefault(l.split()[0], []).append(l)
rng = random.Random(42)
train, test = [], []
for lab, ls in sorted(by.items()):
    rng.shuffle(ls)
    k = round(0.3 * len(ls))
    test += ls[:k]
    train += ls[k:]
rng.shuffle(train)
tr, te = os.path.join(tmp, "train.txt"), os.path.join(tmp, "test.txt")
open(tr, "w").writelines(train)
open(te, "w").writelines(test)
space = os.path.join(tmp, "space.json")
json.dump({"parameters": [
    {"name": "a", "low": 9e-5, "high": 9e-4}, {"name": "s", "low": 9e-5, "high": 9e-4},
    {"name": "g", "low": 0.96, "high": 1.5}, {"name": "coef0", "low": -1, "high": 1},
    {"name": "C", "low": 0.37, "high": 10}]}, open(space, "w"))
print("tuner,seed,best_cv_at_half,best_cv_at_budget,heldout_balanced_accuracy,heldout_accuracy,"
      "majority_baseline", flush=True)
for seed in range(1, seeds + 1):
    for tuner in ("gp", "rf", "tpe", "random"):
        hist = os.path.join(tmp, "h_%s_%d.jsonl" % (tuner, seed))
        out = subprocess.run([wavekit, "tune", "--svm", tr, "--space", space, "--tuner", tuner,
                              "--seed", str(seed), "--budget", str(budget), "--folds", "3",
                              "--balanced", "--quiet", "--no-chart", "--history", hist,
                              "--test", te], capture_output=True, text=True, check=True).stdout
        vals = [-json.loads(l)["value"] for l in open(hist)]
        half = max(vals[:budget // 2])
        m = re.search(r"accuracy ([0-9.]+), balanced accuracy ([0-9.]+), ROC-AUC \S+, "
                      r"majority-class baseline ([0-9.]+)", out)
        print("%s,%d,%.4f,%.4f,%s,%s,%s" % (tuner, seed, half, max(vals), m.group(2), m.group(1),
                                          m.group(3)), flush=True)
