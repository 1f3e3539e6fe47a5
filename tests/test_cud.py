"""cudbound.replicate_sup against the brute-force reference (tests/_support/reference.py).

Each random problem is drawn from its own seed (``SEED0 + index``); a failure prints
the seed and the full problem so that it can be re-run alone.

The sweeps (random problems, degenerate cases, and the reference's own checks on the random
problems) are split by tests/_support/sweeps.py: the README's command checks the first case of each
class (random: p, signal and n <= 8 or not, 12 of 220; degenerate: every case but the further seeds
of the numerically singular family and the -1 label of a single point, whose +1 twin with the
intercept is the same case by the label flip; 24 of 34; the reference's patterns: |S| and p), CI
every case (``-m slow``).
"""
import math
import re

import numpy as np
import pytest

import cudbound
from cudbound.cud import search_replicate
from reference import (
    closure_min,
    closure_min_cvxpy,
    make_problem,
    realisable_patterns,
    reference_details,
    reference_sup,
)
from sweeps import first_of_each, kept_by_default

TOL = 1e-8
SEED0 = 20080000
N_RANDOM = 220


def _alphas(n):
    return [float(n), math.sqrt(n), float(n) ** 2, 1.0]


def _describe(design, y, counts, alpha, got, want, extra=""):
    np.set_printoptions(precision=17)
    return (
        f"{extra}\nalpha_n={alpha!r}\nengine={got!r}\nreference={want!r}\n"
        f"diff={got - want:.3e}\ndesign=np.array({design.tolist()!r})\n"
        f"y=np.array({y.tolist()!r})\ncounts=np.array({np.asarray(counts).tolist()!r})"
    )


def _check(design, y, counts, alphas, extra=""):
    """The public replicate_sup (default engine: compiled where it applies) and the two
    Python engines (active-set QP and cvxpy node solves) all equal the reference."""
    ref = reference_sup(design, y, counts, alphas)
    for a in alphas:
        got = cudbound.replicate_sup(design, y, counts, alpha_n=a)
        assert isinstance(got, float), type(got)
        assert abs(got - ref[a]) <= TOL, _describe(design, y, counts, a, got, ref[a], extra)
        for engine in ("python", "cvxpy"):
            out = search_replicate(design, y, counts, alpha_n=a, engine_options={"engine": engine})
            assert out.status == "exact"
            assert abs(out.value - ref[a]) <= TOL, _describe(design, y, counts, a, out.value, ref[a],
                                                             f"{extra} engine={engine}")


# ------------------------------------------------------------ random problems
def _random_class(index):
    """The class of random problem ``index``: p, signal, and n <= 8 or not."""
    info = make_problem(SEED0 + index)[3]
    return info["p"], info["signal"], info["n"] <= 8


RANDOM = first_of_each(range(N_RANDOM), _random_class)


@pytest.mark.parametrize("index", RANDOM)
def test_random_problem_matches_reference(index):
    seed = SEED0 + index
    design, y, counts, info = make_problem(seed)
    _check(design, y, counts, _alphas(info["n"]), extra=f"seed={seed} {info}")


def test_random_suite_covers_the_intended_space():
    infos = [make_problem(SEED0 + i)[3] for i in range(N_RANDOM)]
    assert {i["p"] for i in infos} == {1, 2, 3}
    assert {i["signal"] for i in infos} == {"weak", "strong"}
    assert min(i["n"] for i in infos) == 4 and max(i["n"] for i in infos) == 12
    kept = kept_by_default(RANDOM)                  # the README's command: every p, signal and n <= 8 or not
    assert len(kept) == 12 and len({_random_class(i) for i in kept}) == 12


def test_default_alpha_is_n():
    design, y, counts, info = make_problem(SEED0 + 7, n=9, p=2)
    ref = reference_sup(design, y, counts, [9.0])[9.0]
    assert abs(cudbound.replicate_sup(design, y, counts) - ref) <= TOL
    assert abs(cudbound.replicate_sup(design, y, counts, alpha_n=None) - ref) <= TOL


