"""Compile (or load) cudbound's numba kernels: run by tests/conftest.py before the workers of a
parallel run start, so that the workers, and the commands they run, load the kernels from the cache
instead of each compiling them (cudbound/_kernel_compile.py locks the search kernels' cache
folder while one process compiles).

    python tests/_support/warm_kernels.py GROUP [GROUP ...]

:data:`PROCESSES` says which groups run in one process, in order: the search kernels (``replicate``
compiles ``_search`` too) in one, the SVM dual's and then the part-wise PCA kernel (other cache
folders, no function in common with the search's) in another, side by side. Two processes must never compile different specialisations of one function
at once: numba rewrites a function's cache index without a lock of its own.
"""
import sys
import warnings

import numpy as np

GROUPS = ("replicate", "search", "svm", "pca")
PROCESSES = (("replicate", "search"), ("svm", "pca"))


def warm(group: str) -> None:
    import cudbound
    from cudbound.svm import loo_error

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if group == "replicate":        # squared loss: the replicate kernel
            cudbound.cud_interval(X, y, n_resamples=20, rng=0, progress=False)
        elif group == "search":         # the loop of each kind of node solver: hinge simplex, hinge QP, SQP
            for loss in ("hinge", "hinge_ridge:0.05", "logistic"):
                cudbound.cud_interval(X, y, {"loss": loss}, n_resamples=20, rng=0, progress=False)
            counts = rng.multinomial(30, np.full(30, 1 / 30))   # the frontier loops: QP, SQP, hinge simplex
            cudbound.replicate_sup_difference(X, X[:, :1], y, counts, loss_b="logistic")
            cudbound.replicate_sup_difference(X, X[:, :1], y, counts, loss_b="hinge")
            # the kernels the Python engine calls from Python (the QP of a node, realisability)
            cudbound.cud_interval(X, y, n_resamples=20, rng=0, progress=False, engine_options={"engine": "python"})
        elif group == "svm":            # the SVM dual's solvers (exact leave-one-out)
            loo_error(X, y)
        elif group == "pca":            # the part-wise PCA kernel (a PCA basis refitted on the parts)
            from cudbound.basis import PCABasis

            weights = rng.multinomial(30, np.full(30, 1 / 30), size=3).astype(float)
            PCABasis(n_components=1).fit(X).refit_designs(X, weights)
        else:
            raise SystemExit(f"unknown group {group!r}; expected one of {GROUPS}")


if __name__ == "__main__":
    for name in sys.argv[1:]:
        warm(name)
