"""Brute-force reference for the replicate supremum Q^(b) with other surrogate losses.

Independent of the package on purpose: it imports nothing from ``cudbound`` (only the
pattern enumeration of ``reference.py``). Definitions as in ``docs/method.md`` and
``docs/losses.md``: L(nu, beta) = (1/n) sum_i nu_i l(y_i, phi_i'beta) + lam |beta_pen|^2,
with beta_pen every coefficient but those of constant design columns.

* beta_hat minimises L(1, .): by Newton's method for the smooth losses (unique minimiser;
  the data are checked not to be separable first), in closed form for ridge, and for the
  hinge loss the minimiser of least norm |Phi beta| (the root mean square of the training
  scores: the package's convention, which no reparametrisation of the design changes),
  computed exactly: an optimal dual of the hinge linear program (scipy's HiGHS) describes
  the optimal set by complementary slackness as a polyhedron {beta : a_i'beta <= 1 or = 1
  or >= 1}; with Phi = QR (numpy) and c = R beta, |Phi beta| = |c|, and the point of least
  norm |c| is the least-norm feasible point among the projections of 0 on the affine sets
  spanned by at most p of its constraints.
* every sign pattern on S is decided by the realisability LP (``reference.realisable_patterns``).
* m(s) = inf of L(nu, .) over the closed cone {s_i phi_i'beta >= 0, i in S}:
  - hinge: the linear program, by scipy's HiGHS (simplex: exact to rounding);
  - ridge (quadratic): exactly, as in ``reference.py`` (least squares on every subspace
    {phi_A'beta = 0}, |A| <= p, the least loss of the feasible candidates);
  - logistic, exponential: the points some direction d of the cone separates
    (y_j phi_j'd >= 0 for every weighted j and y_i phi_i'd >= 1 for the point i; d
    unpenalised) are found by one feasibility LP per point (the package solves one LP for
    all points), dropped (their terms tend to 0 along d), and the rest is minimised
    exactly: Newton's method on every subspace {phi_A'beta = 0}, |A| <= p, the least loss
    of the feasible candidates (``_smooth_candidates`` has the argument). When no weighted
    point can be separated at all, no LP is needed for any pattern;
  - other smooth losses (the squared hinge of the docs), and the hinge loss plus a ridge
    penalty (a QP; its beta_hat too): CLARABEL with tolerances 1e-12 (the package uses ECOS
    and Newton polishing for the former, a compiled active-set method for the latter).
* Q = max(0, max_s |C(s)| / n * g(alpha_n (L_hat - m(s)))).
"""
from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from reference import realisable_patterns

__all__ = ["RefLoss", "REF_LOSSES", "ref_fit", "ref_details", "ref_sup", "separable_points",
           "make_loss_problem"]


# ------------------------------------------------------------------------------ losses
def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass(frozen=True)
class RefLoss:
    name: str
    kind: str                  # "smooth", "hinge", "hinge_qp" (hinge + ridge: a QP) or "quadratic"
    lam: float = 0.0
    tends_to_zero: bool = False

    def l(self, y, t):
        m = y * t
        if self.name in ("squared", "ridge"):
            return (y - t) ** 2
        if self.name == "logistic":
            return np.logaddexp(0.0, -m)
        if self.name == "exponential":
            return np.exp(-m)
        if self.name == "hinge":
            return np.maximum(0.0, 1.0 - m)
        if self.name == "squared_hinge":
            return np.maximum(0.0, 1.0 - m) ** 2
        raise ValueError(self.name)

    def d(self, y, t):
        """(dl/dt, d2l/dt2)."""
        m = y * t
        if self.name in ("squared", "ridge"):
            return 2.0 * (t - y), np.full_like(t, 2.0)
        if self.name == "logistic":
            s = _sigmoid(-m)
            return -y * s, s * (1.0 - s)
        if self.name == "exponential":
            e = np.exp(-m)
            return -y * e, e
        if self.name == "squared_hinge":
            h = np.maximum(0.0, 1.0 - m)
            return -2.0 * y * h, 2.0 * (h > 0)
        raise ValueError(self.name)

    def cvxpy(self, y, t):
        import cvxpy as cp
        m = cp.multiply(y, t)
        if self.name == "logistic":
            return cp.logistic(-m)
        if self.name == "exponential":
            return cp.exp(-m)
        if self.name == "squared_hinge":
            return cp.square(cp.pos(1.0 - m))
        if self.name == "hinge":
            return cp.pos(1.0 - m)
        raise ValueError(self.name)


