"""A labelled SYNTHETIC SURROGATE of the ANL study's HEP smart-pixel task (the real data,
Zenodo 7331128, is not reachable here). Each sample: a 13-bin y-profile of cluster charge
(electrons, bins below 400 e zeroed, as dlp.py does) plus y-local; label 1 when the track's
pT > 0.2 GeV (about 5 % of samples, as in the study's ~95/5 split).

Physics-flavoured, not physics: a track of transverse momentum pT and charge q crosses the
sensor at y-local; low-pT tracks are more inclined (wider clusters, a q-dependent shift of the
centroid with y-local); the total charge is Landau-like (lognormal); every bin gets noise.

usage: python3 make_hep_surrogate.py N SEED OUT.txt   (LIBSVM format, unscaled)
"""
import sys

import numpy as np

n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(seed)
pt = 0.02 + rng.exponential(0.06, n)             # GeV; P(pT > 0.2) ~ 5 %
q = rng.choice([-1.0, 1.0], n)
ylocal = rng.uniform(-8.0, 8.0, n)               # micrometres in the study's units
width = (0.4 + 0.12 / pt) * rng.lognormal(0.0, 0.12, n)   # bins
center = 6.0 + 0.04 * ylocal + q * np.minimum(0.12 / pt, 3.0) * 0.35 + rng.normal(0, 0.4, n)
total = rng.lognormal(np.log(22000.0), 0.35, n) * (1 + 0.15 * np.minimum(width, 6) / 6)
bins = np.arange(13)[None, :]
shape = np.exp(-0.5 * ((bins - center[:, None]) / width[:, None]) ** 2)
charge = total[:, None] * shape / shape.sum(1, keepdims=True) + rng.normal(0, 250.0, (n, 13))
charge[charge < 400] = 0.0
label = (pt > 0.2).astype(int)
with open(out, "w") as f:
    for i in range(n):
        feats = list(charge[i]) + [ylocal[i]]
        f.write("%d %s\n" % (label[i], " ".join("%d:%.6g" % (k + 1, v)
                                               for k, v in enumerate(feats) if v != 0)))
