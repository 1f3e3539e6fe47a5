"""cudbound/search/smooth_node_solver.py: the one SQP iteration (``_sqp``), compiled for a built-in loss and run
in Python for any other loss, gives the same answer on every built-in loss the smooth solver accepts.

Compiled, the loss is evaluated by compiled loops (``_pointwise_eval``); in Python, by the loss's own NumPy methods
(an ``_Objective`` built with kind None, as for a user's loss). The two evaluations differ by round-off, about
1e-16 of the size of the terms summed; the minimiser moves by that over the smallest eigenvalue of the Hessian,
and the value is pinned as far as the stopping rule pins it: the iteration stops when the predicted decrease
-g'd is below round-off, and that decrease is itself computed only to about 1e-16 times the Hessian's condition
number. Measured over 5,328 cases (200 seeds per loss): the minimiser at most 1.1e-11 apart (relative to
max(1, |x|)) and the value 1.3e-12 (relative to max(1, |L|)), both on one unpenalised logistic loss whose Hessian
has condition number 5e6 (the compiled form stopped on a predicted decrease of -1.4e-12); on every other case
below 2.3e-13 and 1e-13. So the value is checked to 1e-11, the status and the active set exactly; a change of one
line of either evaluation moves them by more.

Since 2026-12-04 (twenty-fifth sitting) an iterate certified as it stands is the answer, without the last step
to the model's point z, and the stopping rule pins the minimiser only to |x - z|_H <= (-g'd)^(1/2), about 3e-8
over the root of the Hessian's least eigenvalue: where one form keeps its iterate and the other steps (or the
two stop one iteration apart), the minimisers differ by that much. Measured over the 1,068 cases below (40 seeds
per loss): the values at most 4.7e-15 apart, the minimisers 1.6e-15 in 99% of the cases and at most 5.3e-8. So
the minimisers are checked to 1e-6 each, and to 1e-9 in 95% of a loss's cases. The same function run in Python
with the compiled evaluation gave the compiled answers to the last bit on every case (checked to 1e-12: only the
dot products of numba and NumPy may round apart).

Each case: a random design (intercept + Gaussian features, n in 8..20, p in 2..4), random bootstrap counts, 1 to 3
random rows of the design with random signs as the cone G b >= 0, and a start that is feasible (0), infeasible as
the search's flip children are (the unconstrained minimiser, when there is one, each row's sign against its score
there), or random.
A cone in which the loss has no minimiser (``optim.smooth.separation`` finds points it separates along the
penalty's null space) is skipped: there both forms run off to infinity, and where they stop is not the iteration's
answer.
"""
import numpy as np
import pytest

from cudbound.design import loss_in_coordinates, reparametrise
from cudbound.losses import get_loss
from cudbound.optim.smooth import separation
from cudbound.search.smooth_node_solver import KIND_EXPONENTIAL, KIND_LOGISTIC, _builtin_kind, _evaluate, _Objective, \
    _sqp, _sqp_compiled

X_RTOL = 1e-6        # each minimiser (a certified iterate is kept: pinned to about 3e-8)
X_RTOL_MOST = 1e-9   # ... and in 95% of a loss's cases
F_RTOL = 1e-11
SAME_RTOL = 1e-12   # the compiled iteration and the same one run in Python, both with the compiled evaluation
SEEDS = 40

# every built-in loss: (its spec, whether carried to orthonormal coordinates (``design._PenalisedLoss``))
BUILTIN = {f"{base}{tail}{coords}": (f"{base}{spec}", bool(coords))
           for base in ("logistic", "exponential")
           for tail, spec in (("", ""), ("_ridge", "_ridge:0.05"), ("_ridge_all", "_ridge:0.05:all"))
           for coords in ("", "_in_coordinates") if tail or not coords}


def _loss(name, design):
    """(loss, the design it is evaluated on)."""
    spec, coords = BUILTIN[name]
    loss = get_loss(spec)
    if not coords:
        return loss, design
    rep = reparametrise(design)
    return loss_in_coordinates(loss, design, rep.T), rep.Z