REF_LOSSES = {
    "hinge": RefLoss("hinge", "hinge"),
    "logistic": RefLoss("logistic", "smooth", tends_to_zero=True),
    "exponential": RefLoss("exponential", "smooth", tends_to_zero=True),
    "ridge": RefLoss("ridge", "quadratic", lam=0.1),
    "logistic_ridge": RefLoss("logistic", "smooth", lam=0.1, tends_to_zero=True),
    "exponential_ridge": RefLoss("exponential", "smooth", lam=0.1, tends_to_zero=True),
    "squared_hinge": RefLoss("squared_hinge", "smooth"),
}


def penalised(design):
    """Columns that carry the ridge penalty: all but the constant ones."""
    return ~(np.all(design == design[:1], axis=0) & (design[0] != 0))


def loss_value(loss, design, y, w, b):
    pen = penalised(design)
    on = np.asarray(w) != 0
    with np.errstate(over="ignore"):
        data = np.dot(np.asarray(w)[on], loss.l(y[on], design[on] @ b))
    return float(data / len(y) + loss.lam * np.sum(b[pen] ** 2))


# ----------------------------------------------------------------- separability
def _lp_feasible(A_ub, b_ub, A_eq=None, b_eq=None):
    p = A_ub.shape[1]
    res = linprog(np.zeros(p), A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=[(None, None)] * p,
                  method="highs")
    if res.status not in (0, 2):
        raise RuntimeError(res.message)
    return res.status == 0


def separable_points(design, y, w, G=None, lam=0.0, candidates=None):
    """Boolean mask: weighted points i with some d in the cone, unpenalised when lam > 0,
    y_j phi_j'd >= 0 for all weighted j and y_i phi_i'd >= 1. One LP per point."""
    n, p = design.shape
    weighted = np.asarray(w) > 0
    rows = [-(y[weighted, None] * design[weighted])]
    rhs = [np.zeros(int(weighted.sum()))]
    if G is not None and len(G):
        rows.append(-np.asarray(G, dtype=float))
        rhs.append(np.zeros(len(G)))
    A_eq = b_eq = None
    if lam > 0:
        pen = penalised(design)
        A_eq = np.eye(p)[pen]
        b_eq = np.zeros(int(pen.sum()))
        if A_eq.shape[0] == 0:
            A_eq = b_eq = None
    mask = np.zeros(n, dtype=bool)
    for i in np.flatnonzero(weighted):
        if candidates is not None and not candidates[i]:
            continue
        A = np.vstack(rows + [-(y[i] * design[i])[None, :]])
        b = np.concatenate(rhs + [[-1.0]])
        mask[i] = _lp_feasible(A, b, A_eq, b_eq)
    return mask


