"""The probed starting value of a replicate (``search/probes.py``).

Every search starts from the best value of classifiers probed on the neighbourhood's boundary:
compiled for a positive definite quadratic loss (``_probe``), in Python for every other loss
(``probe_classifier``). Stopped before its first expansion (``max_nodes=1``), a search reports
that value as attained: it must never exceed the exact Q^(b) (the brute-force enumeration on
small problems; on larger ones, the value recomputed from the probed classifier's own signs and
loss, which any classifier attains), and it must often beat the two classifiers the search knew
before (beta_hat and the unconstrained minimiser), or the probes do nothing.
"""
import numpy as np
import pytest

from cudbound.cud import search_replicate
from cudbound.design import reparametrise
from cudbound.engine import ReplicateEngine
from cudbound.fit import fit_coefficients
from cudbound.losses import FunctionLoss, get_loss
from cudbound.search import SearchOptions
from cudbound.search.bnb import _value_at
from cudbound.search.options import Tolerances
from cudbound.search.probes import PROBE_FIRST_BATCH, _batched_losses, _lazy_round, probe_classifier
from reference_losses import REF_LOSSES, RefLoss, loss_value, make_loss_problem, ref_details


def _value(Z, y, counts, b, b_hat, alpha):
    n = len(y)
    wrong = np.where(Z @ b >= 0.0, 1.0, -1.0) != y
    C = np.sum((counts - 1.0) * wrong)
    L = np.dot(counts, (y - Z @ b) ** 2) / n
    L_hat = np.dot(counts, (y - Z @ b_hat) ** 2) / n
    return abs(C) / n * (1.0 if alpha == 0.0 else max(0.0, min(1.0, 1.0 + alpha * (L_hat - L))))


@pytest.mark.parametrize("scale, least", [(1.0, 10), (0.1, 10), (10.0, 10), (0.0, 0)])
def test_the_probed_value_is_attained_and_says_something(scale, least):
    """alpha_n = scale * n: the default, a wider and a narrower neighbourhood (the g = 1/2 level
    matters more there), and alpha_n = 0 (no neighbourhood: nothing is probed)."""
    rng = np.random.default_rng(4_400_100)
    beats = 0
    for i in range(30):
        n = int(rng.choice([30, 60, 120]))
        X = rng.standard_normal((n, 2)) * rng.choice([1.0, 1e-3]) + rng.choice([0.0, 1e3])
        y = np.where((X - X.mean(axis=0)) @ rng.standard_normal(2) + np.std(X) * rng.standard_normal(n) >= 0, 1.0, -1.0)
        design = np.column_stack([np.ones(n), X])
        counts = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
        alpha = scale * n
        first = search_replicate(design, y, counts, alpha_n=alpha, search_options=SearchOptions(max_nodes=1))
        exact = search_replicate(design, y, counts, alpha_n=alpha, engine_options={"engine": "python"})
        assert exact.status == "exact"
        assert first.lower <= exact.value + 1e-12, (i, first.lower, exact.value)
        Z = reparametrise(design).Z
        b_hat = np.linalg.lstsq(Z, y, rcond=None)[0]
        b_u = np.linalg.lstsq(Z * np.sqrt(counts)[:, None], y * np.sqrt(counts), rcond=None)[0]
        known = max(_value(Z, y, counts, b_hat, b_hat, alpha), _value(Z, y, counts, b_u, b_hat, alpha))
        beats += first.lower > known + 0.5 / n
    assert beats >= least, beats


# ------------------------------------------------------------------ any loss (probe_classifier)
SPECS = {"logistic": "logistic", "hinge": "hinge", "exponential_ridge": "exponential_ridge:0.1",
         "logistic_ridge": "logistic_ridge:0.1", "hinge_ridge": "hinge_ridge:0.1"}
REFS = {"logistic": REF_LOSSES["logistic"], "hinge": REF_LOSSES["hinge"],
        "exponential_ridge": REF_LOSSES["exponential_ridge"], "logistic_ridge": REF_LOSSES["logistic_ridge"],
        "hinge_ridge": RefLoss("hinge", "hinge_qp", lam=0.1)}


