"""Least squares in rational arithmetic: the reference for the signs of least-squares fits on small
integer designs, where a decision value that is 0 in exact arithmetic is common (a feature at its mean,
labels that balance) and rounding alone would sign it. No code of cudbound's."""
from __future__ import annotations

from fractions import Fraction

import numpy as np


def exact_least_squares(Phi, y, w):
    """beta minimising sum_i w_i (y_i - phi_i'beta)^2 as Fractions, for an integer design ``Phi`` (n, p),
    labels +-1 and whole weights; None when the weighted normal equations are singular."""
    n, p = Phi.shape
    rows = [i for i in range(n) if w[i] != 0]
    M = [[sum(Fraction(int(w[i]) * int(Phi[i, a]) * int(Phi[i, b])) for i in rows) for b in range(p)]
         + [sum(Fraction(int(w[i]) * int(Phi[i, a]) * int(y[i])) for i in rows)] for a in range(p)]
    for c in range(p):                                     # Gauss-Jordan, exact
        pivot = next((r for r in range(c, p) if M[r][c] != 0), None)
        if pivot is None:
            return None
        M[c], M[pivot] = M[pivot], M[c]
        for r in range(p):
            if r != c and M[r][c] != 0:
                f = M[r][c] / M[c][c]
                M[r] = [a - f * b for a, b in zip(M[r], M[c])]
    return [M[a][p] / M[a][a] for a in range(p)]


def exact_signs(Phi, beta):
    """sign(phi_i'beta) in exact arithmetic, sign(0) = +1, and whether any value is exactly 0."""
    values = [sum(int(Phi[i, a]) * beta[a] for a in range(Phi.shape[1])) for i in range(Phi.shape[0])]
    return np.array([1.0 if v >= 0 else -1.0 for v in values]), any(v == 0 for v in values)


def small_integer_problems(rng, count, *, with_zero=True):
    """``count`` data sets (x (n, q) integers in 0..3, labels +-1) on which the least-squares fit with an
    intercept has a decision value exactly 0 at a training row (``with_zero``) or none (not ``with_zero``)."""
    out = []
    while len(out) < count:
        n, q = int(rng.integers(6, 21)), int(rng.integers(1, 3))
        x = rng.integers(0, 4, size=(n, q))
        y = rng.choice([-1.0, 1.0], size=n)
        Phi = np.column_stack([np.ones(n, dtype=int), x])
        if np.linalg.matrix_rank(Phi) < Phi.shape[1] or len(set(y)) < 2:
            continue
        beta = exact_least_squares(Phi, y, np.ones(n))
        if exact_signs(Phi, beta)[1] == with_zero:
            out.append((x, y))
    return out


def balanced_integer_problem(seed, shift=0.0):
    """Three small integer features (plus ``shift``) on 20 points whose points labelled -1 are those labelled +1
    with each feature's values permuted among them: sum_i y_i phi_i = 0 exactly (the labels balance), in any
    row order. Returns (x, y)."""
    rng = np.random.default_rng(seed)
    plus = rng.integers(0, 4, size=(10, 3))
    minus = np.column_stack([rng.permutation(plus[:, j]) for j in range(3)])
    order = rng.permutation(20)
    return np.vstack([plus, minus])[order] + shift, np.repeat([1.0, -1.0], 10)[order]
