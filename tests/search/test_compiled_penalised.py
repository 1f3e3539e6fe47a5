"""The ridge forms of the smooth losses on the compiled path (issue 28, point 1).

``logistic_ridge`` and ``exponential_ridge`` (what scikit-learn's ``LogisticRegression``
maps onto) are searched in orthonormal coordinates, where the penalty lam |J beta|^2 becomes
|M gamma|^2 with a full matrix M'M (``design.PenalisedLoss``). The compiled SQP kernel takes
that penalty matrix, so these losses no longer fall back to the Python SQP. Checked here:

* the engine picks the compiled solver by what the loss computes, not its exact class
  (a renamed subclass keeps the compiled path; one that redefines the loss does not);
* brute-force enumeration (``tests/_support/reference_losses.py``, independent of the
  package) on random small problems of the classes that break solvers: discrete features
  with duplicate rows, shifted and scaled features, nearly separable labels;
* an estimator (``LogisticRegression``) gives the interval of the loss it maps onto.
"""
import math

import numpy as np
import pytest

import cudbound
from cudbound import Procedure
from cudbound.design import reparametrise
from cudbound.losses import ExponentialLoss, LogisticLoss, RidgeLoss, get_loss, same_math
from cudbound.search.smooth_node_solver import SmoothNodeSolver, _builtin_kind
from reference_losses import RefLoss, ref_details, ref_fit, separable_points
from sweeps import first_of_each

LAM = 0.05
REFS = {"logistic_ridge": RefLoss("logistic", "smooth", lam=LAM, tends_to_zero=True),
        "exponential_ridge": RefLoss("exponential", "smooth", lam=LAM, tends_to_zero=True)}
KINDS = ("discrete", "shifted", "near_separable")
N_PER = 20  # problems per (loss, kind): 120 in all


def _problem(seed, kind, ref):
    """A random small problem of one of the hard classes (n in 5..9, p in 2..3)."""
    rng = np.random.default_rng(seed)
    for _ in range(10000):
        n, p = int(rng.integers(5, 10)), int(rng.choice([2, 3]))
        if kind == "discrete":       # few distinct values: duplicate rows, many ties
            F = rng.integers(0, 3, size=(n, p - 1)).astype(float)
        else:
            F = rng.standard_normal((n, p - 1))
        if kind == "shifted":        # a feature far from its zero and in another unit
            F = F * rng.choice([0.01, 30.0], size=p - 1) + rng.choice([-50.0, 200.0], size=p - 1)
        design = np.column_stack([np.ones(n), F])
        score = F @ rng.standard_normal(p - 1)
        noise = 0.05 if kind == "near_separable" else 1.0
        y = np.where(score - np.median(score) + noise * np.std(score) * rng.standard_normal(n) >= 0, 1.0, -1.0)
        if len(np.unique(y)) < 2 or np.linalg.matrix_rank(design) < p:
            continue
        counts = rng.multinomial(n, np.full(n, 1.0 / n))
        try:
            ref_fit(ref, design, y)
        except (ValueError, RuntimeError):
            continue
        return design, y, counts, dict(seed=seed, kind=kind, n=n, p=p)
    raise RuntimeError("no problem found")


CASES = first_of_each([(name, kind, i) for name in REFS for kind in KINDS for i in range(N_PER)],
                      lambda case: case[:2])
"""The README's command checks the first problem of each loss and class (6 of 120), CI all of them
(the others are marked slow: tests/_support/sweeps.py)."""


@pytest.mark.parametrize("name, kind, index", CASES)
def test_penalised_smooth_losses_match_brute_force(name, kind, index):
    ref = REFS[name]
    seed = 28_000_000 + 10_000 * list(REFS).index(name) + 1_000 * KINDS.index(kind) + index
    design, y, counts, info = _problem(seed, kind, ref)
    det = ref_details(ref, design, y, counts)
    n = len(y)
    for alpha in (1.0, math.sqrt(n), float(n), float(n) ** 2):
        got = cudbound.replicate_sup(design, y, counts, loss=f"{name}:{LAM}", alpha_n=alpha)
        assert abs(got - det.q(alpha)) <= 1e-9, (info, alpha, got, det.q(alpha), design.tolist(), y.tolist(),
                                                 counts.tolist())


