"""The flip-cost bound of the logistic and exponential losses (``bounds._flip_d`` with r > 0).

At a node with minimiser b_m, every classifier of the node's cone that gives a free point k
the other sign has loss >= m + delta_k, delta_k = q^2 psi(r q) with q = |phi_k'b_m| /
(phi_k'H^-1 phi_k)^(1/2) and r the mean of r_i = (phi_i'H^-1 phi_i)^(1/2) over the worst unit of
curvature mass (H the Hessian at b_m; ``smooth_node_solver._factor_r``): the loss's terms have
|l'''| <= l'' (self-concordance in the sense of Bach 2010). Checked here
against brute-force enumeration (``reference_losses.ref_details``: the least loss of every
realisable sign pattern, by an independent method) on random nodes of random small
problems, and the root's closed-form screening bound (``SmoothNodeSolver.flip_bounds``) the
same way. The bound must also say something: a sizeable share of the exact flip cost.
Within the node's cone (the rows the SQP's minimiser holds at 0 stay met: ``bounds._within_cone``
with sc_r > 0) the same bound with the cone's metric term, checked the same way at nodes the
SQP solves as the search does (from the parent's minimiser); it must be tighter than the plain
one somewhere.
"""
import math

import numpy as np
import pytest

from cudbound.design import reparametrise
from cudbound.losses import get_loss
from cudbound.optim.linear_solve import cholesky_solve
from cudbound.search.bounds import _cone_setup, _flip_d, _within_cone
from cudbound.search.smooth_node_solver import (R_BINS, SmoothNodeSolver, _factor_hn, _smooth_factor, _sqp_compiled,
                                                 factor_workspace)
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


def _enumerated(spec, kind, base, i):
    """Problem i of ``kind`` for loss ``spec`` (seeded from ``base``) with every realisable pattern's least loss
    (``reference_losses.ref_details``) and the node solver: (design, counts, rng, S, patterns, their least
    losses, solver with the counts as weights, the rows of S)."""
    ref = REFS[spec]
    design, y, counts, rng = _problem(base + 1000 * KINDS.index(kind) + 100 * sorted(REFS).index(spec) + i, ref, kind)
    det = ref_details(ref, design, y, counts)
    solver = SmoothNodeSolver(get_loss(spec), design, y)
    solver.set_weights(counts)
    return design, counts, rng, det.S, det.patterns, det.m, solver, np.ascontiguousarray(design[det.S])


def _metric(solver, counts, b):
    obj = solver._objective(np.asarray(counts, dtype=float))
    L = np.empty((len(b), len(b)))
    r = _smooth_factor((obj.kind_id, obj.D, obj.yo, obj.wn, obj.pen, 50), np.ascontiguousarray(b), L,
                       np.empty(factor_workspace(len(b), len(obj.D))))
    return r, L


@pytest.mark.parametrize("kind, spec", first_of_each([(kind, spec) for kind in KINDS for spec in sorted(REFS)],
                                                      lambda case: (case[0], REFS[case[1]].name)))
def test_the_flip_cost_bound_is_below_the_enumerated_flip_cost(spec, kind):
    """Five random problems of each kind of features and loss. The README's command checks both
    losses on every kind, unpenalised; CI their ridge forms too (tests/_support/sweeps.py)."""
    checked, share = 0, []
    for i in range(5):
        design, counts, rng, S, pats, m_pat, solver, rows = _enumerated(spec, kind, 2_800_000, i)
        assert solver._root_sep is None
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


def _sqp_node(solver, counts, rows, signs, start):
    """The compiled SQP's minimiser of a node, its value and its active rows (indices of ``rows``),
    from ``start`` (the search starts a node from its parent's minimiser); None if it does not certify."""
    obj = solver._objective(np.asarray(counts, dtype=float))
    G = np.ascontiguousarray(signs[:, None] * rows[:len(signs)])
    x = np.array(start, dtype=float)
    p = rows.shape[1]
    act = np.zeros(p, dtype=np.int64)
    st, f, na = _sqp_compiled((obj.kind_id, obj.D, obj.yo, obj.wn, obj.pen), G, np.linalg.norm(G, axis=1), x, 200,
                              act, np.nan, np.empty(p), np.empty((p, p)))
    return (x, f, act[:na].copy()) if st == 0 else None


