"""The CUD interval for the difference of the true errors of two classifiers fitted on the same data.

Delta_hat = err_D(beta_hat_A) - err_D(beta_hat_B) +/- Q_hat, clipped to [-1, 1], Q_hat the
ceil(level B)-th smallest of the B replicate suprema Q^(b) of the difference
(:mod:`cudbound.cud_difference`; method.md, "The difference of two classifiers"), the
bootstrap counts drawn as for :func:`cudbound.cud_interval`, the order statistic computed exactly
and only as far as needed (:mod:`cudbound.quantile`). The target is the difference of the
two fitted classifiers' true errors (``target="conditional"``). Each procedure must be the
package's classifier: a :class:`~cudbound.refit.Procedure` or a scikit-learn classifier that
:mod:`cudbound.sklearn_bridge` maps to its exact basis and loss.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._budget import check_time_limit
from .._replicate_progress import bracket_display, replicate_bar
from .._validation import check_alpha_n, check_n_resamples
from ..cud import EngineOptions
from ..cud_difference import FORMS, DifferenceSide, lead_frontier, search_replicate_difference
from ..design import prepare_data
from ..fit import fit_classifier
from ..losses import get_loss
from ..quantile import order_index, order_statistic
from ..refit import as_mapped_procedure
from ..resampling import draw_counts
from ..results import SearchStats
from .procedures import ProcedurePair, _iv
from .result import ComparisonResult, clipped

__all__ = ["cud_difference_interval"]

STATE_BYTES = 128 << 20
"""The most bytes of joint searches' states kept between the order statistic's rounds (for the single
CUD interval, ``quantile.RESUME_TOTAL_BYTES``, 256 MiB). With ``SearchOptions.node_memory`` lowered to
128 MiB as well (both were 256 MiB), the logistic case of ``benchmarks/difference.py`` (n = 100, B = 500,
seeds 0 and 1; 2026-12-02, one core each) peaked at 763 and 786 MiB instead of 1,069 and 1,135 MiB, in
192 and 962 s instead of 208 and 912 s (10.3 M and 65.5 M nodes instead of 11.4 M and 61.6 M; the same
intervals)."""


RESTART_AHEAD: int | None = 0
"""A joint search whose state was not kept between the order statistic's rounds starts again under the budget
of the round this many rounds ahead: 0, that round's own (:func:`cudbound.quantile.order_statistic`'s
``restart_ahead``; None: searched to the end, the rule until 2026-12-04). A search to the end has no bound on
its work: the third study's Liver n = 100 rep 12 (B = 500; 10 coefficients in B) dropped 118 states in its
third round (over :data:`STATE_BYTES`), its fourth round, which searched them to the end, had not ended after
1,078 s, and no run of the task finished (some ran over 2.5 hours). Started again under each round's budget, a
replicate spends fewer than 16/3 times the nodes it needs (``tests/test_quantile.py``): that round took 30 s and
the task 3,190 s (437.7 M nodes; the same Q_hat as with room for every state, 2,050 s and 310.4 M nodes).
The price where searches to the end were short: logistic100 at B = 500, seeds 0 and 1, 10.3 M -> 11.6 M
and 65.5 M -> 73.6 M nodes (109 -> 127 s and 601 -> 695 s, one core); squared50 the same nodes
(``benchmarks/measure/difference_restart_rule.py``, benchmarks/RESULTS.md, 2026-12-04)."""


def _side(refits, X, labels, engine: EngineOptions) -> DifferenceSide:
    """One procedure of the pair as the CUD bound takes it: its basis fitted on all n points, its
    exact loss (a scikit-learn classifier mapped by :mod:`cudbound.sklearn_bridge`), beta_hat."""
    model = as_mapped_procedure(refits.procedure, f"procedure {refits.name}")
    data = prepare_data(X, labels, model.basis, model.estimator, None, model.loss)
    fitted = fit_classifier(data.design, data.labels, get_loss(data.loss), entry_terms=data.design_terms)
    return DifferenceSide(fitted, engine=engine.engine, solver=engine.solver)


@dataclasses.dataclass
class _Record:
    """One round's search of a replicate as :func:`cudbound.quantile.order_statistic` reads it: the pair's
    Q^(b) bounds and status, and the statistics of the round's searches (the order statistic sums
    them over the rounds)."""

    value: float
    lower: float
    status: str
    nodes: int
    solves: int
    pruned: int
    realisability_checks: int
    screened: int
    fallbacks: int
    seconds: float
    round_nodes: int = 0  # the joint search's own nodes this round (which the round's budget caps)
    state: Any = None  # the joint search's SearchState when the round's budget stopped it (resumed next round)

    SUMMED = ("nodes", "solves", "pruned", "realisability_checks", "screened", "fallbacks", "seconds")


class _Replicates:
    """The order statistic's ``run`` for the difference (:func:`cudbound.quantile.order_statistic`):
    replicate b's frontier searched in full once, with the user's options only
    (:func:`cudbound.cud_difference.lead_frontier`), and kept; then, in every round that needs the
    replicate, the joint search against it under the round's options (its node budget, floor and
    stop_above), resumed from where the round before stopped it (``options.resume``). The states alive
    during a round, those still waiting to be resumed and those the round leaves, are at most
    :data:`STATE_BYTES` in all (new ones kept in replicate order, the rest started again next round under
    its budget, :data:`RESTART_AHEAD`); the order statistic then keeps only the open replicates' states."""

    def __init__(self, side_a, side_b, counts, alpha_n, options, form):
        self.sides, self.counts, self.alpha_n, self.options, self.form = (side_a, side_b), counts, alpha_n, options, form
        self.leads: dict[int, Any] = {}

    def __call__(self, indices, options_list, on_done):
        outs = []
        # the states waiting to be resumed count against the limit until their search has taken them
        held = sum(o.resume.nbytes for o in options_list if o.resume is not None)
        for j, i in enumerate(indices):
            i, opts = int(i), options_list[j]
            options_list[j] = None                      # the old state goes once its search has it
            held -= 0 if opts.resume is None else opts.resume.nbytes
            searched = i not in self.leads
            if searched:
                lead = lead_frontier(*self.sides, self.counts[i], self.alpha_n, self.options, form=self.form)
                self.leads[i] = dataclasses.replace(lead, state=None)   # never resumed: its state is dead weight
            lead = self.leads[i]
            out = search_replicate_difference(*self.sides, self.counts[i], self.alpha_n, opts, form=self.form,
                                              lead=lead)
            joint = out.frontier_b if out.frontier_a is lead else out.frontier_a
            both = (joint, lead) if searched else (joint,)
            state = joint.state
            if state is not None and held + state.nbytes > STATE_BYTES:
                state = None
            held += 0 if state is None else state.nbytes
            rec = _Record(out.value, out.lower, out.status,
                          *(sum(getattr(f, name) for f in both) for name in _Record.SUMMED),
                          round_nodes=joint.nodes, state=state)
            on_done(i, rec)
            outs.append(rec)
        return outs


