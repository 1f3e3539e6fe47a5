"""The CUD bound of the difference of two classifiers' errors: the replicate supremum Q^(b).

Two classifiers A and B fitted on the same data by their own bases and convex losses are one
parameter theta = (beta_A, beta_B) with the joint loss L_A + L_B
(method.md, "The difference of two classifiers"). With K_X = L_X(D^(b), beta_hat_X) and m_X(s) = inf of L_X(D^(b), .) over
the classifiers of pattern s,

    Q^(b) = max over realisable (s_A, s_B) of |C_A(s_A) - C_B(s_B)| / n
            * g(alpha_n (K_A - m_A(s_A) + K_B - m_B(s_B))),    g(x) = min(1, x + 1),

computed from one frontier per classifier (:mod:`cudbound.search.frontier`: for every count
k, the least m that reaches C >= k and C <= k), combined pair by pair (:func:`joint_sup`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_alpha_n, check_counts
from .design import check_labelled_design
from .engine import ReplicateEngine
from .fit import FittedClassifier, fit_classifier
from .losses import Loss, get_loss
from .search import SearchOptions
from .search.frontier import FrontierOutcome

__all__ = ["replicate_sup_difference", "DifferenceSide", "DifferenceOutcome", "search_replicate_difference",
           "lead_frontier", "leading", "joint_sup", "FORMS"]

FORMS = ("joint", "min", "product")
"""The factors of the bound (method.md): g(x_A + x_B) (the method's), min(g(x_A), g(x_B)) and
g+(x_A) g+(x_B), with x_X = alpha_n (K_X - m_X); the last two for comparison only."""

# a slack no smaller than K - L_u's rounding: a wider level only keeps more patterns (always exact)
_SLACK_RTOL = 1e-9
_SLACK_CACHE = 4096   # count vectors whose slack a side keeps (their keys: 3.3 MB at n = 100)


def _factor(xa, xb, form):
    """The bound's factor at x_A, x_B (arrays; +inf allowed): one of :data:`FORMS`."""
    if form == "joint":
        return np.minimum(1.0, 1.0 + (xa + xb))  # xa + xb: the same number when A and B swap
    ga, gb = np.minimum(1.0, 1.0 + xa), np.minimum(1.0, 1.0 + xb)
    if form == "min":
        return np.minimum(ga, gb)
    if form == "product":
        return np.maximum(ga, 0.0) * np.maximum(gb, 0.0)
    raise ValueError(f"`form` must be one of {FORMS}; got {form!r}.")


def _half(a, fa, fb_other, b, n, alpha_n, K_a, K_b, form):
    """max over a >= b of (a - b) * factor at (fa[a], fb_other[b]); 0 when no pair counts."""
    reach = (fa[:, None] < np.inf) & (fb_other[None, :] < np.inf) & (a[:, None] > b[None, :])
    if not reach.any():
        return 0.0
    if alpha_n == 0.0:
        G = np.ones(reach.shape)
    else:
        with np.errstate(invalid="ignore"):
            xa = np.where(fa < np.inf, alpha_n * (K_a - fa), -np.inf)
            xb = np.where(fb_other < np.inf, alpha_n * (K_b - fb_other), -np.inf)
        G = _factor(xa[:, None], xb[None, :], form)
    terms = np.where(reach, (a[:, None] - b[None, :]) * np.where(reach, G, 0.0), 0.0)
    return float(max(0.0, terms.max())) / n


def joint_sup(fa: FrontierOutcome, fb: FrontierOutcome, alpha_n: float, n: int, *, certified: bool = False,
              form: str = "joint") -> float:
    """Q^(b) from the two frontiers (method.md: the maximum over frontier pairs).

    max(0, max_{a > b} (a - b)/n G(F_A^>=(a), F_B^<=(b)), max_{a < b} (b - a)/n G(F_A^<=(a), F_B^>=(b))),
    G the factor of ``form`` (default the joint g(alpha_n (K_A - m_A + K_B - m_B))). ``certified``:
    from the certified lower frontiers (a certified upper bound of Q^(b)), else from the frontiers
    of the patterns found (a value attained when both are exact)."""
    up_a, down_a = (fa.up_lower, fa.down_lower) if certified else (fa.up, fa.down)
    up_b, down_b = (fb.up_lower, fb.down_lower) if certified else (fb.up, fb.down)
    a = fa.kmin + np.arange(len(up_a), dtype=float)
    b = fb.kmin + np.arange(len(up_b), dtype=float)
    ab = _half(a, up_a, down_b, b, n, alpha_n, fa.L_hat, fb.L_hat, form)
    ba = _half(b, up_b, down_a, a, n, alpha_n, fb.L_hat, fa.L_hat, form)
    return max(ab, ba)


class DifferenceSide:
    """One classifier of the pair, from its fit (:func:`cudbound.fit.fit_classifier`): the orthonormal
    coordinates Z, the loss written in them, gamma-hat and the node solvers
    (:class:`cudbound.engine.ReplicateEngine`), made once for every replicate."""

    def __init__(self, fit: FittedClassifier, *, engine: str = "auto", solver: str | None = None):
        self.Z, self.y, self.loss, self.gamma_hat = fit.rep.Z, fit.y, fit.loss_z, fit.gamma
        self.train_error = fit.train_error
        self.engine = ReplicateEngine(self.Z, self.y, self.loss, engine=engine, solver=solver)
        # which classifier's frontier is searched in full, whatever the order of the pair: the one
        # with fewer coefficients (the smaller search), then by loss and design
        self.key = (self.Z.shape[1], self.loss.name, self.Z.tobytes())
        self._slacks: dict[bytes, float] = {}   # :meth:`slack` per count vector

    @classmethod
    def from_design(cls, design, y, loss, **engine) -> DifferenceSide:
        """The side of a checked design, labels in {-1, +1} and a loss (fitted here)."""
        return cls(fit_classifier(design, y, get_loss(loss)), **engine)

    def slack(self, counts) -> float:
        """K - L_u >= 0 of this classifier's resample (slightly widened), inf when L_u is unknown.

        Kept per count vector (up to :data:`_SLACK_CACHE` of them): a replicate's lead frontier and its
        joint search ask for it again, and L_u costs a solve (for a quadratic loss a least-squares
        solve and an eigendecomposition, about as long as a whole replicate's search at n = 50)."""
        key = np.asarray(counts, dtype=float).tobytes()
        known = self._slacks.get(key)
        if known is not None:
            return known
        K = self.loss.value(self.Z, self.y, counts, self.gamma_hat)
        L_u = self.engine.root_minimum(counts)
        slack = math.inf if not math.isfinite(L_u) else \
            max(K - L_u, 0.0) * (1.0 + _SLACK_RTOL) + _SLACK_RTOL * max(1.0, abs(K))
        if len(self._slacks) >= _SLACK_CACHE:
            self._slacks.clear()
        self._slacks[key] = slack
        return slack

    def frontier(self, counts, alpha_n, slack, options, partner=None, form="joint"):
        return self.engine.frontier(counts, self.gamma_hat, alpha_n, slack, options, partner=partner, form=form)


@dataclass
class DifferenceOutcome:
    """Q^(b) of one count vector: ``value`` (exact when ``status`` is "exact", else a certified
    upper bound), ``lower`` (a value attained), and each classifier's search with its statistics
    (the frontier searched in full, and the joint search, whose own frontier is partial)."""

    value: float
    lower: float
    status: str
    frontier_a: FrontierOutcome
    frontier_b: FrontierOutcome

    @property
    def nodes(self) -> int:
        return self.frontier_a.nodes + self.frontier_b.nodes

    @property
    def seconds(self) -> float:
        return self.frontier_a.seconds + self.frontier_b.seconds


def _status(a: str, b: str) -> str:
    """The pair's status from its two searches': "exact" when both are; "bounded" when one, or both, was
    stopped on purpose by the order statistic's floor or stop_above (only a joint search is) and the
    other closed."""
    if a == b == "exact":
        return "exact"
    if {a, b} <= {"exact", "bounded"}:
        return "bounded"
    return "budget" if "budget" in (a, b) else "solver_failure"


def leading(side_a: DifferenceSide, side_b: DifferenceSide) -> bool:
    """Whether A's frontier is the one searched in full (A has the smaller :attr:`DifferenceSide.key`),
    B's search then being the joint search against it."""
    return side_a.key <= side_b.key


def lead_frontier(side_a: DifferenceSide, side_b: DifferenceSide, counts, alpha_n: float,
                  options: SearchOptions = SearchOptions(), *, form: str = "joint") -> FrontierOutcome:
    """The frontier searched in full for one count vector (that of the side :func:`leading` names), below its
    level: what :func:`search_replicate_difference` searches first, and takes as ``lead`` when given."""
    lead, follow = (side_a, side_b) if leading(side_a, side_b) else (side_b, side_a)
    counts = np.asarray(counts, dtype=float)
    return lead.frontier(counts, alpha_n, follow.slack(counts) if form == "joint" else 0.0, options)


def search_replicate_difference(side_a: DifferenceSide, side_b: DifferenceSide, counts, alpha_n: float,
                                options: SearchOptions = SearchOptions(), *, form: str = "joint",
                                full: bool = False, lead: FrontierOutcome | None = None) -> DifferenceOutcome:
    """Q^(b) of one count vector (method.md, "The difference of two classifiers").

    The frontier of one classifier (the one with fewer coefficients: :attr:`DifferenceSide.key`) in
    full, below its level (K + 1/alpha_n, widened by the other's slack K - L_u for the joint factor),
    then the joint search of the other against it (``search.frontier``: Q^(b) directly, pruned by
    the best pair value). ``full``: both frontiers in full, and Q^(b) from them (:func:`joint_sup`;
    the same value). ``form``: the factor (:data:`FORMS`; the method's is "joint"). ``lead``: the
    first frontier when already searched (:func:`lead_frontier` of the same count vector, ``form``
    and ``alpha_n``), so that the order statistic's rounds search it once; ``options`` then go to the
    joint search only (its ``floor``, ``stop_above`` and budget: :mod:`cudbound.quantile`).
    ``options.resume``: the joint search's state (``frontier_b.state`` or ``frontier_a.state`` of an
    earlier call with the same lead, stopped by its node budget), never the first frontier's."""
    if form not in FORMS:
        raise ValueError(f"`form` must be one of {FORMS}; got {form!r}.")
    counts = np.asarray(counts, dtype=float)
    n = len(counts)
    slack_a, slack_b = (side_a.slack(counts), side_b.slack(counts)) if form == "joint" else (0.0, 0.0)
    if full:
        fa = side_a.frontier(counts, alpha_n, slack_b, options)
        fb = side_b.frontier(counts, alpha_n, slack_a, options)
        upper = joint_sup(fa, fb, alpha_n, n, certified=True, form=form)
        lower = min(joint_sup(fa, fb, alpha_n, n, form=form), upper)
        return DifferenceOutcome(upper, lower, _status(fa.status, fb.status), fa, fb)
    a_leads = leading(side_a, side_b)
    first, follow = (side_a, side_b) if a_leads else (side_b, side_a)
    slack_lead, slack_follow = (slack_a, slack_b) if a_leads else (slack_b, slack_a)
    f_lead = lead if lead is not None else first.frontier(counts, alpha_n, slack_follow,
                                                          dataclasses.replace(options, resume=None))
    f_follow = follow.frontier(counts, alpha_n, slack_lead, options, partner=f_lead, form=form)
    fa, fb = (f_lead, f_follow) if a_leads else (f_follow, f_lead)
    return DifferenceOutcome(f_follow.value, min(f_follow.value_lower, f_follow.value),
                             _status(fa.status, fb.status), fa, fb)


def replicate_sup_difference(design_a: ArrayLike, design_b: ArrayLike, y: ArrayLike, counts: ArrayLike, *,
                             loss_a: str | Loss = "squared", loss_b: str | Loss = "squared",
                             alpha_n: float | None = None) -> float:
    r"""The replicate supremum Q^(b) of the difference of two classifiers, for one count vector, exactly.

    .. math::

        Q^{(b)} = \sup_{\beta_A, \beta_B} \bigl| e_{D^{(b)}}(\theta) - e_D(\theta) \bigr|\;
        g\bigl(\alpha_n \{ L_A(D^{(b)}, \hat\beta_A) - L_A(D^{(b)}, \beta_A)
        + L_B(D^{(b)}, \hat\beta_B) - L_B(D^{(b)}, \beta_B) \}\bigr),

    with :math:`e_D(\theta) = \mathrm{err}_D(\beta_A) - \mathrm{err}_D(\beta_B)`, each error that of its
    own classifier :math:`\operatorname{sign}(\phi_X(x)^\top\beta_X)`, its resample form weighted by the
    counts, the mean losses of :func:`cudbound.replicate_sup` and :math:`\hat\beta_X` their
    minimisers on the unweighted data (method.md, "The difference of two classifiers"; the CUD
    bound of Laber & Murphy 2008 for the parameter :math:`(\beta_A, \beta_B)` and the joint loss).

    Parameters
    ----------
    design_a, design_b : (n, p_A) and (n, p_B) arrays
        The basis matrices of A and B on the same n points (each of full column rank).
    y : (n,) labels, two classes (as :func:`cudbound.replicate_sup`).
    counts : (n,) array
        Bootstrap multiplicities nu_i: whole numbers summing to n.
    loss_a, loss_b : str or Loss
        The surrogate losses of A and B (as ``loss`` of :func:`cudbound.replicate_sup`).
    alpha_n : float, optional
        Neighbourhood scale, default n.

    Notes
    -----
    A and B the same procedure give a difference 0 at every classifier pair of the same
    pattern, and swapping A and B leaves Q^(b) unchanged.
    """
    Phi_a, y_arr = check_labelled_design(design_a, y)
    Phi_b, _ = check_labelled_design(design_b, y)
    n = Phi_a.shape[0]
    counts_arr = check_counts(counts, n)
    alpha = check_alpha_n(alpha_n, n)
    side_a = DifferenceSide.from_design(Phi_a, y_arr, loss_a)
    side_b = DifferenceSide.from_design(Phi_b, y_arr, loss_b)
    return search_replicate_difference(side_a, side_b, counts_arr, alpha).value
