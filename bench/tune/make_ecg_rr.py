"""The ECG task built from the MIT-BIH beat annotations we have (not the study's waveform
task: its 319-sample windows need the signals, which are not here): RR-interval features of
each beat, 6 classes N, L, R, A, V, / (labels 1-6), the record as the group, so splits are by
record. Per record and class at most CAP_N normal and CAP beats of the others (seeded).

features: pre-RR, post-RR, mean of the 10 previous RRs, pre/post, pre/local, post/local,
pre/record median RR, post/record median RR (the record median uses the record's own
unlabelled beat times, as a per-recording normalisation).

usage: python3 make_ecg_rr.py ANNOTATION_DIR SEED OUT_PREFIX [CAP_N=40] [CAP=120]
writes OUT_PREFIX.txt (LIBSVM) and OUT_PREFIX.groups (the record of each row)
"""
import os
import random
import statistics
import sys

ann_dir, seed, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cap_n = int(sys.argv[4]) if len(sys.argv) > 4 else 40
cap = int(sys.argv[5]) if len(sys.argv) > 5 else 120
CLASSES = {"N": 1, "L": 2, "R": 3, "A": 4, "V": 5, "/": 6}
BEATS = set("NLRBAaJSVrFejnE/fQ?")
rng = random.Random(seed)
rows, groups = [], []
for name in sorted(os.listdir(ann_dir)):
    if not name.endswith("annotations.txt"):
        continue
    record = int(name[:3])
    beats = []
    with open(os.path.join(ann_dir, name)) as f:
        next(f)
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] in BEATS:
                beats.append((int(parts[1]), parts[2]))
    if len(beats) < 15:
        continue
    t = [b[0] / 360.0 for b in beats]
    rr = [t[i] - t[i - 1] for i in range(1, len(t))]
    med = statistics.median(rr)
    per_class = {}
    for i in range(11, len(beats) - 1):
        sym = beats[i][1]
        if sym not in CLASSES:
            continue
        pre, post = t[i] - t[i - 1], t[i + 1] - t[i]
        local = sum(rr[i - 11:i - 1]) / 10.0
        feats = [pre, post, local, pre / post, pre / local, post / local, pre / med, post / med]
        per_class.setdefault(sym, []).append(feats)
    for sym, fs in sorted(per_class.items()):
        rng.shuffle(fs)
        for feats in fs[:cap_n if sym == "N" else cap]:
            rows.append((CLASSES[sym], feats))
            groups.append(record)
with open(prefix + ".txt", "w") as f:
    for label, feats in rows:
        f.write("%d %s\n" % (label, " ".join("%d:%.6g" % (k + 1, v) for k, v in enumerate(feats))))
with open(prefix + ".groups", "w") as f:
    f.write("\n".join(str(g) for g in groups) + "\n")