def _user_loss():
    """A user loss given only by value and cvxpy expression: the probe evaluates it per classifier."""
    import cvxpy as cp

    def value(design, y, w, beta):
        return float(np.dot(w, np.logaddexp(0.0, -y * (design @ beta))) / len(y))

    def expression(design, y, w, beta):
        return w @ cp.logistic(-cp.multiply(y, design @ beta)) / len(y)

    return FunctionLoss("user_logistic", value, expression)


@pytest.mark.parametrize("spec", [*SPECS.values(), "squared", "ridge:0.5", "user", "exponential",
                                  "orthonormal:logistic_ridge:0.1", "orthonormal:hinge_ridge:0.1",
                                  "orthonormal:exponential_ridge:0.1"])
def test_batched_losses_equal_the_loss_value(spec):
    """Matrix products give each classifier's loss.value (weights 0 included: a point of weight 0
    counts 0 even where its term overflows), for the losses as the user gives them and as the search
    holds them in orthonormal coordinates (a ridge form becomes a PenalisedLoss)."""
    rng = np.random.default_rng(4_400_200)
    loss = _user_loss() if spec == "user" else get_loss(spec.removeprefix("orthonormal:"))
    n, p = 25, 3
    design = np.column_stack([np.ones(n), rng.standard_normal((n, p - 1)) * 3.0 + 5.0])
    if spec.startswith("orthonormal:"):
        rep = reparametrise(design)
        design, loss = rep.Z, rep.loss(loss)
        assert type(loss).__name__ == "PenalisedLoss"
    y = np.where(rng.standard_normal(n) >= 0, 1.0, -1.0)
    w = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
    betas = rng.standard_normal((40, p)) * rng.choice([0.1, 1.0, 30.0], size=(40, 1))
    calls = []
    value = loss.value
    loss.value = lambda *args: calls.append(1) or value(*args)   # counts the per-classifier path
    got = _batched_losses(loss, design, y, w, betas)
    assert (len(calls) == len(betas)) if spec == "user" else not calls
    want = np.array([value(design, y, w, b) for b in betas])
    assert np.allclose(got, want, rtol=1e-12, atol=0.0) or np.array_equal(got, want)


@pytest.mark.parametrize("spec", ["logistic", "exponential", "logistic_ridge:0.1", "exponential_ridge:0.1",
                                  "logistic_ridge:0.1:all", "orthonormal:logistic_ridge:0.1",
                                  "orthonormal:exponential_ridge:0.1"])
def test_the_smooth_solvers_losses_equal_the_loss_value(spec):
    """A built-in smooth loss's probes take their losses from its node solver's compiled evaluation
    (``SmoothNodeSolver.values_at``): each classifier's loss.value, weights 0 included, as the user gives
    the loss and as the search holds it in orthonormal coordinates."""
    from cudbound.search.smooth_node_solver import SmoothNodeSolver
    rng = np.random.default_rng(4_400_250)
    loss = get_loss(spec.removeprefix("orthonormal:"))
    n, p = 25, 3
    design = np.column_stack([np.ones(n), rng.standard_normal((n, p - 1)) * 3.0 + 5.0])
    if spec.startswith("orthonormal:"):
        rep = reparametrise(design)
        design, loss = rep.Z, rep.loss(loss)
    y = np.where(rng.standard_normal(n) >= 0, 1.0, -1.0)
    w = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
    assert np.any(w == 0)
    betas = rng.standard_normal((40, p)) * rng.choice([0.1, 1.0, 3.0], size=(40, 1))
    solver = SmoothNodeSolver(loss, design, y)
    assert solver.kind is not None
    got = solver.values_at(betas, w)
    want = np.array([loss.value(design, y, w, b) for b in betas])
    assert np.allclose(got, want, rtol=1e-12, atol=0.0)


@pytest.mark.parametrize("spec", ["logistic", "logistic_ridge:0.1", "exponential_ridge:0.1",
                                  "orthonormal:logistic_ridge:0.1:all", "orthonormal:exponential_ridge:0.1", "hinge",
                                  "user"])