def _run(sqp, model, G, x0):
    x = np.array(x0, dtype=float)
    act = np.zeros(len(x), dtype=np.int64)
    status, value, nact = sqp(model, G, np.linalg.norm(G, axis=1), x, 100, act, np.nan, np.zeros(0), np.zeros((0, 0)))
    return status, float(value), x, sorted(act[:nact].tolist())


def _cases(name):
    """(seed, loss, design, y, counts, G, start kind, x0) of the cases where the loss has a minimiser on the cone."""
    for seed in range(SEEDS):
        rng = np.random.default_rng(8_100_000 + 1000 * sorted(BUILTIN).index(name) + seed)
        n, p = int(rng.integers(8, 21)), int(rng.integers(2, 5))
        phi = np.column_stack([np.ones(n), rng.standard_normal((n, p - 1))])
        y = np.where(phi @ rng.standard_normal(p) + rng.standard_normal(n) >= 0, 1.0, -1.0)
        counts = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
        loss, design = _loss(name, phi)
        free = loss.unpenalised_directions(design)
        unconstrained = _run(_sqp_compiled, _Objective(loss, design, y, counts, _builtin_kind(loss)).model,
                             np.zeros((0, p)), np.zeros(p))
        separable = free.shape[1] > 0 and separation(design, y, counts, free)[0].any()
        for start in ("zero", "flip", "random"):
            rows = rng.choice(n, size=int(rng.integers(1, 4)), replace=False)
            signs = rng.choice([-1.0, 1.0], size=len(rows))
            x0 = rng.standard_normal(p) if start == "random" else np.zeros(p)
            if start == "flip":
                if separable:
                    continue  # no minimiser without constraints: no parent to flip from
                assert unconstrained[0] == 0
                x0 = unconstrained[2]
                signs = np.where(design[rows] @ x0 > 0, -1.0, 1.0)
            G = np.ascontiguousarray(design[rows] * signs[:, None])
            if free.shape[1] and separation(design, y, counts, free, G)[0].any():
                continue
            yield seed, loss, design, y, counts, G, start, x0


