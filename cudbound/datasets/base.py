"""What every data set offers a coverage study: the small base classes of the registry.

A :class:`DataSource` has a ``name``, ``n_features``, the ``basis`` a study uses with it
by default, a ``kind`` ("simulated" or "real"), ``null_by_construction`` (True for a design on
which a study's procedures A and B have equal expected error) and one method a study calls,
``draw(n, test_size, rng, data_home)``: a training set of n points and a test set. A
:class:`Simulator` draws both from its distribution (``sample(n, rng)``) and may know its
true error; a :class:`RealData` set loads its rows (``load(data_home)``), draws the training
set without replacement and keeps the other rows as the test set (Laber & Murphy 2008,
section 5).
"""
from __future__ import annotations

import abc
import os

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_scalar

__all__ = ["DataSource", "Simulator", "LabelNoise", "RealData", "REAL_BASIS"]

REAL_BASIS = "zpca:3"
"""Default basis of the real data sets: an intercept and the first three principal
components of the standardised training features (the paper used principal components or
polynomials, without saying which per data set)."""


class DataSource(abc.ABC):
    """A data set of the registry (:mod:`cudbound.datasets.registry`)."""

    name: str
    n_features: int
    basis: str
    kind: str
    null_by_construction: bool = False
    """True for a design on which procedures A (``basis``) and B (``basis_b``) have equal expected
    error and AUC by construction (:mod:`cudbound.datasets.null_simulated`)."""

    @abc.abstractmethod
    def draw(self, n: int, test_size: int, rng: np.random.Generator, data_home: str | os.PathLike[str] | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(X_train, y_train, X_test, y_test), labels in {-1, +1}."""

    def files(self, data_home: str | os.PathLike[str] | None = None) -> list:
        """The files :meth:`draw` reads from the data directory ``data_home`` (a study checks that
        they exist before it starts): none for a simulator, and none known by default."""
        return []

    def true_error(self, beta: ArrayLike) -> float | None:
        """The exact generalization error of sign(phi(x)'beta) on the data set's basis, where
        known (a simulator with ``error_rate``); None otherwise."""
        rate = getattr(self, "error_rate", None)
        return None if rate is None else float(rate(beta))


class Simulator(DataSource):
    """A simulated design: subclasses define ``sample(n, rng) -> (X, y)``."""

    kind = "simulated"

    @abc.abstractmethod
    def sample(self, n: int, rng: np.random.Generator | np.random.SeedSequence | int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n`` independent observations.

        Parameters
        ----------
        n : int
            Number of observations.
        rng : None, int, SeedSequence or Generator, optional
            Passed through :func:`numpy.random.default_rng`; the same seed gives the same sample.

        Returns
        -------
        X : ndarray of shape (n, n_features)
        y : ndarray of shape (n,), integer labels in {-1, +1}
        """

    def draw(self, n: int, test_size: int, rng: np.random.Generator, data_home: str | os.PathLike[str] | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """n training points, then ``test_size`` test points, from the same generator."""
        X, y = self.sample(n, rng)
        X_test, y_test = self.sample(test_size, rng)
        return X, y, X_test, y_test


class LabelNoise(Simulator):
    """A simulator whose label is a deterministic rule of x flipped with probability
    ``flip_probability`` independently of x: the Bayes error is that probability."""

    flip_probability: float

    @property
    def bayes_error(self) -> float:
        """The Bayes error, ``flip_probability`` exactly."""
        return self.flip_probability


class RealData(DataSource):
    """A fixed set of rows: subclasses define ``load(data_home) -> (X, y)``."""

    kind = "real"
    basis = REAL_BASIS

    @abc.abstractmethod
    def load(self, data_home: str | os.PathLike[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(X, y) of every row, labels in {-1, +1}."""

    def draw(self, n: int, test_size: int, rng: np.random.Generator, data_home: str | os.PathLike[str] | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """n rows drawn without replacement; the other rows are the test set (``test_size`` unused)."""
        X, y = self.load(data_home)
        n = check_scalar(n, "n", min_val=1)
        if n >= X.shape[0]:
            raise ValueError(f"data set {self.name!r} has {X.shape[0]} rows: no test set is left for n = {n}.")
        perm = rng.permutation(X.shape[0])
        return X[perm[:n]], y[perm[:n]], X[perm[n:]], y[perm[n:]]