def test_the_engine_probes_a_builtin_smooth_loss_with_its_solvers_losses(spec):
    """The engine hands the probes its smooth node solver's losses for a built-in smooth loss and none for any
    other (the hinge forms, a user loss); the probed pair attains its value and is, in these replicates, the one
    the probes' own losses give; with the solver's floor on the candidates' losses (``loss_floor``), below every
    loss computed, the same pair to the last bit for fewer losses (ridge forms also as the engine holds them:
    a ``PenalisedLoss`` in orthonormal coordinates)."""
    same = spared = with_floor = 0
    for i in range(8):
        Z, y, counts, loss = _replicate(spec.removeprefix("orthonormal:"), 4_400_950 + i,
                                        coordinates=spec.startswith("orthonormal:"))
        assert (type(loss).__name__ == "PenalisedLoss") == spec.startswith("orthonormal:")
        beta_hat = fit_coefficients(Z, y, loss)
        eng = ReplicateEngine(Z, y, loss)
        eng._fallbacks = 0
        problem, solver, root, *_ = eng._python_setup(counts, beta_hat, 5.0 * len(y), SearchOptions())
        losses = eng._probe_losses(solver, counts)
        assert (losses is not None) == (spec not in ("hinge", "user")), spec
        if losses is None:
            return
        betas = np.random.default_rng(i).standard_normal((5, Z.shape[1]))
        # (the node solver's evaluation takes a penalty as b'Qb, loss.value as |Mb|^2: they round apart by about
        # 1e-16 of Q's spread, which is 1e11 for a ridge penalty in coordinates of features of very different units)
        rtol = 1e-10 if spec.startswith("orthonormal:") else 1e-12
        assert np.allclose(losses(betas), [loss.value(Z, y, counts, b) for b in betas], rtol=rtol, atol=0.0)
        computed = {"plain": 0, "floored": 0}

        def counted(key):
            def f(X):
                computed[key] += len(X)
                return losses(X)
            return f
        mine = probe_classifier(problem, loss, Z, y, counts, root.beta, root.beta_value, losses=counted("plain"))
        own = probe_classifier(problem, loss, Z, y, counts, root.beta, root.beta_value)
        # a floor on the candidates' losses: below every loss computed, and it spares losses, never changes the answer
        # (none where H is not safely positive definite: a ridge penalty in coordinates of features in very
        # different units can span 1e12)
        floor = solver.primary.loss_floor(root.beta, counts)
        with_floor += floor is not None
        assert floor is not None or spec.startswith("orthonormal:"), (spec, i)   # the engine's own coordinates only

        def checked(X):
            got = counted("floored")(X)
            assert floor is None or np.all(floor(X) <= got)
            return got
        floored = probe_classifier(problem, loss, Z, y, counts, root.beta, root.beta_value, losses=checked,
                                   floor=floor)
        assert (floored is None) == (mine is None)
        if mine is not None:
            assert np.array_equal(floored[0], mine[0]) and floored[1] == mine[1]
        assert computed["floored"] <= computed["plain"]
        spared += computed["plain"] - computed["floored"]
        assert (mine is None) == (own is None)
        if mine is None:
            continue
        assert mine[1] == loss.value(Z, y, counts, mine[0])   # the probe returns the loss's own value
        assert abs(losses(mine[0][None, :])[0] - mine[1]) <= rtol * max(1.0, abs(mine[1]))
        same += np.array_equal(mine[0], own[0])
    assert same >= 6, same
    assert with_floor >= 4 and spared > 0, (with_floor, spared)