# ---------------------------------------------------------------------- fitting
def _newton(loss, Phi, y, w, b0=None, iters=200, N=None):
    """Newton's method with backtracking for the smooth loss; with ``N`` (p x r) the
    coefficients are beta = N u (minimisation over the subspace spanned by N)."""
    n = Phi.shape[0]
    N = np.eye(Phi.shape[1]) if N is None else N
    design = Phi @ N
    p = design.shape[1]
    P = N.T @ np.diag(penalised(Phi).astype(float)) @ N  # the penalty is lam u'N'JNu

    on = np.asarray(w) != 0
    design, y, w = design[on], y[on], np.asarray(w)[on]

    def f(u):
        with np.errstate(over="ignore"):
            return float(np.dot(w, loss.l(y, design @ u)) / n + loss.lam * u @ P @ u)

    b = np.zeros(p) if b0 is None else b0.copy()
    fb = f(b)
    for _ in range(iters):
        with np.errstate(over="ignore"):
            d1, d2 = loss.d(y, design @ b)
        g = design.T @ (w * d1) / n + 2 * loss.lam * P @ b
        H = design.T @ (design * (w * d2)[:, None]) / n + 2 * loss.lam * P
        ev, V = np.linalg.eigh(H)
        keep = ev > 1e-12 * max(1.0, ev.max(initial=0.0))   # flat directions take no step
        step = -(V[:, keep] @ ((V[:, keep].T @ g) / ev[keep]))
        dec = -g @ step
        if not np.isfinite(dec) or np.linalg.norm(b) > 1e8:
            raise RuntimeError("Newton diverged")
        if dec <= 1e-15 * max(1.0, abs(fb)):
            return b + step
        t = 1.0
        while f(b + t * step) > fb - 1e-4 * t * dec and t > 1e-14:
            t /= 2
        b = b + t * step
        fb = f(b)
    raise RuntimeError("Newton did not converge")


def _least_norm_in_polyhedron(Aeq, Ale, Age, p):
    """Least-norm point of {Aeq b = 1, Ale b <= 1, Age b >= 1} (exact enumeration)."""
    ineq = [(a, 1.0) for a in Ale] + [(-a, -1.0) for a in Age]       # rows r'b <= c
    best, best_norm = None, np.inf
    for size in range(0, p + 1):
        for A in itertools.combinations(range(len(ineq)), size):
            M = np.vstack([Aeq] + [ineq[k][0][None, :] for k in A]) if (len(Aeq) or A) else np.zeros((0, p))
            c = np.concatenate([np.ones(len(Aeq)), [ineq[k][1] for k in A]])
            if M.shape[0] == 0:
                b = np.zeros(p)
            else:
                b, *_ = np.linalg.lstsq(M, c, rcond=None)
                if not np.allclose(M @ b, c, atol=1e-9):
                    continue
            ok = all(r @ b <= cc + 1e-9 for r, cc in ineq) and (not len(Aeq) or np.allclose(Aeq @ b, 1.0, atol=1e-9))
            if ok and np.linalg.norm(b) < best_norm - 1e-12:
                best, best_norm = b, np.linalg.norm(b)
    if best is None:
        raise AssertionError("no feasible point: the optimal set was misread")
    return best


def _hinge_fit(design, y):
    n, p = design.shape
    w = np.ones(n)
    a = y[:, None] * design
    # min sum xi / n  s.t.  xi_i >= 1 - a_i'b,  xi >= 0
    c = np.r_[np.zeros(p), w / n]
    A_ub = np.hstack([-a, -np.eye(n)])
    res = linprog(c, A_ub=A_ub, b_ub=-np.ones(n), bounds=[(None, None)] * p + [(0, None)] * n, method="highs")
    assert res.status == 0, res.message
    u = -res.ineqlin.marginals          # >= 0, duals of the hinge rows
    r = res.lower.marginals[p:]         # >= 0, duals of xi >= 0
    tol = 1e-9
    eq = (u > tol) & (r > tol)
    le = (u > tol) & ~(r > tol)         # xi_i = 1 - a_i'b >= 0
    ge = ~(u > tol) & (r > tol)         # xi_i = 0 >= 1 - a_i'b
    # least |Phi b| = least |c| with c = R b (Phi = QR): the polyhedron's rows become a R^-1
    R = np.linalg.qr(design, mode="r")
    aR = np.linalg.solve(R.T, a.T).T
    b = np.linalg.solve(R, _least_norm_in_polyhedron(aR[eq], aR[le], aR[ge], p))
    # sanity: b attains the LP optimum
    assert abs(loss_value(REF_LOSSES["hinge"], design, y, w, b) - res.fun) <= 1e-9, (b, res.fun)
    return b


