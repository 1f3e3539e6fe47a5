"""Node solver for smooth convex losses: sequential quadratic programming, exact QP steps.

A node asks for  m = min L(b)  s.t.  G b >= 0  (G_k = s_k phi_k'), L a weighted mean of
a loss with derivatives (logistic, exponential, their ridge versions, user losses that
give ``derivatives`` or ``gradient`` and ``hessian``). From a feasible x, one step
minimises the quadratic model of L over the cone,

    z = argmin_{G z >= 0}  g'(z - x) + (z - x)'H(z - x) / 2,   g, H = grad L(x), hess L(x),

exactly, by the dual active-set method of Goldfarb & Idnani (1983) (``node_qp._gi``,
given H^-1 and the Newton point x - H^-1 g), then moves to x + t (z - x) with the largest
t in {1, 1/2, ...} that decreases L by at least 1e-4 t |g'(z - x)| (Armijo). x and z lie
in the convex cone, so every iterate does; d = z - x is a descent direction with
-g'd >= d'Hd / 2 (z minimises the model over a set that contains x), and -g'd (the
squared Newton decrement when no constraint moves) measures the distance to the optimum.
Once the active set settles the steps are Newton steps on its face, which converge
quadratically (Nocedal & Wright 2006, ch. 18: SQP with the exact Hessian and a line
search on L itself, which needs no merit function because the iterates stay feasible).
The iteration stops when -g'd is below what L can resolve (1e-15 max(1, |L|)). If the
iterate then passes the certificate below (with the active set of the QP that gave that d),
it is the answer as it stands, with the value, gradient and Hessian it was evaluated with:
L(x) - L(z) <= -g'd is below L's resolution, and the step to z would cost one evaluation more
(one of about 5.6 a solve). Otherwise it takes that last full step.

The answer is then certified as ``optim.smooth.polish_smooth`` certifies an interior-point
answer: the cone's constraints hold (to 1e-7 relative) and grad L = G_A' lambda with
lambda >= 0, to 1e-7 max(1, |grad L|), for rows A active at x. First with A the active
set of the last QP (each row active at x to 1e-10 relative; least squares, a negative
multiplier counting |lambda_k| |G_k| towards the residual, which bounds the non-negative
least-squares residual from above); if that fails, with A every row within 1e-10 of
active, by non-negative least squares (two opposite rows, of which the QP keeps one,
need this). If both fail, or the line search stalls before the predicted decrease
reaches 1e-12, the point is handed to ``optim.smooth.polish_smooth`` (Newton's method on the
face read off the point, the same certificate), as the cvxpy path polishes its answers.
A node that still fails (no convergence, a non-finite loss or derivative, no certificate)
raises :class:`NodeSolveError`; the engine then hands it to the cvxpy solver.

A singular or nearly singular Hessian (few points of positive weight, curvature that
vanishes far out, a piecewise quadratic loss) is regularised: the model's eigenvalues
are raised to at least 1e-8 of the largest (to 1e-5, then 1e-2, if the active-set method
still fails), and a zero Hessian becomes |g| I. Along an exactly flat direction the
gradient vanishes, so the step there is round-off amplified at most 1e8 times; the line
search keeps the method a descent method whatever the model, and the certificate decides.
A well-conditioned Hessian (Cholesky pivots above 1e-8 of its largest diagonal entry) is
inverted as it is.

Warm start: the parent's minimiser. Its new constraint is violated there, so the first
step goes to the model minimiser over the cone (feasible), or to the first feasible
point on the way if that has the smaller loss. A node without a parent starts from the
replicate's unconstrained minimiser (screening solves) or from 0 (the root). In the compiled
search with flip costs the node pool keeps the value, gradient and Hessian at each
minimiser, so a child's first model is not evaluated again (``f0``, ``g0``, ``H0`` of
:func:`_sqp`); and the first step's model point is evaluated with its derivatives (a
built-in loss), which become the iterate's when it is the step. Either way the numbers are
those an evaluation at the same point gives, so the iterates are the same.

The iteration is written once (:func:`_sqp`). The built-in logistic and exponential losses
(and their ridge versions) run it compiled (numba), one call per node; any other loss with
derivatives runs the same function as Python, with its own ``derivatives`` (or ``gradient``
and ``hessian``) and the same compiled QP step and certificate.

Infima at infinity (``Loss.tends_to_zero``) are handled as in
:class:`~cudbound.search.node_solvers.CvxpyNodeSolver`: the points the node's cone
separates (I+) are dropped (``optim.smooth.separation``), the rest is minimised, and the
reported point is pushed along the separating direction d* (``optim.smooth.push_to_infimum``).
A child's cone lies in its parent's, so its I+ is a subset of the parent's: when the
parent's I+ is empty, so is the child's, and when the parent's d* lies in the child's
cone (every row G_k d* >= -1e-10 |G_k| |d*|), d* separates all of the parent's I+ there,
so I+ and d* are the parent's. For the other nodes the loss is first minimised with every
point kept; if the minimiser's KKT multipliers show that no admissible direction can
separate a point (``SmoothNodeSolver._nothing_separable``), I+ is empty and that minimiser
is the answer (this also decides, once per replicate, whether the resample can be
separated at all). Only when that fails is the linear program solved, with the parent's
I+ as candidates.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from numba import njit, types
from numba.extending import overload
from scipy.optimize import nnls

from ..design import PenalisedLoss
from ..losses import ExponentialLoss, Loss, LogisticLoss, RidgeLoss, same_math
from ..optim.linear_solve import cholesky, forward_solve, least_squares, row_dot
from .bounds import _flip_d
from .node_qp import _gi
from .replicate_setup import _screen_point
from ..optim.smooth import SeparationUnknown, polish_smooth, push_to_infimum, separation
from .node_solvers import NodeSolution, NodeSolveError, NodeSolver

__all__ = ["SmoothNodeSolver"]

EIG_FLOOR = 1e-8    # eigenvalues of the model Hessian raised to at least this fraction of the largest
CHECK_TOL = 1e-7     # KKT certificate (as optim.smooth.polish_smooth)
ACTIVE_TOL = 1e-10   # rows this close to active (relative) join the certificate's second try
ARMIJO = 1e-4
RESOLUTION = 1e-15   # a predicted decrease below RESOLUTION max(1, |L|) is round-off: stop
STALL = 1e-12        # a line search that fails with the predicted decrease below this: certify
MAX_ITER = 100
R_BINS = 64         # bins of r_i in the flip cost's mean r (_factor_r)
REUSE_TOL = 1e-10    # the parent's separating direction is in the child's cone up to this (relative)
TRIAL_ITER = 20      # iterations allowed to a solve that tries to certify that nothing is separable

KIND_LOGISTIC, KIND_EXPONENTIAL = 0, 1
_STATUS = {1: "non-finite loss or derivatives", 2: "active-set (QP) failure", 3: "line search failed",
           4: "no convergence", 5: "KKT certificate failed"}
_tokens = itertools.count(1)
_NUMERIC_ERRORS = (np.linalg.LinAlgError, ValueError, ZeroDivisionError, FloatingPointError)


# ------------------------------------------------------------------------------ compiled pieces
@njit(cache=True)
def _model_inverse(H, Qinv, rel, scale):
    """Qinv = the inverse of H (symmetric) with its eigenvalues raised to at least ``rel``
    times the largest (``scale`` when H has no positive eigenvalue). When ``rel`` is
    EIG_FLOOR and every Cholesky pivot exceeds 1e-8 times the largest diagonal entry (so
    H is safely positive definite), through the Cholesky factor instead."""
    p = H.shape[0]
    dmax = 0.0
    for i in range(p):
        if H[i, i] > dmax:
            dmax = H[i, i]
    L = np.zeros((p, p))
    ok = dmax > 0.0 and rel <= EIG_FLOOR
    if ok:
        for j in range(p):
            s = H[j, j]
            for k in range(j):
                s -= L[j, k] * L[j, k]
            if not s > 1e-8 * dmax:
                ok = False
                break
            L[j, j] = math.sqrt(s)
            for i in range(j + 1, p):
                t = 0.5 * (H[i, j] + H[j, i])
                for k in range(j):
                    t -= L[i, k] * L[j, k]
                L[i, j] = t / L[j, j]
    if ok:
        # Linv lower triangular, Qinv = Linv' Linv
        Li = np.zeros((p, p))
        for j in range(p):
            Li[j, j] = 1.0 / L[j, j]
            for i in range(j + 1, p):
                t = 0.0
                for k in range(j, i):
                    t -= L[i, k] * Li[k, j]
                Li[i, j] = t / L[i, i]
        for i in range(p):
            for j in range(i + 1):
                t = 0.0
                for k in range(i, p):
                    t += Li[k, i] * Li[k, j]
                Qinv[i, j] = t
                Qinv[j, i] = t
        return
    w, V = np.linalg.eigh(0.5 * (H + H.T))
    top = w[p - 1]
    floor = rel * top if top > 0.0 else scale
    for i in range(p):
        for j in range(p):
            Qinv[i, j] = 0.0
    for k in range(p):
        lam = w[k] if w[k] > floor else floor
        for i in range(p):
            vi = V[i, k] / lam
            for j in range(p):
                Qinv[i, j] += vi * V[j, k]


@njit(cache=True)
def _model_qp(g, H, G, norms, x, z, act, u):
    """z = argmin_{G z >= 0} g'(z - x) + (z - x)'H(z - x)/2 with H's eigenvalues raised to
    >= EIG_FLOOR max eig; if the active-set method fails on that model (a nearly singular
    H), again with the floor raised to 1e-5, then 1e-2. Returns (status, nact): status 0
    optimal, 2 failure."""
    p = x.shape[0]
    gn = 0.0
    for i in range(p):
        if not np.isfinite(g[i]):
            return 2, 0
        gn += g[i] * g[i]
        for j in range(p):
            if not np.isfinite(H[i, j]):
                return 2, 0
    gn = math.sqrt(gn)
    scale = gn if gn > 0.0 else 1.0
    m = G.shape[0]
    signs = np.ones(m, dtype=np.int8)
    Qinv = np.empty((p, p))
    status, nact = 2, 0
    for rel in (EIG_FLOOR, 1e-5, 1e-2):
        _model_inverse(H, Qinv, rel, scale)
        x0 = x - Qinv @ g
        finite = True
        for i in range(p):
            if not np.isfinite(x0[i]):
                finite = False
            z[i] = x0[i]
        if not finite:
            continue
        if m == 0:
            return 0, 0
        status, nact = _gi(Qinv, G, norms, signs, 0.0, x0, z, act, u, 0)
        if status == 0:
            return 0, nact
    return 2, nact


@njit(cache=True)
def _kkt_ok(G, norms, x, g, act, nact):
    """Feasibility of {G x >= 0}, the rows of A active at x (to ACTIVE_TOL) and
    grad = G_A' lambda, lambda >= 0 (to CHECK_TOL)."""
    p = x.shape[0]
    xs = max(1.0, np.sqrt(np.dot(x, x)))
    for k in range(G.shape[0]):
        if row_dot(G, k, x) / norms[k] < -CHECK_TOL * xs:
            return False
    for a in range(nact):
        if row_dot(G, act[a], x) / norms[act[a]] > ACTIVE_TOL * xs:
            return False
    gn = np.sqrt(np.dot(g, g))
    if not np.isfinite(gn):
        return False
    if nact == 0:
        return gn <= CHECK_TOL
    GA = np.empty((nact, p))
    for a in range(nact):
        for i in range(p):
            GA[a, i] = G[act[a], i]
    lam = np.empty(nact)
    if not least_squares(GA, g, lam):
        # dependent active rows: the minimum-norm multipliers (singular values below 1e-12 of the
        # largest dropped; the default, machine epsilon, keeps a round-off one and its huge multipliers)
        lam = np.linalg.lstsq(np.ascontiguousarray(GA.T), g, rcond=1e-12)[0]
    r = g - GA.T @ lam
    bad = np.sqrt(np.dot(r, r))
    for a in range(nact):
        if lam[a] < 0.0:
            bad += -lam[a] * norms[act[a]]
    return bad <= CHECK_TOL * max(1.0, gn)


