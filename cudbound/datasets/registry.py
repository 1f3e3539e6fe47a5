"""One registry of the data sets a study can use: the eight UCI sets and the simulators.

    >>> from cudbound.datasets import dataset_names, get_dataset
    >>> dataset_names("simulated")
    ('donut', 'outlier', 'chi2_small', 'three_points', 'linear_gaussian')
    >>> get_dataset("donut").basis
    'poly:2'

A data set of your own is one call: ``register(source)`` with a
:class:`~cudbound.datasets.base.DataSource` (``docs/datasets.md``, "Adding a data set").
"""
from __future__ import annotations

import functools
import os

import numpy as np

from .base import DataSource, RealData
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

_REGISTRY: dict[str, DataSource] = {}


def register(source: DataSource, *, replace: bool = False) -> DataSource:
    """Add a data set under ``source.name``; a coverage study's ``[[datasets]]`` can then name it."""
    if not isinstance(source, DataSource):
        raise TypeError(f"a data set must be a cudbound.datasets.base.DataSource; got {type(source).__name__}.")
    name = getattr(source, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"a data set needs a non-empty `name`; got {name!r}.")
    if name in _REGISTRY and not replace:
        raise ValueError(f"a data set {name!r} is already registered (pass replace=True to overwrite it).")
    _REGISTRY[name] = source
    return source


def unregister(name: str) -> None:
    if name not in _REGISTRY:
        raise ValueError(f"no data set {name!r} is registered; registered: {list(_REGISTRY)}.")
    del _REGISTRY[name]


def get_dataset(name: str) -> DataSource:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(_REGISTRY)}.") from None


def dataset_names(kind: str | None = None) -> tuple:
    """Registered names, in registration order; ``kind`` "real" or "simulated" selects one kind."""
    if kind not in (None, "real", "simulated"):
        raise ValueError(f"`kind` must be None, 'real' or 'simulated'; got {kind!r}.")
    return tuple(name for name, s in _REGISTRY.items() if kind is None or s.kind == kind)


for _name in DATASETS:
    register(UCIData(_name, UCI_FEATURES[_name]))
for _gen in SIMULATED.values():
    register(_gen)
register(LinearGaussian())
