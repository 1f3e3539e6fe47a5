"""The chain of bounds (``bounds._chain``, ``core._chained``, ``SearchOptions.bound_chain``): a node of
a quadratic or self-concordant loss's search works out the bounds and picks of its next descendants that
keep its minimiser, and each such child takes them instead of computing its flip costs again. They must
be exactly what ``bounds._bound`` gives at that descendant, so that the search visits the same nodes for
every chain length."""
import numpy as np
import pytest

from cudbound.engine import ReplicateEngine
from cudbound.fit import fit_coefficients
from cudbound.losses import SquaredLoss, get_loss
from cudbound.search import SearchOptions
from cudbound.search.bounds import _bound


def _quadratic_node(rng, mf, p, ties):
    """A random node of a quadratic loss: points (a third repeating another, or, with ``ties``, on a small
    grid, so that flip costs and count changes tie), the metric H, the unconstrained minimiser beta_u with
    loss L_u, a minimiser beta with minimum m >= L_u, fixed points and, among them, active rows."""
    if ties:
        P = rng.choice([-1.0, -0.5, 0.5, 1.0], size=(mf, p))
    else:
        P = rng.standard_normal((mf, p))
        for k in range(mf):
            if rng.random() < 0.3:
                P[k] = P[int(rng.integers(0, mf))]
    A = rng.standard_normal((p, p))
    H = A @ A.T + 0.5 * np.eye(p)
    Hinv = np.linalg.inv(H)
    cplus = rng.choice([-1.0, 0.0, 1.0, 2.0], size=mf)
    cminus = rng.choice([-1.0, 0.0, 1.0, 2.0], size=mf)
    signs = np.zeros(mf, dtype=np.int8)
    fixed = rng.random(mf) < 0.25
    signs[fixed] = rng.choice([-1, 1], size=int(fixed.sum()))
    beta_u = rng.standard_normal(p) * 0.2
    beta = beta_u + rng.standard_normal(p) * 0.2
    L_u = float(rng.uniform(0.3, 0.6))
    m = L_u + float((beta - beta_u) @ H @ (beta - beta_u))
    fixed_idx = np.flatnonzero(fixed)
    act = np.zeros(p, dtype=np.int64)
    nact = int(rng.integers(0, min(p - 1, fixed_idx.size) + 1)) if fixed_idx.size else 0
    act[:nact] = rng.permutation(fixed_idx)[:nact]
    return P, H, Hinv, cplus, cminus, signs, beta_u, beta, L_u, m, act, nact


def _bound_at(node, signs, Cfix, n, alpha, L_hat, cut, K, sc_r=0.0):
    """``bounds._bound`` of the node with these signs (the cone's rows included; a quadratic loss's gradient
    term, or with ``sc_r`` > 0 a self-concordant loss's flip cost, H then its Hessian), with a pick and a chain
    of K: (bound, pick, chain, chain's picks)."""
    P, H, Hinv, cplus, cminus, _, beta_u, beta, L_u, m, act, nact = node
    mf, p = P.shape
    hn = np.einsum("ij,jk,ik->i", P, Hinv, P)
    pick = np.empty(1, dtype=np.int64)
    chain, chain_pick = np.empty(K), np.empty(K, dtype=np.int64)
    tu = P @ beta_u if sc_r == 0.0 else np.zeros(0)
    W = np.zeros((mf, p))
    W[act[:nact]] = (P @ Hinv)[act[:nact]]   # only the active rows are read (a smooth loss fills only those)
    U = _bound(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_hat + 1.0 / alpha, True, np.empty(mf),
               np.empty(mf), 0.0, tu, L_u, sc_r, W, act, nact, np.empty((p, p)), np.empty((p, p)),
               np.empty(p), np.empty(p), np.empty(mf, dtype=np.int64), pick, cut, np.empty(mf, dtype=np.int64),
               chain, chain_pick)
    return U, int(pick[0]), chain, chain_pick