@pytest.mark.parametrize("kind", KINDS)
def test_the_cone_flip_cost_of_a_smooth_loss_is_below_the_enumerated_flip_cost(kind):
    """Random nodes of random problems (every loss of REFS, features of each kind): the node's minimiser
    and active rows by the SQP warm-started from its parent's, as in the search; H^-1 phi_a of the active
    rows from the Hessian's Cholesky factor, as ``core._node_factor`` computes them."""
    checked = tighter = 0
    for spec in sorted(REFS):
        for i in range(4):
            design, counts, rng, S, pats, m_pat, solver, rows = _enumerated(spec, kind, 2_800_500, i)
            p = design.shape[1]
            root = np.asarray(solver.solve(np.zeros(0, dtype=int), np.zeros(0)).beta, dtype=float)
            for _ in range(6):
                d = int(rng.integers(1, len(S) + 1))
                s = pats[int(rng.integers(0, len(pats)))].astype(float)
                parent = _sqp_node(solver, counts, rows, s[:d - 1], root)
                node = None if parent is None else _sqp_node(solver, counts, rows, s[:d], parent[0])
                if node is None:
                    continue
                b, f, act = node
                agree = np.all(pats[:, :d] == s[:d], axis=1)
                assert abs(f - m_pat[agree].min()) <= 1e-7 * max(1.0, abs(f))
                r, L = _metric(solver, counts, b)
                assert r > 0.0
                hn = np.empty(len(S))
                _factor_hn(rows, np.zeros(len(S), dtype=np.int8), L, hn, np.empty(p))
                W = np.zeros((len(S), p))
                for a in act:
                    cholesky_solve(L, rows[a], W[a], p)
                    Lo = np.tril(L)   # the factor is the lower triangle (the upper holds H)
                    assert np.allclose(W[a], np.linalg.solve(Lo @ Lo.T, rows[a]), rtol=1e-9, atol=1e-12)
                signs = np.zeros(len(S), dtype=np.int8)
                signs[:d] = s[:d]
                M, Lm = np.empty((p, p)), np.empty((p, p))
                k_act = _cone_setup(rows, W, signs, act, len(act), M, Lm)
                for k in range(d, len(S)):
                    t = float(rows[k] @ b)
                    other = agree & (pats[:, k] == (-1.0 if t >= 0.0 else 1.0))
                    if not other.any() or not np.isfinite(m_pat[other].min()):
                        continue
                    exact = m_pat[other].min() - f
                    plain = _flip_d(t, hn[k], r)
                    bound = _within_cone(rows, W, signs, act, k_act, M, Lm, np.empty(p), np.empty(p), k, t, plain,
                                         hn[k], False, r)   # the search's path
                    assert bound >= plain * (1.0 - 1e-12)
                    assert bound <= exact + 1e-9, (spec, kind, i, d, k, bound, exact)
                    checked += 1
                    tighter += bound > plain * (1.0 + 1e-6)
    assert checked > 30, checked
    assert tighter > 0, tighter


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


def _loss_parts(spec, rng):
    """A random weighted problem of the loss ``spec`` (8-60 points, 2-4 coefficients, features of
    mixed scales and offsets) and a random b: (kind, D, yo, wn, pen) as the compiled solver holds them."""
    _solver, _counts, parts, b = _loss_solver(spec, rng)
    return parts, b


def _loss_solver(spec, rng):
    """:func:`_loss_parts`'s problem as (its SmoothNodeSolver, the counts, the parts, b); a spec
    "orthonormal:..." carries the loss to the design's orthonormal coordinates, as the engine holds it
    (a ridge form becomes a ``PenalisedLoss``, whose penalty M'M is not diagonal)."""
    while True:
        n, p = int(rng.integers(8, 60)), int(rng.integers(2, 5))
        F = rng.standard_normal((n, p - 1)) * rng.choice([0.3, 1.0, 5.0], size=p - 1) + rng.choice([0.0, 3.0],
                                                                                                   size=p - 1)
        design = np.column_stack([np.ones(n), F])
        y = np.where(F @ rng.standard_normal(p - 1) + rng.standard_normal(n) > 0, 1.0, -1.0)
        if len(np.unique(y)) == 2:
            break
    loss = get_loss(spec.removeprefix("orthonormal:"))
    if spec.startswith("orthonormal:"):
        rep = reparametrise(design)
        design, loss = rep.Z, rep.loss(loss)
    solver = SmoothNodeSolver(loss, design, y)
    counts = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
    solver.set_weights(counts)
    obj = solver._objective(counts)
    return solver, counts, (obj.kind_id, obj.D, obj.yo, obj.wn, obj.pen), rng.standard_normal(p) * 0.5


