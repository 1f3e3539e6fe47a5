"""Capture the replicate searches of one squared-loss interval, to replay them on another version.

    python benchmarks/measure/capture_replicates.py /tmp/calls.pkl

Runs ``cud_interval(X, y, n_resamples=200, rng=2)`` (the squared loss) on LinearGaussian-like data
(n = 50, p = 5, ``default_rng(2)``) and pickles the arguments of every ``compiled_replicate``
call (without a resume state), for ``replay_replicates.py`` (2026-11-26, issue 30).
"""
import dataclasses
import pickle
import sys
import warnings

import numpy as np

import cudbound.engine as eng
from cudbound import cud_interval

warnings.simplefilter("ignore")
calls = []
orig = eng.compiled_replicate


def spy(*a, **k):
    calls.append(a[:9] + (dataclasses.replace(a[9], resume=None),))
    return orig(*a, **k)


eng.compiled_replicate = spy
rng = np.random.default_rng(2)
n = 50
X = rng.normal(size=(n, 5))
y = np.where(X[:, 0] + X[:, 1] + rng.normal(size=n) > 0, 1, -1)
cud_interval(X, y, n_resamples=200, rng=2, progress=False)
with open(sys.argv[1], "wb") as fh:
    pickle.dump(calls, fh)
print(len(calls), "calls")