def test_every_builtin_loss_is_here():
    """The cases cover every (kind, penalised) that ``_builtin_kind`` distinguishes."""
    phi = np.column_stack([np.ones(6), np.arange(6.0)])
    kinds = {_builtin_kind(_loss(name, phi)[0]) for name in BUILTIN}
    assert kinds == {(k, pen) for k in (KIND_LOGISTIC, KIND_EXPONENTIAL) for pen in (False, True)}
    assert len(BUILTIN) == 10


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_compiled_and_python_forms_agree(name):
    counted = {"zero": 0, "flip": 0, "random": 0, "active": 0}
    apart = []
    for seed, loss, design, y, counts, G, start, x0 in _cases(name):
        kind = _builtin_kind(loss)
        compiled = _Objective(loss, design, y, counts, kind)
        python = _Objective(loss, design, y, counts, None)   # the loss's own methods, as for a user's loss
        assert python.model is python
        st_c, f_c, x_c, act_c = _run(_sqp_compiled, compiled.model, G, x0)
        st_p, f_p, x_p, act_p = _run(_sqp, python.model, G, x0)
        where = (name, seed, start)
        assert st_c == st_p == 0, where
        assert act_c == act_p, where
        apart.append(np.max(np.abs(x_c - x_p)) / max(1.0, np.max(np.abs(x_c))))
        assert apart[-1] <= X_RTOL, where
        assert abs(f_c - f_p) <= F_RTOL * max(1.0, abs(f_c)), where
        # the same source run in Python with the compiled evaluation: the two forms of the iteration alone
        st_s, f_s, x_s, act_s = _run(_sqp, compiled.model, G, x0)
        assert (st_s, act_s) == (st_c, act_c), where
        assert np.max(np.abs(x_s - x_c)) <= SAME_RTOL * max(1.0, np.max(np.abs(x_c))), where
        assert abs(f_s - f_c) <= SAME_RTOL * max(1.0, abs(f_c)), where
        # the answer: feasible, and the value is the loss's own at the minimiser
        assert np.all(G @ x_c >= -1e-9 * max(1.0, np.max(np.abs(x_c))) * np.linalg.norm(G, axis=1)), where
        assert abs(loss.value(design, y, counts, x_c) - f_c) <= F_RTOL * max(1.0, abs(f_c)), where
        counted[start] += 1
        counted["active"] += len(act_c) > 0
    assert min(counted.values()) >= 10, counted
    assert np.mean(np.array(apart) <= X_RTOL_MOST) >= 0.95, sorted(apart)[-5:]


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_a_start_with_its_derivatives_given_is_the_same_solve(name):
    """A child's SQP starts from its parent's minimiser with the parent's value, gradient and Hessian there
    (kept by the node pool: ``_sqp``'s f0, g0, H0) instead of evaluating them again. The same numbers in give
    the same iterates: the answer is the one without them, to the last bit; and the arrays given come back
    holding the gradient and Hessian at the answer (what the children of this node start from)."""
    counted = 0
    for seed, loss, design, y, counts, G, start, x0 in _cases(name):
        model = _Objective(loss, design, y, counts, _builtin_kind(loss)).model
        st, f, x, act = _run(_sqp_compiled, model, G, x0)
        p = len(x0)
        g0, H0 = np.empty(p), np.empty((p, p))
        f0 = _evaluate(model, np.array(x0, dtype=float), g0, H0, True)
        xg = np.array(x0, dtype=float)
        actg = np.zeros(p, dtype=np.int64)
        stg, fg, nactg = _sqp_compiled(model, G, np.linalg.norm(G, axis=1), xg, 100, actg, f0, g0, H0)
        where = (name, seed, start)
        assert (stg, float(fg), sorted(actg[:nactg].tolist())) == (st, f, act), where
        assert np.array_equal(xg, x), where
        g1, H1 = np.empty(p), np.empty((p, p))
        assert _evaluate(model, xg, g1, H1, True) == fg, where
        assert np.array_equal(g0, g1) and np.array_equal(H0, H1), where
        # without a value the start is evaluated as before, and the arrays are still filled at the answer
        g2, H2 = np.full(p, np.nan), np.empty((p, p))
        xn = np.array(x0, dtype=float)
        stn, fn, _ = _sqp_compiled(model, G, np.linalg.norm(G, axis=1), xn, 100, np.zeros(p, dtype=np.int64),
                                   np.nan, g2, H2)
        assert (stn, float(fn)) == (st, f) and np.array_equal(xn, x) and np.array_equal(g2, g1), where
        # and with a value the given derivatives are what the first model is built from (not evaluated)
        bad = np.full(p, np.nan)
        stb, _, _ = _sqp_compiled(model, G, np.linalg.norm(G, axis=1), np.array(x0, dtype=float), 100,
                                  np.zeros(p, dtype=np.int64), f0, bad, np.eye(p))
        assert stb == 2, where   # the model QP refuses a non-finite gradient
        counted += 1
    assert counted >= 30


def _kkt_reference(G, norms, x, g, act):
    """The certificate of ``_kkt_ok`` in NumPy, its multipliers by LAPACK's least squares."""
    from cudbound.search.smooth_node_solver import ACTIVE_TOL, CHECK_TOL
    xs = max(1.0, np.linalg.norm(x))
    if np.any(G @ x / norms < -CHECK_TOL * xs) or np.any(G[act] @ x / norms[act] > ACTIVE_TOL * xs):
        return False
    lam = np.linalg.lstsq(G[act].T, g, rcond=None)[0]
    bad = np.linalg.norm(g - G[act].T @ lam) + np.sum(np.maximum(-lam, 0.0) * norms[act])
    return bool(bad <= CHECK_TOL * max(1.0, np.linalg.norm(g)))


