"""Time per evaluation: the ANL study's SVM path (scikit-learn's SVC with the mixed kernel as
a Python callable built from sklearn.metrics.pairwise, as their dlp.py) against wavekit's
svm-train/svm-predict on the same data, hyperparameters and split, with identical predictions
checked. Data: the labelled HEP SURROGATE (make_hep_surrogate.py), StandardScaler fit on the
training part; 2,000 test rows. Run with /usr/bin/python3 (Debian's sklearn 1.2).

usage: /usr/bin/python3 svm_speed.py WAVEKIT [n,...=1000,5000,10000] [probability_up_to=5000]
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.metrics.pairwise import rbf_kernel, sigmoid_kernel
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from speed_common import A, C, C0, G, N_TEST, S, timed, write  # noqa: E402
from sklearn.svm import SVC

here = os.path.dirname(os.path.abspath(__file__))
wavekit = sys.argv[1]
sizes = [int(v) for v in (sys.argv[2] if len(sys.argv) > 2 else "1000,5000,10000").split(",")]
prob_up_to = int(sys.argv[3]) if len(sys.argv) > 3 else 5000


def mixed(X, Y):
    return (1 - A) * sigmoid_kernel(X, Y, gamma=S, coef0=C0) + A * rbf_kernel(X, Y, gamma=G)


tmp = tempfile.mkdtemp(prefix="tune_speed_")
print("n_train,mode,sklearn_s,wavekit_1t_s,wavekit_2t_s,ratio_1t,ratio_2t,"
      "same_predictions,test_rows")
for n in sizes:
    raw = os.path.join(tmp, "hep_%d.txt" % n)
    subprocess.run([sys.executable, os.path.join(here, "make_hep_surrogate.py"), str(n + N_TEST),
                    "7", raw], check=True)
    X, y = load_svmlight_file(raw, n_features=14)
    X = X.toarray()
    y = y.astype(int)
    Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
    sc = StandardScaler().fit(Xtr)
    Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
    train, test = os.path.join(tmp, "train_%d.txt" % n), os.path.join(tmp, "test_%d.txt" % n)
    write(train, Xtr, ytr)
    write(test, Xte, yte)
    # both read the same rounded text
    Xtr, ytr = load_svmlight_file(train, n_features=14)
    Xte, yte = load_svmlight_file(test, n_features=14)
    Xtr, Xte = Xtr.toarray(), Xte.toarray()
    # one evaluation as the study runs it: a Python process (raw files, scaler inside) against
    # wavekit's two processes on the scaled files; probability estimates on in both
    if n <= prob_up_to:
        raw_tr, raw_te = os.path.join(tmp, "rawtr_%d.txt" % n), os.path.join(tmp, "rawte_%d.txt" % n)
        with open(raw) as f:
            lines = f.readlines()
        open(raw_tr, "w").writelines(lines[:n])
        open(raw_te, "w").writelines(lines[n:])
        sk_s = timed([sys.executable, os.path.join(here, "study_eval.py"), raw_tr, raw_te,
                      raw_te + ".pred"])
        sk_pred = np.loadtxt(raw_te + ".pred").astype(int)
        ours = []
        for threads in (1, 2):
            opts = ["-q", "-t", "5", "-a", repr(A), "-g", repr(S), "-r", repr(C0), "-G", repr(G),
                    "-c", repr(C), "-B", "1", "-b", "1", "-j", str(threads)]
            s = timed([wavekit, "svm-train"] + opts + [train, train + ".pm"])
            s += timed([wavekit, "svm-predict", "-q", "-j", str(threads), test, train + ".pm",
                        test + ".pout"])
            ours.append(s)
        same = int((np.loadtxt(test + ".pout").astype(int) == sk_pred).sum())
        print("%d,%s,%.3f,%.3f,%.3f,%.1f,%.1f,%d,%d" % (n, "study evaluation process", sk_s,
                                                        ours[0], ours[1], sk_s / ours[0],
                                                        sk_s / ours[1], same, len(yte)), flush=True)
    for prob in [False]:
        t = time.perf_counter()
        clf = SVC(C=C, kernel=mixed, class_weight="balanced", probability=prob, random_state=0)
        clf.fit(Xtr, ytr)
        sk_pred = clf.predict(Xte)
        sk_s = time.perf_counter() - t
        ours = []
        for threads in (1, 2):
            model, out = train + ".model", test + ".out"
            opts = ["-q", "-t", "5", "-a", repr(A), "-g", repr(S), "-r", repr(C0), "-G", repr(G),
                    "-c", repr(C), "-B", "1", "-b", "1" if prob else "0", "-j", str(threads)]
            s = timed([wavekit, "svm-train"] + opts + [train, model])
            s += timed([wavekit, "svm-predict", "-q", "-j", str(threads), test, model, out])
            ours.append(s)
        our_pred = np.loadtxt(out).astype(int)
        same = int((our_pred == sk_pred).sum())
        print("%d,%s,%.3f,%.3f,%.3f,%.1f,%.1f,%d,%d" % (n, "fit+predict" + (" -b 1" if prob else ""), sk_s, ours[0], ours[1],
                                                        sk_s / ours[0], sk_s / ours[1], same,
                                                        len(yte)), flush=True)
