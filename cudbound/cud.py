"""The CUD confidence set (Laber & Murphy 2008) and its replicate supremum.

For a classifier f(x; beta) = sign(phi(x)'beta) fitted by minimising a surrogate loss
L(D, beta), the CUD bound

    |err_D(beta_hat) - tau(beta_hat)| <= sup_beta |err_D(beta) - tau(beta)| g(alpha_n (L(D, beta*) - L(D, beta)))

with g(x) = min(1, x + 1) is bootstrapped (tau -> err_D, beta* -> beta_hat, D -> D^(b)):

    Q^(b) = sup_beta |err_{D^(b)}(beta) - err_D(beta)| g(alpha_n (L(D^(b), beta_hat) - L(D^(b), beta))),

and the confidence set is err_D(beta_hat) +/- Q_hat, Q_hat the ceil(level * B)-th smallest
Q^(b) (a conservative order statistic). Each supremum is computed exactly by branch and
bound over the sign patterns of the non-singleton bootstrap points (``cudbound.search``).
"""
from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from ._validation import (check_alpha_n, check_confidence_level, check_counts, check_design, check_features,
                          check_n_resamples, check_rng, encode_labels)
from .basis import make_basis
from .design import reparametrise
from .engine import ReplicateEngine
from .fit import fit_coefficients, training_error
from .losses import get_loss
from .results import ConfidenceInterval, CUDResult, SearchStats
from .quantile import order_statistic
from .search import SearchOptions
from .workers import ReplicateRunner, check_n_jobs

__all__ = ["replicate_sup", "search_replicate", "cud_interval", "bootstrap_counts", "conservative_quantile"]


def _replicate_iv(design, y, counts, loss, alpha_n):
    Phi = check_design(design)
    n = Phi.shape[0]
    y_arr = np.asarray(y, dtype=float).ravel() if np.asarray(y).dtype.kind in "biuf" else None
    if y_arr is None or y_arr.shape[0] != n or not np.all(np.isin(y_arr, (-1.0, 1.0))):
        bad = None if y_arr is None else np.setdiff1d(np.unique(y_arr), [-1.0, 1.0])
        raise ValueError(f"`y` must hold {n} labels in {{-1, +1}}; found other values {bad!r}."
                         if bad is not None and bad.size else f"`y` must be a numeric array of {n} labels in {{-1, +1}}.")
    return Phi, y_arr, check_counts(counts, n), get_loss(loss), check_alpha_n(alpha_n, n)


def search_replicate(design, y, counts, *, loss="squared", alpha_n=None, beta_hat=None, engine="auto",
                     solver=None, max_nodes=None, time_limit=None, record_tree=False, search_options=None):
    """Branch and bound for one bootstrap count vector, with its statistics.

    The search runs in the orthonormal coordinates of :func:`cudbound.design.reparametrise`
    (the value does not depend on the design's parametrisation; a tree export's points are
    in those coordinates). Same inputs as :func:`replicate_sup`, plus the engine, the cvxpy solver, budgets
    and ``record_tree`` (return the search tree as a ``networkx.DiGraph`` whose nodes
    carry depth, sign, node minimum ``m``, bound and state; the replicate is then set up in Python).
    ``search_options`` (a :class:`cudbound.search.SearchOptions`) switches the bounds and
    branching rule, for measurement; none of them changes the value. Returns a
    :class:`cudbound.search.SearchOutcome`: ``value`` (Q^(b), or a certified upper
    bound when ``status`` is not ``"exact"``), nodes, solves, pruned, realisability checks,
    screened points and seconds.
    """
    Phi, y, counts, loss, alpha = _replicate_iv(design, y, counts, loss, alpha_n)
    rep = reparametrise(Phi)
    loss_z = rep.loss(loss)
    if beta_hat is None:
        gamma_hat = fit_coefficients(rep.Z, y, loss_z, reparametrise=False)
    else:
        gamma_hat = rep.from_user(np.asarray(beta_hat, dtype=float))
    options = _search_options(search_options, max_nodes, time_limit)
    eng = ReplicateEngine(rep.Z, y, loss_z, engine=engine, solver=solver)
    return eng.search(counts, gamma_hat, alpha, options, record_tree=record_tree)


