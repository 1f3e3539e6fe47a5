"""The dual active-set QP of the search (``node_qp._gi_ws``, Goldfarb & Idnani 1983) against
independent answers.

- the node QP  min (x - x0)'Q(x - x0)  s.t.  s_k phi_k'x >= 0: the answer must be feasible and
  optimal by its own KKT conditions (multipliers >= 0 on the rows it calls active, those rows at 0,
  the gradient in their cone), and its value must equal scipy's SLSQP minimum on small problems;
- the active rows' products kept between steps equal those formed again, bit for bit, with one
  workspace over many solves as the search uses it;
- warm starts as the search makes them: the parent's answer (x, active set, multipliers) with one
  more row fixed, which must give the answer of a cold start. Rows of the warm start must be dropped
  on the way in some of these problems (the path that keeps N, Qinv N and N'Qinv N in step);
- the feasibility QP (rhs 1 on the rows of sign -1): infeasible exactly when HiGHS finds no
  feasible point of the same rows.
"""
import numpy as np
import pytest
from scipy.optimize import linprog, minimize

from cudbound.search.codes import QP_INFEASIBLE, QP_OPTIMAL
from cudbound.search.node_qp import _build_rows, _gi_ws, _workspace


def _problem(rng, m, p):
    P = rng.standard_normal((m, p))
    P[:, 0] = 1.0
    A = rng.standard_normal((p, p))
    Q = A @ A.T + 0.1 * np.eye(p)
    x0 = rng.standard_normal(p) * 2.0
    return P, np.linalg.norm(P, axis=1), Q, x0


def _solve(Qinv, P, norms, signs, rhs_neg, x0, start=None):
    p = P.shape[1]
    if start is None:
        x, act, u, nact = x0.copy(), np.zeros(p, dtype=np.int64), np.zeros(p), 0
    else:
        x, act, u, nact = start[0].copy(), start[1].copy(), start[2].copy(), start[3]
    st, nact = _gi_ws(Qinv, P, norms, signs, rhs_neg, x0, x, act, u, nact, _workspace(p))
    return st, x, act, u, nact


def _kkt(Q, P, signs, x0, x, act, u, nact, tol=1e-7):
    """Feasible, active rows at 0, u >= 0, and 2Q(x - x0) = sum_a u_a s_a phi_a (Qinv = Q^-1 / 2 below)."""
    scale = 1.0 + np.abs(x).max()
    fixed = signs != 0
    assert np.all(signs[fixed] * (P[fixed] @ x) >= -tol * scale * np.linalg.norm(P[fixed], axis=1))
    rows = act[:nact]
    assert np.all(u[:nact] >= -tol)
    assert np.allclose(P[rows] @ x, 0.0, atol=tol * scale)
    grad = 2.0 * Q @ (x - x0)
    assert np.allclose(grad, (signs[rows, None] * P[rows]).T @ u[:nact], atol=tol * (1.0 + np.abs(grad).max()))


def test_the_node_qp_is_optimal_and_agrees_with_slsqp():
    compared = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        m, p = int(rng.integers(3, 25)), int(rng.integers(2, 11))
        P, norms, Q, x0 = _problem(rng, m, p)
        Qinv = 0.5 * np.linalg.inv(Q)
        # signs of a realisable pattern (a random classifier's), a few left free
        signs = np.where(P @ rng.standard_normal(p) >= 0.0, 1, -1).astype(np.int8)
        signs[rng.random(m) < 0.2] = 0
        st, x, act, u, nact = _solve(Qinv, P, norms, signs, 0.0, x0)
        assert st == QP_OPTIMAL
        _kkt(Q, P, signs, x0, x, act, u, nact)
        fixed = np.flatnonzero(signs)
        ref = minimize(lambda z: (z - x0) @ Q @ (z - x0), np.zeros(p), jac=lambda z: 2.0 * Q @ (z - x0),
                       method="SLSQP", options={"ftol": 1e-12, "maxiter": 2000},
                       constraints=[{"type": "ineq", "fun": lambda z, k=k: signs[k] * (P[k] @ z),
                                     "jac": lambda z, k=k: signs[k] * P[k]} for k in fixed])
        if not ref.success or np.any(signs[fixed] * (P[fixed] @ ref.x) < -1e-9 * (1.0 + np.abs(ref.x).max())):
            continue   # SLSQP's own failure: no reference for this problem
        value = (x - x0) @ Q @ (x - x0)
        assert value <= ref.fun + 1e-7 * (1.0 + abs(ref.fun))   # SLSQP's point is feasible: x is no worse
        assert value >= ref.fun - 1e-6 * (1.0 + abs(ref.fun))
        compared += 1
    assert compared >= 30


