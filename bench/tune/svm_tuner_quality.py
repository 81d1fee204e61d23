"""wavekit's tuners on the SVM task at equal budgets: the HEP SURROGATE (3,000 rows, 70/30
stratified holdout as study_experiment.py), the study's narrowed space, objective 3-fold CV
balanced accuracy with balanced class weights; per tuner and seed the best CV score at half
and the whole budget and the held-out balanced accuracy of the chosen configuration.
Prints CSV. usage: /usr/bin/python3 svm_tuner_quality.py WAVEKIT [seeds=5] [budget=32]
                      [tuners=gp,rf,tpe,random]
The comparison tuners skopt (the study's: scikit-optimize's Optimizer, base_estimator="RF",
acq_func="gp_hedge", acq_optimizer="sampling", n_initial_points=10) and optuna (Optuna's
TPESampler) are named in tuners too; they need a python with those packages (the venv of
run_tuner_quality.sh). They ask and tell in Python and every evaluation is wavekit's own
(`wavekit tune --svm` over a space pinned to the point asked: each interval [x, x(1+1e-12)]),
so the objective, folds and held-out scoring are the same as for wavekit's tuners.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from hep_holdout import stratified_holdout

wavekit = sys.argv[1]
seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
budget = int(sys.argv[3]) if len(sys.argv) > 3 else 32
tuners = (sys.argv[4] if len(sys.argv) > 4 else "gp,rf,tpe,random").split(",")
tmp = tempfile.mkdtemp(prefix="tune_svmq_")
tr, te = stratified_holdout(3000, tmp)
space = os.path.join(tmp, "space.json")
SPACE = [("a", 9e-5, 9e-4), ("s", 9e-5, 9e-4), ("g", 0.96, 1.5), ("coef0", -1, 1),
         ("C", 0.37, 10)]
json.dump({"parameters": [{"name": n, "low": lo, "high": hi} for n, lo, hi in SPACE]},
          open(space, "w"))
REPORT = (r"accuracy ([0-9.]+), balanced accuracy ([0-9.]+), ROC-AUC \S+, "
          r"majority-class baseline ([0-9.]+)")


def wavekit_at(x, test=False):
    """wavekit's CV balanced accuracy at x (and its held-out report with test=True)."""
    pin = os.path.join(tmp, "pin.json")
    hist = os.path.join(tmp, "pin.jsonl")
    json.dump({"parameters": [{"name": n, "low": v, "high": v + abs(v) * 1e-12 + 1e-300}
                              for (n, _, _), v in zip(SPACE, x)]}, open(pin, "w"))
    if os.path.exists(hist):
        os.remove(hist)
    out = subprocess.run([wavekit, "tune", "--svm", tr, "--space", pin, "--tuner", "random",
                          "--budget", "1", "--folds", "3", "--balanced", "--quiet",
                          "--no-chart", "--history", hist] + (["--test", te] if test else []),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(open(hist).readline())["score"], out


def run_external(tuner, seed):
    """skopt or Optuna asks, wavekit evaluates; returns the scores and the chosen point."""
    scores, points = [], []
    if tuner == "skopt":
        from skopt import Optimizer
        opt = Optimizer([(lo, hi) for _, lo, hi in SPACE], base_estimator="RF",
                        acq_func="gp_hedge", acq_optimizer="sampling", n_initial_points=10,
                        random_state=seed)
        for _ in range(budget):
            x = [float(v) for v in opt.ask()]
            score, _ = wavekit_at(x)
            opt.tell(x, -score)
            scores.append(score)
            points.append(x)
    else:
        import optuna
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(
            seed=seed, constant_liar=True))
        for _ in range(budget):
            t = study.ask()
            x = [t.suggest_float(n, lo, hi) for n, lo, hi in SPACE]
            score, _ = wavekit_at(x)
            study.tell(t, score)
            scores.append(score)
            points.append(x)
    best = max(range(budget), key=lambda i: scores[i])  # the first of equal scores
    _, out = wavekit_at(points[best], test=True)
    return scores, out


print("tuner,seed,best_cv_at_half,best_cv_at_budget,heldout_balanced_accuracy,heldout_accuracy,"
      "majority_baseline", flush=True)
for seed in range(1, seeds + 1):
    for tuner in tuners:
        if tuner in ("skopt", "optuna"):
            vals, out = run_external(tuner, seed)
            m = re.search(REPORT, out)
            print("%s,%d,%.4f,%.4f,%s,%s,%s" % (tuner, seed, max(vals[:budget // 2]), max(vals),
                                              m.group(2), m.group(1), m.group(3)), flush=True)
            continue
        hist = os.path.join(tmp, "h_%s_%d.jsonl" % (tuner, seed))
        out = subprocess.run([wavekit, "tune", "--svm", tr, "--space", space, "--tuner", tuner,
                              "--seed", str(seed), "--budget", str(budget), "--folds", "3",
                              "--balanced", "--quiet", "--no-chart", "--history", hist,
                              "--test", te], capture_output=True, text=True, check=True).stdout
        vals = [-json.loads(l)["value"] for l in open(hist)]
        half = max(vals[:budget // 2])
        m = re.search(REPORT, out)
        print("%s,%d,%.4f,%.4f,%s,%s,%s" % (tuner, seed, half, max(vals), m.group(2), m.group(1),
                                          m.group(3)), flush=True)