def _cud(pair: ProcedurePair, *, confidence_level: float = 0.95, alternative: str = "two-sided", rng: Any = None,
         n_resamples: int = 500, alpha_n: float | None = None, time_limit: float | None = None,
         engine_options: EngineOptions | Mapping[str, Any] | None = None, form: str = "joint",
         progress: bool = False) -> ComparisonResult:
    """The registered ``"cud"`` comparison on a pair (:func:`cud_difference_interval`)."""
    t0, started = time.perf_counter(), time.time()
    level, alternative, gen = _iv(pair, confidence_level, alternative, rng)
    B = check_n_resamples(n_resamples, level)
    alpha = check_alpha_n(alpha_n, pair.n)
    limit = check_time_limit(time_limit)
    engine = EngineOptions.coerce(engine_options)
    if form not in FORMS:
        raise ValueError(f"`form` must be one of {FORMS}; got {form!r}.")
    side_a, side_b = _side(pair.a, pair.X, pair.labels, engine), _side(pair.b, pair.X, pair.labels, engine)
    counts = draw_counts(pair.n, B, gen)
    options = engine.search_options()
    deadline = None if limit is None else started + limit
    if deadline is not None:
        options = dataclasses.replace(options, deadline=deadline)
    run = _Replicates(side_a, side_b, counts, alpha, options, form)
    delta = side_a.train_error - side_b.train_error
    bar = replicate_bar(progress, B, "CUD replicates (A - B)")
    try:
        out = order_statistic(run, B, order_index(level, B), options, exact_distribution=engine.exact_distribution,
                              deadline=deadline, wait_above=False,
                              state_bytes=STATE_BYTES, restart_ahead=RESTART_AHEAD, progress=bar,
                              on_bounds=bracket_display(bar, delta, deadline, low=-1.0, difference=True))
    finally:
        if bar is not None:
            bar.close()
    q_hat, q_low, upper = out.value, out.lower_value, out.upper
    stats = SearchStats.from_records(out.records, lower=out.lower, decided=out.decided,
                                     half_width_lower=q_low, out_of_time=out.out_of_time)
    details = {"half_width": q_hat, "train_error_a": side_a.train_error, "train_error_b": side_b.train_error,
               "alpha_n": alpha, "n_resamples": B, "form": form, "conservative": stats.n_inexact > 0,
               "upper_gap": max(0.0, q_hat - q_low), "bootstrap_distribution": upper,
               "procedure_a": pair.a.describe(), "procedure_b": pair.b.describe(), "stats": stats,
               **{f"search_{key}": value for key, value in stats.summary().items()}}
    if limit is not None:
        details["cut_by_time_limit"] = bool(stats.out_of_time)
    return ComparisonResult(method="cud", estimate=delta, n_samples=pair.n,
                            confidence_interval=clipped(delta - q_hat, delta + q_hat), confidence_level=level,
                            alternative=alternative, details=details, seconds=time.perf_counter() - t0)