def _search_options(search_options, max_nodes, time_limit) -> SearchOptions:
    base = search_options if search_options is not None else SearchOptions()
    if not isinstance(base, SearchOptions):
        raise TypeError(f"`search_options` must be a cudbound.search.SearchOptions; got {type(base).__name__}.")
    return dataclasses.replace(base, max_nodes=max_nodes if max_nodes is not None else base.max_nodes,
                               time_limit=time_limit if time_limit is not None else base.time_limit)


def replicate_sup(design, y, counts, *, loss="squared", alpha_n=None) -> float:
    """The replicate supremum Q^(b) for one bootstrap count vector, computed exactly.

    Q^(b) = sup_beta |err_{D^(b)}(beta) - err_D(beta)| * g(alpha_n (L(D^(b), beta_hat) - L(D^(b), beta)))

    Parameters
    ----------
    design : (n, p) array
        The basis matrix Phi (include the intercept column when wanted); full column rank.
    y : (n,) array of -1.0 / +1.0
    counts : (n,) array
        Bootstrap multiplicities nu_i: whole numbers (any numeric dtype) summing to n.
    loss : str or Loss
        Surrogate loss written as a mean; beta_hat minimises it on the unweighted data:
        ``"squared"`` (default), ``"ridge[:LAM]"``, ``"hinge"``, ``"logistic"``,
        ``"exponential"``, ``"<loss>_ridge[:LAM]"`` or a :class:`cudbound.losses.Loss`
        (``docs/losses.md``). A loss without a minimiser on the data (logistic or
        exponential on separable data) raises ``cudbound.losses.NoMinimiserError``.
    alpha_n : float, optional
        Neighbourhood scale, default n.

    Notes
    -----
    sign(0) = +1, and a sign pattern counts only if some classifier realises it
    (Laber & Murphy 2008, section 4; method.md). Equivalent to
    ``search_replicate(...).value`` with the default engine.
    """
    return search_replicate(design, y, counts, loss=loss, alpha_n=alpha_n).value


def bootstrap_counts(n: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """B count vectors nu^(b) ~ Multinomial(n, (1/n, ..., 1/n)), drawn in one call."""
    return rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples)


def conservative_quantile(values, confidence_level: float) -> float:
    """The ceil(level * B)-th smallest of B values (never below the level's quantile)."""
    v = np.sort(np.asarray(values, dtype=float))
    k = math.ceil(confidence_level * len(v) - 1e-9)
    return float(v[max(k, 1) - 1])


def _cud_iv(X, y, basis, loss, confidence_level, n_resamples, alpha_n, rng, pos_label):
    X = check_features(X)
    labels, encoding = encode_labels(y, pos_label=pos_label, n_rows=X.shape[0])
    level = check_confidence_level(confidence_level)
    B = check_n_resamples(n_resamples, level)
    basis = make_basis(basis)
    design = check_design(basis.fit_transform(X), name="design (basis applied to X)")
    return design, labels, encoding, basis, get_loss(loss), level, B, check_alpha_n(alpha_n, X.shape[0]), check_rng(rng)