def test_counts_dtype():
    design, y, counts, info = make_problem(SEED0 + 11, n=10, p=3)
    ref = reference_sup(design, y, counts, [10.0])[10.0]
    for dtype in (np.int64, np.int32, np.uint8, np.float64, np.float32):
        got = cudbound.replicate_sup(design, y, counts.astype(dtype), alpha_n=10.0)
        assert abs(got - ref) <= TOL, (dtype, got, ref)


# ---------------------------------------------------------- degenerate cases
def _degenerate_cases():
    cases = {}
    rng = np.random.default_rng(1)

    # duplicated rows inside S, one pair with opposite labels (full column rank overall)
    X = rng.standard_normal((8, 2))
    X[1] = X[0]
    X[3] = X[2]
    X[5] = X[4]
    design = np.column_stack([np.ones(8), X])
    y = np.array([1, -1, 1, 1, -1, -1, 1, -1], float)
    cases["duplicates_opposite_labels"] = (design, y, np.array([2, 0, 0, 3, 1, 0, 2, 0]))
    cases["duplicates_one_copy_unit_weight"] = (design, y, np.array([1, 2, 0, 1, 3, 0, 1, 0]))

    # fewer distinct points in the bootstrap sample than p: singular weighted Hessian
    design3 = np.column_stack([np.ones(7), rng.standard_normal((7, 2))])
    y3 = np.array([1, -1, 1, -1, 1, 1, -1], float)
    cases["two_distinct_points_p3"] = (design3, y3, np.array([4, 3, 0, 0, 0, 0, 0]))
    cases["two_distinct_points_same_label_p3"] = (design3, y3, np.array([0, 0, 0, 0, 3, 4, 0]))
    design2 = np.column_stack([np.ones(6), rng.standard_normal(6)])
    y2 = np.array([1, 1, -1, -1, 1, -1], float)
    cases["one_distinct_point_weight_n_p2"] = (design2, y2, np.array([0, 0, 6, 0, 0, 0]))
    # the same with generic rows: the weighted Hessian is singular in exact arithmetic but
    # only numerically singular in floating point (a Cholesky factorisation may succeed)
    for seed in range(8):
        r = np.random.default_rng(100 + seed)
        n = int(r.integers(4, 9))
        d = np.column_stack([np.ones(n), r.standard_normal((n, 2))])
        yy = np.where(r.uniform(size=n) < 0.5, 1.0, -1.0)
        yy[:2] = [1.0, -1.0]
        c = np.zeros(n, int)
        i, j = r.choice(n, 2, replace=False)
        k = int(r.integers(1, n))
        c[i], c[j] = k, n - k
        cases[f"two_distinct_points_p3_seed{100 + seed}"] = (d, yy, c)

    # a single point of weight n
    for p in (1, 2, 3):
        d = np.column_stack([np.ones(9), rng.standard_normal((9, p - 1))])
        yy = np.where(rng.uniform(size=9) < 0.5, 1.0, -1.0)
        yy[:2] = [1.0, -1.0]
        for j in (0, 1):
            c = np.zeros(9, int)
            c[j] = 9
            cases[f"single_point_weight_n_p{p}_label{int(yy[j]):+d}"] = (d, yy, c)

    # intercept-only designs
    ones = np.ones((10, 1))
    yi = np.array([1, 1, 1, -1, -1, 1, -1, 1, 1, -1], float)
    cases["intercept_only"] = (ones, yi, np.array([2, 0, 1, 3, 0, 0, 1, 2, 1, 0]))
    cases["intercept_only_zeros_on_minority"] = (ones, yi, np.array([2, 2, 1, 0, 0, 1, 0, 2, 2, 0]))
    yb = np.array([1, -1] * 5, float)  # balanced: beta_hat = 0 exactly, sign(0) = +1 matters
    cases["intercept_only_balanced"] = (ones, yb, np.array([0, 2, 1, 1, 0, 3, 1, 0, 2, 0]))
    cases["intercept_only_balanced_2"] = (ones, yb, np.array([3, 0, 1, 1, 0, 0, 2, 1, 1, 1]))

    # beta_hat = 0 exactly with a feature (Phi'y = 0)
    d0 = np.column_stack([np.ones(4), [1.0, -1.0, 2.0, -2.0]])
    y0 = np.array([1, 1, -1, -1], float)
    cases["beta_hat_zero_p2"] = (d0, y0, np.array([2, 0, 0, 2]))
    cases["beta_hat_zero_p2_b"] = (d0, y0, np.array([0, 3, 1, 0]))

    # designs without an intercept: a zero row (sign(0) = +1 always), rows that are positive
    # multiples of each other (same sign, but not byte-identical), antipodal rows (both can
    # only be +1 together on the hyperplane phi'beta = 0, which sign(0) = +1 allows)
    r = np.random.default_rng(7)
    Z = r.standard_normal((7, 2))
    Z[1] = 0.0
    Z[3] = 2.5 * Z[2]
    Z[5] = -Z[4]
    yz = np.array([1, -1, 1, -1, 1, 1, -1], float)
    cases["no_intercept_zero_proportional_antipodal"] = (Z, yz, np.array([0, 2, 2, 0, 2, 0, 1]))
    cases["no_intercept_zero_proportional_antipodal_b"] = (Z, yz, np.array([2, 0, 0, 2, 0, 2, 1]))
    cases["no_intercept_antipodal_pair_only"] = (Z, yz, np.array([1, 1, 1, 1, 2, 0, 1]))
    cases["no_intercept_antipodal_pair_only_b"] = (Z, -yz, np.array([1, 1, 1, 1, 0, 2, 1]))
    # here the largest |C| (= 2) needs rows 4 and 5 (antipodal, both labelled -1, both weight 2)
    # to be +1 together, realisable only with phi_4'beta = 0: Q = 2/7 for every alpha_n
    ya = np.array([1, -1, 1, 1, -1, -1, 1], float)
    cases["no_intercept_antipodal_both_plus_on_hyperplane"] = (Z, ya, np.array([1, 1, 0, 1, 2, 2, 0]))
    Z3 = r.standard_normal((8, 3))
    Z3[6] = -Z3[2]
    Z3[7] = -Z3[3]
    y3z = np.array([1, -1, -1, 1, 1, -1, -1, 1], float)
    cases["no_intercept_two_antipodal_pairs_p3"] = (Z3, y3z, np.array([0, 1, 2, 2, 1, 1, 0, 1]))
    cases["no_intercept_two_antipodal_pairs_p3_b"] = (Z3, -y3z, np.array([1, 0, 0, 0, 2, 1, 2, 2]))

    # all counts one: S empty
    cases["all_ones"] = (design, y, np.ones(8, int))
    # minimal n = p
    dmin = np.column_stack([np.ones(3), [0.3, -1.2, 2.0], [1.0, 0.5, -0.7]])
    cases["n_equals_p"] = (dmin, np.array([1, -1, 1], float), np.array([0, 2, 1]))
    return cases


