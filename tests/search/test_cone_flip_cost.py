"""The cone flip cost of a quadratic loss (``bounds._cone_setup`` and ``bounds._cone_flip``).

At a node with minimiser b_m whose active rows A (the fixed points held at phi'b_m = 0) stay
met by every classifier of the node, giving free point k the other sign costs at least
r^2 / |f + A'nu|^2_{H^-1} for any nu >= 0 (weak duality; f = -sign(t) phi_k, r = |t|). Checked
against brute-force enumeration (``reference_losses.ref_details``: the least loss of every
realisable sign pattern) on random nodes of random small problems, and it must say more than
the plain flip cost t^2 / (phi_k'H^-1 phi_k) somewhere.
"""
import numpy as np
import pytest

from cudbound.search.bounds import _cone_flip, _cone_setup
from cudbound.search.node_qp import _gi_ws, _workspace
from reference_losses import RefLoss, ref_details

SQUARED = RefLoss("squared", "quadratic")


def _problem(rng, kind):
    for _ in range(1000):
        n, p = int(rng.integers(7, 11)), int(rng.choice([2, 3]))
        F = rng.standard_normal((n, p - 1)) * rng.choice([0.01, 1.0, 50.0]) + rng.choice([0.0, 100.0])
        if kind == "near_duplicates":  # nearly parallel hyperplanes: rows in pairs 1e-5 apart (closer
            # pairs defeat the reference's realisability LP)
            F[1::2] = F[0:-1:2] * (1.0 + 1e-5 * rng.standard_normal(F[1::2].shape))
        design = np.column_stack([np.ones(n), F])
        y = np.where(F @ rng.standard_normal(p - 1) + 0.5 * np.std(F) * rng.standard_normal(n) >= np.median(F[:, 0]),
                     1.0, -1.0)
        counts = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
        if len(np.unique(y)) < 2 or np.linalg.matrix_rank(design) < p or np.linalg.matrix_rank(design[counts > 0]) < p:
            continue
        return design, y, counts
    raise RuntimeError("no problem found")


def _node_minimiser(P, norms, signs, d, beta_u, Hinv, warm):
    """The node's QP minimiser and active set: from scratch, or (``warm``) as the search gets it,
    warm-started from the parent's (the node without its last fixed point). None when the QP does
    not solve it (the search then hands the node to its fallback solver, with no active set)."""
    p = P.shape[1]
    x, act, u = beta_u.copy(), np.zeros(p, dtype=np.int64), np.zeros(p)
    na = 0
    if warm:
        parent = signs.copy()
        parent[d - 1] = 0
        st, na = _gi_ws(0.5 * Hinv, P, norms, parent, 0.0, beta_u, x, act, u, 0, _workspace(p))
        if st != 0:
            return None
    st, na = _gi_ws(0.5 * Hinv, P, norms, signs, 0.0, beta_u, x, act, u, na, _workspace(p))
    return (x, act, na) if st == 0 else None


@pytest.mark.parametrize("kind, warm", [("gaussian", False), ("gaussian", True), ("near_duplicates", True)])
def test_the_cone_flip_cost_is_below_the_enumerated_flip_cost(kind, warm):
    """Random nodes of random problems (features of any scale and origin; or rows in nearly equal
    pairs, whose hyperplanes are nearly parallel), the node's active set from a cold QP or, as in
    the search, warm-started from its parent's."""
    rng = np.random.default_rng(4_400_000 + 10 * ("gaussian", "near_duplicates").index(kind) + warm)
    checked = improved = 0
    for _ in range(40):
        design, y, counts = _problem(rng, kind)
        n, p = design.shape
        det = ref_details(SQUARED, design, y, counts)
        S, pats, m_pat = det.S, det.patterns, det.m
        Q = np.linalg.qr(design)[0]  # the coordinates of ref_details' least squares
        H = (Q.T * counts) @ Q / n
        beta_u = np.linalg.solve(H, (Q.T * counts) @ y / n)
        L_u = float(np.dot(counts, (y - Q @ beta_u) ** 2) / n)
        Hinv = np.linalg.inv(H)
        P = np.ascontiguousarray(Q[S])
        norms = np.linalg.norm(P, axis=1)
        W = P @ Hinv
        hn = np.einsum("ij,ij->i", W, P)
        for _node in range(6):
            d = int(rng.integers(1, len(S)))
            s = pats[int(rng.integers(0, len(pats)))]
            agree = np.all(pats[:, :d] == s[:d], axis=1)
            signs = np.zeros(len(S), dtype=np.int8)
            signs[:d] = s[:d]
            node = _node_minimiser(P, norms, signs, d, beta_u, Hinv, warm)
            if node is None:
                continue
            x, act, na = node
            m = L_u + (x - beta_u) @ H @ (x - beta_u)
            assert abs(m - m_pat[agree].min()) <= 1e-8 * max(1.0, m)
            M, Lm = np.empty((p, p)), np.empty((p, p))
            k_act = _cone_setup(P, W, signs, act, na, M, Lm)
            for k in range(d, len(S)):
                t = float(P[k] @ x)
                other = agree & (pats[:, k] == (-1.0 if t >= 0.0 else 1.0))
                if not other.any():
                    continue
                exact = m_pat[other].min() - m
                bound = _cone_flip(P, W, signs, act, k_act, M, Lm, k, t, hn[k], np.empty(p), np.empty(p))
                assert bound <= exact + 1e-9 * max(1.0, m), (bound, exact)
                assert bound >= t * t / hn[k] * (1.0 - 1e-12)
                checked += 1
                improved += bound > 1.01 * t * t / hn[k] + 1e-12
    assert checked > 150
    assert improved > 0.05 * checked, (improved, checked)  # the active rows say something
