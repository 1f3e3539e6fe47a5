"""The convex solvers under the fit and the search: exact QP pieces (positive-definiteness,
KKT polishing), smooth losses (separation, Newton polishing), the cvxpy bridge, and the
soft-margin SVM dual of :mod:`cudbound.svm` (:mod:`~cudbound.optim.svm_dual`: SMO, active-set steps, the
decremental path, the KKT polish and checks, one module each).

The compiled dual active-set QP of the search lives with the other compiled kernels in
:mod:`cudbound.search.node_qp`.
"""

__all__: list[str] = []   # the solvers live in the submodules, each with its own __all__
