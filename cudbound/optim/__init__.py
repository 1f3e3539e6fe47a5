"""The convex solvers under the fit and the search: exact QP pieces (positive-definiteness,
KKT polishing), smooth losses (separation, Newton polishing) and the cvxpy bridge.

The compiled dual active-set QP of the search lives with the other compiled kernels in
:mod:`cudbound.search.compiled`.
"""