def test_the_suite_has_separable_resamples_and_duplicate_rows():
    """The classes above are what they claim: duplicate rows in the discrete problems, and
    data that the unpenalised loss could not fit (separable) among the near-separable ones."""
    dup = sep = 0
    for i in range(N_PER):
        d, y, c, _ = _problem(28_000_000 + i, "discrete", REFS["logistic_ridge"])
        dup += len(np.unique(d, axis=0)) < len(d)
        d, y, c, _ = _problem(28_002_000 + i, "near_separable", REFS["logistic_ridge"])
        sep += bool(separable_points(d, y, np.ones(len(y))).any())
    assert dup >= N_PER // 2 and sep >= 3, (dup, sep)


class RenamedLogistic(LogisticLoss):
    name = "my_logistic"


class TemperedLogistic(LogisticLoss):
    """A different loss (the logistic of 2t): must not be solved as the built-in one."""

    name = "tempered"
    kind = "smooth"  # a subclass that redefines the loss declares its kind (issue 30)

    def pointwise(self, y, t):
        return np.logaddexp(0.0, -2.0 * y * t)

    def cvxpy_pointwise(self, y, t):
        import cvxpy as cp
        return cp.logistic(-2.0 * cp.multiply(y, t))

    def derivatives(self, y, t):
        m = 2.0 * y * t
        s = 0.5 * (1.0 + np.tanh(-0.5 * m))
        return -2.0 * y * s, 4.0 * s * (1.0 - s)


def test_solver_chosen_by_what_the_loss_computes():
    rng = np.random.default_rng(3)
    design = np.column_stack([np.ones(12), rng.normal(size=(12, 2)) * [1.0, 100.0] + [0.0, 5.0]])
    rep = reparametrise(design)
    for loss, kind in ((get_loss("logistic_ridge:0.1"), 0), (get_loss("exponential_ridge:0.1"), 1),
                       (RidgeLoss(0.1, RenamedLogistic()), 0), (RenamedLogistic(), 0), (ExponentialLoss(), 1)):
        in_gamma = rep.loss(loss)
        assert _builtin_kind(in_gamma) is not None and _builtin_kind(in_gamma)[0] == kind, loss
    for loss in (TemperedLogistic(), RidgeLoss(0.1, TemperedLogistic())):
        assert _builtin_kind(rep.loss(loss)) is None, loss
    assert same_math(RenamedLogistic(), LogisticLoss) and not same_math(TemperedLogistic(), LogisticLoss)


def test_penalty_in_orthonormal_coordinates_is_the_full_matrix():
    """The compiled objective of a ridge loss carried to gamma equals the loss itself (value,
    gradient and Hessian), so the kernel minimises the right function."""
    rng = np.random.default_rng(5)
    design = np.column_stack([np.ones(15), rng.normal(size=(15, 2)) * [0.1, 40.0] + [3.0, -7.0]])
    y = np.where(rng.normal(size=15) > 0, 1.0, -1.0)
    w = rng.multinomial(15, np.full(15, 1 / 15)).astype(float)
    rep = reparametrise(design)
    loss = rep.loss(get_loss("logistic_ridge:0.3"))
    solver = SmoothNodeSolver(loss, rep.Z, y)
    assert solver.kind == (0, True)
    obj = solver._objective(w)
    from cudbound.search.smooth_node_solver import _pointwise_eval
    for _ in range(5):
        b = rng.normal(size=3)
        g, H = np.empty(3), np.empty((3, 3))
        f = _pointwise_eval(obj.kind_id, obj.D, obj.yo, obj.wn, obj.pen, b, g, H, True)
        assert abs(f - loss.value(rep.Z, y, w, b)) <= 1e-12 * max(1.0, abs(f))
        np.testing.assert_allclose(g, loss.gradient(rep.Z, y, w, b), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(H, loss.hessian(rep.Z, y, w, b), rtol=1e-10, atol=1e-12)


def test_logistic_regression_gives_the_interval_of_its_loss():
    from sklearn.linear_model import LogisticRegression
    from cudbound.datasets import demo_data
    X, y = demo_data(n=30, seed=2)
    est = cudbound.cud_interval(X, y, procedure=LogisticRegression(C=0.5), n_resamples=40, rng=1)
    lam = 1.0 / (2 * 0.5 * 30)
    direct = cudbound.cud_interval(X, y, procedure=Procedure(loss=f"logistic_ridge:{lam!r}"), n_resamples=40, rng=1)
    assert est.details["loss"] == direct.details["loss"]
    assert est.confidence_interval == direct.confidence_interval
    np.testing.assert_array_equal(est.bootstrap_distribution, direct.bootstrap_distribution)
    assert not est.conservative
