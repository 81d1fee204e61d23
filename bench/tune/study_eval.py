"""One evaluation as the ANL study's pipeline runs it (a fresh Python process per evaluation,
as libEnsemble launches their dlp.py): import sklearn, read the data, StandardScaler fit on the
training part, SVC(C, kernel=mixed callable, probability=True, class_weight="balanced"),
predict the test part, print the accuracy. Hyperparameters as svm_speed.py's.

usage: /usr/bin/python3 study_eval.py TRAIN_RAW.txt TEST_RAW.txt OUT_PREDICTIONS
"""
import sys

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.metrics.pairwise import rbf_kernel, sigmoid_kernel
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

A, S, G, C0, C = 1e-4, 1e-4, 1.0, 0.0, 1.0


def mixed(X, Y):
    return (1 - A) * sigmoid_kernel(X, Y, gamma=S, coef0=C0) + A * rbf_kernel(X, Y, gamma=G)


Xtr, ytr = load_svmlight_file(sys.argv[1], n_features=14)
Xte, yte = load_svmlight_file(sys.argv[2], n_features=14)
sc = StandardScaler().fit(Xtr.toarray())
clf = SVC(C=C, kernel=mixed, probability=True, class_weight="balanced", random_state=0)
clf.fit(sc.transform(Xtr.toarray()), ytr)
pred = clf.predict(sc.transform(Xte.toarray()))
np.savetxt(sys.argv[3], pred, fmt="%d")
print("Accuracy: %.3f" % (pred == yte).mean())
