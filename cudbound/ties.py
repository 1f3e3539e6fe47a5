"""The package's one tie rule: computed numbers that agree to within rounding are equal.

Numbers that are equal in exact arithmetic (the scores of equal rows, of models fitted on the
same rows in another order, a fitted value that is exactly 0) come out of floating point a
rounding apart, and which of two such numbers is the larger depends on the machine (the order
of a sum, the width of its SIMD registers, fused multiply-adds), not on the data. Every decision
of the package that turns on the equality or the sign of a computed number (AUC ties, ranks and
midranks, DeLong's placements, sign(0) of a decision value, a least-squares gradient that is 0, the
cells of McNemar's table) goes through this rule, so that it comes out the same on every machine:

    two numbers tie when they differ by at most ``TIE_RTOL * scale``,

``scale`` being the magnitude of the terms they were computed from: for a decision value
phi(x)' beta the row's |phi(x)|' |beta| (:func:`term_scale`); for a vector of scores with
nothing else known, the largest |score| of the vector. Both scale with the numbers, so the rule
is invariant to multiplying them by any positive factor (exactly so by a power of two). When
phi(x) or beta were themselves computed by sums that may cancel (the orthonormal coordinates
z = phi' T of a point at the features' mean are 0 only up to the rounding of phi' T), their
magnitude in the scale is :func:`rounded_terms`: |z| plus :data:`INPUT_RTOL` times the terms
|phi|' |T| they came from.

:func:`snap_ties` makes the ties of a score vector exact before any rank, count or comparison
sees them; :func:`tied_signs` is the three-way sign (-1, 0, +1) under the rule and
:func:`decision_signs` the two-way one with the package's convention sign(0) = +1.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["TIE_RTOL", "INPUT_RTOL", "snap_ties", "snap_zeros", "tied_signs", "decision_signs", "term_scale",
           "rounded_terms"]

TIE_RTOL = 1e-10
"""The relative tolerance of a tie. Rounding moves a computed number by a few units of 2.2e-16
times the magnitude of its terms, times the growth of the computation (the condition number of
a solve, the length of a sum). Permuting the rows moves the out-of-fold scores of the third
study's procedures by up to 9e-12 of their scale (n = 50, three draws each: Mammogram 9e-12, Spam
7e-13, Magic, Abalone, Outlier and Three Points below 3e-14), so a much smaller tolerance would
not cover them; 1e-10 leaves a factor of 10. The price: two scores that differ in exact
arithmetic tie when they lie within 1e-10 of their scale of each other, which among N scores
spread over their range has a chance of about N^2 1e-10 (20,000 test scores: 2 of 40 draws of
Outlier and of ChiSquareSmall, where the AUC moved by 1/(2 m n), about 5e-9)."""


INPUT_RTOL = 1e-3
"""The weight of the terms behind a computed input in a tie scale (:func:`rounded_terms`): a sum of p
terms is off by at most about p 2.2e-16 of their magnitude, so an input's own rounding is covered when
``TIE_RTOL * INPUT_RTOL`` = 1e-13 (450 units of rounding) of its terms count. Smaller than TIE_RTOL, as
the inputs' terms grow with a feature's distance from its zero: a feature shifted by c has terms about
c times larger, and its band of ties, 1e-13 c, stays at the rounding of storing x + c itself (c 1.1e-16)
times 1,000, where TIE_RTOL would make it 1e-10 c (a score 2e-6 of its scale from 0 is a tie at c = 2e4)."""


def _scale(values: np.ndarray, scale: ArrayLike | None) -> np.ndarray:
    """``scale`` as an array broadcastable against ``values`` (``None``: max |value| along the last axis)."""
    if scale is None:
        if values.shape[-1] == 0:
            return np.zeros(values.shape[:-1] + (1,))
        return np.max(np.abs(values), axis=-1, keepdims=True)
    s = np.asarray(scale, dtype=float)
    if np.any(~np.isfinite(s)) or np.any(s < 0.0):
        raise ValueError(f"`scale` must be finite and >= 0; got {scale!r}.")
    return s


def snap_ties(scores: ArrayLike, scale: ArrayLike | None = None) -> np.ndarray:
    """The scores with their ties made exact: each group of tied scores set to one value.

    Sorted (stably), two neighbours whose gap is at most ``TIE_RTOL * scale`` belong to one
    group (so a group is a chain of such gaps); every score of a group becomes the group's
    smallest score, its first in sorted order. The groups depend only on the set of values, so
    the result is the same whatever the order of the scores, and multiplying the scores by a
    positive factor multiplies the result by it. ``scale`` defaults to the largest |score|;
    a 2-D array is a stack of score vectors, each snapped with its own scale (``scale`` then
    one per row, shape (k, 1), or None). Ranks, midranks, AUCs and placements computed from the
    result see exact ties where rounding alone separated the scores.

    >>> snap_ties([0.3, 0.1 + 0.2, 0.5, 0.1]).tolist()     # 0.1 + 0.2 is 0.30000000000000004
    [0.3, 0.3, 0.5, 0.1]
    """
    s = np.array(scores, dtype=float)
    if s.ndim not in (1, 2):
        raise ValueError(f"`scores` must be a vector or a stack of vectors (2-D); got shape {s.shape}.")
    if not np.all(np.isfinite(s)):
        raise ValueError("`scores` must be finite.")
    if s.shape[-1] < 2:
        return s
    tol = TIE_RTOL * _scale(s, scale)
    order = np.argsort(s, axis=-1, kind="stable")
    ordered = np.take_along_axis(s, order, axis=-1)
    starts = np.ones(ordered.shape, dtype=bool)
    starts[..., 1:] = np.diff(ordered, axis=-1) > tol
    first = np.maximum.accumulate(np.where(starts, np.arange(s.shape[-1]), 0), axis=-1)
    np.put_along_axis(s, order, np.take_along_axis(ordered, first, axis=-1), axis=-1)
    return s


def snap_zeros(values: ArrayLike, scale: ArrayLike) -> np.ndarray:
    """The values with those that tie with 0 (|value| <= ``TIE_RTOL * scale``) made exactly 0.

    For a number that later decisions read through a solve rather than directly: the gradient g of
    a least-squares fit is 0 in exact arithmetic when the labels balance (every basis column's
    weighted sum of y phi is 0), but comes out as a few units of rounding whose signs depend on the
    order of the sum; the fit H^-1 g is then that noise, and so are the signs of its decision values,
    which no tie of theirs can catch (their own scale is the noise's). Made 0, g gives the zero
    classifier, whose decision values are exactly 0 (sign(0) = +1).

    >>> snap_zeros([1e-17, -2.0, 3e-9], scale=[1.0, 1.0, 1.0]).tolist()
    [0.0, -2.0, 3e-09]
    """
    v = np.asarray(values, dtype=float)
    return np.where(tied_signs(v, scale) == 0.0, 0.0, v)


def tied_signs(values: ArrayLike, scale: ArrayLike | None = None) -> np.ndarray:
    """The sign of each value, -1.0, 0.0 or +1.0, with |value| <= ``TIE_RTOL * scale`` counted as 0.

    ``values`` are differences or decision values; ``scale`` (broadcast against them) the
    magnitude of the terms each was computed from (:func:`term_scale`; for a difference a - b
    of two scores, the scale of the scores), default the largest |value|.

    >>> tied_signs([1e-17, -2.0, 0.5], scale=1.0).tolist()
    [0.0, -1.0, 1.0]
    """
    v = np.asarray(values, dtype=float)
    tol = TIE_RTOL * _scale(np.atleast_1d(v), scale)
    return np.where(np.abs(v) <= tol, 0.0, np.sign(v))


def decision_signs(values: ArrayLike, scale: ArrayLike | None = None) -> np.ndarray:
    """Predicted labels sign(value) in {-1.0, +1.0} with sign(0) = +1, a value within
    ``TIE_RTOL * scale`` of 0 counting as 0 (so as +1): -1 only where value < -TIE_RTOL * scale.

    ``scale`` should be the magnitude of the terms of each value: for phi(x)' beta, the row's
    |phi(x)|' |beta| (:func:`term_scale`), which is what decides how far rounding can move it;
    the default, the largest |value| of the vector, is for when nothing else is known (it
    cannot see a vector whose values are all 0 in exact arithmetic).

    >>> decision_signs([-1e-17, -0.5, 0.0], scale=1.0).tolist()
    [1.0, -1.0, 1.0]
    """
    return np.where(tied_signs(values, scale) >= 0.0, 1.0, -1.0)


def rounded_terms(values: ArrayLike, terms: ArrayLike) -> np.ndarray:
    """|values| + ``INPUT_RTOL`` * ``terms``: the magnitude, for the tie rule, of numbers computed from terms
    of magnitude ``terms`` (elementwise), e.g. the orthonormal coordinates Z = Phi T with terms |Phi| |T|
    (``Reparametrisation.Z_terms``), which cancel to 0 up to their rounding at a feature's mean.

    >>> rounded_terms([0.0, -2.0], [4.0, 4.0]).tolist()
    [0.004, 2.004]
    """
    return np.abs(np.asarray(values, dtype=float)) + INPUT_RTOL * np.asarray(terms, dtype=float)


def term_scale(design: ArrayLike, coef: ArrayLike) -> np.ndarray:
    """|design| @ |coef|: for each row phi, sum_j |phi_j beta_j|, the magnitude of the terms of the
    decision value phi' beta (the ``scale`` of :func:`decision_signs` and :func:`tied_signs`).

    >>> term_scale([[1.0, -2.0], [0.0, 1.0]], [0.5, 0.25]).tolist()
    [1.0, 0.25]
    """
    return np.abs(np.asarray(design, dtype=float)) @ np.abs(np.asarray(coef, dtype=float))