def _hinge_qp_fit(loss, design, y):
    """The hinge loss plus its ridge penalty (a QP) by CLARABEL with tight tolerances: a
    minimiser to about 1e-9 (the stored beta_hat is used by both sides of the comparison)."""
    import cvxpy as cp
    n, p = design.shape
    b = cp.Variable(p)
    pen = np.flatnonzero(penalised(design))
    obj = cp.sum(loss.cvxpy(y, design @ b)) / n + loss.lam * cp.sum_squares(b[pen])
    prob = cp.Problem(cp.Minimize(obj))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    if b.value is None or prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise RuntimeError(f"reference hinge_ridge fit failed: {prob.status}")
    return np.asarray(b.value, dtype=float)


def ref_fit(loss, design, y):
    n, p = design.shape
    w = np.ones(n)
    if loss.kind == "hinge":
        return _hinge_fit(design, y)
    if loss.kind == "hinge_qp":
        return _hinge_qp_fit(loss, design, y)
    if loss.kind == "quadratic":   # least squares on the stacked system (not the normal equations)
        pen = penalised(design)
        A = np.vstack([design / np.sqrt(n), np.sqrt(loss.lam) * np.eye(p)[pen]])
        return np.linalg.lstsq(A, np.r_[y / np.sqrt(n), np.zeros(int(pen.sum()))], rcond=None)[0]
    if loss.tends_to_zero and separable_points(design, y, w, lam=loss.lam).any():
        raise ValueError("separable")
    b = _newton(loss, design, y, w)
    d1, d2 = loss.d(y, design @ b)
    H = design.T @ (design * d2[:, None]) / n
    if np.linalg.eigvalsh(H)[0] <= 1e-8 * max(1.0, np.linalg.eigvalsh(H)[-1]):
        raise ValueError("the smooth fit is not unique: not used by the reference")
    return b


# ------------------------------------------------------------------ node minima
def _hinge_node(design, y, w, G):
    n, p = design.shape
    a = y[:, None] * design
    c = np.r_[np.zeros(p), w / n]
    A_ub = np.vstack([np.hstack([-a, -np.eye(n)]), np.hstack([-G, np.zeros((len(G), n))])])
    b_ub = np.r_[-np.ones(n), np.zeros(len(G))]
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=[(None, None)] * p + [(0, None)] * n, method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


def _quadratic_candidates(design, y, w, lam, rows, penalty_rows=None):
    """Least squares on every face subspace of ``rows``; the penalty lam |beta_pen|^2, or
    |penalty_rows beta|^2 when given (the penalty in other coordinates)."""
    n, p = design.shape
    pen = penalised(design)
    sw = np.sqrt(w / n)
    P = np.sqrt(lam) * np.eye(p)[pen] if penalty_rows is None else penalty_rows
    A = np.vstack([design * sw[:, None], P])
    t = np.r_[y * sw, np.zeros(P.shape[0])]
    return np.array([np.zeros(p) if N.shape[1] == 0 else N @ np.linalg.lstsq(A @ N, t, rcond=None)[0]
                     for N in _face_subspaces(rows, p)])


def _face_subspaces(rows, p):
    """Each distinct subspace {phi_A'beta = 0}, |A| <= p, A a subset of ``rows``, once, as an
    orthonormal basis N (p x dim)."""
    seen = set()
    for size in range(0, min(p, len(rows)) + 1):
        for A in itertools.combinations(range(len(rows)), size):
            if size:
                _, sv, vt = np.linalg.svd(rows[list(A)], full_matrices=True)
                N = vt[int(np.sum(sv > 1e-12 * sv[0])):].T
            else:
                N = np.eye(p)
            key = (N.shape[1], tuple(np.round(N @ N.T, 10).ravel()))
            if key in seen:
                continue
            seen.add(key)
            yield N


def _smooth_candidates(loss, design, y, w, rows):
    """Minimisers of the (reduced) strictly convex loss over every subspace {phi_A'beta = 0}, |A| <= p,
    by Newton's method; subspaces where it finds no minimiser (infimum at infinity) give none.

    Exact for the cone minimum: a minimiser b* with a maximal active set A minimises the loss
    over V_A = {phi_A'beta = 0} (locally the cone is {G_A beta >= 0}); the minimisers over V_A
    are b* + (V_A cap ker of the weighted rows and the penalty), an affine set, and a direction
    d of it with g_j'd != 0 for an inactive row j would lead, within the minimisers, to one with a
    larger active set; so every minimiser over V_A is feasible and attains m.
    """
    n, p = design.shape
    out = []
    for N in _face_subspaces(rows, p):
        if N.shape[1] == 0:
            out.append(np.zeros(p))
            continue
        try:
            u = _newton(loss, design, y, w, N=N)
        except RuntimeError:
            continue
        out.append(N @ u)
    return np.array(out).reshape(len(out), p)


