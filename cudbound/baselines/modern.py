"""Intervals for the generalization error that statisticians use today, beside the paper's six.

Each is built from held-out 0-1 losses of the same classifier (basis, loss, sign(0) = +1,
refits as in :mod:`cudbound.baselines.estimators`). delta = 1 - confidence_level,
z = Phi^{-1}(1 - delta / 2). Definitions and defaults: ``docs/method.md``, section
"Today's intervals".

* ``wald_cv``: R +/- z sigma / sqrt(n), R the K-fold CV error and sigma^2 the variance of the
  per-point held-out losses (Bayle, Bayle, Janson & Mackey 2020);
* ``corrected_t``: mu +/- t_{J-1} sqrt((1/J + n2/n1) s^2) over J random train/test splits
  (Nadeau & Bengio 2003);
* ``conservative_z``: mu +/- z sigma, sigma^2 = (1/2M) sum_m (mu_m - mu_m^c)^2 from M random
  halvings (Nadeau & Bengio 2003);
* ``nested_cv``: (Err_NCV - bias) +/- z SE, SE from nested CV's estimate of the MSE of CV
  (Bates, Hastie & Tibshirani 2023);
* ``bccv``: percentile interval of leave-one-case-out CV on bootstrap samples, shifted by its
  bias against leave-one-out (Jiang, Varma & Simon 2008);
* ``e632_delta``: Err(.632+) +/- z SE, SE the delta-method SE of Err(1) rescaled
  (Efron & Tibshirani 1997).

Every interval is an :class:`cudbound.results.IntervalResult` clipped to [0, 1] (the unclipped
ends in ``details``), centred at its own point estimate. The building blocks
(:func:`wald_interval`, :func:`corrected_t_interval`, :func:`conservative_z_interval`,
:func:`delta_method_se`) work on numbers alone.

References
----------
.. [1] Bayle, P., Bayle, A., Janson, L. and Mackey, L. (2020). Cross-validation confidence
       intervals for test error. NeurIPS 33. Code: github.com/alexandre-bayle/cvci.
.. [2] Nadeau, C. and Bengio, Y. (2003). Inference for the generalization error. Machine
       Learning 52, 239-281.
.. [3] Bates, S., Hastie, T. and Tibshirani, R. (2023). Cross-validation: what does it
       estimate and how well does it do it? JASA 119, 1434-1445. Code: R package nestedcv,
       github.com/stephenbates19/nestedcv, R/core.R.
.. [4] Jiang, W., Varma, S. and Simon, R. (2008). Calculating confidence intervals for
       prediction error in microarray classification using resampling. Statistical
       Applications in Genetics and Molecular Biology 7(1), article 8.
.. [5] Efron, B. and Tibshirani, R. (1997). Improvements on cross-validation: the .632+
       bootstrap method. JASA 92(438), 548-560, section 3 (eq. 40).
"""
from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .._budget import Budget, check_time_limit
from .._deprecation import renamed
from .._docstrings import fill_doc
from .._validation import check_confidence_level, check_rng, check_scalar
from ..losses import Loss
from ..results import ConfidenceInterval, IntervalResult
from ..resampling import Splitter, cv_splitter, deal_folds, draw_counts, folds_or_count
from ..refit import Refits
from ..statistics import normal_critical_value, percentile_interval, t_critical_value
from .estimators import _e632plus_parts, _e632_value, _predict_within, _refits_iv
from .methods import _DOC as _PAPER_DOC
from .methods import _result

__all__ = ["wald_cv", "corrected_t", "conservative_z", "nested_cv", "bccv", "e632_delta",
           "wald_interval", "corrected_t_interval", "conservative_z_interval", "delta_method_se",
           "wald_mean_se", "corrected_t_mean_se", "nested_cv_splits", "nested_cv_estimate", "INPUT_CHECKS"]

_DOC = {
    "data": """design : (n, p) array
        The design matrix Phi, full column rank.
    y : (n,) labels in {-1, +1} (or {0, 1}, booleans).
    confidence_level : float in (0, 1), default 0.95""",
    "tail": """loss : str or Loss, default 'squared'
        The surrogate loss the classifier is fitted with (as for CUD).
    rng : None, int, SeedSequence or Generator
        The source of every random split or resample.""",
    "time_limit": _PAPER_DOC["time_limit"],
}


def _values(values, name, minimum):
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.shape[0] < minimum or not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must be a 1-D array of at least {minimum} finite numbers; got {values!r}.")
    return arr


def _heldout_wrong(refits: Refits, train, test):
    """Held-out mistakes: row s is 1{f_s(x_i) != y_i} for the points of ``test[s]``, f_s refitted
    on the points of ``train[s]`` (weights: a 0/1 mask or bootstrap counts); False elsewhere."""
    preds, log = refits.predict(np.asarray(train, dtype=float))
    return (preds != refits.labels) & test, log


def _random_splits(n, n_test, n_splits, gen, pool=None):
    """(J, n) boolean test masks and training masks: n_test points of ``pool`` (all by default)
    drawn without replacement for the test set, the rest of the pool for training."""
    pool = np.arange(n) if pool is None else np.asarray(pool)
    test = np.zeros((n_splits, n), dtype=bool)
    train = np.zeros((n_splits, n), dtype=bool)
    for j in range(n_splits):
        perm = gen.permutation(pool)
        test[j, perm[:n_test]] = True
        train[j, perm[n_test:]] = True
    return train, test


def _finish(name, ci, level, centre, n, t0, details, log):
    details = {**details, **log.as_details()}
    log.warn(name)
    return _result(name, ci, level, centre, n, t0, details)


# --------------------------------------------------------------------------- building blocks