@njit(cache=True, inline="always")
def _margin(D, yo, b, i):
    """y_i phi_i'b."""
    t = 0.0
    for j in range(D.shape[1]):
        t += D[i, j] * b[j]
    return yo[i] * t


@njit(cache=True, inline="always")
def _terms(kind, mrg, yi):
    """l, dl/dt and d2l/dt2 at the margin m = y t, for the built-in kinds (0 logistic, 1 exponential).

    Logistic: log(1 + exp(-m)) and sigma(-m) from one exponential, e = exp(-|m|)."""
    if kind == 0:
        e = math.exp(-abs(mrg))
        s = e / (1.0 + e) if mrg >= 0.0 else 1.0 / (1.0 + e)
        return max(-mrg, 0.0) + math.log1p(e), -yi * s, e / ((1.0 + e) * (1.0 + e))
    val = math.exp(-mrg)
    return val, -yi * val, val


@njit(cache=True, inline="always")
def _curvature(kind, mrg, w):
    """w l''(m) at the margin m for the built-in kinds (as :func:`_terms`' third term, without the logarithm;
    w = 1: l'' itself, to the last bit)."""
    if kind == 0:
        e = math.exp(-abs(mrg))
        return w * e / ((1.0 + e) * (1.0 + e))
    return w * math.exp(-mrg)


