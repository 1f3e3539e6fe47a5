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
import numbers
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ._budget import check_time_limit
from ._kernel_compile import compile_seconds
from ._replicate_progress import bracket_display, replicate_bar
from ._validation import (check_alpha_n, check_confidence_level, check_counts, check_n_jobs, check_n_resamples,
                          check_rng, check_scalar)
from ._warnings import warn
from .design import PreparedData, as_prepared, check_labelled_design, prepare_data, reparametrise
from .engine import ENGINES, ReplicateEngine
from .fit import FittedClassifier, fit_classifier, fit_coefficients
from .losses import Loss, get_loss
from .results import ConfidenceInterval, CUDResult, SearchStats
from .quantile import kth_smallest, order_index, order_statistic
from .refit import Procedure, as_mapped_procedure, takes_procedure
from .resampling import draw_counts
from .search import SearchOptions, SearchOutcome
from .workers import ReplicateRunner

if TYPE_CHECKING:
    from distributed import Client
    from sklearn.base import BaseEstimator

# the main function first: the API reference lists them in this order
__all__ = ["cud_interval", "cud_from_design", "EngineOptions", "SmallSampleWarning", "replicate_sup",
           "search_replicate", "conservative_quantile", "prepare_cud"]


@dataclass(frozen=True)
class EngineOptions:
    """How the CUD replicates are computed: the engine's settings, apart from the statistics.

    None of them changes the interval, except a budget that cuts a search short: the replicate
    then keeps a certified upper bound and the result is flagged ``conservative``.

    - engine : ``"auto"`` (default), ``"python"`` or ``"cvxpy"``: where a replicate is set up and
      how its nodes are solved (:mod:`cudbound.engine`); all three give the same Q^(b).
    - solver : the cvxpy solver of the generic path (None: ECOS for quadratic losses and losses
      with derivatives, CLARABEL for the others).
    - max_nodes : node budget of each replicate's search (None: none).
    - replicate_time_limit : seconds of each replicate's search (None: none).
    - exact_distribution : solve every replicate to the end, so that ``bootstrap_distribution``
      holds every Q^(b) exactly (slower; the same interval).
    - scheduler : the address of a Dask scheduler (or a ``distributed.Client``): the replicates
      run on that cluster instead of local processes.

    Every front door (``engine_options=`` of :func:`cudbound.cud_interval` and
    :func:`cudbound.cud_from_design`, a study's ``[options.cud.engine_options]``) takes an
    ``EngineOptions`` or a dict of its fields (:meth:`coerce`).

    >>> EngineOptions.coerce({"max_nodes": 1000})
    EngineOptions(engine='auto', solver=None, max_nodes=1000, replicate_time_limit=None, exact_distribution=False, \
scheduler=None)
    """

    engine: str = "auto"
    solver: str | None = None
    max_nodes: int | None = None
    replicate_time_limit: float | None = None
    exact_distribution: bool = False
    scheduler: str | Client | None = None

    def __post_init__(self):
        if self.engine not in ENGINES:
            raise ValueError(f"`engine` must be one of {ENGINES}; got {self.engine!r}.")
        if self.solver is not None and not isinstance(self.solver, str):
            raise TypeError(f"`solver` must be None or the name of a cvxpy solver; got {type(self.solver).__name__}.")
        if self.max_nodes is not None:
            object.__setattr__(self, "max_nodes", check_scalar(self.max_nodes, "max_nodes", min_val=1,
                                                               hint=" (None: no limit)"))
        if self.replicate_time_limit is not None:
            object.__setattr__(self, "replicate_time_limit", check_scalar(
                self.replicate_time_limit, "replicate_time_limit", numbers.Real, min_val=0.0,
                include_boundaries="neither", hint=" (seconds of each replicate's search; None: no limit)"))
        if not isinstance(self.exact_distribution, (bool, np.bool_)):
            raise TypeError(f"`exact_distribution` must be True or False; got {self.exact_distribution!r}.")
        if not (self.scheduler is None or isinstance(self.scheduler, str) or hasattr(self.scheduler, "submit")):
            raise TypeError(f"`scheduler` must be None, a Dask scheduler's address or a distributed.Client; "
                            f"got {type(self.scheduler).__name__}.")

    @classmethod
    def coerce(cls, value: EngineOptions | Mapping[str, Any] | None) -> EngineOptions:
        """``value`` as an EngineOptions: None is the defaults, a dict gives some of the fields by name."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            names = [f.name for f in dataclasses.fields(cls)]
            unknown = sorted(str(k) for k in value if k not in names)
            if unknown:
                raise ValueError(f"`engine_options` has no field(s) {unknown}; its fields are {names}.")
            return cls(**value)
        raise TypeError(f"`engine_options` must be a cudbound.EngineOptions, a dict of its fields or None; "
                        f"got {type(value).__name__}.")

    def search_options(self, base: SearchOptions | None = None) -> SearchOptions:
        """The per-replicate budgets (``max_nodes``, ``replicate_time_limit``) on top of ``base``
        (a :class:`cudbound.search.SearchOptions`, default the defaults), whose own budgets stay
        where these are None."""
        base = base if base is not None else SearchOptions()
        if not isinstance(base, SearchOptions):
            raise TypeError(f"`search_options` must be a cudbound.search.SearchOptions; got {type(base).__name__}.")
        return dataclasses.replace(
            base, max_nodes=self.max_nodes if self.max_nodes is not None else base.max_nodes,
            time_limit=self.replicate_time_limit if self.replicate_time_limit is not None else base.time_limit)


def _replicate_iv(design, y, counts, loss, alpha_n) -> tuple[np.ndarray, np.ndarray, np.ndarray, Loss, float]:
    Phi, y_arr = check_labelled_design(design, y)
    n = Phi.shape[0]
    return Phi, y_arr, check_counts(counts, n), get_loss(loss), check_alpha_n(alpha_n, n)


def search_replicate(design: ArrayLike, y: ArrayLike, counts: ArrayLike, *, loss: str | Loss = "squared",
                     alpha_n: float | None = None, beta_hat: ArrayLike | None = None, time_limit: float | None = None,
                     engine_options: EngineOptions | Mapping[str, Any] = EngineOptions(),
                     search_options: SearchOptions | None = None, record_tree: bool = False) -> SearchOutcome:
    """Branch and bound for one bootstrap count vector, with its statistics.

    The search runs in the orthonormal coordinates of :func:`cudbound.design.reparametrise`
    (the value does not depend on the design's parametrisation; a tree export's points are
    in those coordinates). Same inputs as :func:`replicate_sup`, plus ``time_limit`` (seconds of
    this search), ``engine_options`` (a :class:`cudbound.EngineOptions` or a dict of its fields: the
    engine, the cvxpy solver and the node budget apply here, and ``replicate_time_limit`` with
    ``time_limit``, the smaller of the two) and ``record_tree`` (return the search tree as a
    ``networkx.DiGraph`` whose nodes carry depth, sign, node minimum ``m``, bound and state; the
    replicate is then set up in Python). ``search_options`` (a :class:`cudbound.search.SearchOptions`)
    switches the bounds and branching rule, for measurement; none of them changes the value. Returns a
    :class:`cudbound.search.SearchOutcome`: ``value`` (Q^(b), or a certified upper
    bound when ``status`` is not ``"exact"``), nodes, solves, pruned, realisability checks,
    screened points and seconds.
    """
    Phi, y, counts, loss, alpha = _replicate_iv(design, y, counts, loss, alpha_n)
    engine = EngineOptions.coerce(engine_options)
    options = engine.search_options(search_options)
    time_limit = check_time_limit(time_limit, zero=False)
    if time_limit is not None and (options.time_limit is None or time_limit < options.time_limit):
        options = dataclasses.replace(options, time_limit=time_limit)
    rep = reparametrise(Phi)
    loss_z = rep.loss(loss)
    if beta_hat is None:
        gamma_hat = fit_coefficients(rep.Z, y, loss_z, reparametrise=False, terms=rep.Z_terms)
    else:
        gamma_hat = rep.from_user(np.asarray(beta_hat, dtype=float))
    eng = ReplicateEngine(rep.Z, y, loss_z, engine=engine.engine, solver=engine.solver)
    return eng.search(counts, gamma_hat, alpha, options, record_tree=record_tree)


def replicate_sup(design: ArrayLike, y: ArrayLike, counts: ArrayLike, *, loss: str | Loss = "squared",
                  alpha_n: float | None = None) -> float:
    r"""The replicate supremum Q^(b) for one bootstrap count vector, computed exactly.

    .. math::

        Q^{(b)} = \sup_\beta \, \bigl| \mathrm{err}_{D^{(b)}}(\beta) - \mathrm{err}_D(\beta) \bigr|
        \; g\bigl(\alpha_n \{ L(D^{(b)}, \hat\beta) - L(D^{(b)}, \beta) \}\bigr),
        \qquad g(x) = \min(1, x + 1),

    with :math:`\mathrm{err}_D(\beta) = \frac1n \sum_i 1\{y_i \ne \operatorname{sign}(\phi_i^\top \beta)\}`,
    its resample form weighted by the counts, :math:`\mathrm{err}_{D^{(b)}}(\beta) =
    \frac1n \sum_i \nu_i 1\{y_i \ne \operatorname{sign}(\phi_i^\top \beta)\}`, the mean loss
    :math:`L(D^{(b)}, \beta) = \frac1n \sum_i \nu_i \ell(y_i, \phi_i^\top \beta)` (plus the
    loss's penalty, if any) and :math:`\hat\beta` its minimiser on the unweighted data (Laber &
    Murphy 2008).

    Parameters
    ----------
    design : (n, p) array
        The basis matrix Phi (include the intercept column when wanted); full column rank.
    y : (n,) labels, two classes: {-1, +1}, {0, 1}, booleans or the text pairs
        (``cudbound.design.check_labelled_design``).
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