def wald_interval(losses: ArrayLike, folds: ArrayLike, confidence_level: float = 0.95,
                  variance: str = "all-pairs") -> ConfidenceInterval:
    """Bayle et al.'s (2020) CV Wald interval R +/- z sigma / sqrt(n) from per-point held-out losses.

    R = (1/n) sum_i h_i. ``variance="all-pairs"`` (default; the authors' code reports it as
    "CV CLT (Ours)"): sigma^2 = (1/n) sum_i (h_i - R)^2. ``"within-fold"``: sigma^2 =
    (1/K) sum_k (1/(n_k - 1)) sum_{i in fold k} (h_i - hbar_k)^2 (every fold needs 2 points).
    Not clipped.

    >>> wald_interval([0, 1, 0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1], 0.95)
    ConfidenceInterval(low=0.0395..., high=0.7104...)
    """
    level = check_confidence_level(confidence_level)
    R, se = wald_mean_se(losses, folds, variance)
    half = normal_critical_value(level) * se
    return ConfidenceInterval(R - half, R + half)


def wald_mean_se(losses: ArrayLike, folds: ArrayLike, variance: str = "all-pairs") -> tuple[float, float]:
    """The centre R and standard error sigma / sqrt(n) of :func:`wald_interval` (Bayle et al. 2020).

    The one copy of the formula: the interval of one classifier's error (``wald_cv``) and of the
    difference of two (``cudbound.compare``, per-point loss differences h_i = l_A,i - l_B,i) use it.

    >>> wald_mean_se([0, 1, 0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1])
    (0.375, 0.1711...)
    """
    h = _values(losses, "losses", 2)
    f = np.asarray(folds)
    if f.shape != h.shape:
        raise ValueError(f"`folds` must have the shape of `losses`, {h.shape}; got {f.shape}.")
    R = float(h.mean())
    if variance == "all-pairs":
        var = float(np.mean((h - R) ** 2))
    elif variance == "within-fold":
        groups = [h[f == k] for k in np.unique(f)]
        if min(len(g) for g in groups) < 2:
            raise ValueError("the within-fold variance needs at least 2 points in every fold.")
        var = float(np.mean([np.var(g, ddof=1) for g in groups]))
    else:
        raise ValueError(f"`variance` must be 'all-pairs' or 'within-fold'; got {variance!r}.")
    return R, math.sqrt(var / h.shape[0])


def corrected_t_interval(split_errors: ArrayLike, n_train: int, n_test: int,
                         confidence_level: float = 0.95) -> ConfidenceInterval:
    """Nadeau & Bengio's (2003) corrected resampled t interval.

    mu +/- t_{J-1, 1-delta/2} sqrt((1/J + n2/n1) s^2), mu and s^2 (divisor J - 1) the mean and
    variance of the J split errors, n1 = ``n_train``, n2 = ``n_test``. Not clipped.

    >>> corrected_t_interval([.10, .12, .08, .11, .09], 90, 10)
    ConfidenceInterval(low=0.0755..., high=0.1244...)
    """
    n1 = check_scalar(n_train, "n_train", min_val=1)
    n2 = check_scalar(n_test, "n_test", min_val=1)
    level = check_confidence_level(confidence_level)
    m, se, df = corrected_t_mean_se(_values(split_errors, "split_errors", 2), n2 / n1)
    half = t_critical_value(level, df) * se
    return ConfidenceInterval(m - half, m + half)


def corrected_t_mean_se(split_values: ArrayLike, test_train_ratio: float) -> tuple[float, float, int]:
    """The mean, corrected standard error and degrees of freedom of :func:`corrected_t_interval`.

    mu = mean of the J values, se = sqrt((1/J + n2/n1) s^2) with s^2 their variance (divisor
    J - 1) and n2/n1 = ``test_train_ratio``, df = J - 1 (Nadeau & Bengio 2003). The one copy of the
    formula: one classifier's split errors (``corrected_t``) and the differences of two
    (``cudbound.compare``) use it.

    >>> corrected_t_mean_se([.10, .12, .08, .11, .09], 10 / 90)
    (0.1, 0.0088..., 4)
    """
    mu = _values(split_values, "split_values", 2)
    ratio = check_scalar(test_train_ratio, "test_train_ratio", numbers.Real, min_val=0.0, include_boundaries="neither")
    J = mu.shape[0]
    var = (1.0 / J + ratio) * float(np.var(mu, ddof=1))
    return float(mu.mean()), math.sqrt(var), J - 1


def conservative_z_interval(estimate: float, half_errors: ArrayLike,
                            confidence_level: float = 0.95) -> ConfidenceInterval:
    """Nadeau & Bengio's (2003) conservative Z interval mu +/- z sigma.

    sigma^2 = (1/(2M)) sum_m (mu_m - mu_m^c)^2 over the M pairs (mu_m, mu_m^c) of estimates on
    two disjoint halves of the data (``half_errors``, shape (M, 2)). Not clipped.

    >>> conservative_z_interval(0.10, [(.12, .11), (.10, .13), (.14, .12)])
    ConfidenceInterval(low=0.0700..., high=0.1299...)
    """
    pairs = np.asarray(half_errors, dtype=float)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.shape[0] < 1 or not np.all(np.isfinite(pairs)):
        raise ValueError(f"`half_errors` must be an (M, 2) array of finite numbers; got shape {pairs.shape}.")
    level = check_confidence_level(confidence_level)
    sigma = math.sqrt(float(np.mean((pairs[:, 0] - pairs[:, 1]) ** 2)) / 2.0)
    mu = float(estimate)
    z = normal_critical_value(level)
    return ConfidenceInterval(mu - z * sigma, mu + z * sigma)