def _value_grad_hess(parts, b):
    """L(b) = sum_i w_i l(y_i phi_i'b) + b'Q b, its gradient and Hessian, in NumPy (not the kernel's)."""
    kind, D, yo, wn, pen = parts
    m = yo * (D @ b)
    if kind == 0:
        s = 0.5 * (1.0 - np.tanh(m / 2.0))
        f, d1, d2 = wn @ np.logaddexp(0.0, -m), -yo * s, s * (1.0 - s)
    else:
        e = np.exp(-m)
        f, d1, d2 = wn @ e, -yo * e, e
    g, H = D.T @ (wn * d1), (D * (wn * d2)[:, None]).T @ D
    if pen.shape[0]:
        f, g, H = f + b @ pen @ b, g + 2.0 * pen @ b, H + 2.0 * pen
    return float(f), g, H


def _greedy_mean(r, cap):
    """sum_i pi_i r_i with pi filling the largest r first, each up to its capacity, until a unit of mass."""
    mass, mean = 0.0, 0.0
    for i in np.argsort(-r, kind="stable"):
        take = min(cap[i], 1.0 - mass)
        mean, mass = mean + take * r[i], mass + take
    return mean


@pytest.mark.parametrize("spec", sorted(REFS))
def test_the_flip_costs_r_is_the_mean_over_the_worst_unit_of_curvature(spec):
    """``_smooth_factor``'s r is the mean of r_i = (phi_i'H^-1 phi_i)^(1/2) over the unit of curvature
    mass the capacities c_i = w_i l''_i r_i^2 put on the largest r_i first (the penalty's share at r = 0):
    at least that mean (the bound stays valid), equal to it with r_i rounded up to its bin's edge
    (``_factor_r``'s rounding, here in NumPy), and at most r_max."""
    rng = np.random.default_rng(4_100_000 + sorted(REFS).index(spec))
    below = 0
    for _ in range(40):
        parts, b = _loss_parts(spec, rng)
        kind, D, yo, wn, pen = parts
        p = len(b)
        r = _smooth_factor((*parts, 50), b, np.empty((p, p)), np.empty(factor_workspace(p, len(parts[1]))))
        _, _, H = _value_grad_hess(parts, b)
        v = np.einsum("ij,jk,ik->i", D, np.linalg.inv(H), D)
        m = yo * (D @ b)
        l2 = np.exp(-m) if kind == 1 else 0.25 / np.cosh(m / 2.0) ** 2
        exact = _greedy_mean(np.sqrt(v), wn * l2 * v)
        r_max = np.sqrt(v.max())
        edge = r_max * np.minimum(np.floor(np.sqrt(v) / r_max * R_BINS) + 1.0, R_BINS) / R_BINS
        binned = _greedy_mean(edge, wn * l2 * v)
        assert exact * (1 - 1e-7) <= r <= np.sqrt(v.max()) * (1 + 1e-7), (r, exact)
        assert r == pytest.approx(binned, rel=1e-7)
        below += r < 0.95 * np.sqrt(v.max())
    assert below >= 20, below  # the mean is well below the largest r_i on most problems


def test_a_short_workspace_is_refused():
    """``_smooth_factor`` writes each point's r_i^2 and the bins into its workspace: one shorter than
    ``factor_workspace`` is an error, not a write past its end."""
    parts, b = _loss_parts("logistic", np.random.default_rng(4_300_000))
    p = len(b)
    with pytest.raises(ValueError, match="workspace"):
        _smooth_factor((*parts, 50), b, np.empty((p, p)), np.empty(factor_workspace(p, len(parts[1])) - 1))


