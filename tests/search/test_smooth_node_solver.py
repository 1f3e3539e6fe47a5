"""The SQP node solver for smooth losses (search/smooth_node_solver.py) against the cvxpy
node solver, the cvxpy engine and the brute-force reference.

Each random problem is drawn from its own seed; a failure names it.
"""
import math

import cvxpy as cp
import numpy as np
import pytest

import cudbound
from cudbound import Procedure
from cudbound.engine import ReplicateEngine, _WithFallback
from cudbound.fit import fit_coefficients
from cudbound.losses import FunctionLoss, Loss, NoMinimiserError, RidgeLoss, get_loss
from cudbound.optim.smooth import separation
from cudbound.search.node_solvers import CvxpyNodeSolver, NodeSolveError
from cudbound.search.smooth_node_solver import SmoothNodeSolver
from doc_pages import example_class
from reference_losses import REF_LOSSES, loss_problem_size, make_loss_problem, ref_details
from sweeps import first_of_each

REL = 1e-8


class UserLogistic(Loss):
    """A user's logistic loss: only pointwise, cvxpy_pointwise and derivatives (docs/losses.md)."""

    name = "user_logistic"
    strictly_convex = True
    tends_to_zero = True

    def pointwise(self, y, t):
        return np.logaddexp(0.0, -y * t)

    def cvxpy_pointwise(self, y, t):
        return cp.logistic(-cp.multiply(y, t))

    def derivatives(self, y, t):
        s = 1.0 / (1.0 + np.exp(y * t))
        return -y * s, s * (1.0 - s)


def _docs_squared_hinge():
    return example_class("losses.md", "<!-- tested: tests/test_losses.py runs this block verbatim -->",
                         "SquaredHingeLoss")()


def _function_logistic():
    """The logistic loss as a FunctionLoss with gradient and Hessian of the whole mean."""
    def value(design, y, w, b):
        return float(np.dot(w, np.logaddexp(0.0, -y * (design @ b))) / len(y))

    def expression(design, y, w, b):
        return (w @ cp.logistic(-cp.multiply(y, design @ b))) / len(y)

    def gradient(design, y, w, b):
        s = 1.0 / (1.0 + np.exp(y * (design @ b)))
        return design.T @ (w * -y * s) / len(y)

    def hessian(design, y, w, b):
        s = 1.0 / (1.0 + np.exp(y * (design @ b)))
        return design.T @ (design * (w * s * (1 - s))[:, None]) / len(y)

    return FunctionLoss("function_logistic", value, expression, gradient=gradient, hessian=hessian,
                        strictly_convex=True, tends_to_zero=True)


LOSSES = {
    "logistic": lambda: get_loss("logistic"),
    "exponential": lambda: get_loss("exponential"),
    "logistic_ridge": lambda: get_loss("logistic_ridge:0.1"),
    "exponential_ridge": lambda: get_loss("exponential_ridge:0.05"),
    "user_logistic": UserLogistic,
    "user_logistic_ridge": lambda: RidgeLoss(0.1, base=UserLogistic()),
    "squared_hinge": _docs_squared_hinge,
    "function_logistic": _function_logistic,
}