def delta_method_se(wrong: ArrayLike, counts: ArrayLike) -> tuple[float, float, np.ndarray]:
    """Efron & Tibshirani's (1997, eq. 40) delta-method standard error of Err(1).

    With N_i^b the bootstrap counts, I_i^b = 1{N_i^b = 0}, Q_i^b the mistake of refit b at point
    i, E_i = sum_b I_i^b Q_i^b / sum_b I_i^b, Err(1) = mean_i E_i, q_b = (1/n) sum_i I_i^b Q_i^b,
    e_n = (1 - 1/n)^{-n}:

        D_i = (2 + 1/(n - 1)) (E_i - Err(1)) / n + e_n (1/B) sum_b (N_i^b - Nbar_i) q_b,
        SE = sqrt(sum_i D_i^2).

    Points never left out are dropped from Err(1) and the sum (with B = 200 this happens
    with probability below 1e-39 per point). Returns (Err(1), SE, D).
    """
    Q = np.asarray(wrong, dtype=float)
    N = np.asarray(counts, dtype=float)
    B, n = N.shape
    out = N == 0
    L = out.sum(axis=0)
    keep = L > 0
    if not keep.any():
        raise ValueError("no point was left out of any bootstrap sample; use more resamples.")
    E = np.where(keep, (out * Q).sum(axis=0) / np.maximum(L, 1), 0.0)
    err1 = float(E[keep].mean())
    q = (out * Q).sum(axis=1) / n
    e_n = (1.0 - 1.0 / n) ** (-n)
    cov = ((N - N.mean(axis=0)) * q[:, None]).sum(axis=0) / B
    D = (2.0 + 1.0 / (n - 1)) * (E - err1) / n + e_n * cov
    D = np.where(keep, D, 0.0)
    return err1, float(math.sqrt(float(np.sum(D ** 2)))), D


# --------------------------------------------------------------------------- the intervals

def _wald_cv_iv(design, y, confidence_level, cv, variance, stratified, loss, rng):
    refits = _refits_iv(design, y, loss)
    labels = refits.labels
    n = refits.n
    cv = folds_or_count(cv, labels, refits.X, lambda k: check_scalar(k, "cv", min_val=2, max_val=n),
                        {"stratified": (stratified, True)})
    if isinstance(cv, np.ndarray) and cv.shape[0] != 1:
        raise ValueError(f"wald_cv takes one K-fold split; the splitter `cv` made {cv.shape[0]} repetitions.")
    if variance not in ("all-pairs", "within-fold"):
        raise ValueError(f"`variance` must be 'all-pairs' or 'within-fold'; got {variance!r}.")
    if variance == "within-fold":
        smallest = n // cv if not isinstance(cv, np.ndarray) else int(np.bincount(cv[0]).min())
        if smallest < 2:
            raise ValueError("the within-fold variance needs at least 2 points per fold: "
                             + (f"cv = {cv} > n / 2 = {n / 2:g}." if not isinstance(cv, np.ndarray)
                                else "the splitter `cv` made a fold of 1 point."))
    if not isinstance(stratified, (bool, np.bool_)):
        raise ValueError(f"`stratified` must be True or False; got {stratified!r}.")
    return refits, check_confidence_level(confidence_level), cv, bool(stratified), check_rng(rng)


@renamed(k="cv")
@fill_doc(**_DOC)
def wald_cv(design: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95, cv: int | Splitter = 10,
            variance: str = "all-pairs", stratified: bool = True, loss: str | Loss = "squared",
            rng: np.random.Generator | np.random.SeedSequence | int | None = None) -> IntervalResult:
    r"""Wald interval from K-fold cross-validation (Bayle, Bayle, Janson & Mackey 2020).

    One K-fold split; h_i the held-out 0-1 loss of point i (the classifier refitted without
    its fold);

    .. math::

        \hat R = \frac1n \sum_i h_i, \qquad \hat R \pm z_{1-\delta/2} \, \frac{\hat\sigma}{\sqrt n},
        \qquad \hat\sigma^2 = \frac1n \sum_i (h_i - \hat R)^2

    (the all-pairs variance, default, the authors' reported choice), or the within-fold one
    (:func:`wald_interval`). Targets the K-fold test error, the mean true
    error of the K fold models. Defaults: K = 10 (the authors' experiments), folds dealt
    stratified by class (the authors' code splits unshuffled; at n = 30 stratification keeps
    both classes in every training set).

    Parameters
    ----------
    %(data)s
    cv : int or scikit-learn splitter, default 10
        K, the number of folds (``k`` is its old name, deprecated), or a splitter making one
        K-fold split (``StratifiedKFold(10, shuffle=True, random_state=0)``;
        :func:`cudbound.resampling.splitter_folds`; ``stratified`` is then the splitter's, another
        value of it refused).
    variance : 'all-pairs' (default) or 'within-fold'
    stratified : bool, default True
    %(tail)s

    Returns
    -------
    IntervalResult
        ``method="wald_cv"``, centred at R; ``details`` has sigma, k and the folds.

    References
    ----------
    Bayle, P., Bayle, A., Janson, L. and Mackey, L. (2020). Cross-validation confidence
    intervals for test error. NeurIPS 33 (code: alexandre-bayle/cvci, cv_num_exper.py).

    Examples
    --------
    >>> import numpy as np
    >>> from cudbound.baselines import wald_cv
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
    >>> res = wald_cv(np.column_stack([np.ones(40), X]), y, rng=1)
    >>> res.low <= res.estimate <= res.high
    True
    """
    t0 = time.perf_counter()
    refits, level, folds_or_k, stratified, gen = _wald_cv_iv(design, y, confidence_level, cv, variance,
                                                                        stratified, loss, rng)
    labels = refits.labels
    folds = deal_folds(folds_or_k, labels, 1, stratified, gen)[0]
    k = int(folds.max()) + 1
    test = folds[None, :] == np.arange(k)[:, None]
    wrong, log = _heldout_wrong(refits, ~test, test)
    h = wrong.any(axis=0).astype(float)
    ci = wald_interval(h, folds, level, variance)
    R = float(h.mean())
    sigma = (ci.high - R) / normal_critical_value(level) * math.sqrt(h.shape[0])
    return _finish("wald_cv", ci, level, R, h.shape[0], t0,
                   {"k": k, "variance": variance, "sigma": sigma, "folds": folds, "losses": h}, log)


