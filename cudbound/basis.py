"""Basis expansions phi(x): the model class f(x; beta) = sign(phi(x)' beta).

The basis is fixed before the search (the paper's gamma-hat, Laber & Murphy 2008,
section 2): anything data-dependent (the principal components) is fitted on the
training set only, and a refit on part of the training set refits it on that part
(``cudbound.refit``). Each basis follows the scikit-learn contract: ``fit(X)``
returns ``self``; ``transform(X)`` returns the design matrix Phi (n x p, the
intercept column first when there is one).
"""
from __future__ import annotations

import copy
import inspect
import itertools
from collections.abc import Callable
from typing import Self

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_features, check_scalar

__all__ = ["Basis", "LinearBasis", "ColumnBasis", "PolynomialBasis", "PCABasis", "ComposedBasis", "FunctionBasis",
           "make_basis", "with_terms", "design_terms"]


class Basis:
    """Base class: ``fit(X) -> self``, ``transform(X) -> Phi``.

    :attr:`learns_from_data` says whether ``fit`` learns anything from the rows it is given; a
    refit on part of the data (``cudbound.refit``) refits a basis that does on the part's rows.
    """

    intercept: bool = True
    fixed_columns: bool = False
    """Whether a :class:`ComposedBasis` keeps every column of this (inner) basis but its intercept,
    whatever the rows (a column selection), rather than dropping the columns constant on the rows."""

    @property
    def learns_from_data(self) -> bool:
        """Whether ``fit`` learns from the rows (a centre, scales, components): True for a subclass
        that overrides ``fit`` unless it says otherwise; False for one that only maps each row."""
        return type(self).fit is not Basis.fit

    def fit(self, X: ArrayLike) -> Self:
        X = check_features(X)
        self.n_features_in_ = X.shape[1]
        return self

    def _check_fitted_input(self, X) -> np.ndarray:
        """X validated, for a fitted basis of the same number of features."""
        X = check_features(X)
        if not hasattr(self, "n_features_in_"):
            raise RuntimeError(f"{self!r} is not fitted; call fit(X) first.")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features but the basis was fitted on {self.n_features_in_}.")
        return X

    def transform(self, X: ArrayLike) -> np.ndarray:
        X = self._check_fitted_input(X)
        cols = self._columns(X)
        if self.intercept:
            cols = np.column_stack([np.ones(X.shape[0]), cols]) if cols.shape[1] else np.ones((X.shape[0], 1))
        return cols

    def fit_transform(self, X: ArrayLike) -> np.ndarray:
        return self.fit(X).transform(X)

    def transform_terms(self, X: ArrayLike, terms: ArrayLike | None = None) -> np.ndarray:
        """The magnitude of the terms each entry of ``transform(X)`` is computed from, E >= |Phi| (same shape):
        the scale of the entry's rounding, for the tie rule (``cudbound.ties.rounded_terms``). A principal-component
        score of a row at the centre is 0 exactly but computed as sum_j (x_j - mu_j) v_j, the rounding of terms
        of size |x_j| + |mu_j|; the decision value phi'beta of such a row must not be signed by it.

        ``terms``: those of X's own entries (default |X|: features given as data are exact). A basis that computes
        each entry without cancellation (an identity, a selection, a product) keeps |Phi|; one that does not
        (:class:`PCABasis`) says so by overriding ``_column_terms``; an inner basis's terms pass through the
        outer one (:class:`ComposedBasis`).

        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [2.0]]) + 1e8
        >>> make_basis("pca:1").fit(X).transform_terms(X)[1].tolist()     # the centre row: 0 from terms of 2e8
        [1.0, 200000002.0]
        """
        if type(self)._column_terms is Basis._column_terms:     # entries taken as exact (any transform of its own)
            return np.abs(self.transform(X))
        X = self._check_fitted_input(X)
        t = np.abs(X) if terms is None else np.asarray(terms, dtype=float)
        if t.shape != X.shape:
            raise ValueError(f"`terms` has shape {t.shape}; X has {X.shape}.")
        cols = self._column_terms(X, t)
        if self.intercept:
            cols = np.column_stack([np.ones(X.shape[0]), cols]) if cols.shape[1] else np.ones((X.shape[0], 1))
        return cols

    def _columns(self, X) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _column_terms(self, X: np.ndarray, terms: np.ndarray) -> np.ndarray:
        """The terms of ``_columns(X)`` given those of X; a basis that does not override it has |transform(X)|."""
        return np.abs(self._columns(X))

    def refit_designs(self, X: np.ndarray, weights: np.ndarray, terms: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The designs of all rows of X under copies of this basis refitted on parts of them, at once.

        ``weights`` is a (G, n) array of whole numbers, row g the copies of each row in part g; design
        g is ``copy.deepcopy(self).fit(X[np.repeat(np.arange(n), weights[g])]).transform(X)``. ``X`` is
        the (n, d) features, or a (G, n, d) stack of per-part features (a composed basis passes its
        inner columns, with their ``terms``, as :meth:`transform_terms` takes them; default |X|). Returns
        ((G, n, p) designs, (G,) bool ok, (G, n, p) terms, :meth:`transform_terms` of each design): a part
        whose ok is False must be refitted one at a time; None when the basis has no batched form. A basis
        that learns nothing returns one design for every part; a learning one returns None unless it
        overrides this method (:class:`PCABasis`, :class:`ComposedBasis`). (A user's override may take
        (X, weights) only and return (designs, ok): the terms are then taken to be |designs|.)"""
        if self.learns_from_data:
            return None
        stack = X if X.ndim == 3 else X[None]
        fitted = copy.deepcopy(self).fit(stack[0][weights[0] > 0])
        flat = stack.reshape(-1, stack.shape[-1])
        flat_terms = None if terms is None else np.broadcast_to(terms, stack.shape).reshape(flat.shape)
        flat_designs = fitted.transform(flat)
        designs = flat_designs.reshape(stack.shape[0], stack.shape[1], -1)
        terms_of = design_terms(fitted, flat, flat_designs, flat_terms).reshape(designs.shape)
        G = weights.shape[0]
        shape = (G,) + designs.shape[1:]
        return np.broadcast_to(designs, shape), np.ones(G, dtype=bool), np.broadcast_to(terms_of, shape)


class LinearBasis(Basis):
    """phi(x) = (1, x_1, ..., x_d): intercept plus identity (the default)."""

    def __init__(self, intercept: bool = True):
        self.intercept = intercept

    def _columns(self, X):
        return X

    def _column_terms(self, X, terms):
        return terms

    def __repr__(self):
        return "LinearBasis()" if self.intercept else "LinearBasis(intercept=False)"


class ColumnBasis(Basis):
    """phi(x) = (1, x_c1, ..., x_cm): intercept plus the feature columns ``columns`` (0-based), in
    that order; spec ``"cols:I-J"`` (I to J inclusive) or ``"cols:I,J,K"``.

    It learns nothing from the rows; ``fit`` checks that every column exists.

    >>> import numpy as np
    >>> make_basis("cols:1-2").fit_transform(np.arange(8.0).reshape(2, 4))
    array([[1., 1., 2.],
           [1., 5., 6.]])
    """

    fixed_columns = True

    def __init__(self, columns: ArrayLike, intercept: bool = True):
        cols = tuple(int(check_scalar(c, "column", min_val=0)) for c in np.atleast_1d(columns).tolist())
        if not cols or len(set(cols)) != len(cols):
            raise ValueError(f"`columns` must name at least one column, each once; got {columns!r}.")
        self.columns, self.intercept = cols, intercept

    def fit(self, X: ArrayLike) -> Self:
        super().fit(X)
        if max(self.columns) >= self.n_features_in_:
            raise ValueError(f"{self!r} selects column {max(self.columns)} but X has {self.n_features_in_} "
                             f"feature column(s), numbered from 0.")
        return self

    @property
    def learns_from_data(self) -> bool:
        return False   # the columns are fixed; fit only checks that they exist

    def _columns(self, X):
        return X[:, list(self.columns)]

    def _column_terms(self, X, terms):
        return terms[:, list(self.columns)]

    def __repr__(self):
        extra = "" if self.intercept else ", intercept=False"
        return f"ColumnBasis({list(self.columns)}{extra})"


def _column_list(arg: str) -> list:
    """The columns of ``"I-J"`` (inclusive) or ``"I,J,K"`` (each item an index or a range)."""
    cols: list = []
    for item in arg.split(","):
        first, dash, last = item.strip().partition("-")
        low, high = int(first), int(last) if dash else int(first)
        if low > high:
            raise ValueError(item)
        cols.extend(range(low, high + 1))
    return cols


class PolynomialBasis(Basis):
    """All monomials x_1^a_1 ... x_d^a_d of total degree 1..degree (plus the intercept)."""

    def __init__(self, degree: int = 2, intercept: bool = True):
        self.degree, self.intercept = degree, intercept

    def fit(self, X: ArrayLike) -> Self:
        degree = check_scalar(self.degree, "degree", min_val=1)
        super().fit(X)
        d = self.n_features_in_
        self.powers_ = [c for k in range(1, degree + 1)
                        for c in itertools.combinations_with_replacement(range(d), k)]
        return self

    @property
    def learns_from_data(self) -> bool:
        return False   # the monomials depend on the number of features only

    def _columns(self, X):
        return np.column_stack([np.prod(X[:, list(c)], axis=1) for c in self.powers_])

    def _column_terms(self, X, terms):
        # a product of factors each within rounding of its terms is within rounding of the product of the terms
        return np.column_stack([np.prod(terms[:, list(c)], axis=1) for c in self.powers_])

    def __repr__(self):
        return f"PolynomialBasis(degree={self.degree})"


class PCABasis(Basis):
    """Scores on the first k principal components of the training features (centred).

    The centre and the components are fitted on the training set only (``fit``) and
    reused unchanged for any later ``transform``. With ``standardize=True`` each
    feature is first divided by its training standard deviation (a column constant on
    the training set is left unscaled), so that features in large units do not decide
    the components alone: the PCA of the correlation matrix.
    """

    def __init__(self, n_components: int, intercept: bool = True, standardize: bool = False):
        self.n_components, self.intercept, self.standardize = n_components, intercept, standardize

    def fit(self, X: ArrayLike) -> Self:
        X = check_features(X)
        k = check_scalar(self.n_components, "n_components", min_val=1, max_val=min(X.shape),
                         hint=" (at most min(n, d))")
        super().fit(X)
        self.mean_ = X.mean(axis=0)
        scale = X.std(axis=0) if self.standardize else np.ones(X.shape[1])
        self.scale_ = np.where(scale > 0, scale, 1.0)
        _, _, vt = np.linalg.svd((X - self.mean_) / self.scale_, full_matrices=False)
        # fix the sign of each component (largest |loading| positive) so results are reproducible
        self.components_ = _fix_signs(vt)[:k]
        return self

    def _columns(self, X):
        return ((X - self.mean_) / self.scale_) @ self.components_.T

    def _column_terms(self, X, terms):
        """sum_j (t_j + |mu_j|) / s_j |v_cj|: a score sums (x_j - mu_j) / s_j v_cj, which cancel to 0 at the
        centre (up to their rounding), t the terms of x's entries."""
        return ((terms + np.abs(self.mean_)) / self.scale_) @ np.abs(self.components_.T)

    def refit_designs(self, X: np.ndarray, weights: np.ndarray, terms: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """:meth:`Basis.refit_designs` with :meth:`fit`'s centre, scales and sign rule on each part.

        Part g's centred (scaled) rows, repeated by their counts, have the right singular vectors of
        R_g = diag(sqrt(w_g)) (X - mean_g) / scale_g (its rows out of the part are zero). The leading k
        come from the eigenvectors of the smaller Gram matrix of R_g's rows in the part, R'R or RR'
        (then v = R'u / |R'u|), one part at a time in a compiled loop
        (:func:`cudbound.pca_parts.pca_part_designs`). They span the subspace :meth:`fit`'s SVD finds
        to within rounding when the k-th eigenvalue stands clear of the next and of zero
        (:data:`_GRAM_GAP`); a part where it does not, or with a column constant on the part up to
        rounding, is left to be refitted alone (ok False), as :meth:`fit` does it. The design's
        column space is then the one a copy fitted on the part gives. The terms are :meth:`transform_terms`'s
        with each part's centre, scales and components."""
        k = self.n_components
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= X.shape[-1]:
            return None   # fit's own check raises for these: the caller refits one part at a time
        from .pca_parts import pca_part_designs

        stack = np.ascontiguousarray(X if X.ndim == 3 else X[None], dtype=np.float64)
        t = np.abs(stack) if terms is None else np.ascontiguousarray(np.broadcast_to(terms, stack.shape),
                                                                       dtype=np.float64)
        designs, ok, design_terms = pca_part_designs(stack, t, np.ascontiguousarray(weights, dtype=np.float64),
                                                     int(k), bool(self.standardize), bool(self.intercept), _GRAM_GAP)
        return designs, ok, design_terms

    def __repr__(self):
        extra = ", standardize=True" if self.standardize else ""
        return f"PCABasis(n_components={self.n_components}{extra})"


def _fix_signs(vt: np.ndarray) -> np.ndarray:
    """Each component (a row, the last axis; stacks too) times the sign of its largest |entry|, so that
    the components, and results, are reproducible."""
    lead = np.argmax(np.abs(vt), axis=-1)
    return vt * np.sign(np.take_along_axis(vt, lead[..., None], axis=-1))


_GRAM_GAP = 1e-6
"""A part's k-th eigenvalue of the Gram matrix must exceed the (k+1)-th, and zero, by this fraction
of the largest for :meth:`PCABasis.refit_designs` to take its leading vectors from the Gram matrix;
then they are accurate to about machine epsilon / _GRAM_GAP (1e-10). Otherwise the part is refitted
alone (by :meth:`PCABasis.fit`'s SVD)."""


class ComposedBasis(Basis):
    """phi(x) = outer(inner(x)): ``outer`` expanded on the columns of ``inner`` (both fitted on the
    training set), e.g. a degree-2 polynomial in the first two principal components.

    Columns of the inner basis that are constant on the training set (its intercept, or a
    constant column a user's function returns) are dropped before the outer expansion, which
    would otherwise repeat them; the outer basis decides whether phi has an intercept. After a
    :class:`ColumnBasis` the kept columns are fixed, its intercept dropped and every selected
    column kept (as ``poly:D`` keeps every feature), so that nothing is learnt unless the outer
    basis learns.

    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(20, 5))
    >>> make_basis("poly:2(zpca:2)").fit_transform(X).shape   # 1, z1, z2, z1^2, z1 z2, z2^2
    (20, 6)
    """

    def __init__(self, outer: Basis, inner: Basis):
        if not isinstance(outer, Basis) or not isinstance(inner, Basis):
            raise TypeError("`outer` and `inner` must be cudbound.basis.Basis instances.")
        self.outer, self.inner = outer, inner

    @property
    def intercept(self):
        return self.outer.intercept

    @property
    def learns_from_data(self) -> bool:
        # which inner columns are constant on the training rows (keep_) is learnt, unless they are fixed
        return not self.inner.fixed_columns or self.outer.learns_from_data

    def _fixed_keep(self, n_columns: int) -> np.ndarray:
        """The inner columns kept after an inner basis with :attr:`~Basis.fixed_columns`: all but its intercept."""
        return np.arange(n_columns) >= int(self.inner.intercept)

    def fit(self, X: ArrayLike) -> Self:
        X = check_features(X)
        self.n_features_in_ = X.shape[1]
        self.inner.fit(X)
        cols = self.inner.transform(X)
        if self.inner.fixed_columns:
            self.keep_ = self._fixed_keep(cols.shape[1])
        else:
            self.keep_ = np.ptp(cols, axis=0) > 0
        if not self.keep_.any():
            raise ValueError(f"the inner basis {self.inner!r} is constant on the training set.")
        self.outer.fit(cols[:, self.keep_])
        return self

    def _inner_columns(self, X):
        return self.inner.transform(X)[:, self.keep_]

    def transform(self, X: ArrayLike) -> np.ndarray:
        return self.outer.transform(self._inner_columns(self._check_fitted_input(X)))

    def transform_terms(self, X: ArrayLike, terms: ArrayLike | None = None) -> np.ndarray:
        """The outer basis's terms of the inner columns, given the inner basis's terms of them."""
        X = self._check_fitted_input(X)
        inner_terms = self.inner.transform_terms(X, terms)[:, self.keep_]
        return self.outer.transform_terms(self._inner_columns(X), inner_terms)

    def refit_designs(self, X: np.ndarray, weights: np.ndarray, terms: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """:meth:`Basis.refit_designs` through the inner and the outer basis's batched forms (the inner terms
        passed to the outer form). The inner columns constant on a part are dropped as :meth:`fit` drops them;
        a part that would drop other columns than most parts do is left to be refitted alone (ok False)."""
        inner = _refitted(self.inner, X, weights, terms)
        if inner is None:
            return None
        cols, ok, col_terms = inner
        if self.inner.fixed_columns:
            keep = np.broadcast_to(self._fixed_keep(cols.shape[2]), (weights.shape[0], cols.shape[2]))
        else:
            held = (weights > 0)[:, :, None]
            keep = np.where(held, cols, -np.inf).max(axis=1) > np.where(held, cols, np.inf).min(axis=1)   # (G, q)
        patterns, counts = np.unique(keep, axis=0, return_counts=True)
        common = patterns[np.argmax(counts)]
        if not common.any():
            return None
        outer = _refitted(self.outer, cols[..., common], weights, col_terms[..., common])
        if outer is None:
            return None
        designs, outer_ok, design_terms = outer
        return designs, ok & outer_ok & np.all(keep == common, axis=1), design_terms

    def __repr__(self):
        return f"ComposedBasis({self.outer!r}, {self.inner!r})"


class FunctionBasis(Basis):
    """Any user map X -> design matrix, applied row by row: ``func`` must compute each row of the
    design from that row of X alone (a map that standardises with the column means of X would see
    held-out rows in a refit: write a :class:`Basis` whose ``fit`` learns them instead). No
    intercept is added: include it in ``func``."""

    intercept = False

    def __init__(self, func: Callable[[np.ndarray], ArrayLike]):
        if not callable(func):
            raise TypeError(f"`func` must be callable; got {type(func).__name__}.")
        self.func = func

    def _columns(self, X):
        out = check_features(self.func(X), name="basis function output")
        if out.shape[0] != X.shape[0]:
            raise ValueError(f"the basis function returned {out.shape[0]} rows for {X.shape[0]} inputs.")
        return out

    def __repr__(self):
        return f"FunctionBasis({getattr(self.func, '__name__', self.func)!r})"


def with_terms(designs: tuple | None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:meth:`Basis.refit_designs`'s answer as (designs, ok, terms): a user's override that returns (designs,
    ok) gets the terms |designs| (entries taken as exact)."""
    if designs is None or len(designs) == 3:
        return designs
    Phi, ok = designs
    return Phi, ok, np.abs(Phi)


def design_terms(basis: Basis, X: ArrayLike, design: np.ndarray, terms: ArrayLike | None = None) -> np.ndarray:
    """``basis.transform_terms(X, terms)`` for ``design = basis.transform(X)``, without transforming X again when
    the basis counts its entries as exact (then |design|; a user's function basis runs once)."""
    if type(basis).transform_terms is Basis.transform_terms and type(basis)._column_terms is Basis._column_terms:
        return np.abs(design)
    return basis.transform_terms(X, terms)


def _refitted(basis: Basis, X: np.ndarray, weights: np.ndarray, terms: np.ndarray | None):
    """:meth:`Basis.refit_designs` as (designs, ok, terms) (:func:`with_terms`), given ``terms`` when it takes
    them (a user's override written for (X, weights) alone does not: its designs' entries then count as exact)."""
    if terms is None or "terms" not in inspect.signature(basis.refit_designs).parameters:
        return with_terms(basis.refit_designs(X, weights))
    return with_terms(basis.refit_designs(X, weights, terms=terms))


def make_basis(spec: str | Basis | Callable[[np.ndarray], ArrayLike] | None) -> Basis:
    """A Basis from ``"linear"``, ``"cols:I-J"`` or ``"cols:I,J,K"`` (intercept and the feature
    columns named, 0-based, ranges inclusive), ``"poly:D"``, ``"pca:K"``, ``"zpca:K"`` (PCA of the
    standardised features), ``"poly:D(pca:K)"`` or ``"poly:D(zpca:K)"`` (a degree-D polynomial in
    the first K components; any of the plain forms may stand inside the parentheses, e.g.
    ``"poly:2(cols:0-1)"``), a callable or a Basis instance."""
    if isinstance(spec, Basis):
        return spec
    if spec is None:
        return LinearBasis()
    if callable(spec):
        return FunctionBasis(spec)
    if isinstance(spec, str):
        text = spec.strip().lower()
        if text.endswith(")") and "(" in text:
            head, _, rest = text.partition("(")
            inner_text = rest[:-1]
            if "(" not in inner_text and ")" not in inner_text:
                try:
                    return ComposedBasis(_plain_basis(head), _plain_basis(inner_text))
                except ValueError:
                    pass
        else:
            try:
                return _plain_basis(text)
            except ValueError:
                pass
    raise ValueError(
        f"`basis` must be 'linear', 'poly:D' (D a positive integer), 'pca:K', 'zpca:K', 'cols:I-J' or 'cols:I,J,K' "
        f"(intercept and the feature columns named, from 0), 'poly:D(zpca:K)' (one plain form inside another), a "
        f"callable or a cudbound.basis.Basis; got {spec!r}."
    )


def _plain_basis(text: str) -> Basis:
    name, _, arg = text.strip().partition(":")
    try:
        if name == "linear" and not arg:
            return LinearBasis()
        if name in ("poly", "polynomial") and arg:
            return PolynomialBasis(int(arg))
        if name == "pca" and arg:
            return PCABasis(int(arg))
        if name == "zpca" and arg:
            return PCABasis(int(arg), standardize=True)
        if name == "cols" and arg:
            return ColumnBasis(_column_list(arg))
    except ValueError:
        pass
    raise ValueError(text)
