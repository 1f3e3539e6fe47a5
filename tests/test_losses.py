"""Surrogate losses beyond squared error (issue 6): built-in losses against a brute-force
reference, the documented custom loss, separable data, non-unique hinge minimisers,
screening, the loss protocol and the command line.

Each random problem is drawn from its own seed (``SEED0[loss] + index``); a failure
prints the seed and the problem so that it can be re-run alone.
"""
import functools
import json
import math

import cvxpy as cp
import numpy as np
import pytest

import cudbound
from cudbound import Procedure
from cudbound.cli import main
from cudbound.cud import search_replicate
from cudbound.datasets import demo_data
from cudbound.engine import ReplicateEngine
from cudbound.fit import check_minimiser_exists, fit_coefficients, training_error
from cudbound.losses import (DEFAULT_RIDGE, ExponentialLoss, FunctionLoss, HingeLoss, LogisticLoss, Loss,
                             NoMinimiserError, RidgeLoss, SquaredLoss, get_loss, same_math)
from cudbound.search import SearchOptions
from cudbound.optim.smooth import separation
from doc_pages import example_class, python_blocks
from reference_losses import REF_LOSSES, loss_problem_size, make_loss_problem, ref_details, ref_fit, separable_points
from sweeps import first_of_each, kept_by_default

TOL = 1e-6
"""Issue 6's tolerance, kept for the hinge (its node minima are solver answers at tolerance 1e-10)."""
TOLS = {"hinge": TOL}
"""Smooth and quadratic losses have polished node minima: hold them to 1e-9."""
TIGHT = 1e-9
N_RANDOM = 100
SPECS = {"hinge": "hinge", "logistic": "logistic", "exponential": "exponential", "ridge": "ridge:0.1",
         "logistic_ridge": "logistic_ridge:0.1", "exponential_ridge": "exponential_ridge:0.1"}
N_PER_LOSS = {"hinge": N_RANDOM, "logistic": N_RANDOM, "exponential": N_RANDOM, "ridge": N_RANDOM,
              "logistic_ridge": 30, "exponential_ridge": 30}  # the last two beyond what issue 6 asks
SEED0 = {"hinge": 6_100_000, "logistic": 6_200_000, "exponential": 6_300_000, "ridge": 6_400_000,
         "logistic_ridge": 6_800_000, "exponential_ridge": 6_900_000}
CASES = first_of_each([(name, i) for name in sorted(SPECS) for i in range(N_PER_LOSS[name])],
                      lambda case: (case[0], loss_problem_size(SEED0[case[0]] + case[1])[1]))
"""The random problems: the README's command checks the first of each loss and p (18 of 460), CI every
one (the others are marked slow: tests/_support/sweeps.py)."""
TESTED = "<!-- tested: tests/test_losses.py runs this block verbatim -->"


@functools.lru_cache(maxsize=None)
def _problem(name, index):
    """The random problem ``index`` of a loss (made once, read by two tests)."""
    return make_loss_problem(SEED0[name] + index, REF_LOSSES[name])


def _alphas(n):
    return [1.0, math.sqrt(n), float(n), float(n) ** 2]


def _describe(name, info, design, y, counts, alpha, got, want):
    return (f"loss={name} {info}\nalpha_n={alpha!r}\nengine={got!r}\nreference={want!r}\ndiff={got - want:.3e}\n"
            f"design=np.array({design.tolist()!r})\ny=np.array({y.tolist()!r})\n"
            f"counts=np.array({np.asarray(counts).tolist()!r})")


# ----------------------------------------------------------- brute force, built-in losses
@pytest.mark.parametrize("name, index", CASES)
def test_random_problem_matches_reference(name, index):
    ref = REF_LOSSES[name]
    design, y, counts, info = _problem(name, index)
    det = ref_details(ref, design, y, counts)
    for a in _alphas(info["n"]):
        got = cudbound.replicate_sup(design, y, counts, loss=SPECS[name], alpha_n=a)
        assert isinstance(got, float)
        assert abs(got - det.q(a)) <= TOLS.get(name, TIGHT), _describe(name, info, design, y, counts, a, got, det.q(a))
    # the fit itself: unique minimiser, or the exact least-norm hinge minimiser
    beta = fit_coefficients(design, y, get_loss(SPECS[name]))
    np.testing.assert_allclose(beta, det.beta_hat, atol=1e-6, err_msg=str(info))