def cud_interval(X, y, *, basis="linear", loss="squared", confidence_level=0.95, n_resamples=500,
                 alpha_n=None, rng=None, pos_label=None, engine="auto", solver=None,
                 max_nodes=None, time_limit=None, n_jobs=1, exact_distribution=False, progress=False,
                 scheduler=None) -> CUDResult:
    """CUD confidence set for the generalization error of a linear-in-basis classifier.

    Fits beta_hat by minimising ``loss`` on ``basis(X)``, draws ``n_resamples``
    bootstrap count vectors from ``rng``, and returns err_D(beta_hat) +/- Q_hat with
    Q_hat the ceil(level * B)-th smallest replicate supremum Q^(b) (a conservative order
    statistic), clipped to [0, 1]. Q_hat is computed exactly; by default only as far as
    it needs (``cudbound.quantile``: a replicate is searched to the end only if its
    bounds straddle Q_hat), which gives the same interval as solving every replicate.
    The fit and the searches run in orthonormal coordinates of the design
    (``cudbound.design``), so shifting or rescaling a feature changes nothing.

    Parameters
    ----------
    X : (n, d) array of features.
    y : (n,) labels with two classes: {-1, 1}, {0, 1}, booleans, or any pair with ``pos_label``.
    basis : 'linear' (intercept + identity, default), 'poly:D', 'pca:K', 'zpca:K', a callable or a Basis.
    loss : 'squared' (default), 'ridge[:LAM]', 'hinge', 'logistic', 'exponential',
        '<loss>_ridge[:LAM]' or a :class:`cudbound.losses.Loss` (``docs/losses.md``).
    confidence_level : float in (0, 1).
    n_resamples : int, at least 1 / (1 - level).
    alpha_n : float >= 0, default n.
    rng : None, int, SeedSequence or numpy Generator (the only source of randomness).
    engine : 'auto', 'python' or 'cvxpy'; solver : the cvxpy solver of the generic path (default
        None: ECOS for quadratic losses and losses with derivatives, CLARABEL for the others).
    max_nodes, time_limit : optional per-replicate budgets; a replicate cut short keeps a
        certified upper bound and the result is flagged ``conservative``.
    n_jobs : int, number of worker processes for the replicates (default 1; -1 = all cores).
        Replicates are handed out one at a time to the next free worker. All count vectors
        are drawn from ``rng`` before any work is shared out, so the result is identical
        for every ``n_jobs``.
    exact_distribution : bool, default False. True solves every replicate to the end, so
        ``bootstrap_distribution`` holds every Q^(b) exactly (slower; same interval).
    progress : bool, default False. Show a progress bar (tqdm, on stderr) over the replicates.
    scheduler : optional address of a Dask scheduler (or a ``distributed.Client``): the
        replicates run on that cluster instead of local processes.

    Returns
    -------
    CUDResult

    References
    ----------
    Laber, E. B. and Murphy, S. A. (2008). Small sample inference for generalization error in
    classification using the CUD bound. UAI 2008, 357-365.

    Examples
    --------
    >>> import numpy as np, cudbound
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    >>> res = cudbound.cud_interval(X, y, n_resamples=40, rng=1)
    >>> 0 <= res.confidence_interval.low <= res.train_error <= res.confidence_interval.high <= 1
    True
    >>> full = cudbound.cud_interval(X, y, n_resamples=40, rng=1, exact_distribution=True)
    >>> full.confidence_interval == res.confidence_interval
    True
    """
    t0 = time.perf_counter()
    design, labels, encoding, basis, loss, level, B, alpha, gen = _cud_iv(
        X, y, basis, loss, confidence_level, n_resamples, alpha_n, rng, pos_label)
    n = design.shape[0]
    rep = reparametrise(design)
    loss_z = rep.loss(loss)
    gamma_hat = fit_coefficients(rep.Z, labels, loss_z, reparametrise=False)
    centre = training_error(rep.Z, labels, gamma_hat)
    counts = bootstrap_counts(n, B, gen)
    options = _search_options(None, max_nodes, time_limit)
    jobs = min(check_n_jobs(n_jobs), B)
    k = max(math.ceil(level * B - 1e-9), 1)
    bar = _progress_bar(progress, B)
    try:
        with ReplicateRunner(rep.Z, labels, loss_z, counts, gamma_hat, alpha, engine=engine, solver=solver,
                             n_jobs=jobs, scheduler=scheduler) as runner:
            out = order_statistic(runner, B, k, options, exact_distribution=exact_distribution, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    q_hat = out.value
    ci = ConfidenceInterval(max(0.0, centre - q_hat), min(1.0, centre + q_hat))
    return CUDResult(confidence_interval=ci, confidence_level=level, centre=centre, train_error=centre, half_width=q_hat,
                     bootstrap_distribution=out.upper, bootstrap_lower=out.lower, decided=out.decided,
                     coef=rep.to_user(gamma_hat), alpha_n=alpha, n_resamples=B,
                     stats=SearchStats.from_records(out.records), loss=loss.name, basis=repr(basis), n_samples=n,
                     seconds=time.perf_counter() - t0, label_encoding=encoding)


def _progress_bar(progress, total):
    """A tqdm bar over the replicates on stderr, or None."""
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="CUD replicates", unit="rep", leave=False, dynamic_ncols=True)
