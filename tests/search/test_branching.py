"""cudbound/search/branching.py and the "critical" pick of ``bounds._bound``: which free point a node
branches on. Any choice leaves Q^(b) exact (``tests/test_engine.py`` compares every rule's value);
what is tested here is that the pick is the one the docs describe, that it is a free point the
bound counts, and that it does not depend on the order of the points (one tie rule)."""
import numpy as np
import pytest

from cudbound.engine import ReplicateEngine
from cudbound.losses import SquaredLoss
from cudbound.search import SearchOptions, core
from cudbound.search.bounds import _bound, _critical_point


def _reference_pick(d, diff, k, m, floor, level, C0):
    """The rule of ``_critical_point`` written over the points (not the compact arrays): the points
    at or below ``level``, the side where |C| is largest there, and the dearest flip on that side."""
    d, diff, k = map(np.asarray, (d, diff, k))
    inside = m + np.maximum(d, floor) <= level
    hi = C0 + diff[inside & (diff > 0)].sum()
    lo = C0 + diff[inside & (diff <= 0)].sum()
    side = 1.0 if abs(hi) >= abs(lo) else -1.0
    cand = np.flatnonzero(inside & (diff * side > 0))
    if cand.size == 0:
        return -1
    # largest d |diff|, then the larger |diff|, then the smaller point index
    best = sorted(cand, key=lambda i: (-(d[i] * abs(diff[i])), -abs(diff[i]), k[i]))[0]
    return int(k[best])


@pytest.mark.parametrize("seed", range(6))
def test_the_critical_point_follows_its_rule_in_any_order(seed):
    """Random flip costs and count changes with many ties (a few distinct costs, changes in
    {-2, -1, 1, 2, 3}): the pick is the reference rule's, and the same point in every order."""
    rng = np.random.default_rng(9_300 + seed)
    picked = 0
    for _ in range(300):
        r = int(rng.integers(1, 14))
        d = rng.choice([0.0, 0.125, 0.5, 0.75, 2.0], size=r)
        diff = rng.choice([-2.0, -1.0, 1.0, 2.0, 3.0], size=r)
        k = rng.permutation(40)[:r].astype(np.int64)
        m, floor, C0 = float(rng.uniform(0, 1)), float(rng.choice([0.0, 0.3])), float(rng.integers(-4, 5))
        level = m + float(rng.choice([0.0, 0.125, 0.5, 0.75, 2.0]))
        want = _reference_pick(d, diff, k, m, floor, level, C0)
        for _order in range(3):
            perm = rng.permutation(r)
            got = _critical_point(d[perm].copy(), diff[perm].copy(), k[perm].copy(), r, m, floor, level, C0)
            assert got == want, (d, diff, k, m, floor, level, C0, got, want)
        picked += want >= 0
    assert picked > 150


def _node(rng, mf, p):
    """A random node; about a third of its points repeat another one (the same row, metric and counts:
    the same flip cost and change, full ties of the pick's key)."""
    P = rng.standard_normal((mf, p))
    hn = rng.uniform(0.2, 2.0, size=mf)
    cplus = rng.choice([-1.0, 0.0, 1.0, 2.0], size=mf)
    cminus = rng.choice([-1.0, 0.0, 1.0, 2.0], size=mf)
    for k in np.flatnonzero(rng.random(mf) < 0.35):
        src = int(rng.integers(0, mf))
        P[k], hn[k], cplus[k], cminus[k] = P[src], hn[src], cplus[src], cminus[src]
    signs = np.zeros(mf, dtype=np.int8)
    fixed = rng.random(mf) < 0.3
    signs[fixed] = rng.choice([-1, 1], size=int(fixed.sum()))
    beta = rng.standard_normal(p) * 0.3
    return P, hn, cplus, cminus, signs, beta