def _how_many_separable(name, problems):
    """How many of ``problems`` have what the suite of ``name`` needs separable: for logistic and
    exponential the resample (the infimum over some cones is then not attained), for their ridge
    forms the data (the unpenalised loss has no fit there)."""
    if name in ("logistic", "exponential"):
        return sum(separable_points(d, y, c).any() for d, y, c, _ in problems)
    return sum(separable_points(d, y, np.ones(len(y))).any() for d, y, c, _ in problems)


def test_random_suite_covers_the_intended_space():
    """p in {1, 2, 3} and n in 4..10 over the suite (the sizes ``loss_problem_size`` gives: the slow
    test below checks them against the problems drawn); the problems the README's command checks have
    every p and, for the smooth losses, separable resamples or data."""
    for name in SPECS:
        sizes = [loss_problem_size(SEED0[name] + i) for i in range(N_PER_LOSS[name])]
        assert {p for n, p in sizes} == {1, 2, 3}, name
        assert min(n for n, p in sizes) <= 5 and max(n for n, p in sizes) >= 9, name
        kept = [i for loss, i in kept_by_default(CASES) if loss == name]
        assert {sizes[i][1] for i in kept} == {1, 2, 3}, name
        if name not in ("hinge", "ridge"):
            assert _how_many_separable(name, [_problem(name, i) for i in kept]) >= 1, name


# slow (draws all 460 problems): the test above checks the sizes and the problems of the README's command
@pytest.mark.slow
def test_random_suite_draws_the_sizes_it_says_and_many_separable_cases():
    """Every problem has the size ``loss_problem_size`` gives; for logistic/exponential many resamples
    that a direction separates, for their ridge forms data on which the unpenalised loss has no fit."""
    for name in SPECS:
        problems = [_problem(name, i) for i in range(N_PER_LOSS[name])]
        infos = [p[3] for p in problems]
        assert [(i["n"], i["p"]) for i in infos] == [loss_problem_size(i["seed"]) for i in infos], name
        if name in ("logistic", "exponential"):
            assert _how_many_separable(name, problems) >= 20, name
        if name in ("logistic_ridge", "exponential_ridge"):
            assert _how_many_separable(name, problems) >= 3, name


@pytest.mark.parametrize("name", ["hinge", "logistic"])
def test_engine_option_is_accepted_for_non_quadratic_losses(name):
    """Every engine name is accepted and gives the same value: auto (node solvers inside the
    compiled loop), python (Python node solvers called from it) and cvxpy (docs/losses.md)."""
    for i in range(2):
        design, y, counts, info = make_loss_problem(SEED0[name] + 500 + i, REF_LOSSES[name])
        values = {engine: search_replicate(design, y, counts, loss=name, engine_options={"engine": engine}).value
                  for engine in ("auto", "python", "cvxpy")}
        assert max(values.values()) - min(values.values()) <= 1e-12, (info, values)


def test_ridge_uses_the_compiled_search_and_matches_the_cvxpy_path():
    eng = ReplicateEngine(*make_loss_problem(1, REF_LOSSES["ridge"])[:2], get_loss("ridge"))
    assert type(eng.prepare(np.ones(len(eng.y)))[0]).__name__ == "_WithFallback"  # the compiled path's solver
    for i in range(10):
        design, y, counts, info = make_loss_problem(SEED0["ridge"] + 700 + i, REF_LOSSES["ridge"])
        fast = search_replicate(design, y, counts, loss="ridge")
        slow = search_replicate(design, y, counts, loss="ridge", engine_options={"engine": "cvxpy"})
        assert fast.status == slow.status == "exact"
        assert abs(fast.value - slow.value) <= 1e-9, info


# ------------------------------------------------------------- screening (n = 20..30)
def _medium(seed, n=24, noise=1.0):
    """Noisy linear data that no direction separates (so every built-in loss has a fit)."""
    rng = np.random.default_rng(seed)
    while True:
        X = rng.normal(size=(n, 2))
        y = np.where(X @ np.ones(2) + noise * rng.normal(size=n) >= 0, 1.0, -1.0)
        design = np.column_stack([np.ones(n), X])
        if not separable_points(design, y, np.ones(n)).any():
            return design, y, rng.multinomial(n, np.full(n, 1.0 / n))


