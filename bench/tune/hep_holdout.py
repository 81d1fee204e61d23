"""The HEP surrogate's 70/30 stratified holdout, as the SVM-task benchmarks use it: n rows from
make_hep_surrogate.py (its seed 11), each class shuffled and split with random.Random(42), the
training rows shuffled again. Writes DIR/hep.txt, DIR/train.txt and DIR/test.txt (LIBSVM
format) and returns the train and test paths."""
import os
import random
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def stratified_holdout(n, directory, test_share=0.3, seed=42):
    raw = os.path.join(directory, "hep.txt")
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_hep_surrogate.py"), str(n),
                    "11", raw], check=True)
    by_label = {}
    for line in open(raw):
        by_label.setdefault(line.split()[0], []).append(line)
    rng = random.Random(seed)
    train, test = [], []
    for _, lines in sorted(by_label.items()):
        rng.shuffle(lines)
        k = round(test_share * len(lines))
        test += lines[:k]
        train += lines[k:]
    rng.shuffle(train)
    train_path, test_path = os.path.join(directory, "train.txt"), os.path.join(directory, "test.txt")
    open(train_path, "w").writelines(train)
    open(test_path, "w").writelines(test)
    return train_path, test_path