@njit(cache=True)
def _pointwise_eval(kind, D, yo, wn, pen, b, grad, H, want):
    """L(b) = sum_i wn_i l(y_i, phi_i'b) + b'Q b (l logistic or exponential; Q = ``pen``, a
    symmetric positive semidefinite p x p penalty: lam on the diagonal of the penalised
    coefficients for a ridge loss, M'M in orthonormal coordinates; a 0 x 0 array for no penalty);
    with ``want`` also its gradient and Hessian (written into grad, H)."""
    n, p = D.shape
    f = 0.0
    penalised = pen.shape[0] > 0
    for j in range(p):
        qb = 0.0
        if penalised:
            for k in range(p):
                qb += pen[j, k] * b[k]
            f += b[j] * qb
        if want:
            grad[j] = 2.0 * qb
            for k in range(p):
                H[j, k] = 2.0 * pen[j, k] if (penalised and k <= j) else 0.0
    for i in range(n):
        val, d1, d2 = _terms(kind, _margin(D, yo, b, i), yo[i])
        f += wn[i] * val
        if want:
            c1 = wn[i] * d1
            c2 = wn[i] * d2
            for j in range(p):
                grad[j] += c1 * D[i, j]
                cj = c2 * D[i, j]
                for k in range(j + 1):
                    H[j, k] += cj * D[i, k]
    if want:
        for j in range(p):
            for k in range(j):
                H[k, j] = H[j, k]
    return f


@njit(cache=True)
def _values_at(kind, D, yo, wn, pen, betas, out):
    """out[r] = L(betas[r]) for each row, the value :func:`_pointwise_eval` gives a node's minimiser."""
    p = D.shape[1]
    grad = np.empty(p)
    H = np.empty((p, p))
    for r in range(betas.shape[0]):
        out[r] = _pointwise_eval(kind, D, yo, wn, pen, betas[r], grad, H, False)


def _evaluate(model, b, grad, H, want):
    """L(b); with ``want`` also its gradient and Hessian, written into grad and H. ``model`` is
    (kind, D, yo, wn, pen) for a built-in loss (:func:`_pointwise_eval`; the only form compiled,
    by the overload below) or an :class:`_Objective` (its loss's own methods, in Python)."""
    if isinstance(model, tuple):
        return _pointwise_eval(*model, b, grad, H, want)
    f = model.value(b)
    if want:
        g, h = model.derivatives(b)
        grad[:] = g
        H[:] = h
    return f


def _trial_derivatives(model):
    """Whether the line search of :func:`_sqp` evaluates each trial point with its gradient and
    Hessian: for a built-in loss (compiled), so that an accepted step costs no second evaluation
    of its exponentials and logarithms; not for a loss in Python (its derivatives are not asked for
    where the step is then rejected)."""
    return isinstance(model, tuple)


@overload(_trial_derivatives)
def _trial_derivatives_compiled(model):
    """:func:`_trial_derivatives` in compiled code: a constant of the model's type."""
    full = isinstance(model, types.BaseTuple)

    def impl(model):  # pragma: no cover - compiled
        return full
    return impl


@overload(_evaluate)
def _evaluate_compiled(model, b, grad, H, want):
    """:func:`_evaluate` in compiled code: a built-in loss's (kind, D, yo, wn, pen)."""
    if isinstance(model, types.BaseTuple):
        def impl(model, b, grad, H, want):  # pragma: no cover - compiled
            return _pointwise_eval(model[0], model[1], model[2], model[3], model[4], b, grad, H, want)
        return impl
    return None


def _sqp(model, G, norms, x, max_iter, act, f0, g0, H0):
    """The SQP iteration of the module docstring, the one source of both forms: compiled
    (:func:`_sqp_compiled`, a built-in loss's (kind, D, yo, wn, pen)) and run as it stands in
    Python for any other loss with derivatives (``model`` an :class:`_Objective`).

    x (the start) is overwritten by the answer, ``act`` by the last QP's active rows. Returns
    (status, L(x), nact); status 0: certified, else a key of ``_STATUS``. With ``g0`` and ``H0`` of
    size p and a finite ``f0``, they are the value, gradient and Hessian of L at the start (a child's
    start is its parent's minimiser, where they were computed), which are then not evaluated again;
    with ``f0`` NaN they are not read. Either way, arrays of size p are overwritten on a certified
    answer by the gradient and Hessian at the answer.
    """
    p = x.shape[0]
    m = G.shape[0]
    g = np.empty(p)
    H = np.empty((p, p))
    z = np.empty(p)
    u = np.empty(p)
    dummy_g = np.empty(p)
    dummy_H = np.empty((p, p))
    xt = np.empty(p)
    full = _trial_derivatives(model)
    given = g0.shape[0] == p and np.isfinite(f0)
    if given:
        f = f0
        g[:] = g0
        H[:] = H0
    else:
        f = _evaluate(model, x, g, H, True)
    infeasible = False
    for k in range(m):
        if row_dot(G, k, x) < 0.0:
            infeasible = True
            break
    if infeasible:
        status, nact = _model_qp(g, H, G, norms, x, z, act, u)
        if status != 0:
            return 2, f, 0
        tmin = 0.0
        for k in range(m):
            a = row_dot(G, k, x)
            bb = row_dot(G, k, z)
            if a < 0.0 and bb > a:
                tk = -a / (bb - a)
                if tk > tmin:
                    tmin = tk
        fz = _evaluate(model, z, dummy_g, dummy_H, full)   # with its derivatives: z is the usual answer
        use_z = True
        if tmin < 1.0:
            xf = x + tmin * (z - x)
            ff = _evaluate(model, xf, g, H, False)   # the value alone: g and H (the start's) are not written
            if np.isfinite(ff) and not (fz <= ff):
                use_z = False
                x[:] = xf
                f = ff
        if use_z:
            x[:] = z
            f = fz
        if not np.isfinite(f):
            return 1, f, 0
        if use_z and full:   # z's value, gradient and Hessian: the same evaluation at the same point
            g[:] = dummy_g
            H[:] = dummy_H
        else:
            f = _evaluate(model, x, g, H, True)
    if not np.isfinite(f):
        return 1, f, 0
    nact = 0
    converged = False
    certified = False
    for _ in range(max_iter):
        status, nact = _model_qp(g, H, G, norms, x, z, act, u)
        if status != 0:
            return 2, f, nact
        d = z - x
        dec = -np.dot(g, d)
        if dec <= RESOLUTION * max(1.0, abs(f)):
            if _kkt_ok(G, norms, x, g, act, nact):
                # the iterate is certified as it stands: its value, gradient and Hessian are known
                certified = True
            else:
                x[:] = z
                f = _evaluate(model, x, g, H, True)
            converged = True
            break
        t = 1.0
        ok = False
        fn = f
        while t >= 1e-10:
            for i in range(p):
                xt[i] = x[i] + t * d[i]
            fn = _evaluate(model, xt, dummy_g, dummy_H, full)
            if fn <= f - ARMIJO * t * dec:
                ok = True
                break
            t *= 0.5
        if not ok:
            if dec <= STALL * max(1.0, abs(f)):
                converged = True
                break
            return 3, f, nact
        x[:] = xt
        if full:   # the accepted trial's value, gradient and Hessian: the same evaluation at the same point
            f = fn
            g[:] = dummy_g
            H[:] = dummy_H
        else:
            f = _evaluate(model, x, g, H, True)
        if not np.isfinite(f):
            return 1, f, nact
    if not converged:
        return 4, f, nact
    if not np.isfinite(f) or not (certified or _kkt_ok(G, norms, x, g, act, nact)):
        return 5, f, nact
    if g0.shape[0] == p:
        g0[:] = g
        H0[:] = H
    return 0, f, nact