def _split_sizes(n, test_fraction):
    f = check_scalar(test_fraction, "test_fraction", numbers.Real, min_val=0.0, max_val=1.0, include_boundaries="neither")
    n2 = max(1, math.floor(f * n + 0.5))          # half rounds up
    if n2 >= n:
        raise ValueError(f"`test_fraction` = {test_fraction!r} leaves no training point at n = {n}.")
    return f, n - n2, n2


def _corrected_t_iv(design, y, confidence_level, n_splits, test_fraction, loss, rng):
    refits = _refits_iv(design, y, loss)
    J = check_scalar(n_splits, "n_splits", min_val=2)
    f, n1, n2 = _split_sizes(refits.n, test_fraction)
    return refits, check_confidence_level(confidence_level), J, f, n1, n2, check_rng(rng)


@fill_doc(**_DOC)
def corrected_t(design: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95, n_splits: int = 15,
                test_fraction: float = 0.1, loss: str | Loss = "squared",
                rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                time_limit: float | None = None) -> IntervalResult:
    r"""Corrected resampled t interval (Nadeau & Bengio 2003).

    J random splits of the n points into n1 training and n2 = round(test_fraction n) test
    points; mu_j the test error of the classifier refitted on the training part, mu and s^2
    their mean and variance; the interval

    .. math::

        \bar\mu \pm t_{J-1,\,1-\delta/2} \sqrt{\Bigl(\frac1J + \frac{n_2}{n_1}\Bigr) s^2}

    (:func:`corrected_t_interval`). The factor
    n2/n1 corrects the variance for the overlap of the training sets. Targets the expected
    error of the classifier trained on n1 points. Defaults J = 15 and n2 = n / 10, the
    settings of Nadeau & Bengio's simulations (also mlr3inferr's defaults).

    Parameters
    ----------
    %(data)s
    n_splits : int, default 15
        J, at least 2.
    test_fraction : float in (0, 1), default 0.1
    %(tail)s
    %(time_limit)s
        The splits are the resamples (``n_splits_used``, at least 2).

    Returns
    -------
    IntervalResult
        ``method="corrected_t"``, centred at mu; ``details`` has the J split errors, n1, n2.

    References
    ----------
    Nadeau, C. and Bengio, Y. (2003). Inference for the generalization error. Machine
    Learning 52, 239-281. Bouckaert, R. R. and Frank, E. (2004). Evaluating the replicability
    of significance tests for comparing learning algorithms. PAKDD 2004.
    """
    t0 = time.perf_counter()
    budget = Budget(check_time_limit(time_limit))
    refits, level, J, f, n1, n2, gen = _corrected_t_iv(design, y, confidence_level, n_splits,
                                                                  test_fraction, loss, rng)
    train, test = _random_splits(refits.n, n2, J, gen)
    preds, log, used = _predict_within(refits, train, budget, minimum=2)
    train, test = train[:used], test[:used]
    mu = ((preds != refits.labels) & test).sum(axis=1) / n2
    ci = corrected_t_interval(mu, n1, n2, level)
    details = {"n_splits": J, "test_fraction": f, "n_train": n1, "n_test": n2, "split_errors": mu,
               "train_masks": train, "test_masks": test}
    budget.note(details, "n_splits", used, J)
    return _finish("corrected_t", ci, level, float(mu.mean()), refits.n, t0, details, log)


def _conservative_z_iv(design, y, confidence_level, n_splits, n_halves, test_fraction, loss, rng):
    refits = _refits_iv(design, y, loss)
    n = refits.n
    J = check_scalar(n_splits, "n_splits", min_val=1)
    M = check_scalar(n_halves, "n_halves", min_val=1)
    f, n1, n2 = _split_sizes(n, test_fraction)
    if n2 >= n // 2:
        raise ValueError(f"the conservative Z needs n2 < n / 2 (each half keeps n2 test points and trains on the "
                         f"rest); test_fraction = {test_fraction!r} gives n2 = {n2} at n = {n}.")
    return refits, check_confidence_level(confidence_level), J, M, f, n1, n2, check_rng(rng)