@pytest.mark.parametrize("tight", [False, True])
@pytest.mark.parametrize("seed", range(200))
def test_the_lazy_round_gives_what_every_loss_computed_would(seed, tight):
    """``_lazy_round`` computes the losses of the rows of largest bound first and stops once no row left can
    change the answers; they must be those of computing every row: the first argmax of v when it beats
    ``best_v``, and the ``top_k`` best directions of max-over-radii v in stable order (ties many: |C| takes
    few values and g is often clipped at 1 or 0). The bound is |C| / n, or (``tight``, as with a floor on
    the loss) |C| / n u with u between the row's g and 1, equal to g on a third of the rows (bound = value)."""
    rng = np.random.default_rng(4_400_300 + seed)
    n_dirs = int(rng.choice([1, 3, 9, 10, 11, 40, 150]))
    n_radii = int(rng.choice([1, 7, 15]))
    rows = n_dirs * n_radii
    absC = rng.integers(0, int(rng.choice([2, 3, 5, 40])), size=rows) / 30.0
    clear = rng.random(rows) > rng.choice([0.0, 0.1, 0.9])
    g = np.clip(rng.choice([2.0, 1.5, 1.0, 0.5]) - rng.random(rows) * rng.choice([0.2, 1.0, 3.0]), 0.0, 1.0)
    v_all = np.where(clear, absC * g, 0.0)
    u = np.where(rng.random(rows) < 1.0 / 3.0, g, g + (1.0 - g) * rng.random(rows)) if tight else np.ones(rows)
    top_k = int(rng.choice([0, 10]))
    best_v = float(rng.choice([0.0, np.quantile(v_all, 0.5), np.max(v_all), np.max(v_all) + 0.1]))
    computed = []

    def signs(X):
        assert len(X) == rows
        return np.where(clear, absC * u, 0.0), absC

    def values(X, absC_rows):
        idx = X[:, 0].astype(int)
        computed.extend(idx.tolist())
        assert np.array_equal(absC_rows, absC[idx])
        return v_all[idx]

    X = np.arange(rows, dtype=float)[:, None]
    i, v_i, per_dir = _lazy_round(X, n_dirs, signs, values, best_v, top_k)
    assert len(computed) == len(set(computed))          # no row twice
    assert all(clear[j] and absC[j] * u[j] > 0 for j in computed)   # a row of bound 0 needs no loss
    want_i = int(np.argmax(v_all))
    if v_all[want_i] > best_v:
        assert (i, v_i) == (want_i, v_all[want_i])
    else:
        assert v_i <= best_v
    if top_k:
        want_dir = v_all.reshape(n_radii, n_dirs).max(axis=0)
        want = np.argsort(-want_dir, kind="stable")[:top_k]
        got = np.argsort(-per_dir, kind="stable")[:top_k]
        assert np.array_equal(got, want)
        assert np.array_equal(per_dir[got], want_dir[want])


def test_the_lazy_round_computes_few_losses_when_a_row_stands_out():
    """The point of the lazy round: one row of bound 1 and value 1 among many of bound 1/2 needs the
    first batch of losses only, not all of them."""
    rows = 40 * 15
    absC = np.full(rows, 0.5)
    absC[7] = 1.0
    computed = []

    def values(X, absC_rows):
        computed.extend(X[:, 0].astype(int).tolist())
        return absC_rows * 1.0

    i, v_i, _ = _lazy_round(np.arange(rows, dtype=float)[:, None], 40, lambda X: (absC, absC), values, 0.0, 0)
    assert (i, v_i) == (7, 1.0)
    assert len(computed) == PROBE_FIRST_BATCH < rows


def test_the_lazy_round_keeps_the_first_of_tied_rows():
    """A row computed early (bound 0.8, value 0.4) and a later row of bound and value 0.4 with a
    smaller index tie: the argmax is the smaller index, as computing every row gives, so the round
    must not stop while a row left could still tie the best."""
    rows = 200
    absC = np.full(rows, 0.4)
    absC[150] = 0.8
    g = np.full(rows, 0.5)
    g[100] = 1.0
    v_all = absC * g
    i, v_i, _ = _lazy_round(np.arange(rows, dtype=float)[:, None], rows, lambda X: (absC, absC),
                            lambda X, a: v_all[X[:, 0].astype(int)], 0.0, 0)
    assert (i, v_i) == (100, 0.4) == (int(np.argmax(v_all)), float(v_all.max()))


