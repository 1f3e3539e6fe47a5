"""Brute-force reference for the replicate supremum Q^(b) of the CUD bound.

Independent of the package's branch-and-bound engine on purpose: it imports nothing
from ``cudbound``. Definitions (``docs/method.md``, squared loss written as a mean):

* ``L(nu, beta) = (1/n) sum_i nu_i (y_i - phi_i'beta)^2``; ``beta_hat`` is ordinary least
  squares of ``y`` on ``Phi`` (the unweighted fit, nu = 1); ``L_hat = L(nu, beta_hat)``.
* ``S = {i : nu_i != 1}``; for a sign pattern ``s`` on ``S``,
  ``C(s) = sum_{i in S} (nu_i - 1) 1{s_i != y_i}``.
* ``s`` is realisable iff some beta has ``sign(phi_i'beta) = s_i`` on ``S`` with
  sign(0) = +1, i.e. iff the LP ``{phi_i'beta >= 0 (s_i = +1), phi_i'beta <= -1 (s_i = -1)}``
  is feasible (decided with ``scipy.optimize.linprog``, HiGHS).
* ``m(s) = min L(nu, .)`` over the closed cone ``{beta : s_i phi_i'beta >= 0, i in S}``.
* ``Q = max(0, max_s |C(s)| / n * g(alpha_n (L_hat - m(s))))``, ``g(x) = min(1, x + 1)``.

Realisability: every one of the 2^|S| patterns is decided by an LP. The default
``method="tree"`` decides them prefix by prefix (a pattern whose first j signs already
give an infeasible LP is infeasible, because its LP contains that sub-system); the
literal ``method="full"`` solves one LP per pattern. Both give the same set (tested).

The closure QP is solved exactly, without any iterative solver: for every subset A of
the constraint rows with |A| <= p, the loss is minimised over the subspace
``{beta : G_A beta = 0}`` (orthonormal null-space basis + ``numpy.linalg.lstsq``, which
copes with a singular weighted Hessian); the least loss among the candidates that
satisfy all constraints is the minimum. Why this is exact: take an optimal point beta*
whose active set A is maximal. Near beta* the cone is ``{G_A beta >= 0}``, so beta*
minimises the convex loss over that polyhedron and hence over the subspace
``V_A = {G_A beta = 0}`` that contains it. The minimisers of L over V_A are
beta* + (ker(W^1/2 Phi) cap V_A); every direction d there has G d = 0 (a direction with
g_i'd != 0 for an inactive i would reach a new optimal point with a larger active set),
so every minimiser over V_A, in particular the lstsq one, is feasible with loss m. V_A
depends only on the span of the rows of G_A, which a subset of at most p rows spans.
For patterns, G = diag(s) Phi_S has the null spaces of Phi_S's rows, so the candidates
are computed once per problem and shared by all patterns.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

__all__ = [
    "reference_sup", "reference_details", "ReferenceDetails", "closure_min",
    "closure_min_cvxpy", "realisable_patterns", "lp_realisable", "make_problem",
    "squared_loss", "ols",
]

FEAS_TOL = 1e-10  # relative tolerance of the candidate feasibility test


# --------------------------------------------------------------------------- loss
def squared_loss(design, y, counts, beta) -> float:
    """(1/n) sum_i nu_i (y_i - phi_i'beta)^2."""
    r = y - design @ beta
    return float(np.dot(counts, r * r) / len(y))


def ols(design, y) -> np.ndarray:
    beta, *_ = np.linalg.lstsq(design, y, rcond=None)
    return beta


# ------------------------------------------------------------------ realisability
def lp_realisable(rows: np.ndarray, signs: np.ndarray) -> bool:
    """Feasibility of {phi'b >= 0 (s = +1), phi'b <= -1 (s = -1)} with scipy's HiGHS."""
    rows = np.asarray(rows, dtype=float)
    signs = np.asarray(signs, dtype=float)
    if rows.shape[0] == 0:
        return True
    p = rows.shape[1]
    A_ub = -(signs[:, None] * rows)          # s_i phi_i'b >= [s_i < 0]
    b_ub = -(signs < 0).astype(float)
    res = linprog(np.zeros(p), A_ub=A_ub, b_ub=b_ub, bounds=[(None, None)] * p, method="highs")
    if res.status == 0:
        return True
    if res.status == 2:
        return False
    # HiGHS gave up (rows far from their zero, in very different units): the same question on
    # rows = U S V' asked of U (phi_i'b = U_i'c with c = S V'b ranging over the row space),
    # each row scaled to unit norm (s_i phi_i'b < 0 is what "<= -1" asks, up to scaling b)
    U, sv, _ = np.linalg.svd(rows, full_matrices=False)
    U = U[:, sv > 1e-12 * sv[0]]
    U = U / np.linalg.norm(U, axis=1, keepdims=True).clip(1e-300)
    res = linprog(np.zeros(U.shape[1]), A_ub=-(signs[:, None] * U), b_ub=b_ub,
                  bounds=[(None, None)] * U.shape[1], method="highs")
    if res.status == 0:
        return True
    if res.status == 2:
        return False
    raise RuntimeError(f"realisability LP ended with status {res.status}: {res.message}")


def realisable_patterns(rows: np.ndarray, method: str = "tree") -> np.ndarray:
    """All realisable sign patterns on ``rows`` (k x p) as an (r x k) array of +-1."""
    rows = np.asarray(rows, dtype=float)
    k = rows.shape[0]
    if method == "full":
        pats = [s for s in itertools.product((1.0, -1.0), repeat=k)
                if lp_realisable(rows, np.array(s))]
    elif method == "tree":
        pats = [()]
        for j in range(k):
            pats = [pre + (sg,) for pre in pats for sg in (1.0, -1.0)
                    if lp_realisable(rows[: j + 1], np.array(pre + (sg,)))]
    else:
        raise ValueError(method)
    return np.array(pats, dtype=float).reshape(len(pats), k)


# ------------------------------------------------------------------- closure QP
def _null_space(A: np.ndarray, p: int) -> np.ndarray:
    if A.shape[0] == 0:
        return np.eye(p)
    _, sv, vt = np.linalg.svd(A, full_matrices=True)
    tol = max(A.shape) * np.finfo(float).eps * (sv[0] if sv.size else 0.0)
    rank = int(np.sum(sv > tol))
    return vt[rank:].T


def _candidates(design, y, counts, rows) -> np.ndarray:
    """(c x p) minimisers of L over {beta : rows_A beta = 0}, all subsets |A| <= p."""
    n, p = design.shape
    w = np.sqrt(np.asarray(counts, dtype=float) / n)
    Aw, bw = design * w[:, None], y * w
    k = rows.shape[0]
    seen, out = set(), []
    for size in range(0, min(p, k) + 1):
        for A in itertools.combinations(range(k), size):
            N = _null_space(rows[list(A)], p)
            key = N.shape[1], tuple(np.round(N @ N.T, 12).ravel())  # same subspace -> same candidate
            if key in seen:
                continue
            seen.add(key)
            if N.shape[1] == 0:
                out.append(np.zeros(p))
                continue
            z, *_ = np.linalg.lstsq(Aw @ N, bw, rcond=None)
            out.append(N @ z)
    return np.array(out).reshape(len(out), p)


def _feasible(G: np.ndarray, betas: np.ndarray) -> np.ndarray:
    """Boolean (c,) or broadcast: G beta >= -tol, tol relative to |g_i| |beta|."""
    vals = G @ betas.T
    scale = np.linalg.norm(G, axis=1)[:, None] * np.linalg.norm(betas, axis=1)[None, :]
    return np.all(vals >= -FEAS_TOL * scale, axis=0)


def closure_min(design, y, counts, G) -> float:
    """Exact min of L(counts, .) over the polyhedral cone {beta : G beta >= 0}."""
    design, y, G = (np.asarray(a, dtype=float) for a in (design, y, G))
    G = G.reshape(-1, design.shape[1])
    cands = _candidates(design, y, counts, G)
    ok = _feasible(G, cands)
    if not ok.any():
        raise AssertionError("no feasible candidate: the exactness argument failed")
    losses = np.array([squared_loss(design, y, counts, b) for b in cands[ok]])
    return float(losses.min())


def closure_min_cvxpy(design, y, counts, G, solver="CLARABEL") -> float:
    """Same minimum through cvxpy (for checking the exact solver only)."""
    import cvxpy as cp

    n, p = design.shape
    w = np.sqrt(np.asarray(counts, dtype=float) / n)
    b = cp.Variable(p)
    cons = [np.asarray(G, dtype=float).reshape(-1, p) @ b >= 0] if len(G) else []
    prob = cp.Problem(cp.Minimize(cp.sum_squares(cp.multiply(w, y - design @ b))), cons)
    prob.solve(solver=solver)
    if prob.status != cp.OPTIMAL:
        raise RuntimeError(prob.status)
    return squared_loss(design, y, counts, b.value)


# ------------------------------------------------------------------ supremum
@dataclass
class ReferenceDetails:
    n: int
    S: np.ndarray            # indices with counts != 1
    patterns: np.ndarray     # (r x |S|) realisable patterns
    C: np.ndarray            # (r,) C(s)
    m: np.ndarray            # (r,) closure minima
    L_hat: float
    beta_hat: np.ndarray

    def q(self, alpha_n: float) -> float:
        if len(self.C) == 0:
            return 0.0
        g = np.minimum(1.0, alpha_n * (self.L_hat - self.m) + 1.0)
        return float(max(0.0, np.max(np.abs(self.C) / self.n * g)))


def reference_details(design, y, counts, method: str = "tree") -> ReferenceDetails:
    design = np.asarray(design, dtype=float)
    y = np.asarray(y, dtype=float)
    counts = np.asarray(counts, dtype=float)
    n, p = design.shape
    assert y.shape == (n,) and counts.shape == (n,)
    assert np.all(counts == np.round(counts)) and counts.sum() == n
    beta_hat = ols(design, y)
    L_hat = squared_loss(design, y, counts, beta_hat)
    S = np.flatnonzero(counts != 1)
    rows = design[S]
    pats = realisable_patterns(rows, method=method)
    C = ((counts[S] - 1.0)[None, :] * (pats != y[S][None, :])).sum(axis=1)
    cands = _candidates(design, y, counts, rows)
    losses = np.array([squared_loss(design, y, counts, b) for b in cands])
    vals = rows @ cands.T                                         # k x c
    scale = np.linalg.norm(rows, axis=1)[:, None] * np.linalg.norm(cands, axis=1)[None, :]
    # feas[r, c]: candidate c satisfies s_i phi_i'beta >= 0 for all i in S (pattern r)
    feas = np.all(pats[:, :, None] * vals[None, :, :] >= -FEAS_TOL * scale[None], axis=1)
    if not feas.any(axis=1).all():
        raise AssertionError("a realisable pattern has no feasible candidate")
    m = np.where(feas, losses[None, :], np.inf).min(axis=1)
    return ReferenceDetails(n=n, S=S, patterns=pats, C=C, m=m, L_hat=L_hat, beta_hat=beta_hat)


def reference_sup(design, y, counts, alpha_ns, method: str = "tree") -> dict:
    """{alpha_n: Q} by full enumeration; patterns and minima computed once."""
    det = reference_details(design, y, counts, method=method)
    return {a: det.q(float(a)) for a in alpha_ns}


# ------------------------------------------------------------------- problems
def make_problem(seed: int, n: int | None = None, p: int | None = None, signal: str | None = None):
    """Random small problem: (design, y, counts, info). Design = intercept + N(0, 1)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 13)) if n is None else n
    p = int(rng.choice([1, 2, 3])) if p is None else p
    signal = str(rng.choice(["weak", "strong"])) if signal is None else signal
    for _ in range(1000):
        design = np.column_stack([np.ones(n), rng.standard_normal((n, p - 1))])
        if p == 1:
            prob = 0.5 if signal == "weak" else 0.8
            y = np.where(rng.uniform(size=n) < prob, 1.0, -1.0)
        else:
            w = rng.standard_normal(p)
            noise = 1.5 if signal == "weak" else 0.1
            y = np.where(design @ w + noise * rng.standard_normal(n) >= 0, 1.0, -1.0)
        if len(np.unique(y)) == 2 and np.linalg.matrix_rank(design) == p:
            break
    else:  # pragma: no cover
        raise RuntimeError("could not draw a problem with both classes")
    counts = rng.multinomial(n, [1.0 / n] * n)
    return design, y, counts, dict(seed=seed, n=n, p=p, signal=signal)