@fill_doc(**_DOC)
def conservative_z(design: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95, n_splits: int = 15,
                   n_halves: int = 10, test_fraction: float = 0.1, loss: str | Loss = "squared",
                   rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                   time_limit: float | None = None) -> IntervalResult:
    r"""Conservative Z interval (Nadeau & Bengio 2003).

    The estimate mu is that of :func:`corrected_t` on all the data (J splits, n1 training, n2
    test points). Its variance is bounded by repeating the same estimate on two disjoint halves
    of n' = floor(n / 2) points, M times: on each half J splits with n2 test and n' - n2
    training points give mu_m and mu_m^c, and

    .. math::

        \hat\sigma^2 = \frac{1}{2M} \sum_{m=1}^M (\hat\mu_m - \hat\mu_m^c)^2, \qquad
        \hat\mu \pm z_{1-\delta/2} \, \hat\sigma

    (:func:`conservative_z_interval`). The interval is conservative because the
    halves train on fewer points (a larger variance). Targets the expected error of the
    classifier trained on n1 points. Defaults J = 15, M = 10, n2 = n / 10 (Nadeau & Bengio's
    simulations; mlr3inferr's defaults). Needs n2 < n / 2.

    Parameters
    ----------
    %(data)s
    n_splits : int, default 15
        J, splits per estimate.
    n_halves : int, default 10
        M, the number of random halvings.
    test_fraction : float in (0, 1), default 0.1
    %(tail)s
    %(time_limit)s
        The J splits of the estimate are always made; the halvings are the resamples
        (``n_halves_used``, at least 1).

    Returns
    -------
    IntervalResult
        ``method="conservative_z"``; ``details`` has sigma and the M pairs of half estimates.

    References
    ----------
    Nadeau, C. and Bengio, Y. (2003). Inference for the generalization error. Machine
    Learning 52, 239-281.
    """
    t0 = time.perf_counter()
    budget = Budget(check_time_limit(time_limit))
    refits, level, J, M, f, n1, n2, gen = _conservative_z_iv(design, y, confidence_level, n_splits,
                                                                        n_halves, test_fraction, loss, rng)
    n = refits.n
    train, test = _random_splits(n, n2, J, gen)
    half = n // 2
    trains, tests = [train], [test]
    for _ in range(M):
        perm = gen.permutation(n)
        for part in (perm[:half], perm[half:2 * half]):
            tr, te = _random_splits(n, n2, J, gen, pool=part)
            trains.append(tr)
            tests.append(te)
    trains, tests = np.concatenate(trains), np.concatenate(tests)  # type: ignore[assignment]  # the lists, joined
    wrong, log = _heldout_wrong(refits, trains[:J], tests[:J])       # the estimate's J splits, always
    halves, lg, used = _predict_within(refits, trains[J:], budget, offsets=np.arange(M + 1) * 2 * J)
    log.add(lg)
    trains, tests = trains[:J * (1 + 2 * used)], tests[:J * (1 + 2 * used)]
    mu_split = np.concatenate([wrong, (halves != refits.labels) & tests[J:]]).sum(axis=1) / n2
    mu = float(mu_split[:J].mean())
    pairs = mu_split[J:].reshape(used, 2, J).mean(axis=2)
    ci = conservative_z_interval(mu, pairs, level)
    details = {"n_splits": J, "n_halves": M, "test_fraction": f, "n_train": n1, "n_test": n2,
               "half_train": half - n2, "sigma": (ci.high - mu) / normal_critical_value(level),
               "half_errors": pairs, "train_masks": trains, "test_masks": tests}
    budget.note(details, "n_halves", used, M)
    return _finish("conservative_z", ci, level, mu, n, t0, details, log)


def _nested_cv_iv(design, y, confidence_level, cv, repeats, bias_repeats, loss, rng) -> tuple[
        Refits, float, int, int, int, np.random.Generator]:
    refits = _refits_iv(design, y, loss)
    n = refits.n
    if cv_splitter(cv) is not None:
        raise ValueError(f"nested_cv needs `cv` as a number of folds (its algorithm draws its own random K-fold "
                         f"splits, and fresh ones for the bias); got {cv!r}.")
    k = check_scalar(cv, "cv", min_val=3)
    if n // k < 2:
        raise ValueError(f"nested cross-validation needs at least 2 points per fold: cv = {k} > n / 2 = {n / 2:g}.")
    R = check_scalar(repeats, "repeats", min_val=1)
    Rb = math.ceil(R / 5) if bias_repeats is None else check_scalar(bias_repeats, "bias_repeats", min_val=1)
    return refits, check_confidence_level(confidence_level), k, R, Rb, check_rng(rng)


def _equal_folds(n, k, gen):
    """K folds of floor(n / K) points from a random permutation; the n mod K others always train
    (the authors' nestedcv, R/core.R). Returns a (k, m) array of indices."""
    m = n // k
    return gen.permutation(n)[: k * m].reshape(k, m)


def _all_folds(n, k, gen):
    """K folds of plain CV covering every point (sizes floor(n/K) or ceil(n/K), as the authors'
    naive_cv): a random permutation, its first K floor(n/K) points in K consecutive runs, the
    n mod K others one each to folds 0, 1, ... Returns (n,) fold labels; with K | n the folds
    are those of :func:`_equal_folds` on the same draw."""
    m = n // k
    perm = gen.permutation(n)
    labels = np.empty(n, dtype=np.int64)
    labels[perm[: k * m]] = np.repeat(np.arange(k), m)
    labels[perm[k * m:]] = np.arange(n - k * m)
    return labels


