"""Compile (or load) one group of cudbound's numba kernels: run by tests/conftest.py before the
workers of a parallel run start, so that the workers, and the commands they run, load the kernels
from the cache instead of each compiling them (cudbound/search/compile_notice.py locks a kernel
while one process compiles it; the groups below are different kernels, compiled side by side).

    python tests/_support/warm_kernels.py replicate|search|svm
"""
import sys
import warnings

import numpy as np

GROUPS = ("replicate", "search", "svm")


def warm(group: str) -> None:
    import cudbound
    from cudbound.svm import loo_error

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if group == "replicate":        # squared loss: the replicate kernel
            cudbound.cud_interval(X, y, loss="squared", n_resamples=20, rng=0, progress=False)
        elif group == "search":         # the general search kernel, its LP, hinge and smooth node solvers
            for loss in ("hinge", "logistic"):
                cudbound.cud_interval(X, y, loss=loss, n_resamples=20, rng=0, progress=False)
        elif group == "svm":            # the SVM dual's solvers (exact leave-one-out)
            loo_error(X, y)
        else:
            raise SystemExit(f"unknown group {group!r}; expected one of {GROUPS}")


if __name__ == "__main__":
    warm(sys.argv[1])
