"""The one tie rule (cudbound.ties): groups, invariance to order and to positive rescaling, the
representative, and the signs with sign(0) = +1."""
import numpy as np
import pytest

from cudbound.ties import TIE_RTOL, decision_signs, snap_ties, snap_zeros, term_scale, tied_signs


def _groups_brute(s, tol):
    """The groups by brute force: i and j in one group when a chain of sorted neighbours, each gap
    <= tol, joins them (union-find over every pair of neighbours in value)."""
    n = len(s)
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i
    for i in range(n):
        for j in range(n):
            lo, hi = min(s[i], s[j]), max(s[i], s[j])
            between = [k for k in range(n) if lo <= s[k] <= hi]
            values = sorted(s[k] for k in between)
            if all(b - a <= tol for a, b in zip(values, values[1:])):
                parent[find(i)] = find(j)
    return [find(i) for i in range(n)]


def _clustered(rng, n_groups=6, size=5):
    """Scores in well-separated groups, each group's members a few roundings apart (as a sum
    computed in different orders gives them), in shuffled order."""
    centres = rng.normal(size=n_groups) * 3.0
    members = [c + rng.integers(-3, 4, size=size) * np.spacing(c) for c in centres]
    return rng.permutation(np.concatenate(members))


def test_the_groups_are_the_chains_of_gaps_within_the_tolerance():
    rng = np.random.default_rng(0)
    for _ in range(20):
        base = np.round(rng.normal(size=12), 1)             # many exact ties, gaps of 0.1 or more
        s = base + rng.integers(-2, 3, size=12) * 1e-13     # and a rounding-sized jitter
        snapped = snap_ties(s)
        tol = TIE_RTOL * np.max(np.abs(s))
        groups = _groups_brute(s, tol)
        for i in range(12):
            for j in range(12):
                assert (snapped[i] == snapped[j]) == (groups[i] == groups[j])
        # each group takes its smallest value, and a group of one is left alone
        for g in set(groups):
            members = [i for i in range(12) if groups[i] == g]
            assert all(snapped[i] == min(s[k] for k in members) for i in members)


def test_a_chain_of_small_gaps_is_one_group_and_a_gap_above_the_tolerance_splits():
    tol = TIE_RTOL * 1.0
    s = np.array([1.0, 1.0 - 0.9 * tol, 1.0 - 1.8 * tol, 1.0 - 3.0 * tol, 0.5])
    out = snap_ties(s)
    assert out[0] == out[1] == out[2] == 1.0 - 1.8 * tol     # a chain: each gap 0.9 tol
    assert out[3] == 1.0 - 3.0 * tol                          # 1.2 tol below the chain: its own group
    assert out[4] == 0.5


def test_snapping_does_not_depend_on_the_order_of_the_scores():
    rng = np.random.default_rng(1)
    s = _clustered(rng)
    out = snap_ties(s)
    assert len(np.unique(out)) == 6
    for _ in range(10):
        p = rng.permutation(s.size)
        assert np.array_equal(snap_ties(s[p]), out[p])


@pytest.mark.parametrize("factor", [2.0, 0.5, 2.0 ** 40, 2.0 ** -30, 3.7, 1e-3, 7e5])
def test_snapping_commutes_with_positive_rescaling(factor):
    rng = np.random.default_rng(2)
    s = _clustered(rng)
    out = snap_ties(s)
    scaled = snap_ties(factor * s)
    # the same groups, each represented by the scaled representative (rounding is monotone)
    assert np.array_equal(scaled, factor * out)
    assert np.array_equal(np.unique(scaled, return_inverse=True)[1], np.unique(out, return_inverse=True)[1])


def test_the_representative_is_the_first_in_sorted_order_whatever_the_input_order():
    a = 1.0
    b = a + 3 * np.spacing(a)
    for s in ([b, a, a + np.spacing(a)], [a + np.spacing(a), b, a], [a, b, a + np.spacing(a)]):
        assert snap_ties(s).tolist() == [a, a, a]
    assert snap_ties([-a, -b]).tolist() == [-b, -b]         # the smallest, also below zero


def test_snapping_is_idempotent_and_leaves_distinct_scores_alone():
    rng = np.random.default_rng(3)
    s = _clustered(rng)
    once = snap_ties(s)
    assert np.array_equal(snap_ties(once), once)
    distinct = rng.normal(size=50)
    assert np.array_equal(snap_ties(distinct), distinct)


def test_an_explicit_scale_and_a_stack_of_vectors():
    s = np.array([1.0, 1.0 + 1e-9, 2.0])
    assert snap_ties(s).tolist() == [1.0, 1.0 + 1e-9, 2.0]          # 1e-9 > 1e-10 * 2
    assert snap_ties(s, scale=100.0).tolist() == [1.0, 1.0, 2.0]    # 1e-9 <= 1e-10 * 100
    stack = np.vstack([s, 1000.0 * s])
    out = snap_ties(stack)
    assert np.array_equal(out[0], snap_ties(s)) and np.array_equal(out[1], snap_ties(1000.0 * s))
    assert snap_ties(np.zeros(4)).tolist() == [0.0] * 4
    assert snap_ties([5.0]).tolist() == [5.0]
    with pytest.raises(ValueError, match="finite"):
        snap_ties([1.0, np.nan])
    with pytest.raises(ValueError, match="scale"):
        snap_ties([1.0, 2.0], scale=-1.0)


def test_tied_signs_and_decision_signs():
    v = np.array([3e-11, -3e-11, 2e-10, -2e-10, 0.0, -0.0])
    assert tied_signs(v, 1.0).tolist() == [0.0, 0.0, 1.0, -1.0, 0.0, 0.0]
    assert decision_signs(v, 1.0).tolist() == [1.0, 1.0, 1.0, -1.0, 1.0, 1.0]
    # the scale per value: the same value is 0 on a large scale and negative on a small one
    assert decision_signs([-1e-12, -1e-12], [1.0, 1e-3]).tolist() == [1.0, -1.0]
    # default scale: the largest |value|
    assert tied_signs([1.0, -1e-11, 1e-9]).tolist() == [1.0, 0.0, 1.0]
    # invariant to positive rescaling of values and scale together
    for factor in (2.0 ** -20, 3.7, 2.0 ** 30):
        assert np.array_equal(tied_signs(factor * v, factor), tied_signs(v, 1.0))


def test_a_decision_value_zero_in_exact_arithmetic_is_positive_on_every_machine():
    # phi' beta with phi = (1, 3) and beta = (0.3, -0.1): 0 in exact arithmetic, -5.6e-17 in floating point
    phi, beta = np.array([[1.0, 3.0]]), np.array([0.3, -0.1])
    assert (phi @ beta)[0] < 0.0
    assert decision_signs(phi @ beta, term_scale(phi, beta)).tolist() == [1.0]
    assert np.allclose(term_scale(phi, beta), [0.6])


def test_snap_zeros_makes_exactly_zero_what_ties_with_zero_and_leaves_the_rest():
    """|value| <= TIE_RTOL * scale becomes 0.0 (either sign), anything larger is kept to the bit; the scale
    broadcasts per value."""
    scale = np.array([1.0, 1.0, 1e-6, 1e-6, 2.0])
    values = np.array([TIE_RTOL, -np.nextafter(TIE_RTOL, 1.0), 1e-17, -3e-16, 5.0])
    out = snap_zeros(values, scale)
    assert out.tolist() == [0.0, values[1], 0.0, values[3], 5.0]
    assert np.signbit(out[0]) == False and np.array_equal(snap_zeros(values, 1e-30), values)
