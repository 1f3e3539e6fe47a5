"""The flip-cost bound of the logistic and exponential losses (``bounds._flip_d`` with r > 0).

At a node with minimiser b_m, every classifier of the node's cone that gives a free point k
the other sign has loss >= m + delta_k, delta_k = q^2 psi(r q) with q = |phi_k'b_m| /
(phi_k'H^-1 phi_k)^(1/2) and r^2 = max_i phi_i'H^-1 phi_i (H the Hessian at b_m): the
loss's terms have |l'''| <= l'' (self-concordance in the sense of Bach 2010). Checked here
against brute-force enumeration (``reference_losses.ref_details``: the least loss of every
realisable sign pattern, by an independent method) on random nodes of random small
problems, and the root's closed-form screening bound (``SmoothNodeSolver.flip_bounds``) the
same way. The bound must also say something: a sizeable share of the exact flip cost.
"""
import math

import numpy as np
import pytest

from cudbound.losses import get_loss
from cudbound.search.bounds import _flip_d
from cudbound.search.smooth_node_solver import SmoothNodeSolver, _factor_hn, _smooth_factor
from reference_losses import RefLoss, ref_details, ref_fit, separable_points
from sweeps import first_of_each

LAM = 0.1
REFS = {"logistic": RefLoss("logistic", "smooth", tends_to_zero=True),
        "exponential": RefLoss("exponential", "smooth", tends_to_zero=True),
        f"logistic_ridge:{LAM}": RefLoss("logistic", "smooth", lam=LAM, tends_to_zero=True),
        f"exponential_ridge:{LAM}": RefLoss("exponential", "smooth", lam=LAM, tends_to_zero=True)}
KINDS = ("gaussian", "discrete", "shifted")


def _problem(seed, ref, kind):
    rng = np.random.default_rng(seed)
    for _ in range(10000):
        n, p = int(rng.integers(6, 10)), int(rng.choice([2, 3]))
        F = rng.integers(0, 3, size=(n, p - 1)).astype(float) if kind == "discrete" else rng.standard_normal((n, p - 1))
        if kind == "shifted":
            F = F * rng.choice([0.01, 30.0], size=p - 1) + rng.choice([-50.0, 200.0], size=p - 1)
        design = np.column_stack([np.ones(n), F])
        score = F @ rng.standard_normal(p - 1)
        y = np.where(score - np.median(score) + np.std(score) * rng.standard_normal(n) >= 0, 1.0, -1.0)
        counts = rng.multinomial(n, np.full(n, 1.0 / n))
        if len(np.unique(y)) < 2 or np.linalg.matrix_rank(design) < p:
            continue
        if separable_points(design, y, counts.astype(float), lam=ref.lam).any():
            continue  # the compiled search (and this bound) serve resamples nothing separates
        try:
            ref_fit(ref, design, y)
        except (ValueError, RuntimeError):
            continue
        return design, y, counts, rng
    raise RuntimeError("no problem found")


def _metric(solver, counts, b):
    obj = solver._objective(np.asarray(counts, dtype=float))
    L = np.empty((len(b), len(b)))
    r = _smooth_factor((obj.kind_id, obj.D, obj.yo, obj.wn, obj.pen, 50), np.ascontiguousarray(b), L,
                       np.empty(len(b)))
    return r, L


@pytest.mark.parametrize("kind, spec", first_of_each([(kind, spec) for kind in KINDS for spec in sorted(REFS)],
                                                      lambda case: (case[0], REFS[case[1]].name)))
def test_the_flip_cost_bound_is_below_the_enumerated_flip_cost(spec, kind):
    """Five random problems of each kind of features and loss. The README's command checks both
    losses on every kind, unpenalised; CI their ridge forms too (tests/_support/sweeps.py)."""
    ref = REFS[spec]
    checked, share = 0, []
    for i in range(5):
        design, y, counts, rng = _problem(2_800_000 + 1000 * KINDS.index(kind) + 100 * sorted(REFS).index(spec) + i,
                                          ref, kind)
        det = ref_details(ref, design, y, counts)
        S, pats, m_pat = det.S, det.patterns, det.m
        solver = SmoothNodeSolver(get_loss(spec), design, y)
        solver.set_weights(counts)
        assert solver._root_sep is None
        rows = np.ascontiguousarray(design[S])
        for _ in range(4):
            d = int(rng.integers(0, len(S)))
            s = pats[int(rng.integers(0, len(pats)))]
            agree = np.all(pats[:, :d] == s[:d], axis=1)
            m_node = m_pat[agree].min()
            sol = solver.solve(S[:d], s[:d].astype(float))
            assert abs(sol.value - m_node) <= 1e-7 * max(1.0, m_node), (sol.value, m_node)
            b = np.asarray(sol.beta, dtype=float)
            r, L = _metric(solver, counts, b)
            assert r > 0.0
            hn = np.empty(len(S))
            _factor_hn(rows, np.zeros(len(S), dtype=np.int8), L, hn, np.empty(len(b)))
            for k in range(d, len(S)):
                t = float(rows[k] @ b)
                side = 1.0 if t >= 0.0 else -1.0
                other = agree & (pats[:, k] == -side)
                if not other.any() or not np.isfinite(m_pat[other].min()):
                    continue
                exact = m_pat[other].min() - sol.value
                bound = _flip_d(t, hn[k], r)
                assert bound <= exact + 1e-9, (spec, kind, i, d, k, bound, exact)
                checked += 1
                if exact > 1e-6:
                    share.append(bound / exact)
            if d == 0:
                # the root's closed-form screening bound, from the (unconstrained) minimiser
                lb = solver.flip_bounds(b, rows)
                for k in range(len(S)):
                    t = float(rows[k] @ b)
                    if t == 0.0:
                        continue
                    other = pats[:, k] == (-1.0 if t > 0 else 1.0)
                    if other.any():
                        assert lb[k] <= m_pat[other].min() - sol.value + 1e-9
    assert checked > 15
    assert np.median(share) > 0.02, np.median(share)  # the bound is not vacuous


def test_psi_form_is_monotone_and_below_the_quadratic():
    """delta(q) = (e^-rq + rq - 1) / r^2 grows with q, stays below q^2 / 2 (the quadratic
    model's flip cost) and meets it as r -> 0; at u = r q = 1e-3 the series branch (below)
    stays under the closed form (above), by its dropped term u^2 / 24 relative to 1/2."""
    for r in (1e-9, 0.3, 2.0, 40.0):
        qs = np.linspace(0.0, 5.0, 200)
        vals = np.array([_flip_d(q, 1.0, r) for q in qs])
        assert np.all(np.diff(vals) >= 0.0)
        assert np.all(vals <= qs ** 2 / 2 + 1e-15)
    assert math.isclose(_flip_d(0.7, 1.0, 1e-9), 0.7 ** 2 / 2, rel_tol=1e-8)
    u = 1e-3 * (1 - 1e-12)
    a, b = _flip_d(u, 1.0, 1.0), _flip_d(u * (1 + 2e-12), 1.0, 1.0)
    assert a <= b and (b - a) <= 1e-7 * b