_sqp_compiled = njit(cache=True)(_sqp)


@njit(cache=True)
def factor_workspace(p: int, n_points: int) -> int:
    """The length of the workspace ``z`` that :func:`_smooth_factor` and :func:`_smooth_factor_of` take for p
    coefficients and n_points points of the loss: a triangular solve's p, each point's r_i^2 and the R_BINS bins."""
    return p + n_points + R_BINS


@njit(cache=True)
def _smooth_factor(sm, b, L, z):
    """The flip-cost metric of a logistic or exponential loss at b (:func:`bounds._flip_d`).

    Writes into L the Cholesky factor (lower) of H, the Hessian of the loss (penalty
    included) at b, and returns the r of :func:`_factor_r`; -1 when H is not safely positive
    definite (no flip cost then)."""
    kind, D, yo, wn, pen, _ = sm
    p = L.shape[0]
    for j in range(p):
        for k in range(j + 1):
            L[j, k] = 2.0 * pen[j, k] if pen.shape[0] > 0 else 0.0
    for i in range(D.shape[0]):
        d2 = _curvature(kind, _margin(D, yo, b, i), wn[i])
        for j in range(p):
            cj = d2 * D[i, j]
            for k in range(j + 1):
                L[j, k] += cj * D[i, k]
    return _factor_r(sm, b, L, z)


@njit(cache=True)
def _smooth_factor_of(H, sm, b, L, z):
    """:func:`_smooth_factor` from the Hessian H at b, already computed (the SQP's at its answer)."""
    p = L.shape[0]
    for j in range(p):
        for k in range(j + 1):
            L[j, k] = H[j, k]
    return _factor_r(sm, b, L, z)


@njit(cache=True, inline="always")
def _factor_r(sm, b, L, z):
    """The Cholesky factor of the Hessian H at b whose lower triangle L holds, in place, and the r of
    ``bounds._flip_d``: the mean of r_i = (phi_i'H^-1 phi_i)^(1/2) over the worst unit of curvature mass
    (z: a workspace of :func:`factor_workspace` entries, set up once per search).

    Along d, with q = (d'Hd)^(1/2), the curvature of L is sum_i w_i l''_i a_i^2 (a_i = phi_i'd) plus the
    penalty's. Its share pi_i = w_i l''_i a_i^2 / q^2 on point i is at most c_i = w_i l''_i r_i^2 (since
    |a_i| <= r_i q), the shares and the penalty's add up to 1, and l''(t + u) >= l''(t) e^(-|u|) for these
    losses (|l'''| <= l''), so F(s) = L(b + s d) has F''(s) >= q^2 sum_i pi_i e^(-s r_i q), the penalty's
    share counted at r = 0. Its least value over the shares fills the largest r_i first, each up to c_i,
    until a unit; and psi(u) = (e^-u + u - 1) / u^2 is convex, so F(1) - F(0) - F'(0) >= q^2 sum_i pi_i
    psi(r_i q) >= q^2 psi(r q) with r = sum_i pi_i r_i over that filling (Jensen). Capacities from above
    and r_i from above keep the bound valid (more mass at larger r): the points go into R_BINS bins of
    r_i, each counted at its bin's upper edge (two passes over the points, no sort). r is at most the
    largest r_i, the r of Bach (2010)'s form of the bound (M = max_i |a_i| <= r_max q)."""
    p = L.shape[0]
    scale = 0.0
    for j in range(p):
        if L[j, j] > scale:
            scale = L[j, j]
    if not (scale > 0.0) or not np.isfinite(scale):
        return -1.0
    if not cholesky(L, L, p, 1e-10 * scale):  # in place
        return -1.0
    kind, D, yo, wn, pen, _ = sm
    p, m = L.shape[0], D.shape[0]
    if z.shape[0] < factor_workspace(p, m):
        raise ValueError("the flip-cost workspace is too short (factor_workspace)")
    v = z[p:p + m]   # r_i^2
    cap = z[p + m:p + m + R_BINS]
    v_max = 0.0
    for i in range(D.shape[0]):
        v[i] = _inv_norm2(L, D[i], z)
        if v[i] > v_max:
            v_max = v[i]
    if not v_max > 0.0:
        return 0.0
    # each point's capacity c_i = w_i l''_i r_i^2 into bin j of r_i <= r_max (j + 1) / R_BINS, counted at
    # r = that edge (r rounded up, the bound down)
    cap[:] = 0.0
    r_max = math.sqrt(v_max)
    scale = R_BINS / r_max
    for i in range(D.shape[0]):
        d2 = _curvature(kind, _margin(D, yo, b, i), 1.0)
        cap[min(int(math.sqrt(v[i]) * scale), R_BINS - 1)] += wn[i] * d2 * v[i]
    mass = 0.0
    rbar = 0.0
    for j in range(R_BINS - 1, -1, -1):   # the largest r first, until a unit of mass
        take = min(cap[j] * (1.0 + 1e-9), 1.0 - mass)
        rbar += take * r_max * (j + 1) / R_BINS
        mass += take
        if mass >= 1.0:
            break
    return max(rbar, 1e-12 * r_max) * (1.0 + 1e-9)


@njit(cache=True, inline="always")
def _inv_norm2(L, x, z):
    """x'H^-1 x = |L^-1 x|^2 for H = LL' (z: workspace)."""
    forward_solve(L, x, z, L.shape[0])
    v = 0.0
    for j in range(L.shape[0]):
        v += z[j] * z[j]
    return v


