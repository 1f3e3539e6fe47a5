"""cudbound.replicate_sup_difference: Q^(b) of the difference of two classifiers, against brute force.

Each problem (``reference_difference.make_pair_problem``: n in 6..12, p_A, p_B in 1..3, the same or
different bases) is enumerated by ``reference_difference``: every realisable pattern of each
classifier (LP), each m by an independent convex solver, then every pair of patterns. Every pair of
the losses squared, ridge, hinge and logistic (A's and B's), same and different bases, four alpha_n
(0, 1, n, n^2): equality to 1e-9. The default run checks the first problem of each (pair, basis);
the other problems are marked slow (``tests/_support/sweeps.py``).
"""
import itertools
import math

import numpy as np
import pytest

import cudbound
from cudbound.cud_difference import (DifferenceSide, FORMS, joint_sup, replicate_sup_difference,
                                     search_replicate_difference)
from cudbound.search import SearchOptions
from reference_difference import SPECS, make_pair_problem, ref_difference, side_details
from sweeps import first_of_each

TOL = 1e-9
LOSSES = ("squared", "ridge", "hinge", "logistic")
PAIRS = list(itertools.combinations_with_replacement(LOSSES, 2)) + [("hinge", "squared"), ("logistic", "ridge")]
PER_CLASS = 10
CASES = first_of_each([(a, b, same, k) for a, b in PAIRS for same in (True, False) for k in range(PER_CLASS)],
                      shape=lambda c: c[:3], ids=lambda c: f"{c[0]}-{c[1]}-{'same' if c[2] else 'other'}-{c[3]}")


def _seed(loss_a, loss_b, same, k):
    return 20270000 + 1000 * PAIRS.index((loss_a, loss_b)) + 100 * int(same) + k


@pytest.mark.parametrize("loss_a,loss_b,same,k", CASES)
def test_q_equals_the_enumeration_of_every_pattern_pair(loss_a, loss_b, same, k):
    A, B, y, counts, info = make_pair_problem(_seed(loss_a, loss_b, same, k), loss_a, loss_b, same)
    n = len(y)
    da, db = side_details(loss_a, A, y, counts), side_details(loss_b, B, y, counts)
    assert da.n_patterns >= 1 and db.n_patterns >= 1
    for alpha in (0.0, 1.0, float(n), float(n * n)):
        want = ref_difference(da, db, n, alpha)
        got = replicate_sup_difference(A, B, y, counts, loss_a=SPECS[loss_a], loss_b=SPECS[loss_b], alpha_n=alpha)
        assert abs(got - want) <= TOL, (info, alpha, got, want)


@pytest.mark.parametrize("loss_a,loss_b", [("squared", "hinge"), ("logistic", "ridge"), ("squared", "squared")])
def test_the_three_forms_from_full_frontiers_and_by_the_joint_search(loss_a, loss_b):
    """Each factor (the method's joint one, the minimum and the product of the two g's) equals its
    enumeration, from both frontiers in full (joint_sup) and by the joint search of one classifier
    against the other's frontier (the default); the product is never above the minimum (method.md)."""
    A, B, y, counts, _ = make_pair_problem(31, loss_a, loss_b, same_basis=False)
    n = len(y)
    da, db = side_details(loss_a, A, y, counts), side_details(loss_b, B, y, counts)
    side_a, side_b = DifferenceSide.from_design(A, y, SPECS[loss_a]), DifferenceSide.from_design(B, y, SPECS[loss_b])
    for alpha in (0.0, 1.0, float(n), float(n * n)):
        got = {}
        for form in FORMS:
            want = ref_difference(da, db, n, alpha, form)
            full = search_replicate_difference(side_a, side_b, counts, alpha, form=form, full=True)
            joint = search_replicate_difference(side_a, side_b, counts, alpha, form=form)
            assert full.status == joint.status == "exact" and full.value == full.lower and joint.value == joint.lower
            assert abs(full.value - want) <= TOL and abs(joint.value - want) <= TOL, (form, alpha, full.value,
                                                                                     joint.value, want)
            got[form] = joint.value
        assert got["product"] <= got["min"] + TOL