DEGENERATE = _degenerate_cases()


def _degenerate_class(name):
    """A case's class: its name without the seed of the numerically singular family and without the
    label of a single point of weight n (with the intercept, the label flip maps one onto the other)."""
    return re.sub(r"(?<=_seed)\d+$|(?<=_label)[+-]1$", "", name)


@pytest.mark.parametrize("name", first_of_each(sorted(DEGENERATE), _degenerate_class))
def test_degenerate_case_matches_reference(name):
    design, y, counts = DEGENERATE[name]
    n = len(y)
    _check(design, y, counts, _alphas(n) + [0.0, 1e4], extra=f"case={name}")


def test_reference_antipodal_case_value():
    design, y, counts = DEGENERATE["no_intercept_antipodal_both_plus_on_hyperplane"]
    assert reference_sup(design, y, counts, [0.0, 7.0, 49.0]) == pytest.approx(
        {0.0: 2 / 7, 7.0: 2 / 7, 49.0: 2 / 7}, abs=1e-12
    )


def test_all_ones_is_exactly_zero():
    design, y, counts = DEGENERATE["all_ones"]
    assert cudbound.replicate_sup(design, y, counts) == 0.0


# ------------------------------------------------- self-checks of the reference
def test_reference_closure_qp_matches_cvxpy():
    """The exact active-set QP against CLARABEL on random cones, singular Hessians included."""
    rng = np.random.default_rng(5)
    for it in range(120):
        n, p, k = int(rng.integers(3, 10)), int(rng.integers(1, 4)), int(rng.integers(0, 7))
        design = rng.standard_normal((n, p))
        y = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
        counts = rng.multinomial(n, [1 / n] * n) if it % 2 else rng.integers(0, 3, n)
        if it % 7 == 0:
            counts = np.zeros(n)
            counts[0] = n  # rank-one Hessian
        G = rng.standard_normal((k, p))
        if it % 5 == 0 and k > 1:
            G[1] = 2 * G[0]
        exact = closure_min(design, y, counts, G)
        cvx = closure_min_cvxpy(design, y, counts, G)
        assert abs(exact - cvx) <= 1e-6 * (1 + abs(cvx)), (it, exact, cvx)


