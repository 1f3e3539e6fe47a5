"""The compiled least squares on many parts (cudbound/optim/squared_parts.py) against the stacked
numpy computation it replaced in cudbound.refit (unit columns, eigenvalues of A'A for the full-rank
margin, numpy's QR, the normal equations under solve_normal_equations' singular rule), on every
class of design and weights it meets: bootstrap counts and 0/1 folds, columns of any scale,
designs of full rank, rank-deficient ones (a repeated or a zero column) and near-collinear ones
(1e-3; the 1e-6 margin itself is where any two computations of the singular values may disagree),
parts whose normal matrix is singular (fewer distinct rows than columns), non-finite entries."""
from __future__ import annotations

import numpy as np
import pytest

from cudbound.optim.squared_parts import FITTED, NOT_FITTED, SINGULAR, squared_part_fits
from cudbound.refit import _FULL_RANK_MARGIN, SINGULAR_RTOL, regular_bound, solve_normal_equations
from cudbound.ties import INPUT_RTOL, TIE_RTOL, rounded_terms


def _reference(Phi, W, y):
    """(out, scale, status) by the numpy code this kernel replaced."""
    G, n, _ = Phi.shape
    status = np.full(G, NOT_FITTED)
    out, scale = np.zeros((G, n)), np.zeros((G, n))
    ok = np.all(np.isfinite(Phi), axis=(1, 2))
    if not ok.any():
        return out, scale, status
    amax = np.max(np.abs(Phi[ok]), axis=1, keepdims=True)
    S = Phi[ok] / np.where(amax > 0, amax, 1.0)
    norms = np.sqrt(np.einsum("gnp,gnp->gp", S, S))[:, None, :]
    A = S / np.where(norms > 0, norms, 1.0)
    ev = np.linalg.eigvalsh(A.transpose(0, 2, 1) @ A)
    full = ev[:, 0] > _FULL_RANK_MARGIN ** 2 * ev[:, -1]
    ok[np.flatnonzero(ok)[~full]] = False
    if not ok.any():
        return out, scale, status
    Q, R = np.linalg.qr(A[full], mode="reduced")
    Z = np.sqrt(n) * Q
    ZW = Z * W[ok][:, :, None]
    beta, singular = solve_normal_equations(ZW.transpose(0, 2, 1) @ Z, np.einsum("gnp,n->gp", ZW, y), equilibrate=False)
    out[ok] = np.einsum("gnp,gp->gn", Z, beta)
    terms = rounded_terms(Z, np.sqrt(n) * np.abs(A[full]) @ np.abs(np.linalg.inv(R)))   # Z = A R^-1 sqrt(n)
    scale[ok] = np.einsum("gnp,gp->gn", terms, np.abs(beta))
    status[ok] = np.where(singular, SINGULAR, FITTED)
    return out, scale, status


def _case(rng, n, p, kind):
    X = (rng.normal(size=(n, p - 1)) + rng.normal(0, 3, p - 1)) * 10.0 ** rng.uniform(-6, 6, p - 1)  # any unit, any origin
    Phi = np.column_stack([np.ones(n), X])
    if kind == "repeated column" and p > 2:
        Phi[:, -1] = Phi[:, 1] * 3.0
    elif kind == "zero column" and p > 2:
        Phi[:, -1] = 0.0
    elif kind == "nearly repeated" and p > 2:
        Phi[:, -1] = Phi[:, 1] + 1e-3 * np.abs(Phi[:, 1]).max() * rng.normal(size=n)
    elif kind == "non-finite":
        Phi[rng.integers(n), rng.integers(p)] = np.inf if rng.random() < 0.5 else np.nan
    return Phi