def test_a_and_b_the_same_procedure():
    """C_A = C_B and m_A = m_B on every pattern: Q^(b) is the enumeration's, and the two halves of the
    frontier maximum (A's count above B's, and below) are equal."""
    A, _, y, counts, _ = make_pair_problem(41, "squared", "squared", same_basis=True)
    n = len(y)
    d = side_details("squared", A, y, counts)
    side = DifferenceSide.from_design(A, y, "squared")
    for alpha in (0.0, float(n)):
        out = search_replicate_difference(side, side, counts, alpha, full=True)
        assert abs(out.value - ref_difference(d, d, n, alpha)) <= TOL
        assert abs(search_replicate_difference(side, side, counts, alpha).value - out.value) <= TOL
        fa, fb = out.frontier_a, out.frontier_b
        np.testing.assert_array_equal(fa.up, fb.up)
        swapped = joint_sup(fb, fa, alpha, n)
        assert swapped == out.value


@pytest.mark.parametrize("loss_a,loss_b", [("squared", "logistic"), ("hinge", "ridge")])
def test_swapping_a_and_b_keeps_q_exactly(loss_a, loss_b):
    A, B, y, counts, _ = make_pair_problem(51, loss_a, loss_b, same_basis=False)
    for alpha in (None, 1.0):
        ab = replicate_sup_difference(A, B, y, counts, loss_a=SPECS[loss_a], loss_b=SPECS[loss_b], alpha_n=alpha)
        ba = replicate_sup_difference(B, A, y, counts, loss_a=SPECS[loss_b], loss_b=SPECS[loss_a], alpha_n=alpha)
        assert ab == ba


def test_invariant_to_shifted_and_scaled_features():
    rng = np.random.default_rng(61)
    n = 10
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] - X[:, 1] + rng.standard_normal(n) > 0, 1.0, -1.0)
    counts = rng.multinomial(n, np.full(n, 1.0 / n))

    def designs(Z):
        return np.column_stack([np.ones(n), Z[:, 0]]), np.column_stack([np.ones(n), Z])

    base = [replicate_sup_difference(*designs(X), y, counts, loss_a=la, loss_b=lb)
            for la, lb in (("squared", "hinge"), ("logistic", "squared"))]
    Xs = X * np.array([1e3, 1e-2]) + np.array([-500.0, 7.0])
    moved = [replicate_sup_difference(*designs(Xs), y, counts, loss_a=la, loss_b=lb)
             for la, lb in (("squared", "hinge"), ("logistic", "squared"))]
    assert np.allclose(base, moved, rtol=0, atol=1e-9)