def conservative_quantile(values: ArrayLike, confidence_level: float) -> float:
    """The ceil(level * B)-th smallest of B values (never below the level's quantile):
    ``cudbound.quantile.order_index`` and ``kth_smallest``, as the CUD interval takes Q_hat."""
    v = np.asarray(values, dtype=float)
    return kth_smallest(v, order_index(confidence_level, len(v)))


@takes_procedure
def cud_interval(X: ArrayLike, y: ArrayLike, procedure: Procedure | Mapping[str, Any] | BaseEstimator | None = None, *,
                 confidence_level: float = 0.95, n_resamples: int = 500, alpha_n: float | None = None,
                 rng: np.random.Generator | np.random.SeedSequence | int | None = None, pos_label: Any = None,
                 n_jobs: int | None = 1, time_limit: float | None = None, progress: bool = False,
                 engine_options: EngineOptions | Mapping[str, Any] = EngineOptions()) -> CUDResult:
    r"""CUD confidence set for the generalization error of a linear-in-basis classifier.

    Fits beta_hat by minimising the procedure's loss on its basis phi(X), draws ``n_resamples``
    bootstrap count vectors from ``rng``, and returns

    .. math::

        \bigl[\mathrm{err}_D(\hat\beta) - \hat Q, \; \mathrm{err}_D(\hat\beta) + \hat Q\bigr] \cap [0, 1],
        \qquad \hat Q = Q_{(\lceil \gamma B \rceil)},

    :math:`Q_{(k)}` the k-th smallest of the B replicate suprema :math:`Q^{(b)}`
    (:func:`replicate_sup`) and :math:`\gamma` the confidence level (a conservative order
    statistic; Laber & Murphy 2008). Q_hat is computed exactly; by default only as far as
    it needs (``cudbound.quantile``: a replicate is searched to the end only if its
    bounds straddle Q_hat), which gives the same interval as solving every replicate.
    The fit and the searches run in orthonormal coordinates of the design
    (``cudbound.design``), so shifting or rescaling a feature changes nothing.
    :func:`cud_from_design` is the same computation on a design matrix.

    Parameters
    ----------
    X : (n, d) array of features.
    y : (n,) labels with two classes: {-1, 1}, {0, 1}, booleans, or any pair with ``pos_label``.
    procedure : the classifier: None (default: ``Procedure()``, the 'linear' basis and the 'squared'
        loss), a :class:`cudbound.Procedure` or a dict of its fields, e.g.
        ``Procedure(basis="zpca:3", loss="hinge")``, or a scikit-learn classifier or Pipeline.
        ``basis``: 'linear' (intercept + identity), 'poly:D', 'pca:K', 'zpca:K', 'poly:D(zpca:K)', a
        callable or a Basis. It is fitted on all n points and kept for every bootstrap resample:
        the class searched is the span of that basis (Laber & Murphy 2008, section 2).
        ``loss``: 'squared', 'ridge[:LAM]', 'hinge', 'logistic', 'exponential',
        '<loss>_ridge[:LAM]' or a :class:`cudbound.losses.Loss` (``docs/losses.md``).
        A scikit-learn classifier or Pipeline, fitted or not (``Procedure(estimator=...)``), gives
        both: its earlier steps become the basis and its objective the loss, exactly
        (:mod:`cudbound.sklearn_bridge` lists what is supported). The positive class is then
        scikit-learn's (the larger label) unless ``pos_label`` is given.
    confidence_level : float in (0, 1).
    n_resamples : int, at least 1 / (1 - level).
    alpha_n : float >= 0, default n.
    rng : None, int, SeedSequence or numpy Generator (the only source of randomness).
    pos_label : the label value of the positive class (+1), when needed.
    n_jobs : int or None, worker processes for the replicates (default 1; None is 1, -1 every core,
        -k every core but k - 1, as in scikit-learn). Replicates are handed out one at a time to the
        next free worker. All count vectors are drawn from ``rng`` before any work is shared out,
        so the result is identical for every ``n_jobs``.
    time_limit : optional budget in seconds for the whole interval (fit included). The searches
        spend it on the replicates whose bounds straddle Q_hat (``cudbound.quantile``); when it
        runs out, the result is returned at once (a small overhead after ``time_limit``) with the
        certified upper side of Q_hat: an interval never narrower than the exact one, flagged
        ``conservative`` unless the bounds had already met, and ``upper_gap`` says how far its
        upper end could still move in.
    progress : bool, default False. Show a progress bar (tqdm, on stderr) over the replicates.
    engine_options : :class:`cudbound.EngineOptions`, or a dict of its fields: the engine and its
        cvxpy solver, the budgets of each replicate's search (``max_nodes``, ``replicate_time_limit``;
        a replicate cut short keeps a certified upper bound and the result is flagged
        ``conservative``), ``exact_distribution`` (solve every replicate to the end, so that
        ``bootstrap_distribution`` holds every Q^(b) exactly; the same interval) and a Dask
        ``scheduler`` to run the replicates on. None of them changes the interval unless a budget
        runs out.

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
    >>> full = cudbound.cud_interval(X, y, n_resamples=40, rng=1, engine_options={"exact_distribution": True})
    >>> full.confidence_interval == res.confidence_interval
    True
    """
    t0, compiled = time.perf_counter(), compile_seconds()
    check_time_limit(time_limit, zero=False)
    started = time.time()
    model = as_mapped_procedure(procedure)
    data = prepare_data(X, y, model.basis, model.estimator, pos_label, model.loss)
    res = cud_from_design(data, data.labels, loss=data.loss, confidence_level=confidence_level,
                          n_resamples=n_resamples, alpha_n=alpha_n, rng=rng, n_jobs=n_jobs,
                          time_limit=None if time_limit is None else max(time_limit - (time.time() - started), 0.0),
                          progress=progress, engine_options=engine_options)
    res.details.update(data.details())
    _own_time(res, t0, compiled)
    return res


