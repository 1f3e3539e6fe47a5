"""Many smooth convex fits at once: damped Newton's method on stacked parts, and a certificate
that a part's points are not separable.

Part g of a batch is

    min over gamma of  F_g(gamma) = (1/n) sum_i w_gi l(y_i, z_gi'gamma) + |M_g gamma|^2,

l(y, t) a convex loss with pointwise derivatives (logistic, exponential, a user's), Z the design
(one for every part, or one per part) and M_g the factor of a penalty (none, or a ridge penalty
in these coordinates, M = sqrt(lam) J T). The penalty is evaluated as |M gamma|^2, never as
gamma'M'M gamma: with features in very different units M'M spans many orders, and the rounding
of gamma'(M'M)gamma would hide the last decreases of F from the line search. All parts step together: their gradients and Hessians come from
stacked products, their Newton steps s = -H^-1 g from one stacked solve, and each part backtracks
on its own objective (Armijo: t halved until F(gamma + t s) <= F(gamma) - 1e-4 t lambda^2, with
lambda^2 = g'H^-1 g the squared Newton decrement; Boyd & Vandenberghe 2004, *Convex
Optimization*, sec. 9.5).

A part stops as :func:`cudbound.optim.smooth.polish_smooth` stops one problem: once lambda^2 <=
:data:`DECREMENT_RTOL` max(1, |F|) (F - F* is about lambda^2 / 2, below what F resolves) it takes
one last full step. It has *converged* when then its gradient has norm <= :data:`GRADIENT_TOL`
(polish_smooth's certificate) and its minimiser is unique: the Hessian restricted to the
unpenalised directions F (the null space of M; all of them without a penalty), F'HF, is positive
definite, least eigenvalue above :data:`PD_RTOL` times the largest. (As M'M is positive definite off F, H is
positive definite exactly when F'HF is; restricted, the test is not swayed by a penalty whose
scale in these coordinates differs from the data's by many orders, as a ridge penalty on
features in very different units does.) Any other outcome (a step the line search
cannot take, a singular Hessian, no convergence in ``max_iter`` steps, an iterate that separates
the part's points) is the part's status, never an exception: the caller solves those parts
another way.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["StackedParts", "newton_parts", "newton_steps", "separation_excluded", "CONVERGED", "SEPARATES", "STALLED",
           "SINGULAR", "MAX_ITER", "UNCERTIFIED", "STATUS_NAMES", "DECREMENT_RTOL", "GRADIENT_TOL", "PD_RTOL"]

DECREMENT_RTOL = 1e-15
"""A part stops (after one last full step) once lambda^2 <= this times max(1, |F|), as polish_smooth."""

GRADIENT_TOL = 1e-7
"""A stopped part has converged only if its gradient's norm is at most this (polish_smooth's check)."""

PD_RTOL = 1e-8
"""...and its Hessian on the unpenalised directions has least eigenvalue above this times its largest
(the rtol of the fit's uniqueness rule, :func:`cudbound.fit.fit_coefficients`)."""

_ARMIJO = 1e-4
_MIN_STEP = 1e-12
_OUTER_VALUES = 1 << 22
"""A shared design's n x p^2 table of products z_i z_i' is kept up to this many numbers (32 MB)."""

_RUNNING, CONVERGED, SEPARATES, STALLED, SINGULAR, MAX_ITER, UNCERTIFIED = range(-1, 6)
STATUS_NAMES = {CONVERGED: "converged", SEPARATES: "an iterate separates the part's points",
                STALLED: "the line search found no decrease", SINGULAR: "singular or non-finite Hessian",
                MAX_ITER: "no convergence in max_iter steps",
                UNCERTIFIED: "stopped without the gradient or Hessian certificate"}


class StackedParts:
    """G problems F_g (module docstring): ``Z`` (n, p) shared or (G, n, p), labels ``y`` (n,), weights
    ``W`` (G, n), penalty factor ``M`` None, (k, p) shared or (G, k, p), and ``loss``, whose ``pointwise`` and
    ``derivatives`` are evaluated elementwise (on flat arrays). A point of weight 0 counts 0, even
    where its loss overflows."""

    def __init__(self, Z: np.ndarray, y: np.ndarray, W: np.ndarray, M: np.ndarray | None, loss: Any,
                 outer: np.ndarray | None = None, Q: np.ndarray | None = None) -> None:
        self.Z, self.y, self.W, self.M, self.loss = Z, y, W, M, loss
        self.shared = Z.ndim == 2
        n, p = Z.shape[-2:]
        if outer is None and self.shared and n * p * p <= _OUTER_VALUES:
            outer = (Z[:, :, None] * Z[:, None, :]).reshape(n, p * p) / n     # row i: z_i z_i' / n
        self.outer = outer
        if Q is None and M is not None:
            Q = np.swapaxes(M, -1, -2) @ M      # the Hessian of |M gamma|^2, halved
        self.Q = Q

    def take(self, idx: np.ndarray) -> StackedParts:
        """The parts ``idx`` (an index or boolean array)."""
        if self.M is None or self.M.ndim == 2:
            M, Q = self.M, self.Q
        else:
            M, Q = self.M[idx], self.Q[idx]
        return StackedParts(self.Z if self.shared else self.Z[idx], self.y, self.W[idx], M, self.loss, self.outer, Q)

    def scores(self, gamma: np.ndarray) -> np.ndarray:
        """(G, n) decision values z_gi'gamma_g."""
        return gamma @ self.Z.T if self.shared else np.einsum("gnp,gp->gn", self.Z, gamma)

    def _pointwise(self, name: str, t: np.ndarray):
        y = np.broadcast_to(self.y, t.shape).ravel()
        with np.errstate(over="ignore", invalid="ignore"):
            got = getattr(self.loss, name)(y, t.ravel())
        return got

    def _penalty(self, gamma: np.ndarray) -> np.ndarray:
        """(G, k) M_g gamma_g."""
        if self.M is None:
            return np.zeros((gamma.shape[0], 0))
        return gamma @ self.M.T if self.M.ndim == 2 else np.einsum("gkp,gp->gk", self.M, gamma)

    def value(self, gamma: np.ndarray) -> np.ndarray:
        """(G,) F_g(gamma_g)."""
        t = self.scores(gamma)
        values = np.asarray(self._pointwise("pointwise", t), dtype=float).reshape(t.shape)
        with np.errstate(invalid="ignore", over="ignore"):
            data = np.einsum("gn,gn->g", self.W, np.where(self.W != 0, values, 0.0)) / t.shape[1]
            r = self._penalty(gamma)
            return data + np.einsum("gk,gk->g", r, r)

    def derivatives(self, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(G, n) w_gi l'(y_i, t_gi) and w_gi l''(y_i, t_gi) (0 where w_gi = 0)."""
        t = self.scores(gamma)
        d1, d2 = self._pointwise("derivatives", t)
        on = self.W != 0
        with np.errstate(invalid="ignore", over="ignore"):
            return (np.where(on, self.W * np.reshape(d1, t.shape), 0.0),
                    np.where(on, self.W * np.reshape(d2, t.shape), 0.0))

    def gradient_hessian(self, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(G, p) gradients and (G, p, p) Hessians of F_g at gamma_g."""
        G, p = gamma.shape
        n = self.Z.shape[-2]
        c1, c2 = self.derivatives(gamma)
        c1 /= n
        if self.shared:
            g = c1 @ self.Z
            if self.outer is not None:
                H = (c2 @ self.outer).reshape(G, p, p)
            else:
                H = (self.Z.T[None, :, :] * (c2 / n)[:, None, :]) @ self.Z
        else:
            g = np.einsum("gn,gnp->gp", c1, self.Z)
            H = (self.Z.transpose(0, 2, 1) * (c2 / n)[:, None, :]) @ self.Z
        if self.M is not None:
            r = self._penalty(gamma)
            g += 2.0 * (r @ self.M if self.M.ndim == 2 else np.einsum("gk,gkp->gp", r, self.M))
            H += 2.0 * self.Q
        return g, H


def _steps(H: np.ndarray, g: np.ndarray) -> np.ndarray:
    """-H_g^-1 g_g for every part (NaN where H_g is singular)."""
    try:
        return -np.linalg.solve(H, g[..., None])[..., 0]
    except np.linalg.LinAlgError:   # one singular matrix fails the whole stack: solve them one by one
        out = np.full(g.shape, np.nan)
        for k in range(g.shape[0]):
            try:
                out[k] = -np.linalg.solve(H[k], g[k])
            except np.linalg.LinAlgError:
                pass
        return out


def newton_steps(parts: StackedParts, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(G, p) Newton steps s = -H^-1 g of every part at gamma (NaN where H is singular) and (G,) their
    decrements g'H^-1 g."""
    g, H = parts.gradient_hessian(gamma)
    step = _steps(H, g)
    return step, -np.einsum("gp,gp->g", g, step)


def positive_definite_parts(H: np.ndarray, rtol: float = PD_RTOL) -> np.ndarray:
    """(G,) whether each H_g has its least eigenvalue above ``rtol`` times its largest: a Cholesky
    factor of H_g - rtol tr(H_g) I proves it for the whole stack at once (tr >= the largest
    eigenvalue); when one fails, the eigenvalues decide each part."""
    ok = np.all(np.isfinite(H), axis=(1, 2))
    if not ok.any():
        return ok
    Hk = H[ok]
    p = H.shape[-1]
    shift = rtol * np.einsum("gii->g", Hk)[:, None, None] * np.eye(p)
    try:
        np.linalg.cholesky(Hk - shift)
        return ok
    except np.linalg.LinAlgError:
        pass
    try:
        ev = np.linalg.eigvalsh(Hk)
    except np.linalg.LinAlgError:
        ev = np.array([np.linalg.eigvalsh(h) if np.all(np.isfinite(h)) else np.full(p, np.nan) for h in Hk])
    ok[ok] = ev[:, 0] > rtol * np.maximum(ev[:, -1], 1e-300)
    return ok


def _line_search(parts: StackedParts, gamma: np.ndarray, step: np.ndarray, f: np.ndarray,
                 dec: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Backtracking per part: (new gamma, new F, accepted) with t = 1, 1/2, ... down to 1e-12."""
    t = np.ones(len(f))
    new = gamma + step
    fn = parts.value(new)
    todo = ~(np.isfinite(fn) & (fn <= f - _ARMIJO * t * dec))
    while todo.any():
        t[todo] *= 0.5
        todo &= t >= _MIN_STEP
        k = np.flatnonzero(todo)
        if not k.size:
            break
        new[k] = gamma[k] + t[k, None] * step[k]
        fn[k] = parts.take(k).value(new[k])
        todo[k] = ~(np.isfinite(fn[k]) & (fn[k] <= f[k] - _ARMIJO * t[k] * dec[k]))
    accepted = t >= _MIN_STEP
    return new, fn, accepted


def newton_parts(parts: StackedParts, start: np.ndarray, *, free: np.ndarray | None = None, max_iter: int = 100,
                 stop_separating: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Minimise every F_g by damped Newton from ``start`` (G, p): (gamma (G, p), status (G,)), status
    one of CONVERGED, SEPARATES, STALLED, SINGULAR, MAX_ITER, UNCERTIFIED (module docstring).

    ``free``: an orthonormal basis of the unpenalised directions, (p, r) shared or (G, p, r) (None:
    every direction), on which uniqueness is checked.

    ``stop_separating``: a part leaves as SEPARATES once an iterate gives every point of positive
    weight a positive margin y_i z_i'gamma (for a loss that tends to 0 with every direction
    unpenalised, a proof that it has no minimiser). A start whose F is not finite is replaced by 0.
    """
    gamma = np.array(start, dtype=float)
    G = gamma.shape[0]
    status = np.full(G, _RUNNING)
    f = parts.value(gamma)
    bad = ~np.isfinite(f)
    if bad.any():
        gamma[bad] = 0.0
        f[bad] = parts.take(bad).value(gamma[bad])
        status[~np.isfinite(f)] = STALLED
    active = np.flatnonzero(status == _RUNNING)
    finished = np.zeros(G, dtype=bool)
    for _ in range(max_iter):
        if not active.size:
            break
        sub = parts.take(active)
        step, dec = newton_steps(sub, gamma[active])
        ok = np.all(np.isfinite(step), axis=1) & np.isfinite(dec) & (dec >= 0.0)
        status[active[~ok]] = SINGULAR
        last = ok & (dec <= DECREMENT_RTOL * np.maximum(1.0, np.abs(f[active])))
        gamma[active[last]] += step[last]
        finished[active[last]] = True
        move = np.flatnonzero(ok & ~last)
        if not move.size:
            active = active[:0]
            break
        at = active[move]
        new, fn, accepted = _line_search(sub.take(move), gamma[at], step[move], f[at], dec[move])
        status[at[~accepted]] = STALLED
        gamma[at[accepted]], f[at[accepted]] = new[accepted], fn[accepted]
        at = at[accepted]
        if stop_separating and at.size:
            margins = parts.y * parts.take(at).scores(gamma[at])
            separates = np.all((margins > 0.0) | (parts.W[at] == 0.0), axis=1)
            status[at[separates]] = SEPARATES
            at = at[~separates]
        active = at
    status[active] = MAX_ITER
    fin = np.flatnonzero(finished)
    if fin.size:
        g, H = parts.take(fin).gradient_hessian(gamma[fin])
        good = np.linalg.norm(g, axis=1) <= GRADIENT_TOL
        if free is None:
            good &= positive_definite_parts(H)
        elif free.shape[-1]:
            F = free if free.ndim == 2 else free[fin]
            good &= positive_definite_parts(np.swapaxes(F, -1, -2) @ H @ F)
        status[fin] = np.where(good, CONVERGED, UNCERTIFIED)
    return gamma, status


def separation_excluded(rows: np.ndarray, W: np.ndarray, multipliers: np.ndarray) -> np.ndarray:
    """(G,) parts certified to have no separating direction in the sense of
    :func:`cudbound.optim.smooth.separation`, from the multipliers of a minimiser.

    ``rows``: (n, r) or (G, n, r), a_i = y_i F'z_i with F an orthonormal basis of the unpenalised
    directions (separation's A); ``W`` (G, n) the weights (only w > 0 counts); ``multipliers``
    (G, n) lam_i >= 0, e.g. lam_i = -w_i y_i l'(y_i, t_i) of a margin loss at a minimiser: positive,
    and sum_i lam_i a_i = -n F'(the gradient of the data term) ~ 0.

    P: the weighted points with a_i != 0; u_i = a_i / |a_i|. For a subset S of P whose u_i span R^r
    (least singular value sigma_S > 0), any mu_i > 0 on S and r_S = sum_S mu_i u_i: a d with
    u_i'd >= -kappa |d| on S has sum over u_i'd > 0 of u_i'd >= (sigma_S - |S| kappa)|d|, and
    min_S mu times that is at most r_S'd + kappa |d| sum_S mu. So when

        min_S mu (sigma_S - |S| kappa) > |r_S| + kappa sum_S mu   (|r_S| plus its rounding),

    no d != 0 has u_i'd >= -kappa |d| on S: no direction separates the part (kappa = 0: Stiemke's
    theorem with a margin), nor is one the direction separation's cleaning accepts, which is
    within 1e-10 sigma_max(A) |d| of the null space of the rows it does not separate (kappa =
    2e-10 |A_P|_F / min_S |a_i|, twice that cut-off for rounding) and has u_i'd > 0.25 on the
    others. Tried: mu_i = lam_i |a_i| on S = P, then on the points whose mu_i is at least 1e-2,
    1e-4, ..., 1e-12 of the largest (points far on their side have multipliers that vanish or
    underflow; they need not take part), and with one unpenalised direction (r = 1, u_i = +-1)
    mu_i = 1 / (the number of points of u_i's sign) on S = P, for which r_S = 0: any part whose
    rows take both signs. A part that passes is one on which separation finds nothing (so
    :func:`cudbound.fit.check_minimiser_exists` raises nothing); one that fails may still have a
    minimiser: the caller asks the linear program.
    """
    G, n = W.shape
    an = np.broadcast_to(np.sqrt(np.einsum("...ni,...ni->...n", rows, rows)), (G, n))
    P = (W > 0) & (an > 0)
    units = rows / np.where(an > 0, an, 1.0)[..., None] if rows.ndim == 3 else \
        rows / np.where(an[0] > 0, an[0], 1.0)[:, None]
    frob = np.sqrt(np.einsum("gn,gn->g", P.astype(float), an * an))
    shared = rows.ndim == 2

    def certified(mu: np.ndarray, S: np.ndarray) -> np.ndarray:
        mu = np.where(S, mu, 0.0)
        Sf = S.astype(float)
        ev = np.linalg.eigvalsh(np.einsum("gn,ni,nj->gij" if shared else "gn,gni,gnj->gij", Sf, units, units))
        sigma = np.sqrt(np.maximum(ev[:, 0] - 1e-13 * np.maximum(ev[:, -1], 0.0), 0.0))
        an_min = np.min(np.where(S, an, np.inf), axis=1)
        kappa = 2e-10 * frob / np.where(np.isfinite(an_min), an_min, 1.0)
        mu_min = np.min(np.where(S, mu, np.inf), axis=1)
        r = np.linalg.norm(np.einsum("gn,ni->gi" if shared else "gn,gni->gi", mu, units), axis=1)
        mu_sum = mu.sum(axis=1)
        with np.errstate(invalid="ignore"):
            return (S.any(axis=1) & np.isfinite(mu_min) & (mu_min > 0.0) & (mu_min * (sigma - S.sum(axis=1) * kappa)
                    > r + (kappa + 8.0 * n * np.finfo(float).eps) * mu_sum))

    mu = np.where(P, multipliers * an, 0.0)
    ok = certified(mu, P)
    largest = mu.max(axis=1, keepdims=True)
    for cut in (1e-2, 1e-4, 1e-6, 1e-8, 1e-10, 1e-12):
        if ok.all():
            break
        ok |= certified(mu, P & (mu >= cut * largest))
    if rows.shape[-1] == 1 and not ok.all():
        side = units[..., 0] > 0 if rows.ndim == 3 else np.broadcast_to(units[:, 0] > 0, (G, n))
        count_pos = np.einsum("gn,gn->g", P.astype(float), side.astype(float))
        count_neg = P.sum(axis=1) - count_pos
        with np.errstate(divide="ignore"):
            balanced = np.where(side, 1.0 / count_pos[:, None], 1.0 / count_neg[:, None])
        ok |= certified(np.where(np.isfinite(balanced), balanced, 0.0), P)
    return ok