@pytest.mark.parametrize("sc_r", [0.0, 0.7])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_a_chain_is_what_the_bound_gives_down_the_line_of_children_that_keep_the_minimiser(seed, ties, sc_r):
    """Random nodes: each step of the chain equals, to the last bit, the bound and pick that ``_bound``
    computes at the descendant that fixes the picks so far on their sides at the minimiser (its count moves
    from the free points to the fixed ones); the chain stops where that descendant has no pick, and a chain
    of any length starts the same. A quadratic loss (sc_r = 0) and a self-concordant one (sc_r > 0: the flip
    costs of ``bounds._flip_d``, the cone's through ``bounds._cone_hn``)."""
    rng = np.random.default_rng(9_900 + 10 * seed + ties + 100 * (sc_r > 0))
    K = 6
    steps = stops = 0
    for _ in range(150):
        mf, p = int(rng.integers(3, 40)), int(rng.integers(2, 5))
        node = _quadratic_node(rng, mf, p, ties)
        P, beta, cplus, cminus = node[0], node[7], node[3], node[4]
        n, alpha = 50, float(rng.choice([2.0, 8.0]))
        L_hat = node[9] + float(rng.uniform(-0.1, 0.4))
        Cfix = float(rng.integers(-3, 4))
        cut = float(rng.choice([-np.inf, 0.02, 0.05]))
        signs = node[5].copy()
        U, pick, chain, chain_pick = _bound_at(node, signs, Cfix, n, alpha, L_hat, cut, K, sc_r)
        U_short, pick_short, chain_short, _ = _bound_at(node, signs, Cfix, n, alpha, L_hat, cut, 2, sc_r)
        assert (U_short, pick_short) == (U, pick) and np.array_equal(chain_short, chain[:2], equal_nan=True)
        U_none, pick_none, _, _ = _bound_at(node, signs, Cfix, n, alpha, L_hat, cut, 0, sc_r)
        assert (U_none, pick_none) == (U, pick)
        if pick < 0:
            assert np.isnan(chain).all() and (chain_pick == -1).all()
            continue
        k = pick
        for step in range(K):
            t = float(P[k] @ beta)
            signs[k] = 1 if t >= 0.0 else -1
            Cfix += cplus[k] if t >= 0.0 else cminus[k]
            U_k, pick_k, _, _ = _bound_at(node, signs, Cfix, n, alpha, L_hat, cut, 0, sc_r)
            assert chain[step] == U_k and chain_pick[step] == pick_k, (step, chain, chain_pick, U_k, pick_k)
            steps += 1
            if pick_k < 0:
                assert np.isnan(chain[step + 1:]).all() and (chain_pick[step + 1:] == -1).all()
                stops += 1
                break
            k = pick_k
    assert steps > 300 and stops > 10, (steps, stops)


def _replicate(seed, n, p):
    rng = np.random.default_rng(9_950 + seed)
    X = rng.normal(size=(n, p - 1))
    y = np.where(X[:, 0] + 1.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    design = np.column_stack([np.ones(n), X])
    counts = rng.multinomial(n, np.ones(n) / n).astype(float)
    return design, y, counts


@pytest.mark.parametrize("loss", ["squared", "logistic"])
@pytest.mark.parametrize("seed,n,p", [(0, 40, 3), (1, 60, 4), (2, 80, 5), (3, 120, 3)])
def test_the_search_visits_the_same_nodes_whatever_the_chain(seed, n, p, loss):
    """Squared and logistic loss: the same value, nodes, solves and prunes with no chain, a chain of 1 and the
    default; and searches stopped by their node budget and resumed (the chains kept in the state's node pool)
    stop and end at the same places with a chain as without."""
    design, y, counts = _replicate(seed, n, p)
    if loss == "squared":
        beta, lf = np.linalg.lstsq(design, y, rcond=None)[0], SquaredLoss()
    else:
        lf = get_loss(loss)
        beta = fit_coefficients(design, y, lf)
    # a fresh engine each time: an engine's first search of a replicate also counts its screening's solves
    outs = [ReplicateEngine(design, y, lf).search(counts, beta, float(n), SearchOptions(bound_chain=K))
            for K in (0, 1, 4)]
    for out in outs:
        assert out.status == "exact"
        assert (out.value, out.nodes, out.solves, out.pruned) == (outs[0].value, outs[0].nodes, outs[0].solves,
                                                                   outs[0].pruned)
    assert outs[0].nodes > 20
    trails = []
    chains = 0   # finite chain entries in the kept node pools: the chains are built (K = 4)
    for K in (0, 4):
        eng = ReplicateEngine(design, y, lf)
        state, trail = None, []
        while True:
            out = eng.search(counts, beta, float(n), SearchOptions(max_nodes=max(7, outs[0].nodes // 10),
                                                                   bound_chain=K, resume=state))
            trail.append((out.status, out.value, out.nodes, out.solves))
            if out.status != "budget":
                break
            state = out.state
            assert state is not None
            chains += int(np.isfinite(state.arrays[0].chain).sum())
        trails.append(trail)
    assert trails[0] == trails[1] and len(trails[0]) > 2 and trails[0][-1][:2] == ("exact", outs[0].value)
    assert chains > 0


@pytest.mark.parametrize("bad,error", [(-1, ValueError), (1.5, ValueError), (True, ValueError)])
def test_bound_chain_is_a_count(bad, error):
    with pytest.raises(error, match="bound_chain"):
        SearchOptions(bound_chain=bad)