class _SmoothNode:
    """min of the (reduced) smooth loss over a cone, by CLARABEL with tight tolerances."""

    def __init__(self, loss, design, y):
        import cvxpy as cp
        n, p = design.shape
        self.cp, self.loss, self.design, self.y = cp, loss, design, y
        self.w = cp.Parameter(n, nonneg=True)
        self.s = cp.Parameter(n)
        self.b = cp.Variable(p)
        obj = self.w @ loss.cvxpy(y, design @ self.b) / n
        pen = np.flatnonzero(penalised(design))
        if loss.lam > 0 and len(pen):
            obj = obj + loss.lam * cp.sum_squares(self.b[pen])
        self.prob = cp.Problem(cp.Minimize(obj), [cp.multiply(self.s, design @ self.b) >= 0])

    def __call__(self, w, signs_full):
        cp = self.cp
        self.w.value, self.s.value = w, signs_full
        G = (signs_full[:, None] * self.design)[signs_full != 0]
        zero = None
        for name, opts in (("CLARABEL", dict(tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)),
                           ("CLARABEL", {}), ("ECOS", {}), ("ECOS", dict(abstol=1e-11, reltol=1e-11, feastol=1e-11))):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self.prob.solve(solver=name, **opts)
            except cp.error.SolverError:
                continue
            if self.b.value is None:
                continue
            value = loss_value(self.loss, self.design, self.y, w, self.b.value)
            if self.prob.status == cp.OPTIMAL:
                return value
            # a feasible point with loss 0 is optimal whatever the status (the loss is >= 0); solvers
            # report "inaccurate" when the set of such points is unbounded
            b = self.b.value
            if value == 0.0 and np.all(G @ b >= -1e-9 * np.linalg.norm(G, axis=1) * max(1.0, np.linalg.norm(b))):
                zero = value
        if zero is not None:
            return zero
        raise RuntimeError(f"reference node solve failed: {self.prob.status}")


# ------------------------------------------------------------------ the supremum
@dataclass
class RefDetails:
    n: int
    S: np.ndarray
    patterns: np.ndarray
    C: np.ndarray
    m: np.ndarray
    L_hat: float
    beta_hat: np.ndarray

    def q(self, alpha):
        if len(self.C) == 0:
            return 0.0
        g = np.minimum(1.0, alpha * (self.L_hat - self.m) + 1.0)
        return float(max(0.0, np.max(np.abs(self.C) / self.n * g)))


