"""The ANL study's pipeline end to end against `wavekit tune`, on the same task, budget and
number of workers: time to the same held-out score.

The study's pipeline (ytopt-libe/svms/hep, rebuilt from its code; ytopt itself is not on PyPI):
  libEnsemble's manager, one persistent generator worker running the tuner's ask/tell
  (alloc only_persistent_gens, async_return=True) and WORKERS simulation workers, each
  evaluation a fresh Python process (as libEnsemble runs their dlp.py through plopper) that
  imports sklearn, reads the data and fits SVC(C, kernel=<Python callable: dlp.py's mixed
  kernel (1-a)tanh(s<x,y>+c0) + a exp(-g|x-y|^2) in NumPy>, probability=True,
  class_weight="balanced"). The tuner is ytopt's configuration of scikit-optimize:
  Optimizer(base_estimator="RF", acq_func="gp_hedge", acq_optimizer="sampling",
  n_initial_points=10, kappa 1.96, seed 2345), the first batch ask(WORKERS, "cl_max"), then on
  each return tell() and ask() one point (as tuner_quality.py's skopt).
`wavekit tune --svm ... --workers WORKERS` on the same training file and space.

The task (the SVM task of docs/benchmarks/tune.md section 3): the HEP SURROGATE
(make_hep_surrogate.py N 11), 70/30 stratified holdout (Random(42), as svm_tuner_quality.py),
the study's narrowed HEP space; objective 3-fold stratified CV balanced accuracy on the training
part, the scaler fit inside each fold, the SAME folds on both sides (sklearn's
StratifiedKFold(3, shuffle=True, random_state=0), given to wavekit as --groups). After the runs
(untimed) every configuration that was the best so far is trained on the whole training part
(sklearn, no Platt) and scored on the held-out part, so each run gets a held-out balanced
accuracy against time and evaluations. Completion times: libEnsemble's from the simulation's
own clock, wavekit's from when its --history line appears (polled every 20 ms).

usage (in a venv with libensemble and scikit-optimize, over Debian's sklearn;
bench/tune/run_libe_anchor.sh makes it):
  python libe_anchor.py WAVEKIT OUT_DIR [n=3000] [budget=32] [workers=2] [libe_seeds=2345]
                        [wavekit_runs=gp:1]
  wavekit_runs: TUNER:SEED,... (e.g. gp:1,rf:1). Writes OUT_DIR/runs.jsonl (every evaluation,
  time of completion, CV score, held-out score of the incumbent) and prints the table.
  python libe_anchor.py report WAVEKIT OUT_DIR n budget workers   (the tables again)
internal: python libe_anchor.py eval TRAIN a s g coef0 C   (one evaluation, a fresh process)
"""
import json
import os
import subprocess
import sys
import threading
import time

from hep_holdout import stratified_holdout



class _Folds:
    """StratifiedKFold(3, shuffle=True, random_state=0), imported when first used."""
    def split(self, X, y):
        from sklearn.model_selection import StratifiedKFold
        return StratifiedKFold(3, shuffle=True, random_state=0).split(X, y)


FOLDS = _Folds()
SPACE = [("a", 9e-5, 9e-4), ("s", 9e-5, 9e-4), ("g", 0.96, 1.5), ("coef0", -1.0, 1.0),
         ("C", 0.37, 10.0)]


def mixed_kernel(a, s, g, c0):
    """dlp.py's CustomKernel.mixed_kernel, in NumPy."""
    import numpy as np

    def k(x, y):
        dot = np.dot(x, y.T)
        d2 = np.abs((x ** 2).sum(1).reshape(-1, 1) + (y ** 2).sum(1) - 2 * dot)
        return (1 - a) * np.tanh(s * dot + c0) + a * np.exp(-g * d2)
    return k


def evaluate(train, a, s, g, c0, C):
    """One evaluation as the study runs it: a fresh process, probability=True."""
    from sklearn.datasets import load_svmlight_file
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    X, y = load_svmlight_file(train, n_features=14)
    X = X.toarray()
    scores = []
    for tr, te in FOLDS.split(X, y):
        sc = StandardScaler().fit(X[tr])
        clf = SVC(C=C, kernel=mixed_kernel(a, s, g, c0), probability=True,
                  class_weight="balanced")
        clf.fit(sc.transform(X[tr]), y[tr])
        scores.append(balanced_accuracy_score(y[te], clf.predict(sc.transform(X[te]))))
    print("Balanced accuracy: %.9f" % (sum(scores) / len(scores)))