@njit(cache=True)
def _factor_hn(P, signs, L, hn, z):
    """hn_k = phi_k'H^-1 phi_k for the unfixed free points (rows of P), H = LL'."""
    for k in range(P.shape[0]):
        if signs[k] == 0:
            v = _inv_norm2(L, P[k], z)
            hn[k] = v if v > 0.0 else 1.0  # phi_k = 0: t = 0, no flip cost


@njit(cache=True)
def _flip_bounds(sm, x, Phi):
    """:meth:`SmoothNodeSolver.flip_bounds` (None when the Hessian at x is not safely positive
    definite): the metric of :func:`_smooth_factor`, the flip cost of ``bounds._flip_d`` and
    the gradient's term eps q."""
    p = x.shape[0]
    L = np.empty((p, p))
    z = np.empty(factor_workspace(p, sm[1].shape[0]))
    _, r, eps = _growth_terms(sm, x, L, z)
    if r < 0.0:
        return None
    out = np.zeros(Phi.shape[0])
    for k in range(Phi.shape[0]):
        hn = _inv_norm2(L, Phi[k], z)
        if not hn > 0.0:
            continue
        t = np.dot(Phi[k], x)
        q = abs(t) / math.sqrt(hn)
        u = r * q
        slope = q * (1.0 - 0.5 * u) if u < 1e-3 else -math.expm1(-u) / r  # h'(q), from below
        if slope >= eps:
            out[k] = _flip_d(t, hn, r) - eps * q
    return out


@njit(cache=True)
def _growth_terms(sm, x, L, z):
    """(L(x), r, eps) and, in L's lower triangle, the Cholesky factor of the Hessian H at x: the terms of
    :func:`_flip_bounds` and :meth:`SmoothNodeSolver.loss_floor` (the metric of :func:`_smooth_factor`; eps =
    (g'H^-1 g)^(1/2), g the gradient at x; z a :func:`factor_workspace`); r < 0 when H is not safely positive
    definite."""
    kind, D, yo, wn, pen, _ = sm
    g = np.empty(x.shape[0])
    f = _pointwise_eval(kind, D, yo, wn, pen, x, g, L, True)
    r = _smooth_factor(sm, x, L, z)
    eps = math.sqrt(_inv_norm2(L, g, z)) if r >= 0.0 else 0.0
    return f, r, eps


@njit(cache=True)
def _floor_at(L, x, f, r, eps, betas, out):
    """out[k] = L(x) + h(q) - eps q - 1e-12 max(1, |L(x)| + h(q) + eps q), q = |L'(b_k - x)| (L: the lower
    triangle of :func:`_growth_terms`'s factor), h the flip cost's ``bounds._flip_d``: the lower bound of
    :meth:`SmoothNodeSolver.loss_floor` at each row b_k of ``betas``."""
    p = x.shape[0]
    for k in range(betas.shape[0]):
        q2 = 0.0
        for j in range(p):
            s = 0.0
            for i in range(j, p):
                s += L[i, j] * (betas[k, i] - x[i])
            q2 += s * s
        q = math.sqrt(q2)
        h = _flip_d(q, 1.0, r)
        out[k] = f + h - eps * q - 1e-12 * max(1.0, abs(f) + h + eps * q)


@njit(cache=True)
def _screen_compiled(kind, D, yo, wn, pen, Phi, sides, can_flip, start, level, L_max, max_iter):
    """The screening solves of ``problem.ReplicateProblem`` in one compiled loop.

    For each row phi_j of Phi not yet known to flip (``can_flip``, updated in place): the least
    loss over {b : -side_j phi_j'b >= 0} by :func:`_sqp_compiled` from ``start`` (the root's
    minimiser). Returns (out, solves): out_j = 1 when that least loss is >= level (the point's
    sign is side_j for every classifier that matters), 0 when not or skipped, -1 when the
    solve was not certified (left to the Python solver); a minimiser with loss below L_max
    marks the later rows it puts on their other side as able to flip."""
    m, p = Phi.shape
    out = np.zeros(m, dtype=np.int64)
    solves = 0
    G = np.empty((1, p))
    norms = np.empty(1)
    act = np.zeros(p, dtype=np.int64)
    x = np.empty(p)
    no_g, no_h = np.zeros(0), np.zeros((0, 0))   # no start derivatives (every argument given: a stable cache key)
    for j in range(m):
        if can_flip[j]:
            continue
        for i in range(p):
            G[0, i] = -sides[j] * Phi[j, i]
        norms[0] = math.sqrt(np.dot(G[0], G[0]))
        x[:] = start
        st, f, _ = _sqp_compiled((kind, D, yo, wn, pen), G, norms, x, max_iter, act, np.nan, no_g, no_h)
        if st != 0:
            out[j] = -1
            continue
        solves += 1
        _screen_point(out, j, f, level, L_max, Phi, sides, can_flip, x)
    return out, solves


@njit(cache=True)
def _pointwise_d1(kind, D, yo, x):
    """dl/dt at every point (built-in kinds)."""
    n, p = D.shape
    d1 = np.empty(n)
    for i in range(n):
        d1[i] = _terms(kind, _margin(D, yo, x, i), yo[i])[1]
    return d1


