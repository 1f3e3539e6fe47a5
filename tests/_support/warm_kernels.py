"""Compile (or load) cudbound's numba kernels: run by tests/conftest.py before the workers of a
parallel run start, so that the workers, and the commands they run, load the kernels from the cache
instead of each compiling them (cudbound/_kernel_compile.py locks the search kernels' cache
folder while one process compiles).

    python tests/_support/warm_kernels.py GROUP [GROUP ...]

:data:`PROCESSES` gives the two lanes that run side by side: the search kernels (``replicate``
compiles ``_search`` too, then the loop of each other kind of node solver, the frontier loops and
the kernels the Python engine calls) in one, the SVM dual's and then the part-wise PCA kernel (other
cache folders, no function in common with the search's) in the other. Within a lane each group
compiles in a process of its own, one after the other, so that no process holds more than one
group's compiled code (one process compiling every kind peaked at 1.6 GB; issue 44 asks for under
1 GiB throughout). Two processes must never compile different specialisations of one function at
once: numba rewrites a function's cache index without a lock of its own.
"""
import sys
import warnings

import numpy as np

GROUPS = ("replicate", "hinge", "hinge_qp", "smooth", "frontier", "python", "svm", "pca")
PROCESSES = (("replicate", "hinge", "hinge_qp", "smooth", "frontier", "python"), ("svm", "pca"))


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
        elif group in ("hinge", "hinge_qp", "smooth"):   # the loop of each other kind of node solver
            loss = {"hinge": "hinge", "hinge_qp": "hinge_ridge:0.05", "smooth": "logistic"}[group]
            cudbound.cud_interval(X, y, {"loss": loss}, n_resamples=20, rng=0, progress=False)
        elif group == "frontier":       # the frontier loops: QP, SQP, hinge simplex
            counts = rng.multinomial(30, np.full(30, 1 / 30))
            cudbound.replicate_sup_difference(X, X[:, :1], y, counts, loss_b="logistic")
            cudbound.replicate_sup_difference(X, X[:, :1], y, counts, loss_b="hinge")
        elif group == "python":         # the kernels the Python engine calls from Python (a node's QP, realisability)
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
    names = sys.argv[1:]
    if len(names) == 1:
        warm(names[0])
    else:   # one process per group, in turn (module docstring)
        import subprocess

        codes = [subprocess.run([sys.executable, __file__, name]).returncode for name in names]
        sys.exit(1 if any(codes) else 0)   # a group killed by a signal returns a negative code