@pytest.mark.parametrize("kind", ["plain", "repeated column", "zero column", "nearly repeated", "non-finite"])
@pytest.mark.parametrize("n, p", [(12, 1), (12, 3), (30, 4), (50, 4), (100, 6)])
def test_the_kernel_equals_the_stacked_numpy_fits(n, p, kind):
    """Bootstrap counts, 0/1 folds and parts on fewer distinct rows than columns (a singular normal
    matrix): the same status per part, and predictions and scales equal to 1e-9 of the part's largest
    scale or of the labels' 1 (the two QRs differ in the last bits only; a fit that cancels to about
    1e-17 in one is 0 in the other)."""
    rng = np.random.default_rng(n * 10 + p)
    G = 40
    Phi = np.stack([_case(rng, n, p, kind) for _ in range(G)])
    W = rng.multinomial(n, np.ones(n) / n, size=G).astype(float)
    W[::4] = (rng.random((len(W[::4]), n)) < 0.8).astype(float)          # folds
    for g in range(2, G, 7):                                               # fewer distinct rows than p
        W[g] = 0.0
        W[g, rng.choice(n, max(1, p - 1), replace=False)] = float(n) / max(1, p - 1)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    todo = np.ones(G, dtype=bool)
    todo[5] = False
    out, scale, status = squared_part_fits(Phi, np.abs(Phi), W, y, todo, _FULL_RANK_MARGIN, SINGULAR_RTOL,
                                           regular_bound(p), TIE_RTOL, INPUT_RTOL)
    ref_out, ref_scale, ref_status = _reference(Phi, W, y)
    ref_status[5] = NOT_FITTED
    np.testing.assert_array_equal(status, ref_status)
    done = status != NOT_FITTED
    if kind == "non-finite" or (kind in ("repeated column", "zero column") and p > 2):
        assert not done.any()
    else:
        assert done.sum() == G - 1
    if kind == "plain":
        assert (status == SINGULAR).sum() >= 1 if p > 1 else True
    size = np.maximum(ref_scale.max(axis=1, keepdims=True), 1.0)          # labels are +-1: fits are about 1
    np.testing.assert_allclose(out[done] / size[done], ref_out[done] / size[done], rtol=0, atol=1e-9)
    np.testing.assert_allclose(scale[done] / size[done], ref_scale[done] / size[done], rtol=0, atol=1e-9)
    assert np.all(out[~done] == 0) and np.all(scale[~done] == 0)


def test_a_part_whose_rows_span_the_design_is_fitted_exactly():
    """Least squares through p distinct points of a design of full rank interpolates them; a
    consistent labelling (y in the design's column space) is reproduced at every row."""
    rng = np.random.default_rng(3)
    n, p = 20, 3
    Phi = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    coef = np.array([0.2, -1.0, 0.5])
    y = Phi @ coef
    W = np.ones((1, n))
    out, scale, status = squared_part_fits(Phi[None], np.abs(Phi[None]), W, y, np.ones(1, dtype=bool),
                                           _FULL_RANK_MARGIN, SINGULAR_RTOL, regular_bound(p), TIE_RTOL, INPUT_RTOL)
    assert status[0] == FITTED
    np.testing.assert_allclose(out[0], y, atol=1e-12)
    assert np.all(scale[0] >= np.abs(out[0]) - 1e-12)


def test_the_normal_equations_need_row_interchanges():
    """A part whose normal matrix needs pivoting at more than one step (its largest entries off the
    diagonal's order): the solution equals numpy's solve. (An elimination that applied each interchange
    between its steps, with the multipliers already interchanged, solved the wrong system.)"""
    from cudbound.optim.squared_parts import _lu_det_trace, _lu_solve
    rng = np.random.default_rng(6)
    for p in (2, 3, 4, 6):
        for _ in range(20):
            H = rng.normal(size=(p, p))
            H = H @ H.T + np.diag(rng.uniform(0, 0.1, p))
            H = H[rng.permutation(p)][:, rng.permutation(p)]
            H = (H + H.T) / 2
            g = rng.normal(size=p)
            LU, piv, x = np.empty((p, p)), np.empty(p, dtype=np.int64), np.empty(p)
            det, trace = _lu_det_trace(H, LU, piv)
            _lu_solve(LU, piv, g, x)
            np.testing.assert_allclose(x, np.linalg.solve(H, g), rtol=1e-9, atol=1e-9 * np.abs(np.linalg.solve(H, g)).max())
            unit = np.trace(H) if np.trace(H) > 0 else 1.0                     # (these H need not be PSD)
            assert det == pytest.approx(np.linalg.det(H / unit), rel=1e-9) and trace == pytest.approx(np.trace(H))


def test_fewer_rows_than_columns_fit_nothing():
    """n < p: no least-squares fit is determined; every part is left to the one-part path (status
    NOT_FITTED), as the stacked code left it, never a read past the design's rows."""
    rng = np.random.default_rng(12)
    for n, p in [(1, 3), (2, 4), (3, 5)]:
        Phi = rng.normal(size=(2, n, p))
        out, scale, status = squared_part_fits(Phi, np.abs(Phi), np.ones((2, n)), np.ones(n),
                                               np.ones(2, dtype=bool), _FULL_RANK_MARGIN, SINGULAR_RTOL, regular_bound(p),
                                               TIE_RTOL, INPUT_RTOL)
        assert np.all(status == NOT_FITTED) and not out.any() and not scale.any()