def _replicate(spec, seed, coordinates=False):
    """(Z, y, counts, loss): a random replicate in orthonormal coordinates Z; with ``coordinates`` the loss is
    carried to them as the engine holds it (a ridge form becomes a ``PenalisedLoss``)."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([30, 60, 120]))
    X = rng.standard_normal((n, 2)) * rng.choice([1.0, 1e-3]) + rng.choice([0.0, 1e3])
    y = np.where((X - X.mean(axis=0)) @ rng.standard_normal(2) + np.std(X) * rng.standard_normal(n) >= 0, 1.0, -1.0)
    rep = reparametrise(np.column_stack([np.ones(n), X]))
    counts = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
    loss = _user_loss() if spec == "user" else get_loss(spec)
    return rep.Z, y, counts, (rep.loss(loss) if coordinates else loss)


def test_no_pairs_of_directions_probes_the_single_directions_only():
    """``n_top=0`` pairs nothing: the probe is the best single direction's, as with the pairs' rounds
    unable to beat it, and never an error."""
    Z, y, counts, loss = _replicate("logistic", 4_400_900)
    beta_hat = fit_coefficients(Z, y, loss)
    eng = ReplicateEngine(Z, y, loss)
    eng._fallbacks = 0
    problem, _solver, root, *_ = eng._python_setup(counts, beta_hat, 5.0 * len(y), SearchOptions())
    single = probe_classifier(problem, loss, Z, y, counts, root.beta, root.beta_value, n_top=0)
    full = probe_classifier(problem, loss, Z, y, counts, root.beta, root.beta_value)
    assert (single is None) == (full is None)
    if single is not None:
        assert _value_at(problem, single[0], single[1], Tolerances()) <= _value_at(problem, full[0], full[1],
                                                                                  Tolerances())


@pytest.mark.parametrize("scale", [1.0, 0.1, 10.0])
@pytest.mark.parametrize("name", [*SPECS, "user"])
def test_the_probed_classifier_attains_its_value_and_says_something(name, scale):
    """alpha_n = scale * n. The probed classifier's value, recomputed from its own signs on every point
    and the reference loss (no screening, no package code), equals the value the search starts from,
    so it is attained (hence at most Q^(b)); and it beats beta_hat and the root minimiser in some of
    the 12 replicates."""
    beats = 0
    for i in range(12):
        Z, y, counts, loss = _replicate(SPECS.get(name, "logistic"), 4_400_300 + 100 * i + len(name))
        if name == "user":
            loss = _user_loss()
        n = len(y)
        alpha = scale * n
        beta_hat = fit_coefficients(Z, y, loss)
        eng = ReplicateEngine(Z, y, loss)
        eng._fallbacks = 0   # as search() sets it before the set-up
        problem, _solver, root, *_ = eng._python_setup(counts, beta_hat, alpha, SearchOptions())
        probed = probe_classifier(problem, loss, Z, y, counts, root.beta, root.beta_value)
        if probed is None:
            assert problem.rows.size == 0
            continue
        b, L = probed
        ref = REFS.get(name, REF_LOSSES["logistic"])
        assert abs(L - loss_value(ref, Z, y, counts, b)) <= 1e-12 * max(1.0, abs(L))
        wrong = np.where(Z @ b >= 0.0, 1.0, -1.0) != y
        C = np.sum((counts - 1.0) * wrong)
        L_hat = loss.value(Z, y, counts, beta_hat)
        g = min(1.0, 1.0 + alpha * (L_hat - L))
        own = abs(C) / n * max(0.0, g)
        searched = _value_at(problem, b, L, Tolerances())
        assert searched == 0.0 or abs(searched - own) <= 1e-12, (i, searched, own)
        first = eng.search(counts, beta_hat, alpha, SearchOptions(max_nodes=1))
        # (a user loss's root comes from cvxpy, warm-started the second time: equal to its tolerance)
        assert first.lower >= searched - (1e-6 if name == "user" else 1e-15)
        known = max(_value_at(problem, beta_hat, L_hat, Tolerances()),
                    _value_at(problem, root.beta, root.beta_value, Tolerances()))
        beats += searched > known + 0.5 / n
    assert beats >= 2, beats


@pytest.mark.parametrize("name", sorted(REFS))
def test_the_probed_value_never_exceeds_the_enumerated_supremum(name, monkeypatch):
    """Small problems (n <= 10, p <= 3): the pair a probe returns has the value it claims (its own
    signs on every point, the reference loss); a search stopped after its first node reports a value
    attained, never above the brute-force Q^(b), at three neighbourhood sizes; and the exact search
    gives the brute-force Q^(b) with and without the probe. beta_hat is the reference's fit (the
    package's hinge_ridge fit may take another intercept among equal losses)."""
    import cudbound.engine as engine_module
    ref = REFS[name]
    probed = []
    real = engine_module.probe_classifier

    def spy(problem, *args, **kwargs):
        pair = real(problem, *args, **kwargs)
        if pair is not None:
            probed.append((problem, pair))
        return pair

    monkeypatch.setattr(engine_module, "probe_classifier", spy)
    for index in range(4):
        design, y, counts, info = make_loss_problem(4_400_400 + 10 * index + len(name), ref)
        det = ref_details(ref, design, y, counts)
        n = info["n"]
        for a in (0.5 * n, float(n), 5.0 * n):
            kw = dict(loss=SPECS[name], alpha_n=a, beta_hat=det.beta_hat)
            probed.clear()
            first = search_replicate(design, y, counts, search_options=SearchOptions(max_nodes=1), **kw)
            assert first.lower <= det.q(a) + 1e-9, (name, index, a, first.lower, det.q(a))
            for problem, (b, L) in probed:
                Zb = problem.design @ b   # the search's orthonormal coordinates: the same classifier is
                beta = np.linalg.lstsq(design, Zb, rcond=None)[0]   # beta in the design's own
                assert abs(L - loss_value(ref, design, y, counts, beta)) <= 1e-9 * max(1.0, abs(L))
                wrong = np.where(Zb >= 0.0, 1.0, -1.0) != y
                g = min(1.0, 1.0 + a * (det.L_hat - L))
                own = abs(np.sum((counts - 1.0) * wrong)) / n * max(0.0, g)
                searched = _value_at(problem, b, L, Tolerances())
                assert searched == 0.0 or abs(searched - own) <= 1e-12, (name, index, a, searched, own)
            exact = search_replicate(design, y, counts, **kw)
            monkeypatch.setattr(engine_module, "probe_classifier", lambda *args, **kwargs: None)
            bare = search_replicate(design, y, counts, **kw)
            monkeypatch.setattr(engine_module, "probe_classifier", spy)
            assert exact.status == bare.status == "exact"
            assert abs(exact.value - det.q(a)) <= 1e-9 and abs(bare.value - det.q(a)) <= 1e-9, \
                (name, index, a, exact.value, bare.value, det.q(a))