@njit(cache=True)
def _no_separation_certificate(D, yo, wn, d1, free, G, act, pen, x, cand, threshold):
    """The certificate of ``SmoothNodeSolver._nothing_separable`` (see there)."""
    n, p = D.shape
    r = free.shape[1]
    nact = act.shape[0]
    lam = np.empty(n)
    for i in range(n):
        lam[i] = -wn[i] * yo[i] * d1[i]
        if not (lam[i] >= 0.0) or not np.isfinite(lam[i]):
            return False
    A = (D @ free) * yo.reshape((n, 1))
    an = np.empty(n)
    for i in range(n):
        an[i] = np.sqrt(np.dot(A[i], A[i]))
    res = np.zeros(r)
    size = np.zeros(r)
    for i in range(n):
        for j in range(r):
            res[j] += lam[i] * A[i, j]
            size[j] += lam[i] * abs(A[i, j])
    mu = np.zeros(nact)
    C = np.zeros((nact, r))
    cn = np.zeros(nact)
    if nact > 0:
        g = D.T @ (wn * d1)
        if pen.shape[0] > 0:
            g += 2.0 * (pen @ x)
        GA = np.empty((p, nact))
        for a in range(nact):
            for i in range(p):
                GA[i, a] = G[act[a], i]
        mu = np.linalg.lstsq(GA, g)[0]
        for a in range(nact):
            if mu[a] < 0.0:
                mu[a] = 0.0
        C = GA.T @ free
        for a in range(nact):
            cn[a] = np.sqrt(np.dot(C[a], C[a]))
            for j in range(r):
                res[j] += mu[a] * C[a, j]
                size[j] += mu[a] * abs(C[a, j])
    rho = np.sqrt(np.dot(res, res)) + 1e-14 * np.sqrt(np.dot(size, size))
    # the admissible cone is {0}: the tight rows, normalised, have a large smallest singular value
    e = np.full(n + nact, np.inf)
    for i in range(n):
        if lam[i] * an[i] > 0.0:
            e[i] = rho / (lam[i] * an[i])
    for a in range(nact):
        if mu[a] * cn[a] > 0.0:
            e[n + a] = rho / (mu[a] * cn[a])
    nt = 0
    for k in range(n + nact):
        if e[k] <= 1e-6:
            nt += 1
    if nt >= r:
        M = np.empty((nt, r))
        el2 = 0.0
        k2 = 0
        for k in range(n + nact):
            if e[k] <= 1e-6:
                if k < n:
                    for j in range(r):
                        M[k2, j] = A[k, j] / an[k]
                else:
                    for j in range(r):
                        M[k2, j] = C[k - n, j] / cn[k - n]
                el2 += e[k] * e[k]
                k2 += 1
        sv = np.linalg.svd(M, full_matrices=False)[1]
        if sv[r - 1] > 2.0 * np.sqrt(el2):
            return True
    # every candidate's margin can rise by at most 1e-9 (relative)
    amax = 0.0
    for i in range(n):
        if an[i] > amax:
            amax = an[i]
    for i in range(n):
        c = cand[i] and an[i] > 0.0
        if threshold:
            c = an[i] > 1e-12 * max(1.0, amax)
        if c and not (e[i] <= 1e-9):
            return False
    return True


# ------------------------------------------------------------------------------ the objective
def _builtin_kind(loss):
    """(kind, penalised) when the loss is the built-in logistic or exponential loss, alone or
    plus a quadratic penalty b'Qb (a :class:`~cudbound.losses.RidgeLoss`, or a ridge loss
    carried to orthonormal coordinates by ``design``); else None. Decided by what the loss
    computes (:func:`~cudbound.losses.same_math`), not by its exact class."""
    penalised = same_math(loss, RidgeLoss) or same_math(loss, PenalisedLoss)
    base = loss.base if penalised else loss
    for cls, kind in ((LogisticLoss, KIND_LOGISTIC), (ExponentialLoss, KIND_EXPONENTIAL)):
        if same_math(base, cls):
            return kind, penalised
    return None


class _Objective:
    """L(b) at fixed weights: its value, gradient and Hessian.

    Built-in losses keep only the weighted points (the compiled kernel reads them); a
    loss that is the built-in weighted mean of ``pointwise`` and ``derivatives`` is
    evaluated on those points in NumPy; any other through its own ``value``,
    ``gradient`` and ``hessian``.
    """

    def __init__(self, loss, design, y, weights, kind):
        self.loss, self.design, self.y, self.weights = loss, design, y, weights
        n = len(y)
        on = weights != 0
        self.D = np.ascontiguousarray(design[on])
        self.yo = np.ascontiguousarray(y[on])
        self.wn = weights[on] / n
        self.kind = kind
        if kind is not None:
            k, penalised = kind
            self.kind_id = k
            p = design.shape[1]
            pen = np.asarray(loss.penalty_matrix(design), dtype=float) if penalised else np.zeros((0, 0))
            self.pen = np.ascontiguousarray(0.5 * (pen + pen.T))  # 0 x 0: no penalty (skipped)
        self.pointwise = self.is_pointwise(loss)

    @property
    def model(self):
        """What :func:`_sqp` evaluates: (kind, D, yo, wn, pen) for a built-in loss, else this object."""
        return (self.kind_id, self.D, self.yo, self.wn, self.pen) if self.kind is not None else self

    @staticmethod
    def is_pointwise(loss) -> bool:
        """The loss is the built-in weighted mean of its ``pointwise`` and ``derivatives``."""
        t = type(loss)
        return (t.value is Loss.value and t.gradient is Loss.gradient and t.hessian is Loss.hessian
                and t.derivatives is not Loss.derivatives and t.pointwise is not Loss.pointwise)

    def value(self, b):
        if self.pointwise:
            with np.errstate(over="ignore", invalid="ignore"):
                return float(np.dot(self.wn, self.loss.pointwise(self.yo, self.D @ b)))
        return float(self.loss.value(self.design, self.y, self.weights, b))

    def derivatives(self, b):
        """(gradient, Hessian) at b."""
        if self.pointwise:
            with np.errstate(over="ignore", invalid="ignore"):
                d1, d2 = self.loss.derivatives(self.yo, self.D @ b)
            d1 = np.broadcast_to(np.asarray(d1, dtype=float), self.yo.shape)
            d2 = np.broadcast_to(np.asarray(d2, dtype=float), self.yo.shape)
            return self.D.T @ (self.wn * d1), self.D.T @ (self.D * (self.wn * d2)[:, None])
        return (np.asarray(self.loss.gradient(self.design, self.y, self.weights, b), dtype=float),
                np.asarray(self.loss.hessian(self.design, self.y, self.weights, b), dtype=float))


