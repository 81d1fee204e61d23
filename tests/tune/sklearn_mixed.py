"""The ANL study's SVM path as a test oracle: sklearn's SVC with a Python callable mixed kernel
(sklearn builds the Gram matrix in NumPy and hands it to its libsvm as precomputed).

usage: /usr/bin/python3 sklearn_mixed.py TRAIN_FILE TEST_FILE a s c0 g C
Prints one line per test row: the predicted label and the decision value (binary tasks).
"""
import sys

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.svm import SVC

train, test = sys.argv[1], sys.argv[2]
a, s, c0, g, C = (float(v) for v in sys.argv[3:8])
Xtr, ytr = load_svmlight_file(train)
Xte, yte = load_svmlight_file(test, n_features=Xtr.shape[1])
Xtr, Xte = Xtr.toarray(), Xte.toarray()


def mixed(X, Y):
    dot = X @ Y.T
    d2 = (X * X).sum(1)[:, None] + (Y * Y).sum(1)[None, :] - 2 * dot
    return (1 - a) * np.tanh(s * dot + c0) + a * np.exp(-g * d2)


clf = SVC(C=C, kernel=mixed)
clf.fit(Xtr, ytr)
pred = clf.predict(Xte)
dec = clf.decision_function(Xte)
print("classes", " ".join("%d" % c for c in clf.classes_))
for p, d in zip(pred, dec):
    print("%d %.17g" % (p, d))