@renamed(k="cv")
@fill_doc(**_DOC)
def nested_cv(design: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95, cv: int = 10, repeats: int = 50,
              bias_repeats: int | None = None, loss: str | Loss = "squared",
              rng: np.random.Generator | np.random.SeedSequence | int | None = None,
              time_limit: float | None = None) -> IntervalResult:
    r"""Nested cross-validation interval (Bates, Hastie & Tibshirani 2023, Algorithm 1).

    Following the authors' R package ``nestedcv`` (R/core.R). Each of R repetitions splits
    the data at random into K folds of m = floor(n / K) points (the other n mod K points
    always train). For each outer fold k: e_out, the losses on fold k of the fit without it;
    e_in, the losses on every other fold k' of the fit without folds k and k'. Then
    a_k = mean(e_in) - mean(e_out) and b_k = var(e_out) / m (divisor m - 1), and over all R K
    outer folds

    .. math::

        \widehat{\mathrm{MSE}} = \max\bigl(0, \overline{a^2} - \bar b\bigr), \qquad
        \mathrm{Err}_{\mathrm{NCV}} = \overline{e_{\mathrm{in}}}, \qquad
        \mathrm{SE} = c \, \frac{\mathrm{sd}(e_{\mathrm{in}})}{\sqrt n}, \qquad
        c = \min\Bigl\{\sqrt K, \max\Bigl\{1, \frac{\sqrt{\widehat{\mathrm{MSE}}}}
            {\mathrm{sd}(e_{\mathrm{in}}) / \sqrt{\lfloor n (K - 1) / K \rfloor}}\Bigr\}\Bigr\},

    the centre Err_NCV - bias with bias = (1 + ((K - 2) / K)^1.5) (Err_NCV - Err_CV), Err_CV
    the mean of the fold errors of ``bias_repeats`` plain K-fold CV runs on fresh splits that
    test every point (fold sizes differ by at most one), and the interval
    centre +/- z SE. Targets Err_XY, the error of the model fitted on all n points.

    Defaults: K = 10, R = 50 and ``bias_repeats`` = ceil(R / 5), the authors' ``nested_cv``
    defaults (their experiments use R = 200). Other implementations differ: mlr3inferr uses
    the factor (1 + (K - 2)/K) without the exponent and Err_CV from the same repetitions;
    oosse runs the inner CV on a fresh split of each outer training set. The authors'
    function defaults to a 90 percent interval; here the level is ``confidence_level``.

    Parameters
    ----------
    %(data)s
    cv : int, default 10
        K, the number of folds, at least 3 and at most n / 2 (``k`` is its old name, deprecated;
        not a splitter: the algorithm draws its own splits).
    repeats : int, default 50
    bias_repeats : int, optional
        Plain CV runs for Err_CV, default ceil(repeats / 5).
    %(tail)s
    %(time_limit)s
        The plain CV runs for Err_CV are always made; the R repetitions are the resamples
        (``repeats_used``, at least 1).

    Returns
    -------
    IntervalResult
        ``method="nested_cv"``; ``details`` has Err_NCV, Err_CV, the bias, MSE, SE and the
        inflation c.

    References
    ----------
    Bates, S., Hastie, T. and Tibshirani, R. (2023). Cross-validation: what does it estimate
    and how well does it do it? JASA 119, 1434-1445 (code: stephenbates19/nestedcv).
    """
    t0 = time.perf_counter()
    budget = Budget(check_time_limit(time_limit))
    refits, level, K, R, Rb, gen = _nested_cv_iv(design, y, confidence_level, cv, repeats,
                                                            bias_repeats, loss, rng)
    labels = refits.labels
    n = refits.n
    trains, layouts, cv_layouts = nested_cv_splits(n, K, R, Rb, gen)
    per_rep = K + len(_inner_pairs(K))
    bias, log = refits.predict(trains[R * per_rep:].astype(float))        # the plain CV runs, always
    nested, lg, used = _predict_within(refits, trains[:R * per_rep], budget, offsets=np.arange(R + 1) * per_rep)
    log.add(lg)
    layouts = layouts[:used]
    est = nested_cv_estimate(np.concatenate([nested, bias]) != labels, layouts, cv_layouts)
    half = normal_critical_value(level) * est["se"]
    centre = est["centre"]
    details = {"k": K, "repeats": R, "bias_repeats": Rb, **{k: est[k] for k in _NESTED_DETAILS},
               "fold_layouts": layouts, "cv_layouts": cv_layouts}
    budget.note(details, "repeats", used, R)
    return _finish("nested_cv", ConfidenceInterval(centre - half, centre + half), level, centre, n, t0, details, log)


_NESTED_DETAILS = ("err_ncv", "err_cv", "bias", "mse", "se", "se_inflation")


def _inner_pairs(K):
    return [(a, b) for a in range(K) for b in range(a + 1, K)]