# ------------------------------------------------------------------------------ the solver
class SmoothNodeSolver(NodeSolver):
    """Exact node solver for a non-quadratic loss with derivatives (see the module docstring).

    ``warm`` (from a parent's :class:`NodeSolution`) is ``(x, sep, token)``: the parent's
    minimiser of the loss on its kept points, ``(I+, d*)`` of its cone (None: nothing
    separated) and the replicate it belongs to.
    """

    def __init__(self, loss, design, y, *, max_iter=MAX_ITER):
        if loss.is_quadratic or not loss.has_derivatives:
            raise ValueError("SmoothNodeSolver needs a non-quadratic loss with derivatives")
        self.loss = loss
        self.design = np.ascontiguousarray(design, dtype=float)
        self.y = np.ascontiguousarray(y, dtype=float)
        self.max_iter = int(max_iter)
        self.kind = _builtin_kind(loss)
        self._free = loss.unpenalised_directions(self.design) if loss.tends_to_zero else None
        # the loss whose pointwise derivatives give the multipliers of the non-separation certificate
        self._dloss = None
        if self._free is not None:
            if self.kind is not None:
                self._dloss = loss.base if self.kind[1] else loss
            elif _Objective.is_pointwise(loss):
                self._dloss = loss
        self._norms = np.sqrt(np.einsum("ij,ij->i", self.design, self.design))
        self._free_c = None if self._free is None else np.ascontiguousarray(self._free, dtype=float)
        self._objectives = {}
        self._token = None
        self.lp_solves = 0   # separation linear programs solved (for measurement)
        self.failures = 0    # nodes that raised NodeSolveError (handed to the fallback)

    def set_weights(self, counts):
        self.counts = np.asarray(counts, dtype=float)
        self._objectives = {}
        self._token = next(_tokens)
        self._root = None       # the root's NodeSolution once known
        self._start = None      # start of the screening solves (the root's minimiser)
        self._root_sep = None   # (I+, d*) of the whole space; None: nothing separable
        if self._free is None:
            return
        G = np.zeros((0, self.design.shape[1]))
        if self._dloss is not None:
            # try the certificate first: a minimiser with positive multipliers on every point
            x = np.zeros(self.design.shape[1])
            status, value, act = self._run(self.counts, G, x, TRIAL_ITER)
            if status == 0 and self._nothing_separable(x, G, act, None):
                self._start = x
                self._root = NodeSolution(float(value), x, (x, None, self._token))
                return
        self.lp_solves += 1
        try:
            mask, d = separation(self.design, self.y, self.counts, self._free)
        except SeparationUnknown:
            mask, d = self.counts > 0, None  # undecided: every node solves its LP
        if mask.any():
            self._root_sep = (mask, d)

    def values_at(self, betas, weights):
        """L(D^(b), beta) at ``weights`` for each row of ``betas``, evaluated as the compiled SQP evaluates a
        node's minimum (a built-in loss: ``kind`` is not None)."""
        if self.kind is None:
            raise ValueError("values_at evaluates a built-in logistic or exponential loss only")
        model = self._objective(np.asarray(weights, dtype=float)).model
        out = np.empty(len(betas))
        _values_at(*model, np.ascontiguousarray(betas, dtype=np.float64), out)
        return out

    def loss_floor(self, x, weights):
        """A function giving, for each row b of an array, a lower bound on L(D^(b), b) at ``weights``; None unless
        the loss is a built-in logistic or exponential one whose Hessian H at x is safely positive definite.

        With g the gradient at x, eps = (g'H^-1 g)^(1/2), q = ((b - x)'H(b - x))^(1/2) and r the mean of
        :func:`_factor_r`, L(b) >= L(x) + g'(b - x) + q^2 psi(r q) >= L(x) + h(q) - eps q, h(q) = q^2 psi(r q)
        = (e^-rq + r q - 1) / r^2 (``bounds._flip_d``, as :meth:`flip_bounds`, along any direction), less
        1e-12 max(1, |L(x)| + h(q) + eps q) for the round-off of the evaluations (:func:`_floor_at`)."""
        if self.kind is None or x is None:
            return None
        obj = self._objective(np.asarray(weights, dtype=float))
        x = np.ascontiguousarray(x, dtype=np.float64)
        sm = (obj.kind_id, obj.D, obj.yo, obj.wn, obj.pen, 0)
        L = np.empty((len(x), len(x)))
        f, r, eps = _growth_terms(sm, x, L, np.empty(factor_workspace(len(x), obj.D.shape[0])))
        if not r > 0.0 or not math.isfinite(f):
            return None

        def floor(betas):
            out = np.empty(len(betas))
            _floor_at(L, x, f, r, eps, np.ascontiguousarray(betas, dtype=np.float64), out)
            return out
        return floor

    def screen_batch(self, rows, sides, can_flip, level, L_max):
        """The screening solves of the rows (``problem.ReplicateProblem._screen_by_solves``) in
        compiled code, from the root's minimiser: (out, solves) of :func:`_screen_compiled`, or
        None (not a built-in loss, or no root yet)."""
        if self.kind is None or self._start is None:
            return None
        obj = self._objective(self.counts)
        Phi = np.ascontiguousarray(self.design[rows])
        return _screen_compiled(obj.kind_id, obj.D, obj.yo, obj.wn, obj.pen, Phi,
                                np.ascontiguousarray(sides, dtype=float), can_flip,
                                np.ascontiguousarray(self._start, dtype=float), float(level), float(L_max),
                                self.max_iter)

    def flip_bounds(self, x, Phi):
        """Lower bounds on L(b) - L(x) over b with phi_k'b on the other side of 0 from
        phi_k'x, for the rows phi_k of Phi, x (nearly) the unconstrained minimiser at the
        current weights; None unless the loss is a built-in logistic or exponential one.

        With H the Hessian at x, g the gradient, eps = (g'H^-1 g)^(1/2), q_k = |phi_k'x| /
        (phi_k'H^-1 phi_k)^(1/2) and r the mean of :func:`_factor_r` over the weighted points,
        L(x + d) - L(x) >= g'd + q^2 psi(r q) >= h(q) - eps q with q = (d'Hd)^(1/2) >= q_k
        and h(q) = (e^-rq + r q - 1) / r^2 (``search.bounds._flip_d``); h - eps q is convex,
        so the bound is h(q_k) - eps q_k when h'(q_k) = (1 - e^-r q_k) / r >= eps, else 0."""
        if self.kind is None:
            return None
        obj = self._objective(self.counts)
        return _flip_bounds((obj.kind_id, obj.D, obj.yo, obj.wn, obj.pen, 0), np.ascontiguousarray(x, dtype=float),
                            np.ascontiguousarray(Phi, dtype=float))

    def _objective(self, weights):
        key = weights.tobytes()
        obj = self._objectives.get(key)
        if obj is None:
            if len(self._objectives) > 64:
                self._objectives.clear()
            obj = self._objectives[key] = _Objective(self.loss, self.design, self.y, weights, self.kind)
        return obj

    def _run(self, weights, G, x, max_iter, rows=None):
        """The SQP iteration from x (overwritten): (status, value, active rows of G)."""
        obj = self._objective(weights)
        norms = np.sqrt(np.einsum("ij,ij->i", G, G)) if rows is None else np.ascontiguousarray(self._norms[rows])
        act = np.zeros(len(x), dtype=np.int64)
        sqp = _sqp_compiled if self.kind is not None else _sqp
        try:
            status, value, nact = sqp(obj.model, G, norms, x, max_iter, act, np.nan, np.zeros(0), np.zeros((0, 0)))
        except _NUMERIC_ERRORS as exc:  # a LAPACK failure (eigh)  # pragma: no cover
            raise NodeSolveError(f"smooth solver: {exc}") from None
        if status in (3, 5) and np.all(np.isfinite(x)):
            # a stalled line search or a failed certificate: the certificate with every row
            # active at x, else Newton's method on the face read off x (optim.smooth.polish_smooth)
            if status == 5 and self._kkt_all_active(obj, G, rows, x):
                status = 0
            else:
                polished = self._polish(weights, G, x)
                if polished is not None:
                    x[:] = polished
                    value = self.loss.value(self.design, self.y, weights, x)
                    status = 0 if np.isfinite(value) else status
        if status == 0 and self.kind is None:
            value = self.loss.value(self.design, self.y, weights, x)
        return status, float(value), np.array(act[:nact])

    def _polish(self, weights, G, x):
        """``optim.smooth.polish_smooth`` from x: the polished, KKT-certified point or None."""
        loss, design, y = self.loss, self.design, self.y
        with np.errstate(over="ignore", invalid="ignore"):
            return polish_smooth(lambda b: loss.value(design, y, weights, b),
                                 lambda b: loss.gradient(design, y, weights, b),
                                 lambda b: loss.hessian(design, y, weights, b), G, x)

    def _kkt_all_active(self, obj, G, rows, x):
        """The KKT certificate with every row active at x (slack <= ACTIVE_TOL |x| |G_k|) and
        non-negative least squares, when the active set of the last QP alone does not give
        one (e.g. two opposite rows, of which the QP keeps one)."""
        norms = self._norms[rows] if rows is not None else np.sqrt(np.einsum("ij,ij->i", G, G))
        xs = max(1.0, float(np.linalg.norm(x)))
        slack = (G @ x) / norms
        if G.shape[0] and float(np.min(slack)) < -CHECK_TOL * xs:
            return False
        g = np.empty(len(x))
        _evaluate(obj.model, x, g, np.empty((len(x), len(x))), True)
        if not np.all(np.isfinite(g)):
            return False
        act = np.flatnonzero(slack <= ACTIVE_TOL * xs)
        gn = float(np.linalg.norm(g))
        if len(act) == 0:
            return gn <= CHECK_TOL
        _, resid = nnls(G[act].T, g)
        return resid <= CHECK_TOL * max(1.0, gn)

    def _nothing_separable(self, x, G, act, candidates):
        """Certificate that the cone {G b >= 0} separates none of the candidate points.

        At the computed minimiser x of the loss with every weighted point kept, write the
        KKT condition in the unpenalised coordinates (columns N of ``free``, on which the
        penalty's gradient vanishes) as r = sum_i lam_i a_i + sum_{k in A} mu_k c_k, with
        a_i = y_i N'phi_i, lam_i = -w_i y_i l'(y_i, phi_i'x) / n >= 0 (a margin loss
        decreases in y t), c_k = N'G_k and mu_k >= 0 the multipliers of the active rows.
        On an admissible unit direction d (a_j'd >= 0 for every weighted j, G d >= 0) every
        term is >= 0, so each is at most rho = |r| (plus a round-off allowance of 1e-14 times
        the size of the terms): a_j'd / |a_j| <= e_j = rho / (lam_j |a_j|), and likewise
        c_k'd / |c_k| <= rho / (mu_k |c_k|). Either

        - the rows with e <= 1e-6, normalised, have smallest singular value above twice
          the norm of their e's: then no unit d is admissible, the admissible cone is {0}
          and nothing is separable; or
        - e_i <= 1e-9 for every candidate i: no admissible direction raises a candidate's
          margin by more than 1e-9 relative (the separation linear program's own
          tolerance is 1e-7).
        """
        obj = self._objective(self.counts)
        if self.kind is not None:
            d1 = _pointwise_d1(obj.kind_id, obj.D, obj.yo, x)
            pen = obj.pen
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                d1 = self._dloss.derivatives(obj.yo, obj.D @ x)[0]
            d1 = np.ascontiguousarray(np.broadcast_to(np.asarray(d1, dtype=float), obj.yo.shape))
            pen = np.zeros((0, 0))
        if candidates is None:
            cand, threshold = np.zeros(len(obj.yo), dtype=np.bool_), True
        else:
            cand, threshold = np.ascontiguousarray(candidates[self.counts > 0]), False
        try:
            return bool(_no_separation_certificate(obj.D, obj.yo, obj.wn, d1, self._free_c, G,
                                                   np.ascontiguousarray(act, dtype=np.int64), pen, x, cand,
                                                   threshold))
        except _NUMERIC_ERRORS:  # a LAPACK failure: no certificate  # pragma: no cover
            return False

    def solve(self, rows, signs, warm=None):
        try:
            return self._solve(rows, signs, warm)
        except NodeSolveError:
            self.failures += 1
            raise

    def _solve(self, rows, signs, warm):
        rows = np.asarray(rows, dtype=np.int64)
        signs = np.asarray(signs, dtype=float)
        if warm is not None and warm[2] != self._token:
            warm = None  # from another replicate
        if len(rows) == 0 and warm is None and self._root is not None:
            return self._root
        G = np.ascontiguousarray(self.design[rows] * signs[:, None])
        if warm is not None:
            start = warm[0]
        elif len(rows) and self._start is not None:
            start = self._start
        else:
            start = np.zeros(self.design.shape[1])
        sep = None
        if self._root_sep is not None:
            parent = warm[1] if warm is not None else self._root_sep
            if parent is not None:
                pmask, pd = parent
                if pd is not None and (len(rows) == 0 or np.all(
                        G @ pd >= -REUSE_TOL * float(np.linalg.norm(pd)) * self._norms[rows])):
                    sep = parent  # d* stays in this cone: I+ is the parent's
                else:
                    if self._dloss is not None:
                        x = np.array(start, dtype=float)
                        status, value, act = self._run(self.counts, G, x, TRIAL_ITER, rows)
                        if status == 0 and self._nothing_separable(x, G, act, pmask):
                            return self._solution(rows, x, value, None)
                    self.lp_solves += 1
                    try:
                        mask, d = separation(self.design, self.y, self.counts, self._free, G, pmask)
                    except SeparationUnknown as exc:
                        raise NodeSolveError(f"separation LP: {exc}") from None
                    sep = (mask, d) if mask.any() else None
        weights = self.counts if sep is None else np.where(sep[0], 0.0, self.counts)
        x = np.array(start, dtype=float)
        status, value, _ = self._run(weights, G, x, self.max_iter, rows)
        if status != 0:
            raise NodeSolveError(f"smooth solver: {_STATUS[status]}")
        return self._solution(rows, x, value, sep)

    def _solution(self, rows, x, value, sep):
        if len(rows) == 0:
            self._start = x
        warm = (x, sep, self._token)
        if sep is None:
            sol = NodeSolution(value, x, warm)
        else:
            point, point_value = push_to_infimum(self.loss, self.design, self.y, self.counts, x, sep[1], value,
                                                 rows=self.design)
            sol = NodeSolution(value, point, warm, point_value=point_value)
        if len(rows) == 0:
            self._root = sol
        return sol
