"""Many smooth fits at once (``cudbound/optim/smooth_parts.py``): damped Newton against scipy's
trust-region Newton on the same objectives, its statuses on degenerate parts, and the
non-separation certificate against the separation linear program it stands in for."""
import numpy as np
import pytest
import scipy.optimize

from cudbound.losses import ExponentialLoss, LogisticLoss
from cudbound.optim.smooth import separation
from cudbound.optim.smooth_parts import (CONVERGED, SEPARATES, StackedParts, newton_parts, positive_definite_parts,
                                         separation_excluded)
from reference_losses import RefLoss


def _objective(Z, y, w, M, kind):
    """F(g) = (1/n) sum w_i l(y_i z_i'g) + |M g|^2, its gradient and Hessian, from the tests' own losses."""
    n = len(y)
    M = np.zeros((0, Z.shape[1])) if M is None else M

    ref = RefLoss(kind, "smooth")

    def f(g):
        return w @ ref.l(y, Z @ g) / n + np.sum((M @ g) ** 2)

    def grad(g):
        return Z.T @ (w * ref.d(y, Z @ g)[0]) / n + 2 * M.T @ (M @ g)

    def hess(g):
        return Z.T @ (Z * (w * ref.d(y, Z @ g)[1])[:, None]) / n + 2 * M.T @ M
    return f, grad, hess


def _reference(Z, y, w, M, kind):
    """scipy's trust-exact to its tightest tolerance, then Newton steps to rounding."""
    f, grad, hess = _objective(Z, y, w, M, kind)
    g = scipy.optimize.minimize(f, np.zeros(Z.shape[1]), jac=grad, hess=hess, method="trust-exact",
                                options={"gtol": 1e-13, "maxiter": 2000}).x
    for _ in range(3):
        g = g - np.linalg.solve(hess(g), grad(g))
    return g