def nested_cv_splits(n: int, K: int, repeats: int, bias_repeats: int,
                     gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The training sets of :func:`nested_cv`, drawn from ``gen``: ``(trains, layouts, cv_layouts)``.

    ``trains`` (fits, n) boolean: for each of the R repetitions (``layouts[r]``, K folds of
    floor(n / K) points, :func:`_equal_folds`), the K outer fits (all but fold a) and the
    K (K - 1) / 2 inner fits (all but folds a and b, a < b); then the K fits of each of the
    ``bias_repeats`` plain CV runs (``cv_layouts``, :func:`_all_folds`). What
    :func:`nested_cv_estimate` reads the held-out losses of, in this order.
    """
    pairs = _inner_pairs(K)
    trains, layouts = [], []
    for _ in range(repeats):
        folds = _equal_folds(n, K, gen)
        layouts.append(folds)
        for a in range(K):                      # outer fits: all but fold a
            w = np.ones(n, dtype=bool)
            w[folds[a]] = False
            trains.append(w)
        for a, b in pairs:                      # inner fits: all but folds a and b
            w = np.ones(n, dtype=bool)
            w[folds[a]] = False
            w[folds[b]] = False
            trains.append(w)
    cv_layouts = [_all_folds(n, K, gen) for _ in range(bias_repeats)]
    for labels_cv in cv_layouts:
        for a in range(K):
            trains.append(labels_cv != a)
    return np.asarray(trains), np.asarray(layouts), np.asarray(cv_layouts)


def nested_cv_estimate(losses: ArrayLike, layouts: np.ndarray, cv_layouts: np.ndarray) -> dict:
    """Bates, Hastie & Tibshirani's (2023) nested-CV estimate from the losses of the fits of
    :func:`nested_cv_splits`: ``losses[s, i]`` the loss at point i of fit s (read at held-out
    points only). The one copy of the formula (:func:`nested_cv`'s docstring states it): one
    classifier's 0-1 losses (``nested_cv``) and the per-point differences of two classifiers'
    (``cudbound.compare``) use it. Returns ``centre``, ``se`` and the parts ``err_ncv``,
    ``err_cv``, ``bias``, ``mse``, ``se_inflation``.
    """
    wrong = np.asarray(losses)
    R, K, m = layouts.shape
    n = wrong.shape[1]
    pairs = _inner_pairs(K)
    per_rep = K + len(pairs)
    a_terms, b_terms, inner = [], [], []
    pair_index = {p: K + j for j, p in enumerate(pairs)}
    for r, folds in enumerate(layouts):
        base = r * per_rep
        for a in range(K):
            e_out = wrong[base + a, folds[a]].astype(float)
            e_in = np.concatenate([wrong[base + pair_index[(min(a, b), max(a, b))], folds[b]]
                                   for b in range(K) if b != a]).astype(float)
            a_terms.append(e_in.mean() - e_out.mean())
            b_terms.append(np.var(e_out, ddof=1) / m)
            inner.append(e_in)
    inner_all = np.concatenate(inner)
    base = R * per_rep
    err_cv = float(np.mean([wrong[base + j * K + a, labels_cv == a].mean()
                            for j, labels_cv in enumerate(cv_layouts) for a in range(K)]))
    err_ncv = float(inner_all.mean())
    mse = max(0.0, float(np.mean(np.square(a_terms)) - np.mean(b_terms)))
    sd = float(np.std(inner_all, ddof=1))
    if sd > 0.0:
        infl = math.sqrt(mse) / (sd / math.sqrt(math.floor(n * (K - 1) / K)))
        infl = min(max(infl, 1.0), math.sqrt(K))
    else:
        infl = 1.0
    se = infl * sd / math.sqrt(n)
    bias = (1.0 + ((K - 2) / K) ** 1.5) * (err_ncv - err_cv)
    return {"centre": err_ncv - bias, "se": se, "err_ncv": err_ncv, "err_cv": err_cv, "bias": bias, "mse": mse,
            "se_inflation": infl}


def _bccv_iv(design, y, confidence_level, n_resamples, bias_correction, loss, rng) -> tuple[
        Refits, float, int, bool, np.random.Generator]:
    refits = _refits_iv(design, y, loss)
    B = check_scalar(n_resamples, "n_resamples", min_val=2)
    if not isinstance(bias_correction, (bool, np.bool_)):
        raise ValueError(f"`bias_correction` must be True or False; got {bias_correction!r}.")
    return refits, check_confidence_level(confidence_level), B, bool(bias_correction), check_rng(rng)


def _loo_case_weights(counts):
    """For each count vector and each case j it holds, the weights without every copy of j."""
    rows, cases, weights = [], [], []
    for b, c in enumerate(counts):
        for j in np.flatnonzero(c):
            w = c.astype(float).copy()
            w[j] = 0.0
            rows.append(b)
            cases.append(j)
            weights.append(w)
    return np.asarray(rows), np.asarray(cases), np.asarray(weights)


@fill_doc(**_DOC)
def bccv(design: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95, n_resamples: int = 200,
         bias_correction: bool = True, loss: str | Loss = "squared",
         rng: np.random.Generator | np.random.SeedSequence | int | None = None,
         time_limit: float | None = None) -> IntervalResult:
    r"""Bootstrap case cross-validation interval (Jiang, Varma & Simon 2008).

    B bootstrap samples of the n cases (counts N^b); on each, leave-one-case-out
    cross-validation that leaves out every copy of a case together,

    .. math::

        e^*_b = \frac1n \sum_j N_j^b \, 1\{f_{b,-j}(x_j) \ne y_j\},

    f_{b,-j} refitted on sample b without case j. The BCCV
    percentile interval is [q_{delta/2}, q_{1-delta/2}] of the e*_b. Its "simple bias
    reduction" (default): both ends shifted by Delta = mean(e*) - e_LOO, the bootstrap's
    bias against the leave-one-out error e_LOO on the data, which is then the centre.
    ``bias_correction=False`` gives the plain percentile interval, centred at mean(e*).

    The authors report the plain percentile interval as overly conservative and the
    bias-reduced one as mildly conservative. Their paper's text was not available to us: the
    shift by Delta is our reading of "a simple bias reduction on the BCCV percentile interval",
    and B = 200 is our default (``docs/method.md``).

    Parameters
    ----------
    %(data)s
    n_resamples : int, default 200
        B.
    bias_correction : bool, default True
    %(tail)s
    %(time_limit)s
        The leave-one-out fits on the data are always made; the B bootstrap samples are the
        resamples (``n_resamples_used``, at least 2).

    Returns
    -------
    IntervalResult
        ``method="bccv"``; ``details`` has e_LOO, mean(e*), Delta and the B values.

    References
    ----------
    Jiang, W., Varma, S. and Simon, R. (2008). Calculating confidence intervals for prediction
    error in microarray classification using resampling. Statistical Applications in
    Genetics and Molecular Biology 7(1), article 8.
    """
    t0 = time.perf_counter()
    budget = Budget(check_time_limit(time_limit))
    refits, level, B, corrected, gen = _bccv_iv(design, y, confidence_level, n_resamples, bias_correction, loss, rng)
    labels, n = refits.labels, refits.n
    counts = draw_counts(n, B, gen)
    rows, cases, weights = _loo_case_weights(counts)
    loo, log = refits.predict(1.0 - np.eye(n))                            # leave-one-out on the data, always
    e_loo = float(np.mean(np.diagonal(loo) != labels))
    offsets = np.searchsorted(rows, np.arange(B + 1))                      # each sample's rows (rows is sorted)
    preds, lg, used = _predict_within(refits, weights, budget, offsets=offsets, minimum=2)
    log.add(lg)
    m = offsets[used]
    rows, cases, counts = rows[:m], cases[:m], counts[:used]
    miss = preds[np.arange(m), cases] != labels[cases]
    e_star = np.bincount(rows, weights=counts[rows, cases] * miss, minlength=used) / n
    low, high = percentile_interval(e_star, level)
    shift = float(e_star.mean() - e_loo) if corrected else 0.0
    centre = e_loo if corrected else float(e_star.mean())
    details = {"n_resamples": B, "bias_correction": corrected, "loo_error": e_loo,
               "bootstrap_mean": float(e_star.mean()), "shift": shift, "bootstrap_distribution": e_star,
               "counts": counts}
    budget.note(details, "n_resamples", used, B)
    return _finish("bccv", ConfidenceInterval(float(low) - shift, float(high) - shift), level, centre, n, t0,
                   details, log)


def _e632_delta_iv(design, y, confidence_level, n_resamples, point_estimate, loss, rng) -> tuple[
        Refits, float, int, str, np.random.Generator]:
    refits = _refits_iv(design, y, loss)
    B = check_scalar(n_resamples, "n_resamples", min_val=2)
    key = point_estimate.strip().lower().lstrip(".") if isinstance(point_estimate, str) else None
    if key not in ("632", "632+", "err1"):
        raise ValueError(f"`point_estimate` must be '.632+', '.632' or 'err1'; got {point_estimate!r}.")
    return refits, check_confidence_level(confidence_level), B, key, check_rng(rng)


@renamed(estimator="point_estimate")
@fill_doc(**_DOC)
def e632_delta(design: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95, n_resamples: int = 200,
               point_estimate: str = ".632+", loss: str | Loss = "squared",
               rng: np.random.Generator | np.random.SeedSequence | int | None = None,
               time_limit: float | None = None) -> IntervalResult:
    r"""Normal interval around the .632+ estimate with Efron & Tibshirani's delta-method SE.

    SE_del of the leave-one-out bootstrap Err(1) by the delta method (Efron & Tibshirani
    1997, section 3, eq. 40; :func:`delta_method_se`), rescaled proportionally for the
    estimate reported (as the authors suggest for .632+, and as the nestedcv and oosse R
    packages do), and the interval

    .. math::

        \widehat{\mathrm{Err}} \pm z_{1-\delta/2} \, \mathrm{SE}, \qquad
        \mathrm{SE} = \mathrm{SE}_{\mathrm{del}} \, \widehat{\mathrm{Err}} / \widehat{\mathrm{Err}}^{(1)}.

    ``point_estimate``: '.632+' (default), '.632' or 'err1' (Err(1) itself, SE = SE_del). Default
    B = 200 bootstrap samples (the authors' simulations use 50 for the estimate; the SE needs more).

    Parameters
    ----------
    %(data)s
    n_resamples : int, default 200
        B.
    point_estimate : '.632+' (default), '.632' or 'err1'
        The estimate the interval is centred on (``estimator`` is its old name, deprecated:
        ``estimator`` means a scikit-learn model everywhere else).
    %(tail)s
    %(time_limit)s
        The B bootstrap samples are the resamples (``n_resamples_used``, at least 2).

    Returns
    -------
    IntervalResult
        ``method="e632_delta"``; ``details`` has Err(1), SE_del, SE and the estimate's parts.

    References
    ----------
    Efron, B. and Tibshirani, R. (1997). Improvements on cross-validation: the .632+ bootstrap
    method. JASA 92(438), 548-560. Efron, B. (1992). Jackknife-after-bootstrap standard
    errors and influence functions. JRSS B 54, 83-127.
    """
    t0 = time.perf_counter()
    budget = Budget(check_time_limit(time_limit))
    refits, level, B, key, gen = _e632_delta_iv(design, y, confidence_level, n_resamples, point_estimate, loss, rng)
    labels, n = refits.labels, refits.n
    counts = draw_counts(n, B, gen)
    _, full_preds = refits.full_fit()
    train = float(np.mean(full_preds != labels))
    preds, log, used = _predict_within(refits, counts, budget, minimum=2)
    counts = counts[:used]
    err1, se_del, _ = delta_method_se(preds != labels, counts)
    details = {"n_resamples": B, "estimator": key, "train_error": train, "err1": err1, "se_err1": se_del,
               "counts": counts}
    budget.note(details, "n_resamples", used, B)
    if key == "err1":
        est = err1
    elif key == "632":
        est = _e632_value(train, err1)
    else:
        est, parts = _e632plus_parts(labels, full_preds, train, err1)
        details.update(parts)
    se = se_del * est / err1 if err1 > 0.0 else se_del
    details["se"] = se
    half = normal_critical_value(level) * se
    return _finish("e632_delta", ConfidenceInterval(est - half, est + half), level, est, n, t0, details, log)


INPUT_CHECKS: dict[str, Callable[..., object]] = {
    "wald_cv": _wald_cv_iv, "corrected_t": _corrected_t_iv, "conservative_z": _conservative_z_iv,
    "nested_cv": _nested_cv_iv, "bccv": _bccv_iv, "e632_delta": _e632_delta_iv,
}
"""The input validation of each interval, by the interval's name: called with (some of) the
interval's own arguments, by name, it raises ValueError (or TypeError) for what the interval would
refuse and computes nothing (:func:`cudbound.registry.options_check` makes a registered method's
option check of it)."""