@pytest.mark.parametrize("name", ["hinge", "logistic", "exponential_ridge:0.05"])
def test_screening_and_options_do_not_change_the_value(name):
    design, y, counts = _medium(3)
    values, screened = [], 0
    for opts in (SearchOptions(), SearchOptions(screen=False), SearchOptions(branching="dearest", screen=False)):
        out = search_replicate(design, y, counts, loss=name, search_options=opts)
        assert out.status == "exact"
        values.append(out.value)
        screened = max(screened, out.screened)
    assert max(values) - min(values) <= 1e-9, values
    assert screened > 0


def test_screening_cuts_the_search():
    design, y, counts = _medium(5, n=30)
    on = search_replicate(design, y, counts, loss="logistic")
    off = search_replicate(design, y, counts, loss="logistic", search_options=SearchOptions(screen=False))
    assert abs(on.value - off.value) <= 1e-9
    assert on.screened > 0 and on.nodes < off.nodes


def test_tree_export_and_budget_for_a_non_quadratic_loss():
    design, y, counts = _medium(7)
    exact = search_replicate(design, y, counts, loss="hinge", search_options=SearchOptions(screen=False))
    tree = search_replicate(design, y, counts, loss="hinge", record_tree=True).tree
    assert tree.number_of_nodes() >= 1
    cut = search_replicate(design, y, counts, loss="hinge", engine_options={"max_nodes": 2},
                           search_options=SearchOptions(screen=False))
    assert cut.status == "budget" and cut.nodes <= 3
    assert cut.value >= exact.value - 1e-12


# ------------------------------------------------------------------- the docs example
def _docs_example_source():
    return python_blocks("losses.md", marker=TESTED)[0]


def _docs_loss():
    return example_class("losses.md", TESTED, "SquaredHingeLoss")


def test_docs_example_is_short_and_a_loss():
    source = _docs_example_source()
    assert len(source.strip().splitlines()) < 30
    loss = get_loss(_docs_loss()())
    assert isinstance(loss, Loss) and loss.has_derivatives and not loss.is_quadratic


@pytest.mark.parametrize("index", first_of_each(range(25), lambda index: index % 6))
def test_docs_example_matches_reference(index):
    """The README's command checks the first problem of each n (6 of 25), CI all of them (slow)."""
    loss = _docs_loss()()
    ref = REF_LOSSES["squared_hinge"]
    design, y, counts, info = make_loss_problem(6_500_000 + index, ref, n=int(4 + index % 6))
    det = ref_details(ref, design, y, counts)
    for a in _alphas(info["n"]):
        got = cudbound.replicate_sup(design, y, counts, loss=loss, alpha_n=a)
        assert abs(got - det.q(a)) <= TOL, _describe("squared_hinge", info, design, y, counts, a, got, det.q(a))


def test_docs_example_in_cud_interval():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(25, 2))
    y = np.where(X[:, 0] + rng.normal(size=25) > 0, 1, -1)
    res = cudbound.cud_interval(X, y, procedure=Procedure(loss=_docs_loss()()), n_resamples=20, rng=1)
    assert res.details["loss"] == "squared_hinge" and not res.conservative
    assert 0.0 <= res.confidence_interval.low <= res.train_error <= res.confidence_interval.high <= 1.0