def heldout(train, test, p):
    """Held-out balanced accuracy of configuration p trained on the whole training part."""
    from sklearn.datasets import load_svmlight_file
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    Xtr, ytr = load_svmlight_file(train, n_features=14)
    Xte, yte = load_svmlight_file(test, n_features=14)
    sc = StandardScaler().fit(Xtr.toarray())
    clf = SVC(C=p["C"], kernel=mixed_kernel(p["a"], p["s"], p["g"], p["coef0"]),
              class_weight="balanced").fit(sc.transform(Xtr.toarray()), ytr)
    return balanced_accuracy_score(yte, clf.predict(sc.transform(Xte.toarray())))


# ---- the study's pipeline: libEnsemble + skopt ---------------------------------------------

def sim_f(H, persis_info, sim_specs, libE_info):
    import numpy as np
    p = [float(np.squeeze(H[name])) for name, _, _ in SPACE]
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "eval",
                          sim_specs["user"]["train"]] + ["%.17g" % v for v in p],
                         capture_output=True, text=True, check=True).stdout
    score = float(out.split("Balanced accuracy:")[1].split()[0])
    H_o = np.zeros(1, dtype=sim_specs["out"])
    H_o["objective"] = -score
    H_o["end_time"] = time.time()
    return H_o, persis_info


def gen_f(H, persis_info, gen_specs, libE_info):
    """ytopt's persistent_ytopt with skopt's Optimizer as ytopt configures it."""
    import numpy as np
    from libensemble.message_numbers import (EVAL_GEN_TAG, FINISHED_PERSISTENT_GEN_TAG,
                                             PERSIS_STOP, STOP_TAG)
    from libensemble.tools.persistent_support import PersistentSupport
    from skopt import Optimizer
    user = gen_specs["user"]
    ps = PersistentSupport(libE_info, EVAL_GEN_TAG)
    opt = Optimizer([(lo, hi) for _, lo, hi in SPACE], base_estimator="RF",
                    acq_func="gp_hedge", acq_optimizer="sampling", n_initial_points=10,
                    acq_func_kwargs={"kappa": 1.96}, random_state=user["seed"])
    points = opt.ask(n_points=user["workers"], strategy="cl_max")
    tag = None
    while tag not in (STOP_TAG, PERSIS_STOP):
        H_o = np.zeros(len(points), dtype=gen_specs["out"])
        for i, x in enumerate(points):
            for (name, _, _), v in zip(SPACE, x):
                H_o[i][name] = v
        tag, _, calc_in = ps.send_recv(H_o)
        if calc_in is None or tag in (STOP_TAG, PERSIS_STOP):
            break
        for entry in calc_in:
            opt.tell([float(entry[name]) for name, _, _ in SPACE], float(entry["objective"]))
        points = [opt.ask() for _ in range(len(calc_in))]
    return None, persis_info, FINISHED_PERSISTENT_GEN_TAG


def run_libe(train, budget, workers, seed, workdir):
    import numpy as np
    from libensemble.alloc_funcs.start_only_persistent import only_persistent_gens
    from libensemble.libE import libE
    from libensemble.tools import add_unique_random_streams
    names = [name for name, _, _ in SPACE]
    sim_specs = {"sim_f": sim_f, "in": names, "out": [("objective", float), ("end_time", float)],
                 "user": {"train": train}}
    gen_specs = {"gen_f": gen_f, "out": [(n, float) for n in names],
                 "persis_in": names + ["objective"],
                 "user": {"seed": seed, "workers": workers}}
    libE_specs = {"nworkers": workers + 1, "comms": "local",
                  "ensemble_dir_path": os.path.join(workdir, "ensemble_%d" % seed),
                  "save_every_k_sims": 0, "disable_log_files": True}
    os.makedirs(workdir, exist_ok=True)
    cwd = os.getcwd()
    os.chdir(workdir)  # libEnsemble writes its logs into the working directory
    t0 = time.time()
    H, _, flag = libE(sim_specs, gen_specs, {"sim_max": budget}, add_unique_random_streams(
        {}, workers + 2), alloc_specs={"alloc_f": only_persistent_gens,
                                       "user": {"async_return": True}}, libE_specs=libE_specs)
    wall = time.time() - t0
    os.chdir(cwd)
    done = H[H["sim_ended"]]
    done = done[np.argsort(done["end_time"])][:budget]
    evals = [{"t": float(r["end_time"] - t0), "score": -float(r["objective"]),
              "params": {n: float(r[n]) for n in names}} for r in done]
    return wall, evals


# ---- wavekit tune --------------------------------------------------------------------------

