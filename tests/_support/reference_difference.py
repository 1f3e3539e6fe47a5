"""Brute-force reference for the replicate supremum Q^(b) of the difference of two classifiers.

Independent of the package on purpose: it imports nothing from ``cudbound``. Definitions
(``docs/method.md``, "The difference of two classifiers"): for each classifier X, every sign
pattern on S = {i : nu_i != 1} is decided by the realisability LP (``reference.realisable_patterns``,
scipy's HiGHS), C_X(s) = sum_{i in S} (nu_i - 1) 1{s_i != y_i}, and m_X(s), the least loss over the
closed cone of the pattern, by the independent solvers of ``reference.py`` (squared: least squares
on every face, exactly) and ``reference_losses.py`` (ridge: exact faces; hinge: HiGHS; logistic:
Newton's method on every face after the separation LPs). Then every pair (s_A, s_B) of realisable
patterns is enumerated:

    Q = max(0, max_{s_A, s_B} |C_A - C_B| / n * G(alpha (K_A - m_A), alpha (K_B - m_B))),

K_X the resample's loss at beta_hat_X, G = min(1, 1 + x_A + x_B) (the method's joint factor; the
minimum and the product of the two g's for comparison). No frontier, no level, no pruning.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference import reference_details
from reference_losses import REF_LOSSES, ref_details, ref_fit, separable_points

__all__ = ["SPECS", "SideDetails", "side_details", "ref_difference", "make_pair_problem"]

SPECS = {"squared": "squared", "ridge": "ridge:0.1", "hinge": "hinge", "logistic": "logistic"}
"""The package's spec of each reference loss (``REF_LOSSES["ridge"]`` has lam = 0.1)."""


@dataclass
class SideDetails:
    C: np.ndarray          # C_X(s) of every realisable pattern
    m: np.ndarray          # m_X(s)
    K: float               # L_X(D^(b), beta_hat_X)
    beta_hat: np.ndarray
    n_patterns: int


def side_details(loss: str, design, y, counts) -> SideDetails:
    """Every realisable pattern of one classifier with its C and m (``loss`` a key of SPECS)."""
    if loss == "squared":
        det = reference_details(design, y, counts)
    else:
        det = ref_details(REF_LOSSES[loss], design, y, counts)
    return SideDetails(np.asarray(det.C, float), np.asarray(det.m, float), float(det.L_hat),
                       np.asarray(det.beta_hat, float), len(det.C))


def _g(x):
    return np.minimum(1.0, 1.0 + x)


def ref_difference(a: SideDetails, b: SideDetails, n: int, alpha: float, form: str = "joint") -> float:
    """Q^(b) by enumerating every pair of realisable patterns."""
    diff = np.abs(a.C[:, None] - b.C[None, :])
    if alpha == 0.0:
        G = np.ones(diff.shape)
    else:
        xa = alpha * (a.K - a.m)[:, None]
        xb = alpha * (b.K - b.m)[None, :]
        if form == "joint":
            G = _g(xa + xb)
        elif form == "min":
            G = np.minimum(_g(xa), _g(xb))
        else:
            G = np.maximum(_g(xa), 0.0) * np.maximum(_g(xb), 0.0)
    return float(max(0.0, np.max(diff * G))) / n


def _fits(loss, design, y):
    ref = REF_LOSSES.get(loss)
    if ref is None:                      # squared: least squares always exists
        return True
    if ref.tends_to_zero and separable_points(design, y, np.ones(len(y)), lam=ref.lam).any():
        return False
    try:
        ref_fit(ref, design, y)
    except ValueError:
        return False
    return True


def make_pair_problem(seed: int, loss_a: str, loss_b: str, same_basis: bool):
    """A small problem for two classifiers: n in 6..12, three N(0, 1) features, labels from a noisy
    linear rule; A's design the intercept and p_A - 1 of the features (p_A in 1..3), B's the same
    design (``same_basis``) or the intercept and other columns (a feature A does not use, or a
    square), p_B in 1..3; both fits exist (logistic: no separable point). Returns (design_a,
    design_b, y, counts, info)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 13))
    for _ in range(10000):
        X = rng.standard_normal((n, 3))
        noise = float(rng.choice([0.5, 1.5]))
        y = np.where(X @ rng.standard_normal(3) + noise * rng.standard_normal(n) >= 0, 1.0, -1.0)
        if len(np.unique(y)) < 2:
            continue
        pa = int(rng.integers(1, 4))
        cols_a = list(rng.permutation(3)[: pa - 1])
        design_a = np.column_stack([np.ones(n)] + [X[:, j] for j in cols_a])
        if same_basis:
            design_b = design_a.copy()
        else:
            pb = int(rng.integers(1, 4))
            extra = [X[:, j] for j in range(3) if j not in cols_a] + [X[:, j] ** 2 for j in cols_a]
            pick = rng.permutation(len(extra))[: pb - 1]
            design_b = np.column_stack([np.ones(n)] + [extra[k] for k in pick])
            if design_b.shape == design_a.shape and np.allclose(design_b, design_a):
                continue
        if np.linalg.matrix_rank(design_a) < design_a.shape[1] or np.linalg.matrix_rank(design_b) < design_b.shape[1]:
            continue
        if not (_fits(loss_a, design_a, y) and _fits(loss_b, design_b, y)):
            continue
        counts = rng.multinomial(n, np.full(n, 1.0 / n))
        return design_a, design_b, y, counts, dict(seed=seed, n=n, pa=design_a.shape[1], pb=design_b.shape[1])
    raise RuntimeError("no problem found")