def test_a_budget_gives_a_certified_upper_bound():
    A, B, y, counts, _ = make_pair_problem(71, "squared", "logistic", same_basis=False)
    n = len(y)
    side_a, side_b = DifferenceSide.from_design(A, y, "squared"), DifferenceSide.from_design(B, y, "logistic")
    exact = search_replicate_difference(side_a, side_b, counts, float(n))
    assert exact.status == "exact"
    seen = set()
    for budget in (1, 2, 4):
        for full in (False, True):
            cut = search_replicate_difference(side_a, side_b, counts, float(n), SearchOptions(max_nodes=budget),
                                              full=full)
            seen.add(cut.status)
            assert cut.lower - TOL <= exact.value <= cut.value + TOL
    assert "budget" in seen


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_a_budget_never_gives_less_than_the_exact_value(loss):
    """The class that failed: the frontier searched in full cut by the budget (its values found lie
    above its certified lower values) while the joint search against it completes patterns. A
    completed pattern's pairs are then bounded with the certified values, not only attained with
    the found ones (before the fix, 6 of 960 cut replicates were below their exact Q^(b), by up to
    one count). Every cap, every replicate: lower <= exact <= value."""
    from cudbound.compare.cud import _side
    from cudbound.compare.procedures import ProcedurePair
    from cudbound.cud import EngineOptions
    from cudbound.datasets import LinearGaussian
    from cudbound.resampling import draw_counts

    n = 30
    X, labels = LinearGaussian(n_features=2, flip_probability=0.2).sample(n, 0)
    pair = ProcedurePair(cudbound.Procedure(loss=loss), cudbound.Procedure(basis="poly:2", loss=loss), X, labels, None)
    side_a, side_b = _side(pair.a, pair.X, pair.labels, EngineOptions()), _side(pair.b, pair.X, pair.labels,
                                                                                  EngineOptions())
    counts = draw_counts(n, 40, np.random.default_rng(0))
    a_leads = side_a.key <= side_b.key  # which frontier is searched in full
    lead_cut_joint_done = 0
    for row in counts:
        exact = search_replicate_difference(side_a, side_b, row, float(n))
        assert exact.status == "exact"
        for cap in (16, 32, 64, 128):
            cut = search_replicate_difference(side_a, side_b, row, float(n), SearchOptions(max_nodes=cap))
            assert cut.lower - TOL <= exact.value <= cut.value + TOL, (cap, exact.value, cut.value, cut.lower)
            lead, joint = (cut.frontier_a, cut.frontier_b) if a_leads else (cut.frontier_b, cut.frontier_a)
            lead_cut_joint_done += lead.status == "budget" and joint.nodes < cap
    assert lead_cut_joint_done >= 1  # the failing class was exercised


def test_a_partner_with_a_lowered_certified_frontier_keeps_the_statuses():
    """A frontier no budget cut can still be inexact (a node nobody solved lowers its certified
    values): the joint search against it bounds its completed patterns with those values (its value
    at least the exact one) and keeps its own status, so the replicate's is the partner's
    "solver_failure", not a budget stop (found in review of the fix above)."""
    import dataclasses

    from cudbound.compare.cud import _side
    from cudbound.compare.procedures import ProcedurePair
    from cudbound.cud import EngineOptions
    from cudbound.cud_difference import _status
    from cudbound.datasets import LinearGaussian
    from cudbound.resampling import draw_counts

    n = 30
    X, labels = LinearGaussian(n_features=2, flip_probability=0.2).sample(n, 0)
    pair = ProcedurePair(cudbound.Procedure(), cudbound.Procedure(basis="poly:2"), X, labels, None)
    side_a, side_b = (_side(p, pair.X, pair.labels, EngineOptions()) for p in (pair.a, pair.b))
    for row in draw_counts(n, 10, np.random.default_rng(0)):
        lead = side_a.frontier(row, float(n), side_b.slack(row), SearchOptions())
        exact = side_b.frontier(row, float(n), side_a.slack(row), SearchOptions(), partner=lead)
        assert lead.status == exact.status == "exact"
        lowered = dataclasses.replace(lead, status="solver_failure", up_lower=lead.up_lower - 0.3,
                                      down_lower=lead.down_lower - 0.3)
        joint = side_b.frontier(row, float(n), side_a.slack(row), SearchOptions(), partner=lowered)
        assert joint.status == "exact" and joint.value >= exact.value - TOL
        assert _status(lowered.status, joint.status) == "solver_failure"