def _problem(seed, loss, n=None, p=None):
    """Intercept + Gaussian features, noisy linear labels, a fit that exists; n in 8..25, p in 2..4."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 26)) if n is None else n
    p = int(rng.integers(2, 5)) if p is None else p
    for _ in range(1000):
        design = np.column_stack([np.ones(n), rng.standard_normal((n, p - 1))])
        y = np.where(design @ rng.standard_normal(p) + rng.choice([0.3, 1.0]) * rng.standard_normal(n) >= 0,
                     1.0, -1.0)
        if len(np.unique(y)) < 2:
            continue
        try:
            beta_hat = fit_coefficients(design, y, loss)
        except (NoMinimiserError, ValueError):
            continue
        return design, y, beta_hat, rng
    raise RuntimeError("no problem found")


def _resample_separable(design, y, counts):
    return separation(design, y, np.asarray(counts, float), np.eye(design.shape[1]))[0].any()


# ----------------------------------------------------------------------- node values
NODE_CHUNKS = first_of_each([range(0, 3), range(3, 6)], lambda chunk: "three problems of the loss",
                            ids=lambda chunk: f"problems{chunk.start}-{chunk.stop - 1}")


@pytest.mark.parametrize("chunk", NODE_CHUNKS)
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_node_values_match_cvxpy(name, chunk):
    """Random cones (and chains of nested cones with warm starts, as the search makes them):
    the node minimum agrees with the cvxpy solver's (ECOS + Newton polish) to 1e-8 relative,
    the reported point lies in the cone and its loss is the reported point value; no node
    needs the fallback. Six problems per loss in two chunks of three: the README's command checks
    the first chunk of every loss, CI both (tests/_support/sweeps.py)."""
    loss = LOSSES[name]()
    checked, separable = 0, 0
    for k in chunk:
        design, y, _, rng = _problem(7_100_000 + 100 * sorted(LOSSES).index(name) + k, loss)
        n = len(y)
        smooth, ref = SmoothNodeSolver(loss, design, y), CvxpyNodeSolver(loss, design, y)
        for _ in range(3):
            counts = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
            separable += _resample_separable(design, y, counts)
            smooth.set_weights(counts)
            ref.set_weights(counts)
            root = smooth.solve(np.zeros(0, dtype=int), np.zeros(0))
            cones = [(rng.choice(n, size=int(rng.integers(1, min(6, n) + 1)), replace=False), None)
                     for _ in range(4)]
            # a chain: each cone adds one row that the previous minimiser violates (a flip child)
            rows, signs, warm, beta = [], [], root.warm, root.beta
            for j in rng.permutation(n)[:5]:
                t = float(design[j] @ beta)
                if t == 0.0:
                    continue
                rows.append(int(j))
                signs.append(-1.0 if t > 0 else 1.0)
                sol = smooth.solve(np.array(rows), np.array(signs), warm)
                cones.append((np.array(rows), np.array(signs), sol))
                warm, beta = sol.warm, sol.beta
            for cone in cones:
                if cone[1] is None:
                    r = cone[0]
                    s = rng.choice([-1.0, 1.0], size=len(r))
                    sol = smooth.solve(r, s)
                else:
                    r, s, sol = cone
                want = ref.solve(r, s)
                assert abs(sol.value - want.value) <= REL * max(1.0, abs(want.value)), (name, k, r, s)
                G = design[r] * s[:, None]
                bn = max(1.0, float(np.linalg.norm(sol.beta)))
                assert np.all(G @ sol.beta >= -1e-9 * bn * np.linalg.norm(G, axis=1))
                assert abs(loss.value(design, y, counts, sol.beta) - sol.beta_value) <= 1e-12 * max(1.0, sol.value)
                assert sol.beta_value >= sol.value - 1e-12 * max(1.0, sol.value)
                checked += 1
        assert smooth.failures == 0, name
    assert checked >= 50
    if chunk.start == 0 and loss.tends_to_zero and not isinstance(loss, RidgeLoss):
        assert separable >= 2, separable  # separable resamples are among the default run's


def test_singular_hessian():
    """Counts on a few points only (duplicated rows with opposite labels, so never separable):
    the Hessian of the loss has rank 1 or 2 in p = 4; node minima still agree with cvxpy."""
    rng = np.random.default_rng(5)
    for name in ("logistic", "exponential", "user_logistic", "squared_hinge"):
        loss = LOSSES[name]()
        for k in range(4):
            base = np.column_stack([np.ones(3), rng.standard_normal((3, 3))])
            design = np.vstack([base, base, np.column_stack([np.ones(4), rng.standard_normal((4, 3))])])
            y = np.r_[np.ones(3), -np.ones(3), rng.choice([-1.0, 1.0], 4)]
            counts = np.zeros(10)
            counts[[0, 3]] = [3, 2]
            if k % 2:
                counts[[1, 4]] = [3, 2]
            smooth, ref = SmoothNodeSolver(loss, design, y), CvxpyNodeSolver(loss, design, y)
            smooth.set_weights(counts)
            ref.set_weights(counts)
            for _ in range(6):
                r = rng.choice(10, size=int(rng.integers(0, 4)), replace=False)
                s = rng.choice([-1.0, 1.0], size=len(r))
                got, want = smooth.solve(r, s), ref.solve(r, s)
                assert abs(got.value - want.value) <= REL * max(1.0, abs(want.value)), (name, k, r, s)
            assert smooth.failures == 0


def test_no_separation_certificate_is_sound():
    """Whenever the solver certifies that a cone separates nothing, the separation LP agrees;
    and the certificate holds on most cones where the LP finds nothing."""
    loss = get_loss("logistic")
    agree = lp_empty = 0
    for k in range(12):
        design, y, _, rng = _problem(7_200_000 + k, loss, n=int(10 + k))
        n, p = design.shape
        solver = SmoothNodeSolver(loss, design, y)
        for _ in range(4):
            counts = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
            solver.set_weights(counts)
            for _ in range(5):
                r = rng.choice(n, size=int(rng.integers(0, 4)), replace=False)
                s = rng.choice([-1.0, 1.0], size=len(r))
                G = np.ascontiguousarray(design[r] * s[:, None]).reshape(-1, p)
                x = np.zeros(p)
                status, _, act = solver._run(solver.counts, G, x, 100, r)
                mask, _ = separation(design, y, counts, np.eye(p), G)
                certified = status == 0 and solver._nothing_separable(x, G, act, None)
                if certified:
                    assert not mask.any(), (k, r, s)
                if not mask.any():
                    lp_empty += 1
                    agree += certified
    assert lp_empty >= 100 and agree >= 0.9 * lp_empty, (agree, lp_empty)


# ----------------------------------------------------------------- whole replicates
WHOLE = ["logistic", "exponential", "logistic_ridge", "user_logistic", "squared_hinge"]
N_WHOLE = 30


@pytest.mark.parametrize("index, name", first_of_each(
    [(index, name) for index in range(N_WHOLE) for name in WHOLE], lambda case: (case[1], case[0] % 3)))
def test_replicate_value_matches_the_cvxpy_engine(name, index):
    """Q^(b) of the default engine (SQP node solves) equals engine="cvxpy" (every node through
    cvxpy), on random problems with n in 8..25 (many resamples separable), with no fallback. The
    README's command checks the first problem of each loss and alpha_n (15 of 150), CI all of them
    (the others are marked slow: tests/_support/sweeps.py)."""
    loss = LOSSES[name]()
    design, y, beta_hat, rng = _problem(7_300_000 + 1000 * WHOLE.index(name) + index, loss)
    n = len(y)
    counts = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
    alpha = [math.sqrt(n), float(n), float(n) ** 2][index % 3]
    fast = ReplicateEngine(design, y, loss)
    slow = ReplicateEngine(design, y, loss, engine="cvxpy")
    got = fast.search(counts, beta_hat, alpha)
    want = slow.search(counts, beta_hat, alpha)
    assert got.status == want.status == "exact"
    assert abs(got.value - want.value) <= 1e-9, (name, index, got.value, want.value)
    assert fast._smooth.failures == 0


def test_whole_suite_has_separable_resamples():
    found = 0
    for index in range(N_WHOLE):
        loss = LOSSES["logistic"]()
        design, y, _, rng = _problem(7_300_000 + index, loss)
        n = len(y)
        found += _resample_separable(design, y, rng.multinomial(n, np.full(n, 1.0 / n)))
    assert found >= 5, found


# --------------------------------------------------------------------- brute force
BRUTE = {"logistic": ("logistic", "logistic"), "exponential": ("exponential", "exponential"),
         "logistic_ridge": ("logistic_ridge", "logistic_ridge"), "exponential_ridge": ("exponential_ridge", None),
         "user_logistic": ("logistic", None), "squared_hinge": ("squared_hinge", None)}


def _brute_seed(name, i):
    return 7_400_000 + 100 * sorted(BRUTE).index(name) + i


@pytest.mark.parametrize("name, i", first_of_each(
    [(name, i) for name in sorted(BRUTE) for i in range(10)],
    lambda case: (case[0], loss_problem_size(_brute_seed(*case))[1])))
def test_matches_the_bruteforce_reference(name, i):
    """n in 4..10: Q^(b) for alpha_n in {1, sqrt(n), n, n^2} equals the brute-force
    enumeration of tests/_support/reference_losses.py, with every node solved by the SQP solver.
    Ten problems per loss: the README's command checks the first of each loss and p (p in 1..3), CI
    all of them (tests/_support/sweeps.py)."""
    ref = REF_LOSSES[BRUTE[name][0]]
    loss = get_loss("exponential_ridge:0.1") if name == "exponential_ridge" else LOSSES[name]()
    design, y, counts, info = make_loss_problem(_brute_seed(name, i), ref)
    det = ref_details(ref, design, y, counts)
    engine = ReplicateEngine(design, y, loss)
    for a in (1.0, math.sqrt(info["n"]), float(info["n"]), float(info["n"]) ** 2):
        out = engine.search(counts, det.beta_hat, a)
        assert out.status == "exact"
        assert abs(out.value - det.q(a)) <= 1e-9, (name, info, a, out.value, det.q(a))
    assert engine._smooth.failures == 0, (name, info)


# ---------------------------------------------------------------------- the wiring
def test_which_losses_take_the_smooth_path():
    design, y, *_ = _problem(1, get_loss("logistic"), n=12, p=3)
    for name, make in LOSSES.items():
        eng = ReplicateEngine(design, y, make())
        solver, root, quad = eng.prepare(np.ones(len(y)))
        assert isinstance(solver, _WithFallback) and isinstance(solver.primary, SmoothNodeSolver), name
        assert quad is None and np.isfinite(root.value)
        assert ReplicateEngine(design, y, make(), engine="python")._smooth is not None
        assert ReplicateEngine(design, y, make(), engine="cvxpy")._smooth is None
        assert isinstance(ReplicateEngine(design, y, make(), engine="cvxpy").prepare(np.ones(len(y)))[0],
                          CvxpyNodeSolver)
    for spec in ("hinge", "squared", "ridge"):  # no derivatives, or quadratic: not this path
        assert ReplicateEngine(design, y, get_loss(spec))._smooth is None
    with pytest.raises(ValueError):
        SmoothNodeSolver(get_loss("hinge"), design, y)


def test_failed_nodes_are_handed_to_cvxpy():
    """With no SQP iteration allowed every node after the root fails: the cvxpy fallback
    solves them and the value does not change."""
    loss = get_loss("logistic")
    for k in range(3):
        design, y, beta_hat, rng = _problem(7_500_000 + k, loss, n=14, p=3)
        counts = rng.multinomial(len(y), np.full(len(y), 1.0 / len(y))).astype(float)
        crippled = ReplicateEngine(design, y, loss)
        crippled._smooth.max_iter = 0
        got = crippled.search(counts, beta_hat, float(len(y)))
        want = ReplicateEngine(design, y, loss, engine="cvxpy").search(counts, beta_hat, float(len(y)))
        assert crippled._smooth.failures > 0 and want.solves > 0
        assert got.status == "exact" and abs(got.value - want.value) <= 1e-9


def test_solve_error_and_stale_warm_start():
    loss = get_loss("logistic")
    design, y, _, rng = _problem(3, loss, n=12, p=3)
    solver = SmoothNodeSolver(loss, design, y, max_iter=0)
    solver.set_weights(np.ones(12))
    with pytest.raises(NodeSolveError):
        solver.solve(np.array([0]), np.array([-np.sign(design[0] @ np.ones(3))]))
    solver = SmoothNodeSolver(loss, design, y)
    solver.set_weights(np.ones(12))
    old = solver.solve(np.array([0]), np.array([1.0]))
    counts = rng.multinomial(12, np.full(12, 1.0 / 12)).astype(float)
    solver.set_weights(counts)  # a warm start from another replicate is ignored
    ref = CvxpyNodeSolver(loss, design, y)
    ref.set_weights(counts)
    got = solver.solve(np.array([0, 1]), np.array([1.0, -1.0]), old.warm)
    want = ref.solve(np.array([0, 1]), np.array([1.0, -1.0]))
    assert abs(got.value - want.value) <= REL * max(1.0, want.value)


def test_cud_interval_same_with_both_engines():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(14, 2))
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(size=14) > 0, 1, -1)
    a = cudbound.cud_interval(X, y, Procedure(loss="logistic"), n_resamples=20, rng=2)
    b = cudbound.cud_interval(X, y, Procedure(loss="logistic"), n_resamples=20, rng=2, engine_options={"engine": "cvxpy"})
    np.testing.assert_allclose(a.bootstrap_distribution, b.bootstrap_distribution, rtol=0, atol=1e-9)
    assert abs(a.confidence_interval.low - b.confidence_interval.low) <= 1e-9
    assert abs(a.confidence_interval.high - b.confidence_interval.high) <= 1e-9
    assert not a.conservative and not b.conservative