def test_reference_pattern_minima_match_cvxpy():
    """m(s) for every realisable pattern of a few problems, re-solved with CLARABEL."""
    for i in range(12):
        design, y, counts, _ = make_problem(5000 + i)
        det = reference_details(design, y, counts)
        for r, s in enumerate(det.patterns):
            G = s[:, None] * design[det.S]
            assert abs(closure_min_cvxpy(design, y, counts, G) - det.m[r]) <= 1e-6


def _pattern_class(index):
    """(|S|, p) of random problem ``index``: its rows whose count is not 1 (the patterns are over
    them) and its dimension. The two sweeps below check the first problem of each class by default."""
    _, _, counts, info = make_problem(SEED0 + index)
    return int(np.sum(counts != 1)), info["p"]


ENUMERATED = [i for i in range(60) if _pattern_class(i)[0] <= 7]   # the full enumeration takes 2^|S| LPs


def test_the_enumeration_sweep_has_thirty_problems_and_every_size_in_the_default_run():
    assert len(ENUMERATED) >= 30
    kept = kept_by_default(first_of_each(ENUMERATED, _pattern_class))
    assert {_pattern_class(i)[0] for i in kept} == {0, 2, 3, 4, 5, 6, 7}      # |S| = 1 is not drawn
    assert {_pattern_class(i)[1] for i in kept} == {1, 2, 3}


@pytest.mark.parametrize("index", first_of_each(ENUMERATED, _pattern_class))
def test_reference_tree_enumeration_equals_full_enumeration(index):
    """Prefix-pruned LP enumeration == one LP for each of the 2^|S| patterns."""
    design, y, counts, _ = make_problem(SEED0 + index)
    rows = design[counts != 1]
    assert np.array_equal(realisable_patterns(rows, "tree"), realisable_patterns(rows, "full"))


@pytest.mark.parametrize("index", first_of_each(range(40), _pattern_class))
def test_reference_patterns_contain_sampled_classifiers(index):
    """Every sign pattern of a random beta (sign(0) = +1) is declared realisable."""
    rng = np.random.default_rng(3 + index)
    design, y, counts, _ = make_problem(SEED0 + index)
    rows = design[counts != 1]
    pats = {tuple(s) for s in realisable_patterns(rows)}
    betas = rng.standard_normal((2000, design.shape[1]))
    for s in np.where(rows @ betas.T >= 0, 1.0, -1.0).T:
        assert tuple(s) in pats
    # beta = 0 realises the all-plus pattern
    assert tuple(np.ones(len(rows))) in pats


def test_reference_hand_computed_intercept_only():
    # Phi = 1, y = (1, -1, 1, 1), counts = (2, 0, 1, 1): beta_hat = 1/2, L_hat = 1/4.
    # all +: C = -1, m = 0 -> 1/4; all -: C = +1, m = 1 -> g = 1 - 3 alpha/4.
    design, y, counts = np.ones((4, 1)), np.array([1.0, -1, 1, 1]), np.array([2, 0, 1, 1])
    ref = reference_sup(design, y, counts, [0.0, 0.5, 4.0])
    assert ref[0.0] == pytest.approx(0.25)
    assert ref[4.0] == pytest.approx(0.25)
    det = reference_details(design, y, counts)
    assert sorted(det.m.tolist()) == pytest.approx([0.0, 1.0])
    assert det.L_hat == pytest.approx(0.25)