def run_wavekit(wavekit, train, test, space, budget, workers, tuner, seed, workdir):
    hist = os.path.join(workdir, "wavekit_%s_%d.jsonl" % (tuner, seed))
    if os.path.exists(hist):
        os.remove(hist)
    stamps, stop = [], threading.Event()

    def poll():  # the completion time of each evaluation: when its history line appears
        seen = 0
        while not stop.is_set():
            if os.path.exists(hist):
                n = sum(1 for _ in open(hist))
                stamps.extend([time.time()] * (n - seen))
                seen = n
            time.sleep(0.02)
    th = threading.Thread(target=poll)
    th.start()
    t0 = time.time()
    out = subprocess.run([wavekit, "tune", "--svm", train, "--space", space, "--tuner", tuner,
                          "--seed", str(seed), "--budget", str(budget), "--workers",
                          str(workers), "--folds", "3", "--groups",
                          os.path.join(workdir, "folds.txt"), "--balanced", "--quiet",
                          "--no-chart", "--history", hist, "--test", test],
                         capture_output=True, text=True, check=True).stdout
    wall = time.time() - t0
    time.sleep(0.1)
    stop.set()
    th.join()
    lines = [json.loads(l) for l in open(hist)]
    n = len(lines)
    stamps = (stamps + [t0 + wall] * n)[:n]
    evals = [{"t": s - t0, "score": l["score"], "params": l["numbers"]}
             for s, l in zip(stamps, lines)]
    return wall, evals, out.strip().splitlines()[-1]


# ---- driver --------------------------------------------------------------------------------

def make_data(n, tmp):
    tr, te = stratified_holdout(n, tmp)
    space = os.path.join(tmp, "space.json")
    json.dump({"parameters": [{"name": nm, "low": lo, "high": hi} for nm, lo, hi in SPACE]},
              open(space, "w"))
    # the study side's folds, given to wavekit as groups: both sides score the same folds
    from sklearn.datasets import load_svmlight_file
    from sklearn.model_selection import StratifiedKFold
    X, y = load_svmlight_file(tr, n_features=14)
    fold = [0] * len(y)
    for k, (_, te_idx) in enumerate(FOLDS.split(X.toarray(), y)):
        for i in te_idx:
            fold[i] = k
    open(os.path.join(tmp, "folds.txt"), "w").writelines("%d\n" % f for f in fold)
    return tr, te, space


def score_incumbents(evals, train, test, cache):
    best = None
    for e in evals:
        if best is None or e["score"] > best["score"]:
            best = e
        key = json.dumps(best["params"], sort_keys=True)
        if key not in cache:
            cache[key] = heldout(train, test, best["params"])
        e["best_cv"] = best["score"]
        e["heldout_of_best"] = cache[key]


def main():
    if sys.argv[1] == "eval":
        evaluate(sys.argv[2], *map(float, sys.argv[3:8]))
        return
    if sys.argv[1] == "report":  # report WAVEKIT OUT_DIR n budget workers: the table again
        report(sys.argv[2], sys.argv[3], *map(int, sys.argv[4:7]))
        return
    wavekit, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    budget = int(sys.argv[4]) if len(sys.argv) > 4 else 32
    workers = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    libe_seeds = [int(s) for s in (sys.argv[6] if len(sys.argv) > 6 else "2345").split(",")]
    wk_runs = [r.split(":") for r in (sys.argv[7] if len(sys.argv) > 7 else "gp:1").split(",")]
    os.makedirs(out, exist_ok=True)
    train, test, space = make_data(n, out)
    runs = []
    plan = []  # the study's runs and wavekit's alternate, so that both see the same load
    for i in range(max(len(libe_seeds), len(wk_runs))):
        plan += [("libe", libe_seeds[i])] if i < len(libe_seeds) else []
        plan += [("wavekit", wk_runs[i])] if i < len(wk_runs) else []
    for kind, what in plan:
        if kind == "libe":
            wall, evals = run_libe(train, budget, workers, what, out)
            runs.append({"system": "libEnsemble+skopt+sklearn", "tuner": "skopt", "seed": what,
                         "wall": wall, "evals": evals})
            print("libE seed %d: %.1f s" % (what, wall), file=sys.stderr, flush=True)
        else:
            tuner, seed = what
            wall, evals, summary = run_wavekit(wavekit, train, test, space, budget, workers,
                                              tuner, int(seed), out)
            runs.append({"system": "wavekit tune", "tuner": tuner, "seed": int(seed),
                         "wall": wall, "evals": evals, "report": summary})
            print("wavekit %s seed %s: %.1f s" % (tuner, seed, wall), file=sys.stderr,
                  flush=True)
    cache = {}
    for r in runs:
        score_incumbents(r["evals"], train, test, cache)
    with open(os.path.join(out, "runs.jsonl"), "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")
    report(wavekit, out, n, budget, workers)


