"""One registry of the data sets a study can use: the eight UCI sets and the simulators.

    >>> from cudbound.datasets import dataset_names, get_dataset
    >>> dataset_names("simulated", null=False)
    ('donut', 'outlier', 'chi2_small', 'three_points', 'linear_gaussian')
    >>> dataset_names(null=True)
    ('null_easy', 'null_hard', 'null_nonlinear', 'null_outliers')
    >>> get_dataset("donut").basis
    'poly:2'

A data set of your own is one call: ``register(source)`` with a
:class:`~cudbound.datasets.base.DataSource` (``docs/datasets.md``, "Adding a data set").
"""
from __future__ import annotations

import functools
import os

import numpy as np

from .._registry import Registry
from .base import DataSource, RealData
from .null_simulated import NULL_DESIGNS
from .paper_simulated import SIMULATED
from .simulated import LinearGaussian
from .uci import DATASETS, FILENAMES, get_data_home, load

__all__ = ["register", "unregister", "get_dataset", "dataset_names", "UCIData"]


class UCIData(RealData):
    """One of the paper's UCI data sets, read by :func:`cudbound.datasets.uci.load`."""

    def __init__(self, name: str, n_features: int):
        self.name, self.n_features = name, n_features

    def __repr__(self) -> str:
        return f"UCIData({self.name!r})"

    def load(self, data_home: str | os.PathLike[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
        return _load_xy(self.name, str(get_data_home(data_home)))

    def files(self, data_home: str | os.PathLike[str] | None = None) -> list:
        """The raw UCI file, in the data directory (:func:`cudbound.datasets.uci.get_data_home`)."""
        return [get_data_home(data_home) / FILENAMES[self.name]]


@functools.lru_cache(maxsize=None)
def _load_xy(name, home):
    ds = load(name, home)
    return ds.X, ds.y


UCI_FEATURES = {"spam": 57, "ionosphere": 33, "heart": 13, "diabetes": 8, "abalone": 9, "liver": 5,
                "mammogram": 4, "magic": 10}
"""Feature columns of each UCI set after its label rule (``docs/datasets.md``)."""

_REGISTRY: Registry[DataSource] = Registry("data set", DataSource)


def register(source: DataSource, *, replace: bool = False) -> DataSource:
    """Add a data set under ``source.name`` (lower case, no commas or spaces); a coverage study's
    ``[[datasets]]`` can then name it."""
    return _REGISTRY.add(source, replace=replace)


def unregister(name: str) -> None:
    """Remove a data set from the registry."""
    _REGISTRY.remove(name)


def get_dataset(name: str) -> DataSource:
    """The registered data set ``name`` (a ValueError that lists the registered ones otherwise)."""
    return _REGISTRY.lookup(name)


def dataset_names(kind: str | None = None, *, null: bool | None = None) -> tuple:
    """Registered names, in registration order; ``kind`` "real" or "simulated" selects one kind,
    ``null`` True only the designs with a null by construction (``null_by_construction``), False
    the others."""
    if kind not in (None, "real", "simulated"):
        raise ValueError(f"`kind` must be None, 'real' or 'simulated'; got {kind!r}.")
    if null not in (None, True, False):
        raise ValueError(f"`null` must be None, True or False; got {null!r}.")
    return tuple(name for name, s in _REGISTRY.items() if (kind is None or s.kind == kind)
                 and (null is None or bool(s.null_by_construction) is null))


for _name in DATASETS:
    register(UCIData(_name, UCI_FEATURES[_name]))
for _gen in SIMULATED.values():
    register(_gen)
register(LinearGaussian())
for _null in NULL_DESIGNS.values():
    register(_null)
