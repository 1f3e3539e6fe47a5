"""The eigen-solver inside the part-wise PCA kernel (cudbound/pca_parts.py), against LAPACK through
numpy: Householder tridiagonalisation, the tridiagonal solve of inverse iteration, bisection, and
the k leading eigenpairs with the gap rule, on the classes of symmetric matrices the kernel meets
(Gram matrices of every size it builds, rank-deficient ones, clustered and repeated spectra, any
scale) and a few it does not (indefinite)."""
from __future__ import annotations

import numpy as np
import pytest

from cudbound.pca_parts import (_FULL_BELOW, _bisect_top, _eigen_workspace, _gram_rows, _leading_pairs, _top_eigen,
                                _tridiagonal_solve, _tridiagonalize)

GAP = 1e-6


def _gram(rng, s, rank, scale=1.0):
    M = rng.normal(size=(s, rank)) * rng.uniform(0.1, 3.0, rank)
    return scale * (M @ M.T)


def _with_spectrum(rng, w):
    Q = np.linalg.qr(rng.normal(size=(len(w), len(w))))[0]
    A = (Q * np.asarray(w, dtype=float)) @ Q.T
    return (A + A.T) / 2


def _matrices(seed):
    """(name, A) for each class: Gram matrices of sizes 1..60 and ranks below and above the size,
    clustered and exactly repeated spectra, scales 1e-150..1e150, indefinite ones."""
    rng = np.random.default_rng(seed)
    for s in (1, 2, 3, 4, 5, 7, 13, 25, 32, 33, 57, 60):
        yield f"gram s={s} full", _gram(rng, s, s + 5)
        yield f"gram s={s} rank {max(1, s // 3)}", _gram(rng, s, max(1, s // 3))
    for s in (6, 20, 40):
        w = np.repeat(rng.uniform(1, 10, (s + 2) // 3), 3)[:s]
        yield f"clusters of 3, s={s}", _with_spectrum(rng, w + rng.normal(0, 1e-9, s))
        yield f"triple eigenvalues, s={s}", _with_spectrum(rng, w)
        yield f"leading pair 1e-4 apart, s={s}", _with_spectrum(rng, np.r_[5.0, 5.0 - 5e-4, 1.0, rng.uniform(0, 0.5, s - 3)])
    for scale in (1e-150, 1e-20, 1e20, 1e150):
        yield f"gram scaled {scale:g}", _gram(rng, 30, 40, scale)
    for s in (5, 30):
        M = rng.normal(size=(s, s))
        yield f"indefinite s={s}", (M + M.T) / 2
    yield "zero", np.zeros((6, 6))
    yield "identity", np.eye(8)


def _expected(A, k):
    w, U = np.linalg.eigh(A)
    s = len(w)
    top = max(w[-1], 0.0)
    below = max(w[-1 - k], 0.0) if k < s else 0.0
    return w[::-1], U[:, ::-1], bool(top > 0 and w[-k] - below > GAP * top), (w[-k] - below) / max(top, 1e-300)


@pytest.mark.parametrize("solver", [_leading_pairs, _top_eigen])
@pytest.mark.parametrize("seed", range(4))
def test_leading_eigenpairs_match_a_full_eigendecomposition(seed, solver):
    """For k = 1..5: the same gap decision as numpy.linalg.eigh's spectrum gives (none of these
    matrices sits within 1e-8 of the rule's threshold), the k + 1 largest eigenvalues to 1e-9 of |A|,
    and when the rule holds, orthonormal vectors whose span equals eigh's leading subspace to
    1e-13 / gap (the projectors' largest difference), each vector an eigenvector to 1e-9 |A| unless
    its eigenvalue lies in a cluster (then the cluster's span is what is determined). The subset solver
    at every size, and the kernel's choice (LAPACK's eigh below :data:`_FULL_BELOW`, the sizes 1-7 here)."""
    checked = 0
    for name, A in _matrices(seed):
        s = A.shape[0]
        for k in range(1, min(s, 5) + 1):
            w, U, rule, rel_gap = _expected(A, k)
            if rule == (rel_gap > GAP) and abs(rel_gap - GAP) < 1e-8:
                continue
            lam, V = np.empty(k + 1), np.empty((k, s))
            got = solver(A.copy(), k, GAP, lam, V, *_eigen_workspace(s, k))
            assert got == rule, (name, k)
            size = np.abs(w).max()
            m = min(k + 1, s)
            if size > 0:
                np.testing.assert_allclose(lam[:m], w[:m], rtol=0, atol=1e-9 * size, err_msg=f"{name} k={k}")
            if not rule:
                continue
            np.testing.assert_allclose(V @ V.T, np.eye(k), rtol=0, atol=1e-13, err_msg=name)
            P_got, P_eigh = V.T @ V, U[:, :k] @ U[:, :k].T
            assert np.abs(P_got - P_eigh).max() <= 1e-13 / rel_gap, (name, k)
            for c in range(k):
                apart = min([abs(w[c] - w[o]) for o in range(s) if o != c] or [size])
                if apart > 1e-3 * size:
                    residual = np.abs(A @ V[c] - w[c] * V[c]).max()
                    assert residual <= 1e-9 * size, (name, k, c)
            checked += 1
    assert checked > 100                                        # pairs whose vectors were compared


@pytest.mark.parametrize("pad", [0, _FULL_BELOW])
def test_a_spectrum_that_ties_at_k_or_is_zero_is_refused(pad):
    """Both paths of _top_eigen (padded with eigenvalues far below, the matrix reaches the subset solver)."""
    rng = np.random.default_rng(7)
    low = [1e-3 * i for i in range(pad)]
    for w, k in [([3.0, 2.0, 2.0, 1.0, 0.0], 2), ([3.0, 0.0, 0.0, 0.0], 2), ([0.0] * 4, 1), ([-1.0, -2.0, -3.0], 1)]:
        A = _with_spectrum(rng, w + ([-x for x in low] if w[0] <= 0 else ([0.0] * pad if w[1] == 0 else low)))
        s = A.shape[0]
        assert not _top_eigen(A.copy(), k, GAP, np.empty(k + 1), np.empty((k, s)), *_eigen_workspace(s, k))
    A = _with_spectrum(rng, [3.0, 2.0, 2.0 - 3e-6 * 3, 1.0] + low)  # the k-th gap 3e-6 of the largest: kept
    s = A.shape[0]
    assert _top_eigen(A.copy(), 2, GAP, np.empty(3), np.empty((2, s)), *_eigen_workspace(s, 2))


@pytest.mark.parametrize("top", [8.8e-16, -8.8e-16, 0.0])
def test_a_largest_eigenvalue_within_rounding_of_zero_is_zero_on_every_machine(top):
    """The gap rule on the computed eigenvalues: a largest of about eps |A| (as the subset solver returned
    on an AVX-512 machine for an exactly zero one, where others returned <= 0) is refused whatever its sign;
    one of 1e-8 |A| with a clear gap is kept."""
    from cudbound.pca_parts import _gap_rule
    assert not _gap_rule(np.array([top, -1e-3]), 1, 13, GAP, 8e-3)
    assert _gap_rule(np.array([8e-11, -1e-3]), 1, 13, GAP, 8e-3)


@pytest.mark.parametrize("s", [1, 2, 3, 4, 9, 31])
def test_tridiagonalisation_reconstructs_the_matrix(s):
    """A = Q T Q' with Q = H_0 ... H_{s-3} orthogonal, T tridiagonal from (d, e), to 1e-13 |A|."""
    rng = np.random.default_rng(s)
    M = rng.normal(size=(s, s))
    A = (M + M.T) / 2
    d, e, tau, H = np.empty(s), np.zeros(max(s - 1, 1)), np.zeros(max(s - 2, 1)), np.empty((max(s - 2, 1), s))
    _tridiagonalize(A.copy(), d, e, tau, H, np.empty(s), np.empty(s))
    T = np.diag(d) + np.diag(e[:s - 1], 1) + np.diag(e[:s - 1], -1)
    Q = np.eye(s)
    for j in range(s - 2):
        Q = Q @ (np.eye(s) - tau[j] * np.outer(H[j], H[j]))
    np.testing.assert_allclose(Q @ Q.T, np.eye(s), rtol=0, atol=1e-13)
    np.testing.assert_allclose(Q @ T @ Q.T, A, rtol=0, atol=1e-13 * np.abs(A).max())


def test_the_tridiagonal_solve_of_inverse_iteration_matches_a_dense_solve():
    """(T - sigma I) x = b by elimination with row interchanges, against numpy.linalg.solve, for shifts
    that make the first pivot zero, that need interchanges, and ordinary ones; a singular system gets
    the tiny pivot and stays finite."""
    rng = np.random.default_rng(11)
    for s in (1, 2, 3, 5, 12, 40):
        for trial in range(6):
            d, e = rng.normal(size=s), rng.normal(size=max(s - 1, 1)) * (10.0 if trial % 2 else 0.1)
            sigma = d[0] if trial == 0 else rng.normal()
            b = rng.normal(size=s)
            T = np.diag(d - sigma) + np.diag(e[:s - 1], 1) + np.diag(e[:s - 1], -1)
            if abs(np.linalg.det(T)) < 1e-8:
                continue
            x = b.copy()
            work = [np.empty(s) for _ in range(4)]
            _tridiagonal_solve(d, e, sigma, x, 1e-300, *work, np.empty(s, dtype=np.bool_))
            np.testing.assert_allclose(T @ x, b, rtol=0, atol=1e-9 * np.abs(T).max() * np.abs(x).max())
    d, e = np.array([1.0, 1.0]), np.array([0.0])                        # T - I singular
    x = np.array([1.0, 1.0])
    _tridiagonal_solve(d, e, 1.0, x, 1e-16, *[np.empty(2) for _ in range(4)], np.empty(2, dtype=np.bool_))
    assert np.all(np.isfinite(x)) and np.abs(x).max() > 1e15


def test_bisection_finds_the_largest_eigenvalues_of_a_tridiagonal_matrix():
    rng = np.random.default_rng(5)
    for s in (1, 2, 6, 30, 60):
        d, e = rng.normal(size=s), rng.normal(size=max(s - 1, 1))
        e[: s - 1: 4] = 0.0                                              # split into blocks too
        T = np.diag(d) + np.diag(e[:s - 1], 1) + np.diag(e[:s - 1], -1)
        w = np.linalg.eigvalsh(T)[::-1]
        bound = np.abs(T).sum(axis=1).max()
        count = min(4, s)
        lam = np.empty(count)
        _bisect_top(d, e[:max(s - 1, 1)] ** 2, count, -bound - 1e-12, bound + 1e-12, 1e-300, 1e-12, lam,
                    *[np.empty(count) for _ in range(4)], np.empty(count, dtype=np.int64))
        np.testing.assert_allclose(lam, w[:count], rtol=0, atol=4e-12 * bound)


def test_the_gram_matrix_sums_each_entry_in_order():
    """_gram_rows(P, A): A = P P' bit for bit as the plain in-order sum of each entry (its four side-by-side
    sums change nothing but speed), for row counts around the block of four."""
    rng = np.random.default_rng(2)
    for size in (1, 3, 4, 5, 9):
        P = rng.normal(size=(size, 17))
        A = np.empty((size, size))
        _gram_rows(P, A)
        for a in range(size):
            for b in range(size):
                total = 0.0
                for t in range(P.shape[1]):
                    total += P[a, t] * P[b, t]
                assert A[a, b] == total


def test_nan_or_inf_in_the_matrix_is_refused_not_raised():
    """A NaN anywhere (even where the bisection for the smallest eigenvalues would not see it) or an
    infinite entry: the part is refused (False), never an exception, at every k."""
    rng = np.random.default_rng(8)
    M = rng.normal(size=(12, 15))
    for s in (9, 12):
        for bad in (np.nan, np.inf):
            A = M[:s] @ M[:s].T
            A[5, 5] = bad
            for k in range(1, s + 1):
                assert not _leading_pairs(A.copy(), k, GAP, np.empty(k + 1), np.empty((k, s)), *_eigen_workspace(s, k))


@pytest.mark.parametrize("m, d", [(30, 12), (24, 30), (40, 57)])
def test_the_kernel_equals_pca_fits_svd_where_the_subset_solver_runs(m, d):
    """pca_part_designs on bootstrap parts whose Gram matrix is 9 x 9 or larger (the subset solver's
    sizes; tests/test_basis.py covers 5 x 5): each part's design equals PCABasis.fit's on the part's rows
    repeated by their counts (SVD, same sign rule) to 1e-10, with the intercept, standardised or not."""
    from cudbound.basis import _GRAM_GAP, PCABasis
    from cudbound.pca_parts import pca_part_designs
    rng = np.random.default_rng(m + d)
    X = rng.normal(size=(m, d)) * rng.uniform(0.2, 5.0, d) @ np.linalg.qr(rng.normal(size=(d, d)))[0] + rng.normal(0, 3, d)
    W = rng.multinomial(m, np.ones(m) / m, size=12).astype(float)
    for standardize in (False, True):
        designs, ok, _ = pca_part_designs(X[None], np.abs(X[None]), W, 3, standardize, True, _GRAM_GAP)
        assert ok.all()
        for g in range(len(W)):
            rows = np.repeat(np.arange(m), W[g].astype(int))
            basis = PCABasis(3, standardize=standardize).fit(X[rows])
            expected = basis.transform(X)
            assert min(len(np.unique(rows)), d) >= 9
            np.testing.assert_allclose(designs[g], expected, rtol=0, atol=1e-10 * np.abs(expected).max())


def test_the_work_space_grows_with_the_gram_matrix_not_with_n_squared():
    """60,000 rows of 3 features: the Gram matrices are 3 x 3, and so is the work space (sized by
    min(n, d), not max(n, d): that asked for 3 x 60,000^2 doubles, 86 GB, and raised MemoryError)."""
    from cudbound.pca_parts import pca_part_designs
    rng = np.random.default_rng(9)
    X = rng.normal(size=(1, 60_000, 3))
    W = np.zeros((2, 60_000))
    W[0, :100], W[1, 100:300] = 1.0, 2.0
    designs, ok, _ = pca_part_designs(X, np.abs(X), W, 2, True, True, GAP)
    assert ok.all() and designs.shape == (2, 60_000, 3) and np.all(np.isfinite(designs))
