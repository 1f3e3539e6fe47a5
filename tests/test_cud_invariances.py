"""Properties of the replicate supremum Q = cudbound.replicate_sup(...).

Only properties that hold exactly are asserted. Note on alpha_n: with g(x) = min(1, x + 1),
a pattern with m(s) <= L_hat contributes |C(s)|/n whatever alpha_n, and a pattern with
m(s) > L_hat contributes |C(s)|/n (1 - alpha_n (m(s) - L_hat)), decreasing in alpha_n.
So Q is NON-INCREASING in alpha_n, Q(0) = max |C(s)|/n over realisable patterns, and
Q >= |C(s_hat)|/n for the pattern s_hat of beta_hat itself (m(s_hat) <= L_hat).
"""
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudbound
from reference import make_problem, reference_details

TOL = 1e-8
SETTINGS = settings(
    max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def problems(draw, max_n=10):
    """(design, y, counts) from make_problem; sometimes counts on fewer than p distinct points."""
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(4, max_n))
    p = draw(st.sampled_from([1, 2, 3]))
    signal = draw(st.sampled_from(["weak", "strong"]))
    design, y, counts, _ = make_problem(seed, n=n, p=p, signal=signal)
    if draw(st.integers(0, 4)) == 0:  # concentrated bootstrap sample: singular weighted Hessian
        rng = np.random.default_rng(seed + 1)
        k = draw(st.integers(1, max(1, p - 1)))
        idx = rng.choice(n, k, replace=False)
        counts = np.zeros(n, dtype=int)
        counts[idx] = rng.multinomial(n, [1.0 / k] * k)
    return design, y, counts


alphas = st.sampled_from(["n", "sqrt", "n2", "one"])


def _alpha(kind, n):
    return {"n": float(n), "sqrt": math.sqrt(n), "n2": float(n) ** 2, "one": 1.0}[kind]


def Q(design, y, counts, alpha):
    return cudbound.replicate_sup(design, y, counts, alpha_n=alpha)


@SETTINGS
@given(problems(), alphas, st.data())
def test_positive_column_rescaling(prob, kind, data):
    design, y, counts = prob
    n, p = design.shape
    scales = np.array(data.draw(st.lists(st.floats(-2.0, 2.0), min_size=p, max_size=p)))
    scaled = design * 10.0 ** scales  # every column, the intercept included
    a = _alpha(kind, n)
    q0, q1 = Q(design, y, counts, a), Q(scaled, y, counts, a)
    assert abs(q0 - q1) <= TOL * max(1.0, abs(q0)), (scales, q0, q1)


@SETTINGS
@given(problems(), alphas, st.integers(0, 2**32 - 1))
def test_invertible_reparametrisation(prob, kind, seed):
    # f(x; beta) = sign(phi'beta): Phi -> Phi A (A invertible) maps beta -> A^-1 beta, so the
    # realisable patterns, the loss values and beta_hat's loss are all unchanged.
    design, y, counts = prob
    n, p = design.shape
    rng = np.random.default_rng(seed)
    while True:
        A = rng.standard_normal((p, p))
        if np.linalg.cond(A) < 20:
            break
    a = _alpha(kind, n)
    q0, q1 = Q(design, y, counts, a), Q(design @ A, y, counts, a)
    assert abs(q0 - q1) <= TOL, (A, q0, q1)


@SETTINGS
@given(problems(), alphas, st.integers(0, 2**32 - 1))
def test_row_permutation(prob, kind, seed):
    design, y, counts = prob
    perm = np.random.default_rng(seed).permutation(len(y))
    a = _alpha(kind, len(y))
    q0, q1 = Q(design, y, counts, a), Q(design[perm], y[perm], counts[perm], a)
    assert abs(q0 - q1) <= TOL, (perm, q0, q1)


@SETTINGS
@given(problems(), alphas)
def test_label_flip_with_intercept(prob, kind):
    # With a positive column (the intercept) every realisable pattern is realised strictly,
    # so s is realisable iff -s is; (y, beta) -> (-y, -beta) then maps C and m onto themselves.
    design, y, counts = prob
    a = _alpha(kind, len(y))
    q0, q1 = Q(design, y, counts, a), Q(design, -y, counts, a)
    assert abs(q0 - q1) <= TOL, (q0, q1)


@SETTINGS
@given(problems())
def test_all_ones_counts_give_exactly_zero(prob):
    design, y, _ = prob
    n = len(y)
    for a in (0.0, 1.0, float(n), float(n) ** 2):
        assert Q(design, y, np.ones(n, dtype=int), a) == 0.0
        assert Q(design, y, np.ones(n), a) == 0.0


@SETTINGS
@given(problems(), alphas)
def test_range(prob, kind):
    # |C(s)| <= sum_{nu_i >= 2} (nu_i - 1) = #{nu_i = 0} (counts sum to n), so Q <= #zeros / n < 1.
    design, y, counts = prob
    n = len(y)
    q = Q(design, y, counts, _alpha(kind, n))
    assert 0.0 <= q <= np.sum(counts == 0) / n + 1e-12 <= 1.0


@SETTINGS
@given(problems())
def test_non_increasing_in_alpha_and_bounds(prob):
    design, y, counts = prob
    n = len(y)
    grid = [0.0, 0.5, 1.0, math.sqrt(n), float(n), float(n) ** 2, 1e6]
    qs = [Q(design, y, counts, a) for a in grid]
    for a0, a1, q0, q1 in zip(grid, grid[1:], qs, qs[1:]):
        assert q1 <= q0 + 1e-10, (a0, q0, a1, q1)
    # lower bound at every alpha: the pattern of beta_hat, |err_{D^(b)} - err_D| at beta_hat
    beta_hat = np.linalg.lstsq(design, y, rcond=None)[0]
    t = design @ beta_hat
    if np.min(np.abs(t)) > 1e-9:  # the sign of beta_hat's pattern is not in doubt
        wrong = np.where(t >= 0, 1.0, -1.0) != y
        lower = abs(np.dot(counts - 1.0, wrong)) / n
        assert all(q >= lower - 1e-12 for q in qs), (lower, qs)


@SETTINGS
@given(problems(), st.floats(0.0, 200.0))
def test_alpha_zero_and_arbitrary_alpha_against_reference(prob, alpha):
    design, y, counts = prob
    det = reference_details(design, y, counts)
    q0 = Q(design, y, counts, 0.0)
    assert abs(q0 - det.q(0.0)) <= TOL
    assert abs(q0 - float(np.max(np.abs(det.C)) / len(y))) <= TOL  # max |C|/n over realisable s
    assert abs(Q(design, y, counts, alpha) - det.q(alpha)) <= TOL, (alpha, det.q(alpha))