def _own_time(res: CUDResult, t0: float, compiled: float) -> None:
    """``res.seconds``: the time since ``t0`` less what this process spent compiling kernels since
    the compile clock read ``compiled`` (then in ``details["compile_seconds"]``; a first run only)."""
    compiled = compile_seconds() - compiled
    res.details.pop("compile_seconds", None)
    if compiled > 0:
        res.details["compile_seconds"] = compiled
    res.seconds = time.perf_counter() - t0 - compiled


def _fitted_iv(fitted, data: PreparedData, loss):
    design, labels = data.design, data.labels
    if fitted is None:
        return fit_classifier(design, labels, loss, entry_terms=data.design_terms)
    if not isinstance(fitted, FittedClassifier):
        raise TypeError(f"`fitted` must be a cudbound.fit.FittedClassifier (from fit_classifier); "
                        f"got {type(fitted).__name__}.")
    if fitted.rep.design.shape != design.shape or not np.array_equal(fitted.rep.design, design) \
            or not np.array_equal(fitted.y, labels):
        raise ValueError("`fitted` was fitted on another design or other labels than the ones given.")
    if fitted.loss.name != loss.name:
        raise ValueError(f"`fitted` minimises the {fitted.loss.name} loss, not the {loss.name} loss asked for.")
    return fitted


