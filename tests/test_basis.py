"""Basis expansions: column counts, values, fitting on the training set only, make_basis."""
import math

import numpy as np
import pytest

import cudbound
from cudbound.basis import (Basis, ColumnBasis, ComposedBasis, FunctionBasis, LinearBasis, PCABasis, PolynomialBasis,
                            make_basis)

TINY = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]])


@pytest.fixture
def train_test():
    rng = np.random.default_rng(7)
    mix = np.array([[2.0, 0.3, 0.0], [0.0, 1.0, 0.5], [0.0, 0.0, 0.2]])
    return rng.standard_normal((40, 3)) @ mix + 5.0, rng.standard_normal((10, 3)) @ mix - 1.0


# ------------------------------------------------------------------ LinearBasis

def test_linear_is_intercept_then_features():
    Phi = LinearBasis().fit_transform(TINY)
    np.testing.assert_array_equal(Phi, np.column_stack([np.ones(3), TINY]))


def test_linear_without_intercept_is_identity():
    np.testing.assert_array_equal(LinearBasis(intercept=False).fit_transform(TINY), TINY)


def test_one_dimensional_input_is_one_feature():
    Phi = LinearBasis().fit_transform(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(Phi, [[1, 1], [1, 2], [1, 3]])


@pytest.mark.parametrize("make", [LinearBasis, lambda: PolynomialBasis(2), lambda: PCABasis(2)])
def test_fit_returns_self_and_fit_transform_matches(train_test, make):
    X, _ = train_test
    basis = make()
    assert basis.fit(X) is basis
    np.testing.assert_array_equal(basis.transform(X), make().fit_transform(X))


def test_transform_before_fit_is_an_error():
    with pytest.raises(RuntimeError, match="not fitted"):
        LinearBasis().transform(TINY)


def test_transform_checks_the_number_of_features():
    basis = LinearBasis().fit(TINY)
    with pytest.raises(ValueError, match="3 features but the basis was fitted on 2"):
        basis.transform(np.ones((2, 3)))


def test_transform_rejects_non_finite_input():
    basis = LinearBasis().fit(TINY)
    with pytest.raises(ValueError, match="NaN at row 1, column 0"):
        basis.transform(np.array([[0.0, 1.0], [np.nan, 1.0]]))


# ------------------------------------------------------------------ ColumnBasis

@pytest.mark.parametrize("spec, columns", [
    ("cols:0-1", [0, 1]), ("cols:2-3", [2, 3]), ("COLS: 1 - 3", [1, 2, 3]), ("cols:3", [3]),
    ("cols:3,0,2", [3, 0, 2]), ("cols:0-1,3", [0, 1, 3]),
])
def test_column_basis_is_the_intercept_then_the_selected_columns(spec, columns):
    X = np.random.default_rng(1).normal(size=(7, 4))
    basis = make_basis(spec)
    assert isinstance(basis, ColumnBasis) and list(basis.columns) == columns
    np.testing.assert_array_equal(basis.fit_transform(X), np.column_stack([np.ones(7), X[:, columns]]))
    np.testing.assert_array_equal(ColumnBasis(columns, intercept=False).fit_transform(X), X[:, columns])
    assert not basis.learns_from_data


def test_column_basis_learns_nothing_from_the_rows():
    rng = np.random.default_rng(2)
    X, other = rng.normal(size=(6, 4)), rng.normal(size=(9, 4)) * 100
    np.testing.assert_array_equal(make_basis("cols:1-2").fit(X).transform(other),
                                  make_basis("cols:1-2").fit(other).transform(other))


@pytest.mark.parametrize("spec", ["cols", "cols:", "cols:a", "cols:2-1", "cols:-1", "cols:0-1-2", "cols:0,0",
                                  "cols:0-2,1", "cols:1.5", "poly:2(cols:1-0)"])
def test_make_basis_bad_column_specs(spec):
    with pytest.raises(ValueError, match="`basis` must be .* 'cols:I-J' or 'cols:I,J,K'"):
        make_basis(spec)


@pytest.mark.parametrize("spec, column", [("cols:0-4", 4), ("cols:7", 7), ("poly:2(cols:2-4)", 4)])
def test_columns_outside_the_data_fail_at_fit(spec, column):
    with pytest.raises(ValueError, match=f"selects column {column} but X has 4 feature column"):
        make_basis(spec).fit(np.ones((5, 4)))
    with pytest.raises(ValueError, match="at least one column"):
        ColumnBasis([])


def test_a_polynomial_in_selected_columns_is_the_polynomial_of_those_columns():
    rng = np.random.default_rng(3)
    Xtr, Xte = rng.normal(size=(12, 5)), rng.normal(size=(6, 5))
    basis = make_basis("poly:2(cols:3-4)").fit(Xtr)
    assert isinstance(basis, ComposedBasis) and not basis.learns_from_data
    for X in (Xtr, Xte):
        np.testing.assert_array_equal(basis.transform(X), PolynomialBasis(2).fit(X[:, 3:]).transform(X[:, 3:]))
    assert make_basis("zpca:1(cols:0-2)").learns_from_data   # an outer basis that learns still does


def test_a_selected_column_constant_on_the_rows_is_kept():
    """The kept columns after a selection are fixed (as ``poly:2`` keeps every feature): a selected
    column constant on the training rows stays, and the design is rank-deficient, not narrower."""
    X = np.column_stack([np.ones(6), np.arange(6.0), np.zeros(6)])
    design = make_basis("poly:2(cols:1-2)").fit_transform(X)
    np.testing.assert_array_equal(design, PolynomialBasis(2).fit_transform(X[:, 1:]))
    assert make_basis("poly:2(linear)").fit_transform(X).shape[1] == 1 + 1 + 1   # other inner bases drop it


# ------------------------------------------------------------------ PolynomialBasis

def test_poly_degree_2_columns_and_values():
    Phi = PolynomialBasis(2).fit_transform(TINY)
    # 1, x1, x2, x1^2, x1 x2, x2^2
    expected = np.array([
        [1, 1.0, 2.0, 1.0, 2.0, 4.0],
        [1, 3.0, -1.0, 9.0, -3.0, 1.0],
        [1, 0.5, 0.0, 0.25, 0.0, 0.0],
    ])
    np.testing.assert_allclose(Phi, expected)


@pytest.mark.parametrize("d, degree", [(1, 1), (1, 4), (2, 2), (2, 3), (3, 2), (4, 3)])
def test_poly_column_count_is_all_monomials_up_to_degree(d, degree):
    Phi = PolynomialBasis(degree).fit_transform(np.ones((2, d)))
    assert Phi.shape == (2, math.comb(d + degree, degree))  # includes the intercept


def test_poly_degree_1_is_linear(train_test):
    X, _ = train_test
    np.testing.assert_array_equal(PolynomialBasis(1).fit_transform(X), LinearBasis().fit_transform(X))


@pytest.mark.parametrize("degree", [0, -1, 1.5, True, "2"])
def test_poly_bad_degree(degree):
    with pytest.raises(ValueError, match="`degree` must be a positive integer"):
        PolynomialBasis(degree).fit(TINY)


# ------------------------------------------------------------------ PCABasis

def test_pca_matches_numpy_svd_and_uses_train_statistics(train_test):
    X, X_new = train_test
    k = 2
    basis = PCABasis(k).fit(X)
    mean = X.mean(axis=0)
    _, _, vt = np.linalg.svd(X - mean, full_matrices=False)
    np.testing.assert_allclose(basis.mean_, mean)
    # components agree with the SVD up to the sign of each one
    signs = np.sign(np.sum(basis.components_ * vt[:k], axis=1))
    np.testing.assert_allclose(basis.components_, vt[:k] * signs[:, None], atol=1e-12)

    Phi_new = basis.transform(X_new)
    assert Phi_new.shape == (len(X_new), k + 1)
    np.testing.assert_array_equal(Phi_new[:, 0], 1.0)
    # new data are centred by the *training* mean and projected on the *training* components
    np.testing.assert_allclose(Phi_new[:, 1:], (X_new - mean) @ (vt[:k] * signs[:, None]).T, atol=1e-12)
    refit = PCABasis(k).fit(X_new).transform(X_new)
    assert not np.allclose(refit, Phi_new)


def test_pca_training_scores_are_centred_and_uncorrelated(train_test):
    X, _ = train_test
    scores = PCABasis(3, intercept=False).fit_transform(X)
    np.testing.assert_allclose(scores.mean(axis=0), 0.0, atol=1e-12)
    cov = scores.T @ scores
    np.testing.assert_allclose(cov - np.diag(np.diag(cov)), 0.0, atol=1e-9)
    assert np.all(np.diff(np.diag(cov)) <= 0)  # decreasing variance


def test_pca_sign_convention_is_reproducible(train_test):
    X, _ = train_test
    comps = PCABasis(2).fit(X).components_
    largest = comps[np.arange(2), np.argmax(np.abs(comps), axis=1)]
    assert np.all(largest > 0)
    np.testing.assert_array_equal(PCABasis(2).fit(X[::-1]).components_.round(12), comps.round(12))


def test_standardised_pca_is_the_pca_of_training_z_scores(train_test):
    X, X_new = train_test
    X = X * np.array([1.0, 1000.0, 0.001])[: X.shape[1]]
    X_new = X_new * np.array([1.0, 1000.0, 0.001])[: X.shape[1]]
    mean, sd = X.mean(axis=0), X.std(axis=0)
    basis = PCABasis(2, standardize=True).fit(X)
    plain = PCABasis(2).fit((X - mean) / sd)
    np.testing.assert_allclose(basis.transform(X_new), plain.transform((X_new - mean) / sd), atol=1e-9)
    # invariant to the units of each feature; the unstandardised PCA is not
    rescaled = PCABasis(2, standardize=True).fit(X * 7.0).transform(X_new * 7.0)
    np.testing.assert_allclose(rescaled, basis.transform(X_new), atol=1e-9)


def test_standardised_pca_leaves_a_constant_training_column_unscaled():
    X = np.column_stack([np.arange(6.0), np.full(6, 3.0), np.arange(6.0) ** 2])
    basis = PCABasis(2, standardize=True).fit(X)
    assert basis.scale_[1] == 1.0
    assert np.all(np.isfinite(basis.transform(X + 1.0)))


@pytest.mark.parametrize("k", [0, 4, 1.5, True])
def test_pca_bad_number_of_components(train_test, k):
    X, _ = train_test
    with pytest.raises(ValueError, match="`n_components` must be an integer between 1 and"):
        PCABasis(k).fit(X)


# ------------------------------------------------------------------ FunctionBasis

def test_function_basis_uses_the_map_as_is():
    basis = FunctionBasis(lambda X: np.column_stack([np.ones(len(X)), X[:, 0] * X[:, 1]]))
    np.testing.assert_array_equal(basis.fit_transform(TINY), [[1, 2.0], [1, -3.0], [1, 0.0]])


def test_function_basis_must_be_callable():
    with pytest.raises(TypeError, match="`func` must be callable"):
        FunctionBasis(3)


def test_function_basis_row_count_and_finiteness_are_checked():
    with pytest.raises(ValueError, match="returned 2 rows for 3 inputs"):
        FunctionBasis(lambda X: X[:2]).fit_transform(TINY)
    with pytest.raises(ValueError, match="basis function output.*infinite value"):
        FunctionBasis(lambda X: np.where(X == 0, np.inf, X)).fit_transform(TINY)


# ------------------------------------------------------------------ make_basis

@pytest.mark.parametrize("spec, cls, attrs", [
    ("linear", LinearBasis, {}),
    ("  Linear ", LinearBasis, {}),
    (None, LinearBasis, {}),
    ("poly:3", PolynomialBasis, {"degree": 3}),
    ("polynomial:2", PolynomialBasis, {"degree": 2}),
    ("pca:2", PCABasis, {"n_components": 2}),
    ("PCA:1", PCABasis, {"n_components": 1}),
    ("zpca:3", PCABasis, {"n_components": 3, "standardize": True}),
])
def test_make_basis_strings(spec, cls, attrs):
    basis = make_basis(spec)
    assert type(basis) is cls
    for name, value in attrs.items():
        assert getattr(basis, name) == value


def test_make_basis_passes_instances_and_wraps_callables():
    basis = PolynomialBasis(2)
    assert make_basis(basis) is basis
    wrapped = make_basis(np.sin)
    assert isinstance(wrapped, FunctionBasis) and wrapped.func is np.sin


@pytest.mark.parametrize("spec", ["poly", "poly:", "poly:x", "pca", "pca:two", "quadratic", "linear:2", "", 3, 2.5])
def test_make_basis_bad_specs(spec):
    with pytest.raises(ValueError, match="`basis` must be 'linear', 'poly:D'"):
        make_basis(spec)


def test_make_basis_out_of_range_numbers_fail_at_fit():
    with pytest.raises(ValueError, match="`degree`"):
        make_basis("poly:0").fit(TINY)
    with pytest.raises(ValueError, match="`n_components`"):
        make_basis("pca:5").fit(TINY)


# ------------------------------------------------------------------ composed bases

@pytest.mark.parametrize("spec, outer, inner, standardize", [
    ("poly:2(zpca:2)", 2, 2, True),
    (" POLY:3(pca:1) ", 3, 1, False),
])
def test_make_basis_composed_strings(spec, outer, inner, standardize):
    basis = make_basis(spec)
    assert isinstance(basis, ComposedBasis)
    assert basis.outer.degree == outer and basis.inner.n_components == inner
    assert basis.inner.standardize is standardize


@pytest.mark.parametrize("spec", ["poly:2(zpca:2", "poly:2()", "poly:2(zpca:2(pca:1))", "(pca:2)", "poly:2(foo:1)"])
def test_make_basis_rejects_malformed_composition(spec):
    with pytest.raises(ValueError, match="`basis` must be"):
        make_basis(spec)


def test_composed_basis_equals_polynomial_of_the_pca_scores():
    rng = np.random.default_rng(3)
    Xtr, Xte = rng.normal(size=(25, 6)) * [1, 10, 100, 1, 1, 5], rng.normal(size=(9, 6))
    basis = make_basis("poly:2(zpca:3)").fit(Xtr)
    pca = PCABasis(3, standardize=True).fit(Xtr)
    poly = PolynomialBasis(2).fit(pca.transform(Xtr)[:, 1:])
    for X in (Xtr, Xte):
        expected = poly.transform(pca.transform(X)[:, 1:])
        np.testing.assert_allclose(basis.transform(X), expected)
    assert basis.transform(Xte).shape == (9, 1 + 3 + 6)
    assert basis.intercept


def test_composed_basis_fits_on_training_data_only_and_checks_width():
    rng = np.random.default_rng(4)
    Xtr = rng.normal(size=(20, 4))
    basis = make_basis("poly:2(pca:2)").fit(Xtr)
    before = basis.transform(Xtr[:5]).copy()
    basis.transform(rng.normal(size=(50, 4)) * 1000)
    np.testing.assert_array_equal(basis.transform(Xtr[:5]), before)
    with pytest.raises(ValueError, match="fitted on 4"):
        basis.transform(rng.normal(size=(3, 5)))
    with pytest.raises(RuntimeError, match="not fitted"):
        make_basis("poly:2(pca:2)").transform(Xtr)
    with pytest.raises(TypeError):
        ComposedBasis("poly", PCABasis(2))


def test_composed_basis_drops_constant_inner_columns():
    """A user's function that returns its own constant column: dropped, not squared into a
    rank-deficient design; an inner basis constant everywhere is refused."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    inner = FunctionBasis(lambda Z: np.column_stack([np.ones(len(Z)), Z[:, :2]]))
    design = ComposedBasis(PolynomialBasis(2), inner).fit_transform(X)
    assert design.shape == (30, 6) and np.linalg.matrix_rank(design) == 6
    np.testing.assert_allclose(design, make_basis("poly:2").fit_transform(X[:, :2]))
    with pytest.raises(ValueError, match="constant on the training set"):
        ComposedBasis(PolynomialBasis(2), FunctionBasis(lambda Z: np.ones((len(Z), 2)))).fit(X)


def test_whole_float_sizes_count_as_integers(train_test):
    X, _ = train_test
    np.testing.assert_array_equal(PCABasis(2.0).fit_transform(X), PCABasis(2).fit_transform(X))
    np.testing.assert_array_equal(PolynomialBasis(2.0).fit_transform(X), PolynomialBasis(2).fit_transform(X))


def test_the_compiled_part_pcas_equal_fits_svd_and_flag_a_spectrum_that_ties():
    """pca_parts.pca_part_designs: on parts of rows with a known spectrum (tall: the d x d Gram
    matrix; wide: the part's m x m one), each part's design equals PCABasis.fit's on the part (SVD,
    same sign rule) to 1e-10; where the k-th singular value ties the next one exactly (no subspace to
    find) or is zero, the part is flagged (not ok) and the others are not (unstandardised); a stack of features (one X
    per part, as a composed basis passes them) gives what each X gives alone. The scores' terms are
    ``PCABasis.transform_terms``'s of the part's fit."""
    from cudbound.basis import _GRAM_GAP
    from cudbound.pca_parts import pca_part_designs
    rng = np.random.default_rng(3)

    def with_spectrum(m, d, s):        # centred columns (U orthogonal to 1), singular values s
        U = np.linalg.qr(np.column_stack([np.ones(m), rng.normal(size=(m, m - 1))]))[0][:, 1:len(s) + 1]
        V = np.linalg.qr(rng.normal(size=(d, d)))[0][:, :len(s)]
        return (U * s) @ V.T

    for m, d in [(12, 5), (5, 12)]:
        parts = [rng.normal(size=(m, d)) * rng.uniform(0.1, 10, d) + rng.normal(0, 5, d) for _ in range(6)]
        parts += [with_spectrum(m, d, [3.0, 2.0, 2.0, 1.0]),            # a tie at k = 2
                  with_spectrum(m, d, [3.0, 0.0, 0.0, 0.0])]            # zero at k = 2
        X3 = np.stack(parts)
        for standardize in (False, True):
            designs, ok, terms = pca_part_designs(X3, np.abs(X3), np.ones((len(parts), m)), 2, standardize, True,
                                                  _GRAM_GAP)
            # standardising rescales the columns: the designed spectra hold for the raw features only
            assert ok.tolist()[:6] == [True] * 6 and (standardize or ok.tolist()[6:] == [False, False])
            for g in range(6):
                fitted = PCABasis(2, standardize=standardize).fit(parts[g])
                expected = fitted.transform(parts[g])
                np.testing.assert_allclose(designs[g], expected, rtol=0, atol=1e-10 * np.abs(expected).max())
                np.testing.assert_allclose(terms[g], fitted.transform_terms(parts[g]), rtol=1e-9)
                alone, ok_alone, _ = pca_part_designs(parts[g][None], np.abs(parts[g][None]), np.ones((1, m)), 2,
                                                      standardize, True, _GRAM_GAP)
                np.testing.assert_array_equal(alone[0], designs[g])
                assert ok_alone[0]


class _TransformOnly(Basis):
    """A user's basis written to the class docstring: ``fit`` and ``transform`` only."""

    def fit(self, X):
        super().fit(X)
        self.m_ = np.asarray(X, dtype=float).mean(axis=0)
        return self

    def transform(self, X):
        X = np.asarray(X, dtype=float)
        return np.column_stack([np.ones(len(X)), X - self.m_])


class _TwoArgumentRefits(PCABasis):
    """A user's batched form written before ``refit_designs`` took the inner basis's terms: (X, weights) only."""

    def refit_designs(self, X, weights):
        return None


def test_a_users_basis_written_before_the_terms_still_works():
    """A basis that overrides ``transform`` (not ``_columns``) has the terms |Phi| (its entries count as exact),
    and a batched form taking (X, weights) only is called so, inside a composition too: the same design,
    coefficients and refits as before the terms (2026-12-04)."""
    from cudbound.design import prepare_data
    from cudbound.refit import refits_for

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    data = prepare_data(X, y, _TransformOnly(), None, None)
    np.testing.assert_array_equal(data.design_terms, np.abs(data.design))
    plain = prepare_data(X, y, "linear", None, None)
    res, ref = (cudbound.cud_interval(X, y, cudbound.Procedure(basis=b), n_resamples=20, rng=1)
                for b in (_TransformOnly(), "linear"))
    assert res.confidence_interval == ref.confidence_interval
    W = rng.multinomial(30, np.full(30, 1 / 30), size=4).astype(float)
    np.testing.assert_allclose(refits_for(data, loss="squared").scored(W)[0],
                               refits_for(plain, loss="squared").scored(W)[0], rtol=1e-9, atol=1e-9)
    composed = prepare_data(X, y, ComposedBasis(PolynomialBasis(2), _TwoArgumentRefits(2)), None, None)
    reference = prepare_data(X, y, ComposedBasis(PolynomialBasis(2), PCABasis(2)), None, None)
    np.testing.assert_allclose(refits_for(composed, loss="squared").scored(W)[0],
                               refits_for(reference, loss="squared").scored(W)[0], rtol=1e-7, atol=1e-7)


def test_a_function_basis_runs_once_per_design():
    """A user's function (its entries counted as exact) is called once when the data are prepared, not again
    for the terms of its entries (|phi|), nor by the refits (a basis that learns nothing keeps its design)."""
    from cudbound.design import prepare_data
    from cudbound.refit import refits_for

    calls = []

    def expand(X):
        calls.append(len(X))
        return np.column_stack([np.ones(len(X)), X, X[:, :1] ** 2])

    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 2))
    y = np.where(X[:, 0] + rng.normal(size=20) > 0, 1, -1)
    data = prepare_data(X, y, expand, None, None)
    assert calls == [20]
    np.testing.assert_array_equal(data.design_terms, np.abs(data.design))
    refits_for(data, loss="squared").scored(np.ones((2, 20)))
    assert calls == [20]