def wavekit_cv(wavekit, train, p, tmp):
    """wavekit's CV balanced accuracy at p on the shared folds (a space pinned to
    [x, x(1+1e-12)])."""
    pin, hist = os.path.join(tmp, "pin.json"), os.path.join(tmp, "pin.jsonl")
    json.dump({"parameters": [{"name": k, "low": v, "high": v + abs(v) * 1e-12 + 1e-300}
                              for k, v in p.items()]}, open(pin, "w"))
    if os.path.exists(hist):
        os.remove(hist)
    subprocess.run([wavekit, "tune", "--svm", train, "--space", pin, "--tuner", "random",
                    "--budget", "1", "--folds", "3", "--groups", os.path.join(tmp, "folds.txt"),
                    "--balanced", "--quiet", "--no-chart", "--history", hist],
                   capture_output=True, check=True)
    return json.loads(open(hist).readline())["score"]


def sklearn_cv(train, p):
    """sklearn's CV at p on the shared folds, without Platt."""
    from sklearn.datasets import load_svmlight_file
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    X, y = load_svmlight_file(train, n_features=14)
    X = X.toarray()
    scores = []
    for tr, te in FOLDS.split(X, y):
        sc = StandardScaler().fit(X[tr])
        clf = SVC(C=p["C"], kernel=mixed_kernel(p["a"], p["s"], p["g"], p["coef0"]),
                  class_weight="balanced").fit(sc.transform(X[tr]), y[tr])
        scores.append(balanced_accuracy_score(y[te], clf.predict(sc.transform(X[te]))))
    return sum(scores) / len(scores)


def report(wavekit, out, n, budget, workers):
    """The table from OUT_DIR/runs.jsonl; also each choice under the other side's folds."""
    train, test = os.path.join(out, "train.txt"), os.path.join(out, "test.txt")
    runs = [json.loads(l) for l in open(os.path.join(out, "runs.jsonl"))]
    finals = {r["system"]: [] for r in runs}
    for r in runs:
        finals[r["system"]].append(r["evals"][-1]["heldout_of_best"])
    # targets: the lowest final held-out score of all runs (every run reaches it) and the
    # lowest of each system's own runs
    targets = [min(min(v) for v in finals.values())] + sorted(
        {min(v) for v in finals.values()} - {min(min(v) for v in finals.values())})
    print("n %d (train %d), budget %d, %d workers" % (n, sum(1 for _ in open(train)), budget,
                                                      workers))
    print("| system | tuner (seed) | wall (s) | evaluations/s | best CV @%d | best CV @%d | "
          "held-out bal. acc. of the choice | %s |" % (budget // 2, budget, " | ".join(
              "time (s) / evaluations to held-out >= %.4f" % t for t in targets)))
    print("|---|---|---|---|---|---|---|%s" % ("---|" * len(targets)))
    for r in runs:
        ev = r["evals"]
        cells = []
        for t in targets:
            hit = [i for i, e in enumerate(ev) if e["heldout_of_best"] >= t - 1e-12]
            cells.append("%.1f / %d" % (ev[hit[0]]["t"], hit[0] + 1) if hit else
                         "not in %d" % len(ev))
        print("| %s | %s (%d) | %.1f | %.2f | %.4f | %.4f | %.4f | %s |" % (
            r["system"], r["tuner"], r["seed"], r["wall"], len(ev) / r["wall"],
            ev[budget // 2 - 1]["best_cv"], ev[-1]["best_cv"], ev[-1]["heldout_of_best"],
            " | ".join(cells)))
    print("\nEach run's choice, its CV score on the shared folds by sklearn and by wavekit "
          "(untimed; equal when both sides optimise the same objective):")
    print("| system | tuner (seed) | CV by sklearn | CV by wavekit | held-out |")
    print("|---|---|---|---|---|")
    for r in runs:
        best = max(r["evals"], key=lambda e: e["score"])
        print("| %s | %s (%d) | %.4f | %.4f | %.4f |" % (
            r["system"], r["tuner"], r["seed"], sklearn_cv(train, best["params"]),
            wavekit_cv(wavekit, train, best["params"], out), r["evals"][-1]["heldout_of_best"]))
    for r in runs:
        if "report" in r:
            print("wavekit's own report (%s %d): %s" % (r["tuner"], r["seed"], r["report"]))

if __name__ == "__main__":
    main()