def prepare_cud(method: Any, data: PreparedData, y: np.ndarray, options: Mapping[str, Any], *,
                shared: dict[Any, Any], root: np.random.SeedSequence,
                rng: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``prepare`` hook of ``"cud"`` in :mod:`cudbound.registry` (its signature is
    :class:`cudbound.registry.IntervalMethod`'s): beta-hat fitted once per loss of a call (the caller's
    ``fitted``, ``shared["fitted"]``, when its loss is the one asked for), and an integer seed or a
    SeedSequence given to CUD unchanged, so that ``intervals(X, y, rng=seed)`` reports
    ``cud_interval(X, y, rng=seed)``."""
    loss = get_loss(options.get("loss", method.default("loss")))
    key = ("fitted", loss.name.strip().lower())
    if key not in shared:
        given = shared.get("fitted")
        same = given is not None and given.loss.name.strip().lower() == key[1]
        shared[key] = given if same else fit_classifier(data.design, y, loss, entry_terms=data.design_terms)
    kwargs = {"fitted": shared[key]}
    if isinstance(rng, np.random.SeedSequence) or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool)):
        kwargs["rng"] = rng
    return kwargs, {}


def _cud_design_iv(design, y, loss, confidence_level, n_resamples, alpha_n, rng, n_jobs, time_limit,
                   engine_options) -> tuple[PreparedData, Loss, float, float, int, np.random.Generator, int,
                                            float | None, EngineOptions]:
    """Every check of :func:`cud_from_design`'s arguments, before any computation (the registry's
    option check of ``"cud"`` runs it on a stand-in design). A prepared data set gives its design (and the
    terms behind its entries): CUD keeps the basis fitted on all n points (the class is the span of that
    basis); a design matrix is wrapped as one (:func:`cudbound.design.as_prepared`)."""
    data = as_prepared(design, y)
    loss, alpha = get_loss(loss), check_alpha_n(alpha_n, data.design.shape[0])
    level = check_confidence_level(confidence_level)
    B = check_n_resamples(n_resamples, level)
    gen = check_rng(rng)
    return (data, loss, alpha, level, B, gen, check_n_jobs(n_jobs), check_time_limit(time_limit),
            EngineOptions.coerce(engine_options))


def cud_from_design(design: ArrayLike, y: ArrayLike, *, loss: str | Loss = "squared", confidence_level: float = 0.95,
                    n_resamples: int = 500, alpha_n: float | None = None,
                    rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                    fitted: FittedClassifier | None = None, n_jobs: int | None = 1, time_limit: float | None = None,
                    progress: bool = False,
                    engine_options: EngineOptions | Mapping[str, Any] = EngineOptions()) -> CUDResult:
    """The CUD confidence set on a design matrix: :func:`cud_interval` after the basis.

    ``design`` is the (n, p) basis matrix Phi (full column rank, intercept column included
    when wanted) and ``y`` its labels, two classes: {-1, +1}, {0, 1}, booleans or the text pairs
    (``cudbound.design.check_labelled_design``; any other pair is mapped by :func:`cud_interval`'s
    ``pos_label``). ``fitted`` (optional) is the
    :func:`cudbound.fit.fit_classifier` of this design, labels and loss, so that a caller
    that already fitted beta-hat (a coverage task) does not fit it again; the result is the
    same as without it. The other parameters are those of :func:`cud_interval`.
    This is the ``"cud"`` entry of the interval registry (:mod:`cudbound.registry`).
    """
    t0, compiled = time.perf_counter(), compile_seconds()
    started = time.time()
    data, loss, alpha, level, B, gen, jobs, time_limit, engine = _cud_design_iv(
        design, y, loss, confidence_level, n_resamples, alpha_n, rng, n_jobs, time_limit, engine_options)
    Phi, labels = data.design, data.labels
    deadline = None if time_limit is None else started + time_limit
    fit = _fitted_iv(fitted, data, loss)
    n = Phi.shape[0]
    centre = fit.train_error
    _warn_few_rows(n, Phi.shape[1], centre)
    counts = draw_counts(n, B, gen)
    jobs = min(jobs, B)
    k = order_index(level, B)
    bar = replicate_bar(progress, B)
    try:
        with ReplicateRunner(fit.rep.Z, labels, fit.loss_z, counts, fit.gamma, alpha, engine=engine.engine,
                             solver=engine.solver, n_jobs=jobs, scheduler=engine.scheduler) as runner:
            out = order_statistic(runner, B, k, engine.search_options(), exact_distribution=engine.exact_distribution,
                                  progress=bar, deadline=deadline, on_bounds=bracket_display(bar, centre, deadline))
    finally:
        if bar is not None:
            bar.close()
    q_hat = out.value
    ci = ConfidenceInterval(max(0.0, centre - q_hat), min(1.0, centre + q_hat))
    stats = SearchStats.from_records(out.records, lower=out.lower, decided=out.decided,
                                     half_width_lower=out.lower_value, out_of_time=out.out_of_time)
    res = CUDResult(confidence_interval=ci, confidence_level=level, estimate=centre, half_width=q_hat,
                    bootstrap_distribution=out.upper, coef=fit.coef, alpha_n=alpha, stats=stats, n_samples=n,
                    details={"loss": loss.name, "basis": "design", "label_encoding": None})
    if time_limit is not None:
        res.details["cut_by_time_limit"] = bool(out.out_of_time)
    _own_time(res, t0, compiled)
    return res


class SmallSampleWarning(UserWarning):
    """n is not comfortably above the number of coefficients of the classifier."""


ROWS_PER_COEFFICIENT = 5
"""Below this many rows per coefficient, :func:`cud_interval` warns (:class:`SmallSampleWarning`)."""


def _warn_few_rows(n, p, train_error):
    if n >= ROWS_PER_COEFFICIENT * p:
        return
    text = (f"n = {n} rows for {p} coefficients of the classifier (fewer than {ROWS_PER_COEFFICIENT} per "
            f"coefficient)")
    if train_error == 0:
        text += ("; its training error is 0, as a linear classifier with this many coefficients can fit almost any "
                 "labels of so few points, and the interval is wide for that reason")
    warn(text + ".", SmallSampleWarning)
