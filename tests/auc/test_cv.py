"""AUC under cross-validation (cudbound/auc.py) against scikit-learn and brute-force refits."""
import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import KFold

from cudbound.auc import KernelRLS, OneClassFoldWarning, auc_score, cv_auc, lpo_auc


def data(seed, n=14, d=2, ties=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if ties:
        X = np.round(X)
    y = np.where(X[:, 0] + rng.normal(size=n) > 0, 1, -1)
    y[:2] = [1, -1]
    return X, y


@pytest.mark.parametrize("seed", range(10))
def test_auc_score_is_sklearns_with_ties(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 30)
    y[:2] = [0, 1]
    s = np.round(rng.normal(size=30), 1)          # many ties
    assert auc_score(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-15)


@pytest.mark.parametrize("kernel", ["linear", "gaussian"])
def test_kernel_rls_is_kernel_ridge_on_the_same_kernel(kernel):
    X, y = data(0)
    m = KernelRLS(regparam=0.7, kernel=kernel, bias=2.0, gamma=0.3).fit(X, y)
    K = X @ X.T + 2.0 if kernel == "linear" else np.exp(-0.3 * ((X[:, None] - X[None]) ** 2).sum(-1))
    ref = KernelRidge(alpha=0.7, kernel="precomputed").fit(K, y.astype(float))
    np.testing.assert_allclose(m.dual_coef_, ref.dual_coef_, atol=1e-12)
    np.testing.assert_allclose(m.decision_function(X), ref.predict(K), atol=1e-10)


@pytest.mark.parametrize("kernel", ["linear", "gaussian"])
@pytest.mark.parametrize("seed", range(3))
def test_leave_pair_out_closed_form_equals_refits(kernel, seed):
    X, y = data(seed, n=12)
    model = KernelRLS(regparam=0.5, kernel=kernel, gamma=0.5)
    fast = lpo_auc(model, X, y)

    class Wrapped(KernelRLS):          # the same model, through the refit path (it redefines fit)
        def fit(self, X, y):
            return super().fit(X, y)

    class Renamed(KernelRLS):          # redefines nothing: the closed form (issue 30, by what it computes)
        pass

    slow = lpo_auc(Wrapped(regparam=0.5, kernel=kernel, gamma=0.5), X, y)
    assert fast.computation == "closed form" and slow.computation == "refits"
    assert lpo_auc(Renamed(regparam=0.5, kernel=kernel, gamma=0.5), X, y).computation == "closed form"
    assert fast.n_pairs == slow.n_pairs == int(np.sum(y > 0) * np.sum(y < 0))
    np.testing.assert_allclose(fast.pair_scores, slow.pair_scores, atol=1e-10)
    assert fast.estimate == slow.estimate


def test_leave_pair_out_with_any_estimator():
    X, y = data(4, n=10)
    res = lpo_auc(LogisticRegression(), X, y)
    assert res.computation == "refits" and res.method == "lpo_auc" and 0.0 <= res.estimate <= 1.0


@pytest.mark.parametrize("seed", range(4))
def test_pooled_and_averaged_against_sklearn(seed):
    X, y = data(seed, n=40)
    model = KernelRLS(regparam=1.0)
    pooled = cv_auc(model, X, y, cv=4, pooling="pooled", rng=seed)
    averaged = cv_auc(model, X, y, cv=4, pooling="averaged", rng=seed)
    assert np.array_equal(pooled.folds, averaged.folds) and np.array_equal(pooled.scores, averaged.scores)
    assert pooled.estimate == pytest.approx(roc_auc_score(y, pooled.scores), abs=1e-15)
    per = [roc_auc_score(y[pooled.folds == f], pooled.scores[pooled.folds == f]) for f in range(4)]
    assert averaged.estimate == pytest.approx(np.mean(per), abs=1e-15)
    for f in range(4):   # each held-out score comes from a model fitted without its fold
        test = pooled.folds == f
        m = KernelRLS(regparam=1.0).fit(X[~test], y[~test])
        np.testing.assert_allclose(pooled.scores[test], m.decision_function(X[test]), atol=1e-12)


def test_one_class_folds_are_skipped_with_a_warning():
    X, y = data(1, n=12)
    folds = np.where(y > 0, 0, 1)
    folds[:2] = 2                       # fold 2 holds one positive and one negative
    with pytest.warns(OneClassFoldWarning, match="2 of 3 folds"):
        res = cv_auc(KernelRLS(), X, y, cv=folds)
    assert res.n_skipped_folds == 2 and np.isnan(res.fold_auc[:2]).all() and res.estimate == res.fold_auc[2]


def test_groups_stay_in_one_fold_and_splitters_are_accepted():
    X, y = data(2, n=30)
    groups = np.repeat(np.arange(10), 3)
    res = cv_auc(KernelRLS(), X, y, cv=5, groups=groups, pooling="pooled")
    assert all(len(np.unique(res.folds[groups == g])) == 1 for g in range(10))
    res2 = cv_auc(KernelRLS(), X, y, cv=KFold(3), pooling="pooled")
    assert np.array_equal(res2.folds, np.repeat(np.arange(3), 10))


def test_bad_input():
    X, y = data(0)
    with pytest.raises(ValueError, match="pooling"):
        cv_auc(KernelRLS(), X, y, pooling="mean")
    with pytest.raises(ValueError, match="`regparam` must be a finite positive number"):
        KernelRLS(regparam=0.0).fit(X, y)
    with pytest.raises(ValueError, match="kernel"):
        KernelRLS(kernel="poly").fit(X, y)
    with pytest.raises(ValueError, match="two classes"):
        auc_score([1, 1], [0.1, 0.2])


def test_command_line(tmp_path, capsys):
    import json

    from cudbound.cli import main
    X, y = data(5, n=20)
    path = tmp_path / "d.csv"
    rows = ["a,b,outcome"] + [f"{a},{b},{'sick' if t > 0 else 'well'}" for (a, b), t in zip(X, y)]
    path.write_text("\n".join(rows) + "\n")
    assert main(["auc", "--data", str(path), "--label", "outcome", "--pos-label", "sick", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    (res,) = rec["results"]
    assert (res["method"], res["quantity"]) == ("lpo_auc", "AUC") and rec["data"]["label_mapping"]["positive"] == "sick"
    assert res["computation"] == "closed form" and res["n_samples"] == 20
    assert res["estimate"] == lpo_auc(KernelRLS(), X, y).estimate and res["n_pairs"] == int(np.sum(y > 0) * np.sum(y < 0))
    assert main(["auc", "--data", str(path), "--label", "outcome", "--pos-label", "sick", "--method", "pooled",
                 "--cv", "4", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    want = cv_auc(KernelRLS(), X, y, cv=4, pooling="pooled", rng=3).estimate
    assert out.startswith(f"AUC {want:.4f}: pooled over 4 stratified folds (seed 3)")
    assert main(["auc", "--data", str(path), "--label", "outcome", "--method", "lpo"]) == 2
    assert "pos-label" in capsys.readouterr().err


def test_a_repeated_splitter_gives_every_fold_of_every_repetition():
    """cv_auc takes its folds from the one helper (cudbound.resampling.splitter_folds): with
    RepeatedStratifiedKFold(4 x 3) each of the 12 folds is scored (it kept 4 and skipped 8)."""
    from sklearn.model_selection import RepeatedStratifiedKFold, StratifiedKFold
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2)); y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    splitter = RepeatedStratifiedKFold(n_splits=4, n_repeats=3, random_state=0)
    res = cv_auc(KernelRLS(), X, y, cv=splitter)
    assert res.fold_auc.shape == (12,) and not np.isnan(res.fold_auc).any() and res.n_skipped_folds == 0
    assert res.folds.shape == res.scores.shape == (3, 30)
    assert res.estimate == pytest.approx(res.fold_auc.mean())
    assert cv_auc(KernelRLS(), X, y, cv=StratifiedKFold(4, shuffle=True, random_state=0)).folds.shape == (30,)
    pooled = cv_auc(KernelRLS(), X, y, cv=splitter, pooling="pooled")
    assert pooled.estimate == pytest.approx(np.mean([auc_score(y, s) for s in pooled.scores]))


def test_cv_auc_takes_a_list_of_fold_labels_and_refuses_what_is_no_cv():
    X = np.arange(12.0)[:, None]; y = np.where(X[:, 0] > 5.5, 1, -1)
    labels = [0, 1, 2] * 4
    res = cv_auc(KernelRLS(), X, y, cv=labels)
    assert res.folds.tolist() == labels
    with pytest.raises(ValueError, match="`cv` must be a number of folds, a scikit-learn splitter"):
        cv_auc(KernelRLS(), X, y, cv=[0, 1])


class _Refitted(KernelRLS):          # the same model, through the refit path (it redefines fit)
    def fit(self, X, y):
        return super().fit(X, y)


@pytest.mark.parametrize("kernel", ["linear", "gaussian"])
@pytest.mark.parametrize("seed", range(6))
def test_leave_pair_out_scores_a_pair_of_equal_rows_alike_as_refits_do(kernel, seed):
    # few distinct rows: many positive-negative pairs share x, and the model without such a pair
    # scores both alike (a tie, 1/2); the closed form's two expressions must not split them by rounding.
    # (Pairs of different rows whose scores tie in theory: the tests after this one.)
    rng = np.random.default_rng(seed)
    X = rng.choice([0.0, 1.0, 3.0], size=(24, 1))
    y = np.where(rng.random(24) < 0.5, 1, -1)
    y[:2] = [1, -1]
    fast = lpo_auc(KernelRLS(regparam=0.5, kernel=kernel, gamma=0.5), X, y)
    slow = lpo_auc(_Refitted(regparam=0.5, kernel=kernel, gamma=0.5), X, y)
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    same = (X[pos, 0][:, None] == X[neg, 0][None, :]).ravel()
    assert same.any() and np.all(fast.pair_scores[same, 0] == fast.pair_scores[same, 1])
    assert np.all(slow.pair_scores[same, 0] == slow.pair_scores[same, 1])
    np.testing.assert_allclose(fast.pair_scores, slow.pair_scores, atol=1e-10)



def _exact_lpo_auc_linear(X, y, regparam, bias):
    """The leave-pair-out AUC of linear kernel RLS in rational arithmetic (fractions): a refit per pair,
    solving (K + lambda I) a = y exactly, so a tie is a tie and a sign is a sign."""
    from fractions import Fraction
    Xq = [[Fraction(v) for v in row] for row in X.tolist()]
    lam, b = Fraction(regparam), Fraction(bias)

    def k(u, v):
        return sum((p * q for p, q in zip(u, v)), Fraction(0)) + b

    def solve(A, rhs):                       # Gauss-Jordan, exact
        m = len(rhs)
        M = [A[r][:] + [rhs[r]] for r in range(m)]
        for c in range(m):
            piv = next(r for r in range(c, m) if M[r][c] != 0)
            M[c], M[piv] = M[piv], M[c]
            for r in range(m):
                if r != c and M[r][c] != 0:
                    f = M[r][c] / M[c][c]
                    M[r] = [x - f * z for x, z in zip(M[r], M[c])]
        return [M[r][m] / M[r][r] for r in range(m)]

    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    total = Fraction(0)
    for i in pos:
        for j in neg:
            keep = [r for r in range(len(y)) if r not in (i, j)]
            A = [[k(Xq[r], Xq[c]) + (lam if r == c else 0) for c in keep] for r in keep]
            a = solve(A, [Fraction(int(y[r])) for r in keep])
            fi = sum((k(Xq[i], Xq[r]) * ar for r, ar in zip(keep, a)), Fraction(0))
            fj = sum((k(Xq[j], Xq[r]) * ar for r, ar in zip(keep, a)), Fraction(0))
            total += 1 if fi > fj else Fraction(1, 2) if fi == fj else 0
    return total / (pos.size * neg.size)


def _rows_tied_in_theory(seed, n=14, k=3):
    # Positive 2c and negative 2c+1 share x[0] and differ only in a column of their own (+1, -1, 0
    # elsewhere): without them that column is zero, so the model ignores it (linear) or scales both
    # scores by the same exp(-gamma) (gaussian), a tie of different rows. Discrete x[0] with balanced
    # labels adds ties of its own (a model whose weight on x[0] is exactly zero).
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    X = np.zeros((n, 1 + k))
    X[:, 0] = rng.choice([0.0, 1.0, 3.0], size=n)
    for c in range(k):
        X[2 * c + 1, 0] = X[2 * c, 0]
        X[2 * c, 1 + c], X[2 * c + 1, 1 + c] = 1.0, -1.0
    return X, y


@pytest.mark.parametrize("seed", range(8))
def test_leave_pair_out_counts_ties_of_different_rows_as_exact_arithmetic_does(seed):
    # rounding splits those ties at about 1e-15, in the closed form and in the refits alike
    X, y = _rows_tied_in_theory(seed)
    exact = _exact_lpo_auc_linear(X, y, regparam=0.5, bias=1.0)
    fast = lpo_auc(KernelRLS(regparam=0.5, kernel="linear"), X, y)
    slow = lpo_auc(_Refitted(regparam=0.5, kernel="linear"), X, y)
    assert fast.estimate == slow.estimate == pytest.approx(float(exact), abs=1e-15)


@pytest.mark.parametrize("seed", range(8))
def test_leave_pair_out_with_a_gaussian_kernel_counts_ties_of_different_rows_alike_in_both_paths(seed):
    X, y = _rows_tied_in_theory(seed)
    fast = lpo_auc(KernelRLS(regparam=0.5, kernel="gaussian", gamma=0.3), X, y)
    slow = lpo_auc(_Refitted(regparam=0.5, kernel="gaussian", gamma=0.3), X, y)
    assert fast.estimate == slow.estimate


def test_pos_label_names_the_positive_class_of_any_labels():
    """cv_auc, lpo_auc and auc_interval take ``pos_label`` like every function that takes labels."""
    from cudbound.auc import auc_interval
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    text = np.where(y > 0, "sick", "well")
    folds = np.arange(30) % 3
    for run in (lambda labels, **kw: cv_auc(KernelRLS(), X, labels, cv=folds, **kw).estimate,
                lambda labels, **kw: lpo_auc(KernelRLS(), X, labels, **kw).estimate,
                lambda labels, **kw: auc_interval(KernelRLS(), X, labels, cv=folds, **kw).estimate):
        assert run(text, pos_label="sick") == run(y)
        assert run(text, pos_label="well") == run(-y)
        with pytest.raises(ValueError, match="pos_label"):
            run(text)
