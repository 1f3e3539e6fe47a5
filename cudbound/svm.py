"""Joachims' xi-alpha estimators for soft-margin SVMs, and their exact leave-one-out.

For the soft-margin SVM with a bias, trained once on n points, with dual solution alpha
(0 <= alpha_i <= C) and slacks xi_i = max(0, 1 - y_i f(x_i)), Joachims (2000) counts

    d = |{i : rho alpha_i R^2 + xi_i >= 1}|,     d+ / d- the same count over the positives / negatives,

and estimates (Joachims 2000, Definitions 1 and 2; rho = 2)

    error = d / n,   recall = 1 - d+ / n+,   precision = (n+ - d+) / (n+ - d+ + d-),
    F1 = (2 n+ - 2 d+) / (2 n+ - d+ + d-).

By his Lemma 1, with rho = 2 and R^2 >= K(x, x) - K(x, x') for all training points, only a
counted point can be a leave-one-out error, so d >= the number of leave-one-out errors and
the estimate is pessimistic (Theorem 1). Lemma 2: adding a constant to the kernel changes
nothing; more generally, neither does K(x, x') - g(x) - g(x') + c, because y' alpha = 0. So
``radius="theorem"`` (the default) centres the kernel in feature space (:func:`centred_kernel`)
and takes R^2 = max_i Kc(x_i, x_i) - min_{i,j} Kc(x_i, x_j), the least R^2 the lemma allows
once the centred kernel's minimum over the training set is shifted to 0; it does not depend
on where the features' zero is. :func:`loo_error` computes the exact leave-one-out error of
the same SVM, refitting only the counted points (the others are leave-one-out correct by Lemma 1),
each along the decremental solution path from the full SVM (Cauwenberghs & Poggio 2001).

The SVM is solved by :mod:`cudbound.optim.svm_dual`: compiled SMO to a KKT violation of 0.1,
then active-set steps that fix which multipliers are free, at 0 and at C, then a polish that
solves the KKT equations on the free set exactly (SMO to 1e-10 and an interior-point method
are the fallbacks). The count d compares with 1 and is only as good as the multipliers. ``radius="svmlight"`` reproduces the
estimate SVM-light V6.02 prints after training: there R^2 is the largest squared distance of
a training point from the image of the zero vector, max_i K(x_i, x_i) - 2 K(x_i, 0) + K(0, 0)
(``estimate_r_delta`` in ``svm_learn.c``, called by ``compute_xa_estimates``), and rho is 1
(the default ``learn_parm->rho=1.0`` set in ``read_input_parameters`` of ``svm_learn_main.c``,
option ``-o``). That R^2 depends on where the origin is and need not satisfy Lemma 1, and
rho = 1 is the value Joachims found accurate in practice, not the one his theorem covers.

References
----------
Joachims, T. (2000). Estimating the generalization performance of a SVM efficiently.
ICML 2000, 431-438; Joachims, T. (2002). Learning to Classify Text Using Support Vector
Machines, ch. 5.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_data, check_scalar
from ._warnings import warn
from .optim.svm_dual import (active_set, bias_from_gradient, decrement, gradient, independent_free_set, kkt_check,
                              kkt_check_near, kkt_inverse, kkt_violation, polish, smo, solve_conic)
from .results import PointEstimateResult
from .ties import decision_signs, term_scale

__all__ = ["xi_alpha", "loo_error", "fit_svm", "kernel_matrix", "XiAlphaEstimate", "LOOResult", "SVMSolution",
           "SVMConvergenceWarning", "UnstableSVMWarning", "centred_kernel", "radius_sq"]

_NO_GRADIENT = np.empty(0)
_NO_INVERSE = np.empty((0, 0))
_SURE_MARGIN = 1e-8
"""A training error counts as a sure leave-one-out error only when xi_i > 1 + this."""

SMO_TOL = 1e-10
"""The fallback SMO run stops when the maximal KKT violation m - M is below this."""
LOOSE_TOL = 0.1
"""The first SMO run stops here; active-set steps take it from there to the exact solution."""


KKT_WARN = 1e-6
"""A KKT violation above this (times max_i sum_j alpha_j |K_ij|, at least 1: the size of the
terms summed into a margin) is reported: the count may be off."""


class SVMConvergenceWarning(UserWarning):
    """The SVM's KKT conditions could not be met to ``KKT_WARN``: the multipliers may be inaccurate.
    Far-from-zero features under a polynomial kernel do this: the kernel's differences are lost
    to round-off; standardise the features."""


class UnstableSVMWarning(UserWarning):
    """The SVM has no free support vector (0 < alpha_i < C): its bias is not unique, and Lemma 1
    of Joachims (2000), which assumes a stable SVM, does not guarantee d >= leave-one-out errors."""


def kernel_matrix(A: np.ndarray, B: np.ndarray, kernel: str | Callable[[np.ndarray, np.ndarray], ArrayLike] = "linear",
                  gamma: float = 1.0, degree: int = 3, coef0: float = 0.0) -> np.ndarray:
    """K(a, b) as in scikit-learn: "linear" <a, b>; "rbf" exp(-gamma |a - b|^2); "poly"
    (gamma <a, b> + coef0)^degree; or a callable K(A, B) -> (len(A), len(B)) matrix.

    >>> kernel_matrix(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))
    array([[11.]])
    """
    if callable(kernel):
        return np.asarray(kernel(A, B), dtype=float)
    if kernel == "linear":
        return A @ B.T
    if kernel == "rbf":
        d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
        return np.exp(-gamma * np.maximum(d2, 0.0))
    if kernel == "poly":
        return (gamma * (A @ B.T) + coef0) ** degree
    raise ValueError(f"`kernel` must be 'linear', 'rbf', 'poly' or a callable; got {kernel!r}.")


def _gamma(gamma, X):
    if gamma is None:  # scikit-learn's "scale", 1 / (d Var(X)), on centred features (shift-invariant)
        var = (X - X.mean(axis=0)).var()
        return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    return check_scalar(gamma, "gamma", numbers.Real, min_val=0.0, include_boundaries="neither")


@dataclass
class SVMSolution:
    """The dual solution: multipliers ``alpha`` (0 for left-out points), bias, decision values
    f(x) = sum_j alpha_j y_j K(x_j, x) + b on every point, and how it was reached."""

    alpha: np.ndarray
    intercept: float
    decision: np.ndarray
    polished: bool
    n_iter: int
    kkt_violation: float


def fit_svm(K: ArrayLike, y: np.ndarray, C: float, *, alpha0: ArrayLike | None = None, active: ArrayLike | None = None,
            prefer_bias: float | None = None, tol: float = SMO_TOL, max_iter: int | None = None) -> SVMSolution:
    """The soft-margin SVM with bias on kernel matrix ``K`` and labels ``y`` in {-1, +1}.

    ``alpha0`` (feasible: 0 <= alpha <= C, y' alpha = 0) warm-starts SMO; without a free
    multiplier the bias is the optimal one nearest ``prefer_bias`` (default: the middle); ``active`` (boolean)
    leaves points out of the training set. Polished when the free set allows (see
    :func:`~cudbound.optim.svm_dual.kkt.polish`).
    """
    n = len(y)
    y = np.asarray(y, dtype=float)
    active = np.ones(n, dtype=bool) if active is None else np.asarray(active, dtype=bool)
    alpha = np.zeros(n) if alpha0 is None else np.array(alpha0, dtype=float)
    alpha[~active] = 0.0
    max_iter = max(100_000, 200 * n) if max_iter is None else max_iter
    K = np.ascontiguousarray(K, dtype=float)
    if alpha0 is not None:  # warm start: active-set steps (about one per change of status), then SMO
        trial = alpha.copy()
        b, steps, ok = active_set(K, y, float(C), trial, active, 0.0 if prefer_bias is None else float(prefer_bias),
                                  max(50, n // 2), 1e-11, _NO_GRADIENT)
        if ok:
            sub = polish(K, y, C, trial, b, active=active, prefer=prefer_bias)
            if sub is not None:
                alpha, b = sub
                return SVMSolution(alpha, float(b), K @ (alpha * y) + b, True, int(steps),
                                   kkt_violation(K, y, C, alpha, b, active))
    # a loose SMO run gets near; active-set steps then fix the free set, and the polish makes it exact
    G, n_iter, _ = smo(K, y, float(C), alpha, active, max(tol, LOOSE_TOL), max_iter)
    b = bias_from_gradient(G, y, alpha, C, active, prefer_bias)
    trial = alpha.copy()
    b_as, steps, ok = active_set(K, y, float(C), trial, active, b, 20 * n, 1e-11, _NO_GRADIENT)
    n_iter += steps
    sub = polish(K, y, C, trial, b_as, active=active, prefer=prefer_bias) if ok else None
    if sub is None and tol < LOOSE_TOL:  # SMO to the tight tolerance
        G, more, _ = smo(K, y, float(C), alpha, active, tol, max(max_iter - n_iter, 0))
        n_iter += more
        b = bias_from_gradient(G, y, alpha, C, active, prefer_bias)
        sub = polish(K, y, C, alpha, b, active=active, prefer=prefer_bias)
    if sub is None and n_iter >= max_iter:  # SMO stalled (low rank, large C): active-set steps from where it is
        trial = alpha.copy()
        b_as, steps, ok = active_set(K, y, float(C), trial, active, b, 20 * n, 1e-11, _NO_GRADIENT)
        n_iter += steps
        if ok:
            sub = polish(K, y, C, trial, b_as, active=active, prefer=prefer_bias)
    if sub is None and n_iter >= max_iter:  # then an interior point, and the polish
        conic = solve_conic(K, y, C, active)
        if conic is not None:
            for snap in (1e-10, 1e-8, 1e-6):
                sub = polish(K, y, C, conic[0], conic[1], snap=snap, active=active, prefer=prefer_bias)
                if sub is not None:
                    break
            if sub is None and (kkt_violation(K, y, C, conic[0], conic[1], active)
                                < kkt_violation(K, y, C, alpha, b, active)):
                alpha, b = conic
    polished = sub is not None
    if polished:
        alpha, b = sub
    violation = kkt_violation(K, y, C, alpha, b, active)
    if violation > KKT_WARN * max(1.0, float(np.max(np.abs(K) @ alpha))):
        warn(f"the SVM's KKT conditions hold only to {violation:.2g} after {n_iter} SMO iterations and the "
             "interior-point fallback; the multipliers may be inaccurate.", SVMConvergenceWarning)
    decision = K @ (alpha * y) + b
    return SVMSolution(alpha, float(b), decision, polished, int(n_iter), violation)


@dataclass(kw_only=True, repr=False)
class XiAlphaEstimate(PointEstimateResult):
    """Joachims' xi-alpha estimates and what they were made from (``n_errors`` is d): a
    :class:`~cudbound.results.Result` without an interval (``method`` ``"xi_alpha"``). ``estimate``
    is the error estimate d / n, ``n_samples`` is n."""

    no_interval_reason = ("Joachims' xi-alpha error is a point estimate: with rho = 2 it bounds this training "
                          "set's leave-one-out error count from above (Lemma 1), which is no interval for the "
                          "true error")

    method: str = "xi_alpha"
    recall: float
    precision: float
    f1: float
    n_errors: int
    n_pos_errors: int
    n_neg_errors: int
    n_pos: int
    radius_sq: float
    rho: float
    alpha: np.ndarray
    slack: np.ndarray
    intercept: float
    polished: bool
    stable: bool

    def _repr_fields(self) -> dict:
        return {"estimate": self.estimate, "recall": self.recall, "precision": self.precision, "f1": self.f1,
                "n_errors": self.n_errors, "n_samples": self.n_samples, "radius_sq": self.radius_sq, "rho": self.rho}

    def _extra_dict(self) -> dict:
        return {"recall": self.recall, "precision": self.precision, "f1": self.f1, "n_errors": self.n_errors,
                "n_pos_errors": self.n_pos_errors, "n_neg_errors": self.n_neg_errors, "n_pos": self.n_pos,
                "radius_sq": self.radius_sq, "rho": self.rho, "intercept": self.intercept, "polished": self.polished,
                "stable": self.stable}


def centred_kernel(K: np.ndarray) -> np.ndarray:
    """H K H with H = I - 1 1'/n: the kernel of the feature vectors centred at their mean,
    K_ij - m_i - m_j + m (m_i the row means, m the grand mean).

    It has the form K(x, x') - g(x) - g(x') + c, which leaves the SVM with a bias unchanged
    (the terms cancel in the dual because y' alpha = 0: Lemma 2 of Joachims 2000 extended from
    constants to such sums), and it does not depend on where the features' zero is.
    """
    m = K.mean(axis=1)
    return K - m[:, None] - m[None, :] + m.mean()


def _prepare(X, y, C, kernel, gamma, degree, coef0, pos_label) -> tuple[np.ndarray, np.ndarray, float, np.ndarray,
                                                                       dict[str, Any], np.ndarray]:
    """Validated inputs and the centred kernel matrix the SVM is solved on."""
    X, labels, _ = check_data(X, y, pos_label=pos_label)
    C = check_scalar(C, "C", numbers.Real, min_val=0.0, include_boundaries="neither")
    if not (callable(kernel) or kernel in ("linear", "rbf", "poly")):
        raise ValueError(f"`kernel` must be 'linear', 'rbf', 'poly' or a callable; got {kernel!r}.")
    params = dict(kernel=kernel, gamma=_gamma(gamma, X), degree=check_scalar(degree, "degree", min_val=1),
                  coef0=check_scalar(coef0, "coef0", numbers.Real))
    # linear and rbf kernels give the same SVM on centred features, without the cancellation
    # that far-from-zero features cause in K_ii + K_jj - 2 K_ij
    Xk = X - X.mean(axis=0) if kernel in ("linear", "rbf") else X
    K = kernel_matrix(Xk, Xk, **params)
    n = X.shape[0]
    if K.shape != (n, n) or not np.all(np.isfinite(K)):
        raise ValueError(f"the kernel matrix must be a finite {n} x {n} matrix; got shape {K.shape}.")
    if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * max(1.0, np.max(np.abs(K)))):
        raise ValueError("the kernel matrix is not symmetric; a callable kernel must return K(A, B) with K(A, A) symmetric.")
    # row means of the kernel as given, to state the bias for it: sum_j alpha_j y_j K(x_j, x) + b
    raw_means = X @ X.mean(axis=0) if kernel == "linear" else K.mean(axis=1)
    Kc = centred_kernel(K)
    return X, labels, C, 0.5 * (Kc + Kc.T), params, raw_means  # exactly symmetric: the solvers stream rows for columns


def radius_sq(X: np.ndarray, Kc: np.ndarray, radius: str | float, params: dict[str, Any]) -> float:
    """R^2 for the xi-alpha count.

    "theorem": max_i Kc_ii - min_ij Kc_ij on the centred kernel Kc (the least R^2 that
    Lemma 1 allows once Lemma 2 has shifted the kernel's minimum to 0); "svmlight":
    max_i K(x_i, x_i) - 2 K(x_i, 0) + K(0, 0) on the kernel as given (SVM-light's
    ``estimate_r_delta``, which depends on where the origin is); or a number.
    """
    if isinstance(radius, str):
        if radius == "theorem":
            return float(np.max(np.diag(Kc)) - np.min(Kc))
        if radius == "svmlight":
            zero = np.zeros((1, X.shape[1]))
            diag = np.array([kernel_matrix(x[None, :], x[None, :], **params)[0, 0] for x in X])
            k0 = kernel_matrix(X, zero, **params).ravel()
            k00 = float(kernel_matrix(zero, zero, **params)[0, 0])
            return float(np.max(diag - 2.0 * k0 + k00))
        raise ValueError(f"`radius` must be 'theorem', 'svmlight' or a number >= 0; got {radius!r}.")
    return check_scalar(radius, "radius", numbers.Real, min_val=0.0, hint=" (or 'theorem' / 'svmlight')")


def _counted(sol, K, labels, R2, rho):
    """The slacks xi_i and whether rho alpha_i R^2 + xi_i >= 1, equality within rounding
    (:func:`cudbound.ties.decision_signs` of the difference, on the scale of its terms:
    rho alpha_i R^2, 1 and sum_j alpha_j |K_ij| + |b|)."""
    slack = np.maximum(0.0, 1.0 - labels * sol.decision)
    margin = rho * sol.alpha * R2
    scale = margin + 1.0 + term_scale(K, sol.alpha) + abs(sol.intercept)
    return slack, decision_signs(margin + slack - 1.0, scale) > 0


def _stable(sol, C) -> bool:
    """Joachims' stability: some multiplier is free (0 < alpha_i < C), so the bias is unique."""
    stable = bool(np.any((sol.alpha > 0.0) & (sol.alpha < C)))
    if not stable:
        warn("the SVM has no free support vector (0 < alpha_i < C), so its bias is not unique and Lemma 1 does "
             "not apply: the xi-alpha count need not bound the leave-one-out errors, and loo_error refits every "
             "point.", UnstableSVMWarning)
    return stable


def _rates(n_pos, n_neg, d_pos, d_neg):
    """error, recall, precision, F1 from the counts of positives / negatives counted as errors."""
    n = n_pos + n_neg
    tp = n_pos - d_pos
    error = (d_pos + d_neg) / n
    recall = tp / n_pos if n_pos else float("nan")
    precision = tp / (tp + d_neg) if tp + d_neg else float("nan")
    f1 = 2 * tp / (2 * n_pos - d_pos + d_neg) if 2 * n_pos - d_pos + d_neg else float("nan")
    return error, recall, precision, f1


def xi_alpha(X: ArrayLike, y: ArrayLike, *, C: float = 1.0,
             kernel: str | Callable[[np.ndarray, np.ndarray], ArrayLike] = "linear", gamma: float | None = None,
             degree: int = 3, coef0: float = 0.0, rho: float | None = None, radius: str | float = "theorem",
             pos_label: Any = None) -> XiAlphaEstimate:
    """Joachims' xi-alpha estimates of a soft-margin SVM's error, recall, precision and F1.

    Counts d = |{i : rho alpha_i R^2 + xi_i >= 1}| after one training run and returns the error
    d / n and the recall, precision and F1 from d+ and d- (Joachims 2000, Definitions 1 and 2, as
    the module docstring writes them).

    Parameters
    ----------
    X : array-like, shape (n, d)
        Features.
    y : array-like, shape (n,)
        Labels, two classes: {-1, 1}, {0, 1}, {False, True}, or any pair with ``pos_label``.
    C : float, default 1.0
        The SVM's cost parameter (SVM-light's ``-c``).
    kernel : {"linear", "rbf", "poly"} or callable, default "linear"
        As in scikit-learn: <x, x'>, exp(-gamma |x - x'|^2), (gamma <x, x'> + coef0)^degree, or
        a callable K(A, B) returning the matrix of kernel values.
    gamma : float or None, default None
        None is scikit-learn's "scale", 1 / (d Var(X)), with Var(X) the variance of the
        features centred at their means (so that it does not depend on their zeros).
    degree, coef0 : int, float
        Of the polynomial kernel.
    rho : float or None, default None
        None: 2 with ``radius="theorem"`` or a number (the value for which the estimate is
        provably pessimistic), 1 with ``radius="svmlight"`` (SVM-light's default).
    radius : "theorem", "svmlight" or float, default "theorem"
        R^2. "theorem": max_i Kc(x_i, x_i) - min_ij Kc(x_i, x_j) on the kernel centred in
        feature space (:func:`centred_kernel`; the SVM is the same), which by Lemmas 1 and 2
        makes d >= the number of leave-one-out errors on every data set (with rho = 2) and
        does not depend on where the features' zero is;
        "svmlight": as SVM-light V6.02 computes it; a number: that R^2.
    pos_label : label, optional
        The positive class, when the labels do not say.

    Returns
    -------
    XiAlphaEstimate
        ``estimate`` (the error), ``recall``, ``precision``, ``f1``; the counts ``n_errors`` (d),
        ``n_pos_errors``, ``n_neg_errors``; ``radius_sq``, ``rho``, ``alpha``, ``slack``,
        ``intercept``: the SVM is f(x) = sum_i alpha_i y_i K(x_i, x) + intercept, with the kernel
        and the features as given.

    References
    ----------
    Joachims, T. (2000). Estimating the generalization performance of a SVM efficiently.
    ICML 2000, 431-438.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, 1, -1)
    >>> est = xi_alpha(X, y, C=1.0)
    >>> loo = loo_error(X, y, C=1.0)
    >>> est.n_errors >= round(loo.estimate * 60)
    True
    """
    X, labels, C, K, params, raw_means = _prepare(X, y, C, kernel, gamma, degree, coef0, pos_label)
    R2 = radius_sq(X, K, radius, params)
    if rho is None:
        rho = 1.0 if radius == "svmlight" else 2.0
    rho = check_scalar(rho, "rho", numbers.Real, min_val=0.0)
    sol = fit_svm(K, labels, C)
    stable = _stable(sol, C)
    slack, counted = _counted(sol, K, labels, R2, rho)
    pos = labels > 0
    d_pos, d_neg = int(np.sum(counted & pos)), int(np.sum(counted & ~pos))
    error, recall, precision, f1 = _rates(int(pos.sum()), int((~pos).sum()), d_pos, d_neg)
    return XiAlphaEstimate(estimate=error, recall=recall, precision=precision, f1=f1, n_errors=d_pos + d_neg,
                           n_pos_errors=d_pos, n_neg_errors=d_neg, n_pos=int(pos.sum()), n_samples=len(labels),
                           radius_sq=R2, rho=rho, alpha=sol.alpha, slack=slack,
                           intercept=sol.intercept - float((sol.alpha * labels) @ raw_means),
                           polished=sol.polished, stable=stable)


@dataclass(kw_only=True, repr=False)
class LOOResult(PointEstimateResult):
    """Exact leave-one-out of the SVM: ``errors`` marks each point's leave-one-out mistake; a
    :class:`~cudbound.results.Result` without an interval (``method`` ``"loo_error"``). ``estimate``
    is the leave-one-out error."""

    no_interval_reason = "the leave-one-out error is a point estimate (computed exactly), not an interval"

    method: str = "loo_error"
    recall: float
    precision: float
    f1: float
    n_errors: int
    errors: np.ndarray
    n_refits: int
    unstable: np.ndarray
    """Refitted points whose leave-one-out SVM had no free multiplier (Lemma 1's premise fails)."""

    def _repr_fields(self) -> dict:
        return {"estimate": self.estimate, "recall": self.recall, "precision": self.precision, "f1": self.f1,
                "n_errors": self.n_errors, "n_refits": self.n_refits}

    def _extra_dict(self) -> dict:
        return {k: v for k, v in self._repr_fields().items() if k != "estimate"}


def _warm_start(alpha, labels, C, Kt, t):
    """A feasible start for the problem without point t, near the full solution.

    Dropping alpha_t leaves y' alpha = -alpha_t y_t; the amount alpha_t is made up by, in
    turn, lowering free multipliers of the other class, raising free multipliers of t's class,
    lowering the other class's multipliers at C and raising t's class's multipliers at 0;
    within a group the points most similar to t (largest K(x_t, x_j)) go first, each as far
    as its box allows. Few multipliers move, so SMO has little to undo (the greedy
    redistribution SVM-light's ``distribute_alpha_t_greedily`` also uses).
    """
    a = alpha.copy()
    need, a[t] = a[t], 0.0
    same = labels == labels[t]
    same[t] = False
    other = labels != labels[t]
    free = (a > 0.0) & (a < C)
    for group, sign in ((other & free, -1.0), (same & free, 1.0), (other & (a >= C), -1.0), (same & (a <= 0.0), 1.0)):
        members = np.flatnonzero(group)
        for j in members[np.argsort(-Kt[members], kind="stable")]:
            if need <= 0.0:
                return a
            room = a[j] if sign < 0 else C - a[j]
            take = min(need, room)
            a[j] = min(max(a[j] + sign * take, 0.0), C)
            need -= take
    return a


def _refit_start(K, labels, C, sol):
    """What every refit of a leave-one-out study starts from: the full solution with its free
    set made independent when it is not (duplicated points; same f and bias), its gradient,
    max_i sum_j alpha_j |K_ij| (the KKT check's scale) and the inverse of its KKT matrix."""
    start = SVMSolution(independent_free_set(K, labels, C, sol.alpha), sol.intercept, sol.decision, sol.polished,
                        sol.n_iter, sol.kkt_violation)
    G_full = gradient(K, labels, start.alpha, np.ones(len(labels), dtype=bool))
    sv = start.alpha > 0.0
    scale_full = max(1.0, float(np.max(np.abs(K[:, sv]) @ start.alpha[sv]))) if sv.any() else 1.0
    free = np.flatnonzero((start.alpha > 0.0) & (start.alpha < C))
    Minv0, ok = kkt_inverse(K, labels, free, free.size)
    return start, G_full, scale_full, (Minv0 if ok else _NO_INVERSE)


def _refit(K, labels, C, sol, active, t, G_full=None, scale_full=1.0, Minv0=_NO_INVERSE):
    """The SVM without point t: the solution path from the full solution as alpha_t falls to 0
    (:func:`~cudbound.optim.svm_dual.decremental.decrement`), finished if need be by active-set steps, and
    accepted when a KKT check passes (1e-9 relative); otherwise :func:`fit_svm` from a
    feasible warm start, with its fallbacks. ``G_full`` (the full solution's gradient) saves
    recomputing it: the result differs from the full solution in a few multipliers only; ``Minv0``
    (:func:`~cudbound.optim.svm_dual.decremental.kkt_inverse` of its free set) saves inverting the KKT matrix."""
    n = len(labels)
    trial = sol.alpha.copy()
    G = gradient(K, labels, trial, np.ones(n, dtype=bool)) if G_full is None else G_full.copy()
    max_steps = max(50, n // 2)
    b, _, ok = decrement(K, labels, float(C), trial, active, t, float(sol.intercept), max_steps, 1e-11, G, Minv0)
    if not ok:  # go on from where the path stopped, alpha_t dropped (the first full step restores y' alpha = 0)
        G -= labels * K[:, t] * (trial[t] * labels[t])
        trial[t] = 0.0
        G[t] = 0.0
        b, _, ok = active_set(K, labels, float(C), trial, active, b, max_steps, 1e-11, G)
    if ok:
        free = (trial > 0.0) & (trial < C)
        if not np.any(free) or np.any(free & ((trial <= 1e-12 * C) | (trial >= C * (1.0 - 1e-12)))):
            # no free multiplier (the bias is one of an interval), or one a rounding error off its
            # bound: the polish puts it there and takes the optimal bias nearest the full SVM's
            sub = polish(K, labels, C, trial, b, active=active, prefer=sol.intercept)
            if sub is not None:
                return sub
        else:
            if G_full is None:
                violation, scale = kkt_check(K, labels, float(C), trial, active, b)
            else:  # the gradient from the full solution's, over the multipliers that changed
                violation = kkt_check_near(K, labels, float(C), trial, active, b, sol.alpha, G_full)
                scale = scale_full
            if violation <= 1e-9 * scale:
                return trial, b
    alpha0 = _warm_start(sol.alpha, labels, C, K[t], t)
    s = fit_svm(K, labels, C, alpha0=alpha0, active=active, prefer_bias=sol.intercept)
    return s.alpha, s.intercept


def loo_error(X: ArrayLike, y: ArrayLike, *, C: float = 1.0,
              kernel: str | Callable[[np.ndarray, np.ndarray], ArrayLike] = "linear", gamma: float | None = None,
              degree: int = 3, coef0: float = 0.0, pos_label: Any = None, refit_all: bool = False,
              progress: bool = False) -> LOOResult:
    """The exact leave-one-out error, recall, precision and F1 of the soft-margin SVM.

    By Joachims (2000, Lemma 1) only points with 2 alpha_i R^2 + xi_i >= 1 (R^2 as ``radius="theorem"``)
    can be leave-one-out errors, so only they are refitted (``n_refits``), each by following the
    solution path from the full SVM as alpha_i falls to 0
    (:func:`~cudbound.optim.svm_dual.decremental.decrement`; about one step per change of a point's
    status). ``refit_all=True`` refits every point (for checking). Lemma 1 assumes stable SVMs (a free
    multiplier, 0 < alpha_i < C, so a unique bias) on the full set and on every leave-one-out set: when
    the full SVM or a refitted leave-one-out SVM is unstable, every point is refitted (an
    :class:`UnstableSVMWarning` says so for the full SVM). A point not refitted whose own leave-one-out
    SVM is unstable is not covered by the lemma and cannot be detected without refitting it; the bias of
    such an SVM is taken as the optimal one nearest the full SVM's, the choice under which the shortcut
    agreed with refitting every point on all 1500 problems of the stress test
    (``CUDBOUND_SVM_STRESS_SEEDS=300 pytest tests/test_svm.py``; with the middle of the interval
    instead, 9 disagreed).
    ``refit_all=True`` needs no premise.

    Training errors (xi_i > 1) are leave-one-out errors without a refit, whatever the
    stability: with J(f) = |f|^2 / 2 + C sum_j hinge_j(f) minimised by f and J - C hinge_t by
    f^t, J(f) <= J(f^t) and J(f^t) - C hinge_t(f^t) <= J(f) - C hinge_t(f) give
    hinge_t(f^t) >= hinge_t(f) = xi_t > 1, so y_t f^t(x_t) < 0. ``n_refits`` counts the SVMs
    actually refitted.
    """
    X, labels, C, K, params, _ = _prepare(X, y, C, kernel, gamma, degree, coef0, pos_label)
    n = len(labels)
    sol = fit_svm(K, labels, C)
    slack, counted = _counted(sol, K, labels, radius_sq(X, K, "theorem", params), 2.0)
    errors = np.zeros(n, dtype=bool)
    # training errors are leave-one-out errors (see the docstring); refit_all=True checks that too
    # (beyond round-off: on discrete data f(x_i) = 0 exactly, xi_i = 1, happens, and sign(0) = +1)
    sure = (slack > 1.0 + _SURE_MARGIN) & (not refit_all)
    errors[sure] = True
    refit_all = refit_all or not _stable(sol, C)
    todo = np.flatnonzero(~sure) if refit_all else np.flatnonzero(counted & ~sure)
    start, G_full, scale_full, Minv0 = _refit_start(K, labels, C, sol)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(todo), desc="leave-one-out refits", unit="refit", leave=False)
    done = np.zeros(n, dtype=bool)
    unstable = np.zeros(n, dtype=bool)
    class_size = {1.0: int(np.sum(labels > 0)), -1.0: int(np.sum(labels < 0))}
    queue: list[int | np.integer[Any]] = list(todo)
    while queue:
        t = queue.pop(0)
        active = np.ones(n, dtype=bool)
        active[t] = False
        if class_size[labels[t]] == 1:  # t is its class's only point: the rule predicts the other
            errors[t] = True
        else:
            a_t, b_t = _refit(K, labels, C, start, active, t, G_full, scale_full, Minv0)
            # sign(f^t(x_t)), sign(0) = +1 within rounding (on discrete data f^t(x_t) = 0 happens)
            errors[t] = decision_signs(K[t] @ (a_t * labels) + b_t, term_scale(K[t], a_t) + abs(b_t)) != labels[t]
            unstable[t] = not np.any((a_t > 0.0) & (a_t < C))
            if not refit_all and unstable[t]:
                # an unstable leave-one-out SVM: Lemma 1 no longer vouches for the points not refitted
                refit_all = True
                waiting = set(queue)
                rest = [i for i in range(n) if not done[i] and not sure[i] and i != t and i not in waiting]
                queue.extend(rest)
                if bar is not None:
                    bar.total += len(rest)
                    bar.refresh()
        done[t] = True
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    pos = labels > 0
    d_pos, d_neg = int(np.sum(errors & pos)), int(np.sum(errors & ~pos))
    error, recall, precision, f1 = _rates(int(pos.sum()), int((~pos).sum()), d_pos, d_neg)
    return LOOResult(estimate=error, n_samples=n, recall=recall, precision=precision, f1=f1, n_errors=d_pos + d_neg,
                     errors=errors, n_refits=int(done.sum()), unstable=unstable)