# ------------------------------------------------------------------------ separable data
def _separable(n=12, seed=0, weak=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    y = np.where(x[:, 0] - x[:, 1] >= 0, 1.0, -1.0)
    if weak:  # quasi-complete separation: two opposite labels on the boundary line
        x[:2] = [[0.5, 0.5], [-0.3, -0.3]]
        y[:2] = [1.0, -1.0]
    return x, y


@pytest.mark.parametrize("name", ["logistic", "exponential"])
@pytest.mark.parametrize("weak", [False, True])
def test_separable_data_raise_a_clear_error(name, weak):
    X, y = _separable(weak=weak)
    design = np.column_stack([np.ones(len(y)), X])
    with pytest.raises(NoMinimiserError, match=f"{name}_ridge:{DEFAULT_RIDGE}"):
        fit_coefficients(design, y, get_loss(name))
    with pytest.raises(ValueError, match="no minimiser"):
        cudbound.cud_interval(X, y, procedure=Procedure(loss=name), n_resamples=20, rng=0)
    with pytest.raises(ValueError, match="no minimiser"):
        cudbound.replicate_sup(design, y, np.ones(len(y)), loss=name)
    # the suggested penalised loss has a minimiser, and the interval is computed
    res = cudbound.cud_interval(X, y, procedure=Procedure(loss=f"{name}_ridge"), n_resamples=20, rng=0)
    assert np.all(np.isfinite(res.coef)) and np.max(np.abs(res.coef)) < 100 and not res.conservative


def test_ridge_version_without_minimiser_names_the_intercept():
    design = np.column_stack([np.ones(6), np.arange(6.0)])
    y = np.ones(6)
    with pytest.raises(NoMinimiserError, match="penalize_intercept"):
        check_minimiser_exists(design, y, get_loss("logistic_ridge"))
    assert np.all(np.isfinite(fit_coefficients(design, y, get_loss("logistic_ridge:0.1:all"))))


def test_separable_resample_of_non_separable_data_is_exact():
    """D is not separable, the resample is: the infimum over some cones is approached only
    at infinity, and the search returns the exact supremum, with a finite point."""
    ref = REF_LOSSES["logistic"]
    found = 0
    for i in range(200):
        design, y, counts, info = make_loss_problem(6_600_000 + i, ref, n=7, p=2)
        mask, d = separation(design, y, counts.astype(float), np.eye(2))
        if not mask.any():
            continue
        found += 1
        det = ref_details(ref, design, y, counts)
        for a in _alphas(7):
            out = search_replicate(design, y, counts, loss="logistic", alpha_n=a)
            assert out.status == "exact"
            assert abs(out.value - det.q(a)) <= TOL, _describe("logistic", info, design, y, counts, a,
                                                             out.value, det.q(a))
        if found == 5:
            break
    assert found == 5


def test_cli_separable_data_exit_2(capsys, tmp_path):
    X, y = _separable()
    path = tmp_path / "sep.csv"
    path.write_text("a,b,label\n" + "".join(f"{a},{b},{int(v)}\n" for (a, b), v in zip(X, y)))
    code = main(["interval", "--data", str(path), "--label", "label", "--loss", "logistic", "--resamples", "20"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("cudbound: error: the logistic loss has no minimiser") and "logistic_ridge" in err


# ----------------------------------------------------------- non-unique hinge minimisers
def test_hinge_least_norm_minimiser_intercept_only():
    design, y = np.ones((6, 1)), np.array([1.0, -1, 1, -1, 1, -1])
    loss = HingeLoss()
    beta = fit_coefficients(design, y, loss)
    assert beta.tolist() == [0.0]  # every b in [-1, 1] minimises; 0 is the least-norm one
    for b in (-1.0, -0.4, 0.7, 1.0):
        assert loss.value(design, y, np.ones(6), np.array([b])) == pytest.approx(loss.value(design, y, np.ones(6), beta))


def test_hinge_q_depends_on_the_minimiser_only_through_the_bootstrap_loss():
    """Q^(b) is a non-decreasing function of L(D^(b), beta_hat): equal for minimisers with
    equal bootstrap loss, ordered like the bootstrap loss otherwise."""
    design, y = np.ones((6, 1)), np.array([1.0, -1, 1, -1, 1, -1])
    loss = HingeLoss()
    minimisers = [-1.0, -0.5, 0.0, 0.3, 1.0]
    balanced = np.array([2, 2, 0, 1, 1, 0])      # 3 positive and 3 negative labels: same bootstrap loss
    unbalanced = np.array([3, 1, 1, 0, 1, 0])     # 5 positive, 1 negative: bootstrap loss decreases in b
    for alpha in (1.0, 6.0, 36.0):
        q = [search_replicate(design, y, balanced, loss=loss, alpha_n=alpha, beta_hat=np.array([b])).value
             for b in minimisers]
        assert max(q) - min(q) <= 1e-12, q
        q = [search_replicate(design, y, unbalanced, loss=loss, alpha_n=alpha, beta_hat=np.array([b])).value
             for b in minimisers]
        L = [loss.value(design, y, unbalanced, np.array([b])) for b in minimisers]
        assert all(np.diff(L) < 0) and all(np.diff(q) <= 1e-12), (q, L)
        # the documented minimiser (least norm, 0) is the one replicate_sup uses
        det = ref_details(REF_LOSSES["hinge"], design, y, unbalanced)
        assert cudbound.replicate_sup(design, y, unbalanced, loss="hinge", alpha_n=alpha) == pytest.approx(
            det.q(alpha), abs=1e-9)
        assert q[2] == pytest.approx(det.q(alpha), abs=1e-9)


def test_hinge_minimisers_can_differ_in_training_error():
    x = np.array([-1.0, 0.0, 0.0, 1.0, 2.0])
    y = np.array([-1.0, 1.0, 1.0, -1.0, 1.0])
    design = np.column_stack([np.ones(5), x])
    loss = HingeLoss()
    vertices = [np.array([-1 / 3, 2 / 3]), np.array([1.0, 0.0]), np.array([1.0, 2.0])]
    values = [loss.value(design, y, np.ones(5), v) for v in vertices]
    assert max(values) - min(values) <= 1e-12 and values[0] == pytest.approx(0.8)
    assert len({training_error(design, y, v) for v in vertices}) == 3
    beta = fit_coefficients(design, y, loss)
    np.testing.assert_allclose(beta, ref_fit(REF_LOSSES["hinge"], design, y), atol=1e-7)
    assert loss.value(design, y, np.ones(5), beta) == pytest.approx(0.8, abs=1e-9)
    assert np.linalg.norm(beta) <= min(np.linalg.norm(v) for v in vertices) + 1e-9


# ---------------------------------------------------------------------- the loss protocol
def test_specs_names_and_errors():
    cases = {"squared": SquaredLoss, "hinge": HingeLoss, "logistic": LogisticLoss, "exponential": ExponentialLoss,
             " Ridge ": RidgeLoss, "ridge:0.5": RidgeLoss, "logistic_ridge:2": RidgeLoss, "hinge_ridge": RidgeLoss}
    for spec, cls in cases.items():
        loss = get_loss(spec)
        assert type(loss) is cls
        assert get_loss(loss.name).name == loss.name  # the name is a spec that round-trips
    assert get_loss("ridge").name == f"ridge:{DEFAULT_RIDGE!r}" and get_loss("ridge:0.5").lam == 0.5
    assert get_loss("logistic_ridge:2").base.name == "logistic"
    assert get_loss("ridge:1:all").penalize_intercept and get_loss("ridge:all").penalize_intercept
    assert get_loss("ridge:all").lam == DEFAULT_RIDGE and get_loss("ridge:all").name == f"ridge:{DEFAULT_RIDGE!r}:all"
    for bad, match in [("hinge2", "`loss` must be one of"), ("ridge:0", "positive"), ("ridge:abc", "positive"),
                       ("logistic:1", "takes no parameter"), ("ridge:nan", "positive"),
                       ("hinge:x", "takes no parameter"), ("foo:x", "must be one of"), ("ridge:", "positive")]:
        with pytest.raises(ValueError, match=match):
            get_loss(bad)
    with pytest.raises(TypeError):
        get_loss(3)

    class Incomplete(Loss):
        def pointwise(self, y, t):
            return t

    with pytest.raises(TypeError, match="cvxpy_pointwise"):
        get_loss(Incomplete())


def _fd_check(loss, design, y, w, beta):
    eps = 1e-6
    f = lambda b: loss.value(design, y, w, b)  # noqa: E731
    g = np.array([(f(beta + eps * e) - f(beta - eps * e)) / (2 * eps) for e in np.eye(len(beta))])
    np.testing.assert_allclose(loss.gradient(design, y, w, beta), g, rtol=1e-5, atol=1e-7)
    gr = lambda b: loss.gradient(design, y, w, b)  # noqa: E731
    H = np.array([(gr(beta + eps * e) - gr(beta - eps * e)) / (2 * eps) for e in np.eye(len(beta))])
    np.testing.assert_allclose(loss.hessian(design, y, w, beta), H, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("spec", ["squared", "logistic", "exponential", "ridge:0.3", "logistic_ridge:0.2",
                                  "exponential_ridge:0.1:all"])
def test_gradients_and_hessians(spec):
    rng = np.random.default_rng(0)
    design = np.column_stack([np.ones(9), rng.normal(size=(9, 2))])
    y = rng.choice([-1.0, 1.0], 9)
    w = rng.multinomial(9, np.full(9, 1 / 9)).astype(float)
    loss = get_loss(spec)
    assert loss.has_derivatives
    _fd_check(loss, design, y, w, rng.normal(size=3) * 0.5)


def test_ridge_penalty_skips_the_intercept_wherever_it_is():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(8, 2))
    beta = np.array([0.7, -1.2, 0.4])
    y = rng.choice([-1.0, 1.0], 8)
    w = np.ones(8)
    lam = 0.25
    sq = SquaredLoss().value
    for design, pen in [(np.column_stack([np.ones(8), X]), [1, 2]), (np.column_stack([X[:, 0], np.ones(8), X[:, 1]]), [0, 2]),
                        (np.column_stack([X, X[:, 0] * X[:, 1]]), [0, 1, 2])]:
        loss = RidgeLoss(lam)
        assert loss.value(design, y, w, beta) == pytest.approx(sq(design, y, w, beta) + lam * np.sum(beta[pen] ** 2))
        H, g, c = loss.quadratic_form(design, y, w)
        assert beta @ H @ beta - 2 * g @ beta + c == pytest.approx(loss.value(design, y, w, beta))
        assert np.linalg.eigvalsh(H)[0] > 0
        # the penalty is added once, whatever the bootstrap counts
        counts = np.array([3, 0, 0, 2, 1, 0, 2, 0], float)
        assert loss.value(design, y, counts, beta) == pytest.approx(sq(design, y, counts, beta)
                                                                     + lam * np.sum(beta[pen] ** 2))
    assert RidgeLoss(lam, penalize_intercept=True).value(design, y, w, beta) == pytest.approx(
        sq(design, y, w, beta) + lam * beta @ beta)


def test_function_pair_loss():
    import cvxpy as cp

    loss = FunctionLoss("absolute", lambda d, y, w, b: np.dot(w, np.abs(y - d @ b)) / len(y),
                        lambda d, y, w, b: w @ cp.abs(y - d @ b) / len(y))
    ref = REF_LOSSES["hinge"]
    design, y, counts, info = make_loss_problem(6_700_000, ref, n=8, p=2)
    out = search_replicate(design, y, counts, loss=loss)
    assert out.status == "exact" and 0.0 <= out.value <= 1.0
    # the same loss through a subclass with the pointwise pair gives the same value
    class Absolute(Loss):
        name = "absolute"

        def pointwise(self, y, t):
            return np.abs(y - t)

        def cvxpy_pointwise(self, y, t):
            return cp.abs(y - t)

    assert search_replicate(design, y, counts, loss=Absolute()).value == pytest.approx(out.value, abs=1e-8)


def test_zero_weight_points_never_overflow():
    design = np.column_stack([np.ones(3), [0.0, 1.0, 1000.0]])
    y = np.array([1.0, -1.0, -1.0])
    w = np.array([2.0, 1.0, 0.0])
    with np.errstate(all="raise"):
        v = ExponentialLoss().value(design, y, w, np.array([0.0, 1.0]))
    assert np.isfinite(v)


# ---------------------------------------------------------------------------- command line
@pytest.mark.parametrize("spec, shown", [("hinge", "hinge"), ("ridge:0.5", "ridge:0.5"), ("logistic", "logistic")])
def test_cli_loss_option(capsys, spec, shown):
    code = main(["demo", "--n", "24", "--resamples", "20", "--loss", spec, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    record = json.loads(out)["results"][0]
    assert record["loss"] == shown
    X, y = demo_data(24, seed=0)
    res = cudbound.cud_interval(X, y, procedure=Procedure(loss=spec), n_resamples=20, rng=0)
    assert (record["low"], record["high"]) == tuple(res.confidence_interval)


def test_cli_interval_loss_and_bad_loss(capsys, tmp_path):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20, 2))
    y = np.where(X[:, 0] + rng.normal(size=20) > 0, 1, 0)
    path = tmp_path / "d.csv"
    path.write_text("a,b,label\n" + "".join(f"{a},{b},{v}\n" for (a, b), v in zip(X, y)))
    code = main(["interval", "--data", str(path), "--label", "label", "--loss", "hinge", "--resamples", "20",
                 "--seed", "1"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "hinge loss" in out
    for bad in ("hinge2", "ridge:-1"):
        code = main(["interval", "--data", str(path), "--label", "label", "--loss", bad])
        _, err = capsys.readouterr()
        assert code == 2 and "--loss" in err


# ---------------------------------------------------------------- what a loss is (issue 30, point 4)
def _redefine(parent, pointwise):
    """A subclass of ``parent`` that redefines its loss through ``pointwise`` only."""
    return type(f"Half{parent.__name__}", (parent,), {"name": "half", "pointwise": lambda self, y, t: pointwise(y, t)})


def _complete(cls, cvx, kind):
    """``cls`` completed: the cvxpy form of its new loss and its kind, and no inherited derivatives."""
    extra = {"cvxpy_pointwise": lambda self, y, t: cvx(y, t), "kind": kind}
    for name in ("derivatives", "quadratic_form"):
        if name in dir(cls) and getattr(cls, name) is not getattr(Loss, name):
            extra[name] = getattr(Loss, name)     # the parent's would differentiate the parent's loss
    extra["is_quadratic"] = False
    return type(f"Whole{cls.__name__}", (cls,), extra)


_NEW_LOSS = (lambda y, t: np.maximum(0.0, 1.0 - y * t) ** 2,            # squared hinge
             lambda y, t: cp.square(cp.pos(1.0 - cp.multiply(y, t))))


@pytest.mark.parametrize("parent", [SquaredLoss, HingeLoss, LogisticLoss, ExponentialLoss])
def test_a_subclass_that_redefines_the_loss_is_not_solved_as_its_parent(parent):
    """The class of inputs: a subclass of a built-in loss that changes its ``pointwise`` and
    inherits the parent's cvxpy form, derivatives or quadratic form. Before issue 30 it was
    fitted and searched as the parent's loss without a word (squared hinge under HingeLoss: a
    fit whose mean loss was 1.0 against a minimum of 0.911). Now it is refused, naming what it
    inherits; completed (its own cvxpy form and kind), it is fitted as the new loss."""
    pointwise, cvx = _NEW_LOSS
    half = _redefine(parent, pointwise)
    with pytest.raises(TypeError, match=r"inherits .*kind") as info:
        get_loss(half())
    assert "kind" in str(info.value) and parent.__name__ in str(info.value)
    whole = _complete(half, cvx, "generic")()
    assert get_loss(whole).kind == "generic" and not same_math(whole, parent)
    rng = np.random.default_rng(7)
    X = rng.normal(size=(25, 2))
    y = np.where(X[:, 0] + rng.normal(size=25) > 0, 1.0, -1.0)
    design = np.column_stack([np.ones(25), X])
    beta = fit_coefficients(design, y, whole)
    b = cp.Variable(3)
    best = cp.Problem(cp.Minimize(cp.sum(cvx(y, design @ b)) / 25)).solve(solver="CLARABEL")
    assert np.mean(pointwise(y, design @ beta)) == pytest.approx(best, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("spec, kind", [("squared", "quadratic"), ("ridge", "quadratic"), ("hinge", "piecewise_linear"),
                                        ("hinge_ridge", "piecewise_linear"), ("logistic", "smooth"),
                                        ("logistic_ridge", "smooth"), ("exponential", "smooth")])
def test_builtin_kinds_and_a_subclass_that_declares_another_kind_loses_the_fast_path(spec, kind):
    loss = get_loss(spec)
    assert loss.kind == kind
    cls = type(loss)
    renamed = type("Renamed", (cls,), {})
    other = type("OtherKind", (cls,), {"kind": "generic"})
    args = (loss.lam, loss.base) if isinstance(loss, RidgeLoss) else ()
    assert same_math(renamed(*args), cls)                 # the same loss under another name: the same solvers
    assert not same_math(other(*args), cls)               # declares another kind: the generic ones
    with pytest.raises(TypeError, match="kind must be one of"):
        get_loss(type("Bad", (cls,), {"kind": "linear"})(*args))


def test_a_users_own_loss_reports_the_kind_its_methods_give():
    sq = FunctionLoss("f", lambda D, y, w, b: 0.0, lambda D, y, w, b: 0.0)
    assert sq.kind == "generic"
    assert FunctionLoss("g", lambda D, y, w, b: 0.0, lambda D, y, w, b: 0.0, gradient=lambda *a: 0,
                        hessian=lambda *a: 0).kind == "smooth"