@pytest.mark.parametrize("spec", sorted(REFS))
def test_the_self_concordant_growth_holds_with_the_mean_r(spec):
    """The lemma behind ``bounds._flip_d`` with ``_smooth_factor``'s r: for every b and d,
    L(b + d) - L(b) - grad'd >= h(q), q = (d'Hd)^(1/2), h(q) = (e^-rq + rq - 1) / r^2, checked in NumPy on
    random problems along random directions and along H^-1 phi_i (each point's steepest flip, which
    loads the most curvature on that point), at q from 0.05 to 20. The bound is nearly attained (within
    a few per cent) along some of these directions, so a mean r too small by that much fails here."""
    rng = np.random.default_rng(4_200_000 + sorted(REFS).index(spec))
    ratios = []
    for _ in range(15):
        parts, b = _loss_parts(spec, rng)
        p = len(b)
        r = _smooth_factor((*parts, 50), b, np.empty((p, p)), np.empty(factor_workspace(p, len(parts[1]))))
        f0, g, H = _value_grad_hess(parts, b)
        Hi = np.linalg.inv(H)
        for d0 in [Hi @ row for row in parts[1]] + [rng.standard_normal(p) for _ in range(10)]:
            for sign in (1.0, -1.0):
                for q in (0.05, 0.2, 0.5, 1.0, 2.0, 5.0, 20.0):
                    d = sign * q * d0 / math.sqrt(d0 @ H @ d0)
                    growth = _value_grad_hess(parts, b + d)[0] - f0 - g @ d
                    h = _flip_d(q, 1.0, r)
                    assert growth >= h - 1e-12 * max(1.0, abs(f0)), (q, growth, h)
                    ratios.append(growth / h)
    assert min(ratios) < 1.05, min(ratios)


FLOOR_SPECS = [*sorted(REFS), f"logistic_ridge:{LAM}:all", f"orthonormal:logistic_ridge:{LAM}",
               f"orthonormal:exponential_ridge:{LAM}:all"]


@pytest.mark.parametrize("spec", FLOOR_SPECS)
def test_the_loss_floor_is_below_the_loss(spec):
    """``SmoothNodeSolver.loss_floor`` (the probes' bound on a candidate's loss, any b and any x): L(b) >= L(x) +
    h(q) - eps q - 1e-12 max(1, |L(x)|), with q = ((b - x)'H(b - x))^(1/2), eps = (g'H^-1 g)^(1/2) and h as in
    the lemma above. Checked in NumPy at random x along each point's steepest flip, along -H^-1 g (where
    g'd = -eps q: the gradient's term is attained) and random directions, q from 0.05 to 20; and the floor is
    that formula, recomputed in NumPy from ``_smooth_factor``'s r. The losses as the user gives them and as the
    engine holds a ridge form (a ``PenalisedLoss`` in orthonormal coordinates, intercept penalised or not)."""
    rng = np.random.default_rng(4_250_000 + FLOOR_SPECS.index(spec))
    for _ in range(15):
        solver, counts, parts, x = _loss_solver(spec, rng)
        p = len(x)
        floor = solver.loss_floor(x, counts)
        assert floor is not None
        r = _smooth_factor((*parts, 50), x, np.empty((p, p)), np.empty(factor_workspace(p, len(parts[1]))))
        f0, g, H = _value_grad_hess(parts, x)
        Hi = np.linalg.inv(H)
        eps = math.sqrt(g @ Hi @ g)
        betas, qs = [], []
        for d0 in [Hi @ row for row in parts[1]] + [-Hi @ g] + [rng.standard_normal(p) for _ in range(10)]:
            for sign in (1.0, -1.0):
                for q in (0.05, 0.2, 0.5, 1.0, 2.0, 5.0, 20.0):
                    betas.append(x + sign * q * d0 / math.sqrt(d0 @ H @ d0))
                    qs.append(q)
        got = floor(np.array(betas))
        with np.errstate(over="ignore"):   # the exponential loss far out: inf, above any floor
            losses = np.array([_value_grad_hess(parts, b)[0] for b in betas])
        assert np.all(got <= losses), np.max(got - losses)
        want = np.array([f0 + _flip_d(q, 1.0, r) - eps * q for q in qs]) - 1e-12 * max(1.0, abs(f0))
        assert np.allclose(got, want, rtol=1e-9, atol=1e-12)