@pytest.mark.parametrize("seed", range(60))
def test_the_kkt_certificate_is_lapacks_on_independent_and_dependent_rows(seed):
    """``_kkt_ok`` finds its multipliers by a compiled least-squares solve, and by ``np.linalg.lstsq``
    when the active rows are dependent (a row repeated, or a sum of others): the same verdict as the
    certificate computed with LAPACK throughout, on gradients in the rows' cone (certified), with a
    negative multiplier, or off their span (refused)."""
    from cudbound.search.smooth_node_solver import _kkt_ok
    rng = np.random.default_rng(4_400_700 + seed)
    p = int(rng.integers(2, 6))
    k = int(rng.integers(1, p + 1))
    G = rng.standard_normal((k, p))
    if k >= 2 and seed % 3 == 0:
        G[-1] = G[0] if seed % 2 else G[0] + G[1]
    # x on every row's hyperplane: the null space of G
    x = np.linalg.svd(G)[2][-1] * (1.0 if np.linalg.matrix_rank(G) < p else 0.0)
    norms = np.linalg.norm(G, axis=1)
    lam = rng.uniform(0.1, 2.0, size=k)
    kind = seed % 4
    if kind == 1:
        lam[0] = -1.0
    g = G.T @ lam
    if kind == 2:
        g = g + 1e-3 * rng.standard_normal(p)
    act = np.arange(k, dtype=np.int64)
    want = _kkt_reference(G, norms, x, g, act)
    assert _kkt_ok(G, norms, x, g, act, k) == want
    if kind == 0:
        assert want


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_a_certified_iterate_is_the_answer_without_a_last_step(name, monkeypatch):
    """Once the predicted decrease -g'd is below round-off, an iterate that passes the KKT certificate with the
    gradient it was evaluated with is the answer as it stands: no step to the model's point z and no evaluation
    there (the iteration is traced by running its Python form with the compiled evaluation). Such an answer is
    certified (the certificate recomputed in NumPy), its value is the loss's own there, and it is not above the
    value at z (the step it spared) by more than L's resolution."""
    from cudbound.search import smooth_node_solver as sns
    events = []
    evaluate, model_qp = sns._evaluate, sns._model_qp

    def traced_evaluate(model, b, grad, H, want):
        events.append("eval")
        return evaluate(model, b, grad, H, want)

    def traced_model_qp(g, H, G, norms, x, z, act, u):
        out = model_qp(g, H, G, norms, x, z, act, u)
        events.append(("qp", z.copy()))
        return out

    monkeypatch.setattr(sns, "_evaluate", traced_evaluate)
    monkeypatch.setattr(sns, "_model_qp", traced_model_qp)
    solves = spared = 0
    for seed, loss, design, y, counts, G, start, x0 in _cases(name):
        model = _Objective(loss, design, y, counts, _builtin_kind(loss)).model
        events.clear()
        st, f, x, act = _run(_sqp, model, G, x0)
        where = (name, seed, start)
        assert st == 0, where
        solves += 1
        g, H = np.empty(len(x)), np.empty((len(x), len(x)))
        assert _evaluate(model, x, g, H, True) == f, where
        if events[-1] == "eval":
            continue   # stepped to z and evaluated there
        spared += 1
        assert _kkt_reference(G, np.linalg.norm(G, axis=1), x, g, act), where
        z = events[-1][1]
        f_z = _evaluate(model, z, np.empty(len(x)), np.empty((len(x), len(x))), False)
        # L(x) - L(z) <= -g'd <= 1e-15 max(1, |L|), plus the evaluations' round-off (either may be the smaller)
        assert f - f_z <= 1e-14 * max(1.0, abs(f)), where
    # the last evaluation is spared on most solves (the step to z needs a row the iterate does not hold active)
    assert solves >= 30 and spared >= 0.8 * solves, (solves, spared)


def test_an_iterate_that_fails_the_certificate_takes_the_last_step():
    """The predicted decrease can be below round-off where the gradient is not: L(b) = 1e12 |b|^2 / 2 + c'b with
    |c| = 1e-6, from b = 0, predicts g'H^-1 g = 1e-24 but has |grad| = 1e-6 above the certificate's 1e-7. That
    iterate is not the answer: the iteration steps to the model's point -c / 1e12, where the gradient vanishes."""

    class Quadratic:
        A, c = 1e12, np.array([1e-6, 0.0])

        def value(self, b):
            return 0.5 * self.A * float(b @ b) + float(self.c @ b)

        def derivatives(self, b):
            return self.A * b + self.c, self.A * np.eye(2)

    x = np.zeros(2)
    act = np.zeros(2, dtype=np.int64)
    status, value, nact = _sqp(Quadratic(), np.zeros((0, 2)), np.zeros(0), x, 100, act, np.nan, np.zeros(0),
                               np.zeros((0, 0)))
    assert status == 0 and nact == 0
    assert np.allclose(x, -Quadratic.c / Quadratic.A, rtol=1e-12, atol=0.0)
    assert value < 0.0