def test_the_kept_products_are_those_formed_again_to_the_last_bit():
    """One workspace for a sequence of solves of different problems and starts, as a search reuses it for
    its node QPs and its feasibility QPs: after every solve that stepped, the active normals N, Qinv N
    and N'Qinv N it kept equal, bit for bit, those formed from its final active set (``_build_rows``).
    Small p reaches the vertex (p active rows) and the steps that must drop a row with no primal step."""
    vertices = 0
    checked = 0
    ws = None
    for seed in range(400):
        rng = np.random.default_rng(3000 + seed)
        m, p = int(rng.integers(4, 30)), int(rng.choice([2, 3, 5, 10]))
        if ws is None or ws[0].shape[0] != p:
            ws = _workspace(p)
        P, norms, Q, x0 = _problem(rng, m, p)
        feasibility = bool(rng.integers(2))
        Qinv, rhs, start = (np.eye(p), 1.0, np.zeros(p)) if feasibility else (0.5 * np.linalg.inv(Q), 0.0, x0)
        signs = np.where(P @ rng.standard_normal(p) >= 0.0, 1, -1).astype(np.int8)
        signs[rng.random(m) < 0.3] = 0
        x, act, u = start.copy(), np.zeros(p, dtype=np.int64), np.zeros(p)
        stepped = np.any(signs * (P @ x) - np.where(signs < 0, rhs, 0.0) < 0.0)
        st, nact = _gi_ws(Qinv, P, norms, signs, rhs, start, x, act, u, 0, ws)
        if st != QP_OPTIMAL or not stepped or nact == 0:
            continue
        N, QN, Mk = np.empty((p, p)), np.empty((p, p)), np.empty((p, p))
        _build_rows(Qinv, P, signs, act, nact, N, QN, Mk, p)
        assert np.array_equal(ws[2][:, :nact], N[:, :nact])
        assert np.array_equal(ws[3][:, :nact], QN[:, :nact])
        assert np.array_equal(ws[11][:nact, :nact], Mk[:nact, :nact])
        checked += 1
        vertices += nact == p
    assert checked >= 150
    assert vertices >= 10


def test_warm_starts_with_one_more_row_give_the_cold_answer_and_drop_rows_on_the_way():
    """As the search solves a flip child: the parent's answer with one free point fixed to the sign
    its minimiser did not give it. The warm and cold answers agree; some warm starts lose rows."""
    dropped = 0
    solved = 0
    for seed in range(300):
        rng = np.random.default_rng(1000 + seed)
        m, p = int(rng.integers(6, 40)), int(rng.integers(2, 11))
        P, norms, Q, x0 = _problem(rng, m, p)
        Qinv = 0.5 * np.linalg.inv(Q)
        signs = np.where(P @ rng.standard_normal(p) >= 0.0, 1, -1).astype(np.int8)
        free = rng.random(m) < 0.4
        signs[free] = 0
        st, x, act, u, nact = _solve(Qinv, P, norms, signs, 0.0, x0)
        assert st == QP_OPTIMAL
        cand = np.flatnonzero(free)
        if cand.size == 0:
            continue
        k = int(cand[rng.integers(cand.size)])
        child = signs.copy()
        child[k] = -1 if P[k] @ x >= 0.0 else 1          # the flip child: its new row is violated at x
        parent_rows = set(act[:nact].tolist())
        st_w, xw, aw, uw, nw = _solve(Qinv, P, norms, child, 0.0, x0, start=(x, act, u, nact))
        st_c, xc, ac, uc, nc = _solve(Qinv, P, norms, child, 0.0, x0)
        assert st_w == st_c
        if st_w != QP_OPTIMAL:
            continue
        solved += 1
        _kkt(Q, P, child, x0, xw, aw, uw, nw)
        scale = 1.0 + np.abs(xc).max()
        assert np.allclose(xw, xc, atol=1e-7 * scale)
        dropped += bool(parent_rows - set(aw[:nw].tolist()))
    assert solved >= 250
    assert dropped >= 10


@pytest.mark.parametrize("seed", range(60))
def test_the_feasibility_qp_is_infeasible_exactly_when_the_lp_is(seed):
    rng = np.random.default_rng(500 + seed)
    m, p = int(rng.integers(4, 30)), int(rng.integers(2, 6))
    P = rng.standard_normal((m, p))
    P[:, 0] = 1.0
    norms = np.linalg.norm(P, axis=1)
    if seed % 2:   # a realisable pattern, then a few signs changed
        signs = np.where(P @ rng.standard_normal(p) >= 0.0, 1, -1).astype(np.int8)
        flip = rng.random(m) < 0.15
        signs[flip] = -signs[flip]
    else:
        signs = rng.choice(np.array([-1, 1], dtype=np.int8), size=m)
    st, x, act, u, nact = _solve(np.eye(p), P, norms, signs, 1.0, np.zeros(p))
    # phi'x >= 0 (s = +1), phi'x <= -1 (s = -1): A_ub x <= b_ub
    A_ub = -signs[:, None] * P
    b_ub = np.where(signs < 0, -1.0, 0.0)
    lp = linprog(np.zeros(p), A_ub=A_ub, b_ub=b_ub, bounds=[(None, None)] * p, method="highs")
    assert lp.status in (0, 2)
    assert (st == QP_INFEASIBLE) == (lp.status == 2)
    if st == QP_OPTIMAL:
        assert np.all(A_ub @ x <= b_ub + 1e-8 * (1.0 + np.abs(x).max()))