@pytest.mark.parametrize("loss", ["squared", "logistic", "hinge"])
def test_a_side_solves_for_each_count_vector_slack_once(loss, monkeypatch):
    """The slack K - L_u of a count vector is kept (the lead frontier and the joint search of one
    replicate both ask for it): the same number as a fresh side's, one root solve per count vector
    whatever the order of the questions, and a full cache starts again rather than grow."""
    import cudbound.cud_difference as cd
    from cudbound.datasets import LinearGaussian
    from cudbound.resampling import draw_counts

    n = 30
    X, labels = LinearGaussian(n_features=2, flip_probability=0.2).sample(n, 1)
    y = np.where(labels == labels.max(), 1.0, -1.0)
    design = np.column_stack([np.ones(n), X])
    side = DifferenceSide.from_design(design, y, loss)
    calls = []
    solve = side.engine.root_minimum
    monkeypatch.setattr(side.engine, "root_minimum", lambda counts: calls.append(1) or solve(counts))
    rows = draw_counts(n, 6, np.random.default_rng(3))
    first = [side.slack(row) for row in rows]
    again = [side.slack(row.copy()) for row in rows[::-1]][::-1]
    assert len(calls) == len(rows)
    fresh = DifferenceSide.from_design(design, y, loss)
    assert first == again == [fresh.slack(row) for row in rows]
    assert all(math.isfinite(v) and v > 0.0 for v in first)
    monkeypatch.setattr(cd, "_SLACK_CACHE", 2)
    side._slacks.clear()
    for row in rows:
        side.slack(row)
    assert len(side._slacks) <= 2


@pytest.mark.parametrize("loss_a,loss_b", [("squared", "squared"), ("logistic", "hinge")])
def test_a_floor_and_stop_above_as_the_order_statistic_sets_them(loss_a, loss_b):
    """The joint search under the refinement's options (cudbound.quantile), against its exact value
    Q: a floor below Q still gives Q exactly; a floor at or above Q gives a value >= Q and at least
    floor + prune, "bounded" unless a value above the floor was attained; stop_above s below Q
    stops with an attained value above s ("bounded", certified upper bound >= Q) unless the search
    closed first (exact); always
    lower <= Q <= value. Every floor and stop_above, on 12 replicates of two pairs of losses."""
    from cudbound.cud_difference import lead_frontier
    A, B, y, counts, _ = make_pair_problem(91, loss_a, loss_b, same_basis=False)
    n = len(y)
    side_a, side_b = DifferenceSide.from_design(A, y, SPECS[loss_a]), DifferenceSide.from_design(B, y, SPECS[loss_b])
    rng = np.random.default_rng(5)
    seen = set()
    for row in rng.multinomial(n, np.full(n, 1.0 / n), size=12).astype(float):
        exact = search_replicate_difference(side_a, side_b, row, float(n))
        q = exact.value
        assert exact.status == "exact"
        lead = lead_frontier(side_a, side_b, row, float(n))
        for floor in (0.5 * q - 1e-3, q - 1e-3, q, q + 0.05):
            got = search_replicate_difference(side_a, side_b, row, float(n), SearchOptions(floor=floor), lead=lead)
            assert got.lower - TOL <= q <= got.value + TOL
            if floor < q - 1e-6:
                assert got.status == "exact" and abs(got.value - q) <= TOL
            else:
                assert got.value >= floor and (got.status == "bounded" or got.lower > floor)
            seen.add(got.status)
        for above in (0.5 * q, q - 1e-3):
            got = search_replicate_difference(side_a, side_b, row, float(n), SearchOptions(stop_above=above), lead=lead)
            assert got.lower - TOL <= q <= got.value + TOL
            assert (got.status == "bounded" and got.lower > above) or (got.status == "exact" and got.value <= q + TOL)
            seen.add(got.status)
    assert seen == {"exact", "bounded"}


def test_validation():
    A, B, y, counts, _ = make_pair_problem(81, "squared", "squared", same_basis=False)
    with pytest.raises(ValueError, match="rows"):
        replicate_sup_difference(A, B[:-1], y, counts)
    with pytest.raises(ValueError):
        replicate_sup_difference(A, B, y, counts[:-1])
    with pytest.raises(ValueError, match="form"):
        joint_sup(*[search_replicate_difference(DifferenceSide.from_design(D, y, "squared"),
                                                DifferenceSide.from_design(D, y, "squared"), counts, 1.0,
                                                full=True).frontier_a for D in (A, B)], 1.0, len(y), form="sum")
    with pytest.raises(ValueError, match="form"):
        search_replicate_difference(DifferenceSide.from_design(A, y, "squared"),
                                    DifferenceSide.from_design(B, y, "squared"), counts, 1.0, form="sum")