def cud_difference_interval(estimator_a: Any, estimator_b: Any, X: ArrayLike, y: ArrayLike, *,
                            confidence_level: float = 0.95, n_resamples: int = 500, alpha_n: float | None = None,
                            rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                            pos_label: Any = None, time_limit: float | None = None,
                            engine_options: EngineOptions | Mapping[str, Any] | None = None,
                            form: str = "joint") -> ComparisonResult:
    r"""The CUD interval for the difference A - B of the true errors of two classifiers fitted on the same data.

    .. math::

        \hat\Delta \pm \hat Q, \qquad \hat\Delta = \mathrm{err}_D(\hat\beta_A) - \mathrm{err}_D(\hat\beta_B),
        \qquad \hat Q = Q_{(\lceil \gamma B \rceil)},

    reported clipped to [-1, 1], :math:`Q^{(b)}` the replicate supremum of the difference
    (:func:`cudbound.replicate_sup_difference`: the CUD bound of Laber & Murphy 2008 for the
    parameter :math:`(\beta_A, \beta_B)` and the joint loss :math:`L_A + L_B`;
    method.md, "The difference of two classifiers"), each computed by one frontier search per classifier
    (exactly where the order statistic needs it: :mod:`cudbound.quantile`),
    and :math:`\gamma` the confidence level (the conservative order statistic of CUD).

    Parameters
    ----------
    estimator_a, estimator_b : Procedure, dict or scikit-learn classifier
        A and B, each the package's classifier: a :class:`cudbound.Procedure` (its basis is fitted on
        all n points and kept, its loss exact) or a scikit-learn classifier that
        :mod:`cudbound.sklearn_bridge` maps to its basis and loss.
    X : (n, d) array of features.
    y : (n,) labels with two classes ({-1, 1}, {0, 1}, booleans, or any pair with ``pos_label``).
    confidence_level : float in (0, 1), default 0.95
    n_resamples : int, default 500
        B, at least 1 / (1 - level).
    alpha_n : float >= 0, default n.
    rng : None, int, SeedSequence or Generator (the bootstrap counts).
    pos_label : the positive class, when the labels need it.
    time_limit : seconds for the replicates (None: none; 0: stop at once). Replicates not searched when
        it runs out keep their certified bounds: the interval is then wider than the exact one, never
        narrower, and ``details["conservative"]`` and ``details["cut_by_time_limit"]`` say so.
    engine_options : :class:`cudbound.EngineOptions` or a dict of its fields: the engine, the cvxpy
        solver and each replicate's budgets (``max_nodes``, ``replicate_time_limit``; a replicate cut
        short keeps a certified upper bound).
    form : {"joint", "min", "product"}, default "joint"
        The bound's factor: the method's g(x_A + x_B) of the joint loss, or, for comparison, the
        smaller or the product of the two classifiers' own factors (all three valid;
        method.md, "The difference of two classifiers").

    Returns
    -------
    ComparisonResult
        ``method="cud"``, ``estimate`` Delta_hat; ``details``: ``half_width`` (Q_hat, unclipped),
        ``train_error_a``, ``train_error_b``, ``alpha_n``, ``n_resamples``, ``conservative``,
        ``upper_gap``, the search statistics (``stats``, a :class:`cudbound.SearchStats`, and their
        summary as ``search_*``) and ``bootstrap_distribution`` (each Q^(b)'s certified upper bound:
        only the replicates near Q_hat are searched to the end, as for :func:`cudbound.cud_interval`;
        ``engine_options={"exact_distribution": True}`` solves them all). No p-value: the interval is two-sided
        whatever ``alternative``.

    Notes
    -----
    A progress bar over the replicates, with the interval certified after each round, is the registered
    comparison's option: ``compare(A, B, X, y, methods=["cud"], cud_options={"progress": True})``
    (``cudbound compare --methods cud`` shows it on a terminal).

    Examples
    --------
    >>> import numpy as np
    >>> from cudbound import Procedure
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(24, 2)); y = np.where(X[:, 0] + 0.8 * rng.normal(size=24) > 0, 1, -1)
    >>> res = cud_difference_interval(Procedure(), Procedure(loss="hinge"), X, y, n_resamples=40, rng=1)
    >>> low, high = res.confidence_interval
    >>> bool(low <= res.estimate <= high) and res.details["half_width"] >= 0
    True
    """
    pair = ProcedurePair(estimator_a, estimator_b, X, y, pos_label)
    return _cud(pair, confidence_level=confidence_level, rng=rng, n_resamples=n_resamples, alpha_n=alpha_n,
                time_limit=time_limit, engine_options=engine_options, form=form)