def _reference_bound(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_max):
    """The flip-cost bound over the free points, level by level (every point of a level flipped at
    once), and the point the critical rule picks at the level where the bound is largest."""
    free = np.flatnonzero(signs == 0)
    t = P[free] @ beta
    pos = t >= 0
    C0 = Cfix + np.where(pos, cplus[free], cminus[free]).sum()
    diff = np.where(pos, cminus[free] - cplus[free], cplus[free] - cminus[free])
    d = t * t / hn[free]

    def g(level):
        return min(1.0, 1.0 + alpha * (L_hat - level))

    if g(m) <= 0.0:
        return -1.0, -1
    best, best_level = abs(C0) / n * g(m), -np.inf
    keep = (diff != 0) & (m + d < L_max)
    for level in np.unique(m + d[keep]):
        inside = keep & (m + d <= level)
        hi = C0 + diff[inside & (diff > 0)].sum()
        lo = C0 + diff[inside & (diff < 0)].sum()
        v = max(abs(hi), abs(lo)) / n * g(level)
        if v > best:
            best, best_level = v, level
    pick = -1
    if best_level > -np.inf:
        pick = _reference_pick(d[keep], diff[keep], free[keep], m, 0.0, best_level, C0)
    return best, pick


def _bound_of(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_max, use_flip, tmp_d, tmp_diff, *,
              tmp_k=np.zeros(0, dtype=np.int64), pick=np.zeros(0, dtype=np.int64), cut=-np.inf):
    """bounds._bound of a quadratic loss's node without the gradient or the cone (every argument given)."""
    return _bound(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_max, use_flip, tmp_d, tmp_diff,
                  0.0, np.zeros(0), 0.0, 0.0, np.zeros((0, 0)), np.zeros(0, dtype=np.int64), 0, np.zeros((0, 0)),
                  np.zeros((0, 0)), np.zeros(0), np.zeros(0), tmp_k, pick, cut, np.empty(P.shape[0], dtype=np.int64),
                  np.zeros(0), np.zeros(0, dtype=np.int64))


@pytest.mark.parametrize("seed", range(4))
def test_the_bound_picks_a_free_point_it_counts_whatever_the_order(seed):
    """Random nodes (a quadratic loss's flip costs t^2 / hn): the bound with the pick is the bound
    without it, the pick is the reference's (a free point whose flip the maximising level counts),
    and permuting the points permutes the pick."""
    rng = np.random.default_rng(9_400 + seed)
    picked = 0
    for _ in range(200):
        mf, p = int(rng.integers(3, 25)), int(rng.integers(2, 5))
        P, hn, cplus, cminus, signs, beta = _node(rng, mf, p)
        n, alpha, L_hat, m = 50, float(rng.choice([2.0, 8.0])), 1.0, float(rng.uniform(0.5, 1.2))
        L_max = L_hat + 1.0 / alpha
        Cfix = float(rng.integers(-3, 4))
        pick = np.empty(1, dtype=np.int64)
        U = _bound_of(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_max, True, np.empty(mf),
                      np.empty(mf), tmp_k=np.empty(mf, dtype=np.int64), pick=pick)
        U_plain = _bound_of(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_max, True, np.empty(mf),
                            np.empty(mf))
        assert U == U_plain
        ref_U, ref_pick = _reference_bound(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_max)
        assert abs(U - ref_U) <= 1e-12
        assert pick[0] == ref_pick
        if pick[0] >= 0:
            picked += 1
            assert signs[pick[0]] == 0
            # a node whose bound is at most the prune level (``cut``) is never expanded: no pick
            for cut, want in ((U, -1), (np.nextafter(U, -np.inf), pick[0])):
                other = np.empty(1, dtype=np.int64)
                _bound_of(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_max, True, np.empty(mf),
                          np.empty(mf), tmp_k=np.empty(mf, dtype=np.int64), pick=other, cut=cut)
                assert other[0] == want
        perm = rng.permutation(mf)
        pick2 = np.empty(1, dtype=np.int64)
        U2 = _bound_of(P[perm].copy(), hn[perm].copy(), cplus[perm].copy(), cminus[perm].copy(), signs[perm].copy(),
                       Cfix, beta, m, n, alpha, L_hat, L_max, True, np.empty(mf), np.empty(mf),
                       tmp_k=np.empty(mf, dtype=np.int64), pick=pick2)
        assert U2 == pytest.approx(U, rel=1e-13, abs=1e-15)
        assert (pick2[0] < 0) == (pick[0] < 0)
        if pick[0] >= 0 and perm[pick2[0]] != pick[0]:
            # a full tie (the same flip cost times change, the same change) goes to the smaller
            # index, which the permutation renumbers
            t = P @ beta
            w = np.abs(cplus - cminus)
            a, b = perm[pick2[0]], pick[0]
            assert t[a] ** 2 / hn[a] * w[a] == t[b] ** 2 / hn[b] * w[b] and w[a] == w[b]
    assert picked > 100


