"""The compiled kernels' dense factorisations and solves against numpy and scipy."""
import numpy as np
import pytest
import scipy.linalg

from cudbound.optim.linear_solve import (cholesky, forward_solve, least_squares, lu_factor, lu_solve, lu_solve_t,
                                         row_basis, row_dot, solve_in_place, times_cols)


def _square(seed, n):
    gen = np.random.default_rng(seed)
    return gen.standard_normal((n, n)) + n * np.eye(n) * gen.uniform(0.0, 1.0), gen.standard_normal(n)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_lu_solves_with_b_and_its_transpose(seed, n):
    B, rhs = _square(seed, n)
    big = np.zeros((n + 2, n + 2))                 # the kernels pass scratch larger than n
    big[:n, :n] = B
    LU, perm = np.empty_like(big), np.empty(n + 2, dtype=np.int64)
    assert lu_factor(big, LU, perm, n, 1e-13)
    out, z = np.empty(n + 2), np.empty(n + 2)
    lu_solve(LU, perm, np.r_[rhs, 0.0, 0.0], out, n)
    np.testing.assert_allclose(out[:n], np.linalg.solve(B, rhs), rtol=1e-10, atol=1e-12)
    lu_solve_t(LU, perm, rhs, out, z, n)
    np.testing.assert_allclose(out[:n], np.linalg.solve(B.T, rhs), rtol=1e-10, atol=1e-12)
    M, x = B.copy(), np.empty(n)
    assert solve_in_place(M, rhs, x, n, np.empty(n, dtype=np.int64), 1e-13)
    np.testing.assert_allclose(x, np.linalg.solve(B, rhs), rtol=1e-10, atol=1e-12)


def test_lu_reports_a_singular_or_non_finite_matrix():
    n = 3
    perm = np.empty(n, dtype=np.int64)
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]])
    assert not lu_factor(singular, np.empty((n, n)), perm, n, 1e-13)
    assert not lu_factor(np.zeros((n, n)), np.empty((n, n)), perm, n, 1e-13)
    bad = np.eye(n)
    bad[1, 2] = np.nan
    assert not lu_factor(bad, np.empty((n, n)), perm, n, 1e-13)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n", [1, 3, 6])
def test_cholesky_and_forward_solve(seed, n):
    gen = np.random.default_rng(seed)
    A = gen.standard_normal((n + 2, n))
    M = A.T @ A + 0.1 * np.eye(n)
    L = np.zeros((n, n))
    assert cholesky(M, L, n, 1e-12)
    np.testing.assert_allclose(np.tril(L), np.linalg.cholesky(M), rtol=1e-10, atol=1e-12)
    rhs, x = gen.standard_normal(n), np.empty(n)
    forward_solve(L, rhs, x, n)
    np.testing.assert_allclose(x, scipy.linalg.solve_triangular(np.tril(L), rhs, lower=True),
                               rtol=1e-10, atol=1e-12)
    assert not cholesky(-M, np.zeros((n, n)), n, 0.0)


def test_forward_solve_reads_only_the_leading_block_and_the_lower_triangle():
    gen = np.random.default_rng(3)
    L = gen.standard_normal((5, 5)) + 4 * np.eye(5)
    x = np.full(5, 7.0)
    forward_solve(L, gen.standard_normal(5), x, 3)
    assert np.all(x[3:] == 7.0)
    rhs = gen.standard_normal(3)
    forward_solve(L, rhs, x, 3)
    np.testing.assert_allclose(x[:3], np.linalg.solve(np.tril(L[:3, :3]), rhs), rtol=1e-12)


@pytest.mark.parametrize("rows,cols,inner", [(1, 1, 1), (3, 2, 4), (4, 4, 4), (2, 5, 3)])
def test_times_cols_is_the_leading_blocks_product(rows, cols, inner):
    gen = np.random.default_rng(rows * 100 + cols * 10 + inner)
    A, B = gen.standard_normal((6, 6)), gen.standard_normal((6, 6))
    out = np.full((6, 6), 9.0)
    times_cols(A, B, out, rows, cols, inner)
    np.testing.assert_allclose(out[:rows, :cols], A[:rows, :inner] @ B[:inner, :cols], rtol=1e-12, atol=1e-14)
    assert np.all(out[rows:, :] == 9.0) and np.all(out[:, cols:] == 9.0)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("p", [1, 3, 5, 31])