def _problem(seed, n=40, p=4):
    rng = np.random.default_rng(seed)
    Z = np.column_stack([np.ones(n), rng.normal(size=(n, p - 1)) * [1.0, 3.0, 0.3][: p - 1]])
    y = np.where(Z[:, 1] + 1.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    W = rng.multinomial(n, np.ones(n) / n, size=12).astype(float)
    return rng, Z, y, W


@pytest.mark.parametrize("kind, penalty", [("logistic", None), ("logistic", "ridge"), ("exponential", None),
                                           ("exponential", "dense")])
def test_newton_on_stacked_parts_reaches_scipys_minimisers(kind, penalty):
    """Bootstrap parts on a shared design, with no penalty, a ridge penalty sparing the intercept or a dense
    factor M: every part converges, to scipy's minimiser within 1e-9 of its scale."""
    rng, Z, y, W = _problem(3)
    p = Z.shape[1]
    M = None if penalty is None else (np.sqrt(0.05) * np.eye(p)[1:] if penalty == "ridge"
                                      else 0.1 * rng.normal(size=(p, p)))
    loss = LogisticLoss() if kind == "logistic" else ExponentialLoss()
    gamma, status = newton_parts(StackedParts(Z, y, W, M, loss), np.zeros((len(W), p)))
    assert np.all(status == CONVERGED)
    for g, w in zip(gamma, W):
        ref = _reference(Z, y, w, M, kind)
        np.testing.assert_allclose(g, ref, rtol=0, atol=1e-9 * max(1.0, np.abs(ref).max()))


def test_each_part_may_have_its_own_design_and_penalty():
    """A (G, n, p) stack of designs and (G, k, p) factors, warm-started anywhere: the same minimisers as scipy."""
    rng, Z, y, W = _problem(8)
    G, p = len(W), Z.shape[1]
    Zs = np.stack([Z @ np.linalg.qr(rng.normal(size=(p, p)))[0] for _ in range(G)])
    Ms = np.stack([np.sqrt(rng.uniform(0.01, 1.0)) * np.eye(p)[rng.permutation(p)[:2]] for _ in range(G)])
    gamma, status = newton_parts(StackedParts(Zs, y, W, Ms, LogisticLoss()), rng.normal(size=(G, p)))
    assert np.all(status == CONVERGED)
    for g, Zg, Mg, w in zip(gamma, Zs, Ms, W):
        ref = _reference(Zg, y, w, Mg, "logistic")
        np.testing.assert_allclose(g, ref, rtol=0, atol=1e-9 * max(1.0, np.abs(ref).max()))


def test_degenerate_parts_are_reported_not_solved():
    """A part on two distinct rows (a singular Hessian for an unpenalised loss) never comes back as converged;
    a separable part leaves as SEPARATES when asked (without, its iterates run off until the loss is below
    rounding, and whether it has a minimiser is the caller's question: separation_excluded)."""
    _, Z, y, W = _problem(5)
    n = len(y)
    W = W[:3].copy()
    W[0] = 0.0
    W[0, [int(np.flatnonzero(y > 0)[0]), int(np.flatnonzero(y < 0)[0])]] = n / 2   # two rows, p = 4
    order = np.argsort(Z[:, 1])
    W[1] = 0.0
    W[1, order[:5]] = np.where(y[order[:5]] < 0, 1.0, 0.0)
    W[1, order[-5:]] = np.where(y[order[-5:]] > 0, 1.0, 0.0)                         # separable by column 1
    assert np.any(W[1] * (y > 0)) and np.any(W[1] * (y < 0))
    parts = StackedParts(Z, y, W, None, LogisticLoss())
    _, status = newton_parts(parts, np.zeros((3, 4)))
    assert status[0] != CONVERGED and status[2] == CONVERGED
    _, status = newton_parts(parts, np.zeros((3, 4)), stop_separating=True)
    assert status[1] == SEPARATES


def test_positive_definite_parts_is_the_eigenvalue_rule():
    rng = np.random.default_rng(2)
    H = []
    for k in range(40):
        V = np.linalg.qr(rng.normal(size=(5, 5)))[0]
        ev = np.exp(rng.uniform(-6, 0, size=5))
        ev[0] = 10.0 ** -rng.uniform(6, 10) if k % 2 else ev[0]
        H.append(V @ np.diag(ev) @ V.T)
    H = np.array(H)
    ev = np.linalg.eigvalsh(H)
    np.testing.assert_array_equal(positive_definite_parts(H), ev[:, 0] > 1e-8 * ev[:, -1])


def _lp_separates(rows, w):
    """Whether separation's linear program (rows y_i z_i, every direction free) separates a point."""
    mask, _ = separation(rows, np.ones(len(w)), w, np.eye(rows.shape[1]))
    return mask.any()


@pytest.mark.parametrize("seed", range(4))
def test_a_certified_part_is_one_the_linear_program_finds_unseparable(seed):
    """Random small parts, many of them separable (Newton, not stopped, runs their loss down to rounding and
    calls them converged): wherever the certificate holds, separation's linear program finds nothing, so every
    separable part is refused; and nearly every converged part the program finds unseparable is certified (the
    certificate is not vacuous)."""
    rng = np.random.default_rng(seed)
    n, p = 14, 3
    Z = np.column_stack([np.ones(n), rng.normal(size=(n, p - 1))])
    y = np.where(Z[:, 1] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    W = rng.multinomial(n, np.ones(n) / n, size=60).astype(float)
    parts = StackedParts(Z, y, W, None, LogisticLoss())
    gamma, status = newton_parts(parts, np.zeros((len(W), p)))
    c1, _ = parts.derivatives(gamma)
    rows = Z * y[:, None]
    certified = separation_excluded(rows, W, -c1 * y)
    separable = np.array([_lp_separates(rows, w) for w in W])
    assert not np.any(certified & separable)
    assert np.any(separable & (status == CONVERGED)) and np.any(~separable & (status == CONVERGED))
    assert certified[(status == CONVERGED) & ~separable].mean() > 0.9


def test_one_free_direction_is_certified_by_both_signs_alone():
    """With one unpenalised direction (the intercept of a ridge loss) the rows are +-|a_i|: any part holding both
    signs is certified whatever the multipliers (even one of 1e-300), a part of one sign never."""
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2.0, size=10) * np.where(np.arange(10) % 3, 1.0, -1.0)
    W = np.ones((3, 10))
    W[1, a < 0] = 0.0
    lam = np.full((3, 10), 1e-3)
    lam[:, 0] = 1e-300
    assert separation_excluded(a[:, None], W, lam).tolist() == [True, False, True]