@pytest.mark.parametrize("seed", range(4))
def test_the_flips_where_g_is_one_count_as_in_the_sorted_walk(seed):
    """Flips whose completion costs at most L_hat (g = 1 there) are counted without a sort: on nodes where
    many flips are such, costs tie across few values and the two sides' counts often tie (hi = -lo),
    the bound and the pick are the reference's walk over every level."""
    rng = np.random.default_rng(9_450 + seed)
    flat_and_slope = 0
    for _ in range(300):
        mf = int(rng.integers(2, 30))
        P = rng.choice([-1.0, -0.5, -0.25, 0.25, 0.5, 1.0], size=(mf, 1))
        hn = rng.choice([0.5, 1.0], size=mf)
        cplus = rng.choice([-1.0, 0.0, 1.0, 2.0], size=mf)
        cminus = rng.choice([-1.0, 0.0, 1.0, 2.0], size=mf)
        signs = np.zeros(mf, dtype=np.int8)
        fixed = rng.random(mf) < 0.2
        signs[fixed] = rng.choice([-1, 1], size=int(fixed.sum()))
        beta = np.ones(1)
        n, alpha, L_hat = 40, 2.0, 1.0
        m, L_max = float(rng.choice([0.5, 0.6, 0.875, 1.0])), L_hat + 1.0 / alpha
        Cfix = float(rng.integers(-3, 4))
        pick = np.empty(1, dtype=np.int64)
        U = _bound_of(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_max, True, np.empty(mf),
                      np.empty(mf), tmp_k=np.empty(mf, dtype=np.int64), pick=pick)
        ref_U, ref_pick = _reference_bound(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_max)
        assert U == ref_U
        assert pick[0] == ref_pick
        d = (P[:, 0] ** 2 / hn)[signs == 0]
        flat_and_slope += bool(np.any(m + d <= L_hat) and np.any((m + d > L_hat) & (m + d < L_max)))
    assert flat_and_slope > 100


def test_the_plain_bound_picks_nothing():
    rng = np.random.default_rng(9_500)
    P, hn, cplus, cminus, signs, beta = _node(rng, 12, 3)
    pick = np.full(1, 7, dtype=np.int64)
    _bound_of(P, hn, cplus, cminus, signs, 0.0, beta, 0.8, 50, 2.0, 1.0, 1.5, False, np.empty(12), np.empty(12),
              tmp_k=np.empty(12, dtype=np.int64), pick=pick)
    assert pick[0] == -1


def _problem(seed, n=60):
    rng = np.random.default_rng(9_600 + seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 2.0 * rng.normal(size=n) > 0, 1.0, -1.0)
    design = np.column_stack([np.ones(n), X])
    counts = rng.multinomial(n, np.ones(n) / n).astype(float)
    return design, y, counts


def test_the_search_branches_on_the_bounds_picks():
    """Squared loss: "critical" and "dearest" reach the same Q^(b) by different trees, and a search
    stopped half way holds, for its open solved nodes, the pick of each: a free point, or -1 where no
    flip raises the bound (its largest value is the node's own count, at its minimum)."""
    differ = 0
    picked = []
    for seed in range(6):
        design, y, counts = _problem(seed)
        beta = np.linalg.lstsq(design, y, rcond=None)[0]
        eng = ReplicateEngine(design, y, SquaredLoss())
        crit = eng.search(counts, beta, 60.0, SearchOptions(branching="critical"))
        dear = eng.search(counts, beta, 60.0, SearchOptions(branching="dearest"))
        assert crit.status == dear.status == "exact" and abs(crit.value - dear.value) <= 1e-12
        differ += crit.nodes != dear.nodes
        if crit.nodes < 20:
            continue
        cut = eng.search(counts, beta, 60.0, SearchOptions(branching="critical", max_nodes=crit.nodes // 2))
        pool, cnt = cut.state.arrays[0], cut.state.arrays[1]
        open_solved = [v for v in pool.heap_ids[:cnt[core.HSIZE]] if pool.solved[v]]
        assert open_solved
        picks = pool.branch_on[open_solved]
        assert all(pool.signs[v, j] == 0 for v, j in zip(open_solved, picks) if j >= 0)
        picked += list(picks >= 0)
    assert differ >= 3
    assert len(picked) >= 10 and np.mean(picked) >= 0.5, picked