def test_a_probe_that_fails_leaves_the_search_as_it_was():
    """A user loss whose value raises far from where the search goes (the probe tries classifiers
    well outside the neighbourhood): the replicate is still searched exactly, to the value of a
    search without the probe."""
    import cvxpy as cp

    import cudbound.engine as engine_module

    def value(design, y, w, beta):
        t = design @ beta
        if np.max(np.abs(t)) > 14.0:
            raise ValueError("scores too large for this loss")
        return float(np.dot(w, np.logaddexp(0.0, -y * t)) / len(y))

    def expression(design, y, w, beta):
        return w @ cp.logistic(-cp.multiply(y, design @ beta)) / len(y)

    loss = FunctionLoss("fragile_logistic", value, expression)
    rng = np.random.default_rng(4_400_600)
    n = 20
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] + 0.8 * rng.standard_normal(n) >= 0, 1.0, -1.0)
    design = np.column_stack([np.ones(n), X])
    counts = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
    real = engine_module.probe_classifier
    raised = []

    def watched(*args, **kwargs):
        try:
            return real(*args, **kwargs)
        except ValueError:
            raised.append(True)
            raise

    try:
        engine_module.probe_classifier = watched
        got = search_replicate(design, y, counts, loss=loss, alpha_n=1.0)
        engine_module.probe_classifier = lambda *args, **kwargs: None
        bare = search_replicate(design, y, counts, loss=loss, alpha_n=1.0)
    finally:
        engine_module.probe_classifier = real
    assert raised  # the probe did fail here
    assert got.status == bare.status == "exact"
    assert abs(got.value - bare.value) <= 1e-7