def test_row_dot_is_the_row_product_summed_in_index_order(seed, p):
    gen = np.random.default_rng(seed)
    A, x = gen.standard_normal((6, p)), gen.standard_normal(p)
    for k in range(A.shape[0]):
        t = 0.0
        for i in range(p):              # the order the kernels' decisions rely on, bit for bit
            t += A[k, i] * x[i]
        assert row_dot(A, k, x) == t
        np.testing.assert_allclose(row_dot(A, k, x), A[k] @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_least_squares_is_lstsq_on_independent_columns(seed):
    """The small least-squares solve equals LAPACK's (np.linalg.lstsq) to round-off on columns of
    every scale and conditioning up to 1e8, with g in their span (the KKT certificate's case) or not;
    on dependent columns (one a multiple or a sum of others, or zero) it declines and writes nothing."""
    rng = np.random.default_rng(4_400_500 + seed)
    m = int(rng.integers(1, 9))
    k = int(rng.integers(1, m + 1))
    N = rng.standard_normal((m, k)) * 10.0 ** rng.uniform(-3, 3, size=k)
    if k > 1 and seed % 3 == 0:    # ill-conditioned: two nearly parallel columns
        N[:, 1] = N[:, 0] * 2.0 + 1e-8 * np.abs(N[:, 0]).max() * rng.standard_normal(m)
    g = N @ rng.standard_normal(k) if seed % 2 else rng.standard_normal(m)
    lam = np.full(k, np.nan)
    assert least_squares(np.ascontiguousarray(N.T), g, lam)
    want = np.linalg.lstsq(N, g, rcond=None)[0]
    r_got, r_want = g - N @ lam, g - N @ want
    scale = np.abs(N).sum(axis=0) @ np.abs(want) + np.linalg.norm(g)
    assert np.linalg.norm(r_got) <= np.linalg.norm(r_want) + 1e-12 * scale
    cond = np.linalg.cond(N)
    assert np.allclose(lam, want, rtol=1e-13 * cond, atol=1e-13 * cond * np.abs(want).max())


@pytest.mark.parametrize("make", ["multiple", "sum", "zero"])
def test_least_squares_declines_dependent_columns(make):
    rng = np.random.default_rng(4_400_600)
    N = rng.standard_normal((6, 3))
    N[:, 2] = {"multiple": 3.0 * N[:, 0], "sum": N[:, 0] - N[:, 1], "zero": 0.0}[make]
    lam = np.full(3, 7.0)
    assert not least_squares(np.ascontiguousarray(N.T), rng.standard_normal(6), lam)
    assert np.all(lam == 7.0)


@pytest.mark.parametrize("seed", range(20))
def test_row_basis_spans_the_rows_and_finds_their_rank(seed):
    """U[:rank] orthonormal, N[:r] = R U (R lower triangular on independent rows), and the rank of
    rows of which some repeat or combine others."""
    rng = np.random.default_rng(4_400_800 + seed)
    p = int(rng.integers(1, 7))
    r = int(rng.integers(1, p + 2))
    N = rng.standard_normal((r, p)) * 10.0 ** rng.uniform(-3, 3, size=(r, 1))
    if r >= 2 and seed % 2:
        N[-1] = N[0] - 2.0 * N[min(1, r - 2)]
    U, R, v = np.zeros((p, p)), np.zeros((r, p)), np.empty(p)
    rank = row_basis(N, r, p, U, R, v)
    assert rank == np.linalg.matrix_rank(N)
    assert np.allclose(U[:rank] @ U[:rank].T, np.eye(rank), atol=1e-14)
    assert np.allclose(R[:, :rank] @ U[:rank], N, rtol=0.0, atol=1e-12 * np.abs(N).max())
    if rank == r:
        assert np.all(np.triu(R[:, :rank], 1) == 0.0)