def ref_details(loss, design, y, counts, beta_hat=None):
    design, y = np.asarray(design, float), np.asarray(y, float)
    w = np.asarray(counts, float)
    n, p = design.shape
    beta_hat = ref_fit(loss, design, y) if beta_hat is None else beta_hat
    L_hat = loss_value(loss, design, y, w, beta_hat)
    S = np.flatnonzero(w != 1)
    rows = design[S]
    pats = realisable_patterns(rows)
    C = ((w[S] - 1.0)[None, :] * (pats != y[S][None, :])).sum(axis=1)
    m = np.empty(len(pats))
    if loss.kind == "quadratic":
        # in the coordinates c = R beta (design = Q R, numpy's QR), where the least squares are
        # well conditioned whatever the features' origins and units (features at 200 +- 0.01
        # cost the plain normal equations about 1e-9 of Q^(b))
        Qd, R = np.linalg.qr(design)
        Rinv = np.linalg.solve(R, np.eye(p))
        pen = penalised(design)
        P = np.sqrt(loss.lam) * Rinv[pen]
        rows_c = Qd[S]
        cands = _quadratic_candidates(Qd, y, w, loss.lam, rows_c, penalty_rows=P)
        vals = np.array([float(np.dot(w, (y - Qd @ c) ** 2) / n + np.sum((P @ c) ** 2)) for c in cands])
        L_hat = float(np.dot(w, (y - Qd @ (R @ beta_hat)) ** 2) / n + np.sum((P @ (R @ beta_hat)) ** 2))
        rows = rows_c
        proj = rows @ cands.T
        scale = np.linalg.norm(rows, axis=1)[:, None] * np.linalg.norm(cands, axis=1)[None, :]
        feas = np.all(pats[:, :, None] * proj[None] >= -1e-10 * scale[None], axis=1)
        assert feas.any(axis=1).all()
        m = np.where(feas, vals[None, :], np.inf).min(axis=1)
    elif loss.kind == "hinge":
        for r, s in enumerate(pats):
            m[r] = _hinge_node(design, y, w, s[:, None] * rows)
    else:
        root_sep = separable_points(design, y, w, lam=loss.lam) if loss.tends_to_zero else np.zeros(n, bool)
        node = None if loss.tends_to_zero else _SmoothNode(loss, design, y)
        cache = {}
        for r, s in enumerate(pats):
            G = s[:, None] * rows
            wr = w
            if root_sep.any():
                sep = separable_points(design, y, w, G, lam=loss.lam, candidates=root_sep)
                wr = np.where(sep, 0.0, w)
            if node is not None:
                full = np.zeros(n)
                full[S] = s
                m[r] = node(wr, full)
                continue
            key = wr.tobytes()
            if key not in cache:
                cands = _smooth_candidates(loss, design, y, wr, rows)
                cache[key] = (cands, np.array([loss_value(loss, design, y, wr, b) for b in cands]))
            cands, vals = cache[key]
            scale = np.linalg.norm(G, axis=1)[:, None] * np.linalg.norm(cands, axis=1)[None, :]
            feas = np.all(G @ cands.T >= -1e-10 * scale, axis=0)
            assert feas.any(), "no feasible candidate: the exactness argument failed"
            m[r] = vals[feas].min()
    return RefDetails(n=n, S=S, patterns=pats, C=C, m=m, L_hat=L_hat, beta_hat=beta_hat)


def ref_sup(loss, design, y, counts, alphas, beta_hat=None):
    det = ref_details(loss, design, y, counts, beta_hat)
    return {a: det.q(float(a)) for a in alphas}


# ------------------------------------------------------------------- problems
def _draw_size(rng, n=None, p=None):
    """The first draws of ``make_loss_problem``: n in 4..10 and p in 1..3 (unless given)."""
    n = int(rng.integers(4, 11)) if n is None else n
    p = int(rng.choice([1, 2, 3])) if p is None else p
    return n, p


def loss_problem_size(seed):
    """(n, p) of ``make_loss_problem(seed, ...)`` for any loss, without drawing the problem."""
    return _draw_size(np.random.default_rng(seed))


def make_loss_problem(seed, loss, n=None, p=None):
    """Random small problem (design = intercept + N(0,1) columns) whose fit exists for ``loss``:
    for logistic and exponential losses the data are not separable; n in 4..10, p in 1..3."""
    rng = np.random.default_rng(seed)
    n, p = _draw_size(rng, n, p)
    for _ in range(10000):
        design = np.column_stack([np.ones(n), rng.standard_normal((n, p - 1))])
        noise = float(rng.choice([0.3, 1.5]))
        y = np.where(design @ rng.standard_normal(p) + noise * rng.standard_normal(n) >= 0, 1.0, -1.0)
        if len(np.unique(y)) < 2 or np.linalg.matrix_rank(design) < p:
            continue
        if loss.tends_to_zero and separable_points(design, y, np.ones(n), lam=loss.lam).any():
            continue
        try:
            ref_fit(loss, design, y)
        except ValueError:
            continue
        counts = rng.multinomial(n, np.full(n, 1.0 / n))
        return design, y, counts, dict(seed=seed, n=n, p=p, noise=noise)
    raise RuntimeError("no problem found")
