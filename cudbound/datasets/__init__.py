"""Data sets for examples, tests and coverage studies: one registry of real and simulated sets.

* :mod:`~cudbound.datasets.base`: the base classes (``DataSource``, ``Simulator``, ``RealData``).
* :mod:`~cudbound.datasets.registry`: every data set a study can name (``get_dataset``,
  ``dataset_names``, ``register``).
* :mod:`~cudbound.datasets.uci`: the paper's eight UCI data sets (read, checked, downloaded).
* :mod:`~cudbound.datasets.paper_simulated`: the paper's four simulated designs.
* :mod:`~cudbound.datasets.simulated`: ``LinearGaussian`` (the demo's data).
* :mod:`~cudbound.datasets.null_simulated`: designs on which two classifiers have equal expected
  error by construction (``NULL_DESIGNS``).
"""
from __future__ import annotations

from .base import REAL_BASIS, DataSource, LabelNoise, RealData, Simulator
from .null_simulated import NULL_DESIGNS, ContaminatedHalves, ExchangeableHalves, ScaledHalves, ShiftedHalves
from .paper_simulated import SIMULATED, ChiSquareSmall, Donut, Outlier, ThreePoints
from .registry import UCIData, dataset_names, get_dataset, register, unregister
from .simulated import LinearGaussian, demo_data
from .uci import DATASETS, ChecksumError, Dataset, DownloadError, available, get_data_home, load

__all__ = [
    # the registry and its base classes
    "get_dataset", "dataset_names", "register", "unregister", "DataSource", "Simulator", "LabelNoise", "RealData",
    "UCIData",
    "REAL_BASIS",
    # simulated
    "LinearGaussian", "demo_data",
    "Donut", "Outlier", "ChiSquareSmall", "ThreePoints", "SIMULATED",
    "ExchangeableHalves", "ShiftedHalves", "ScaledHalves", "ContaminatedHalves", "NULL_DESIGNS",
    # real (UCI)
    "DATASETS", "Dataset", "load", "available", "get_data_home", "ChecksumError", "DownloadError",
]
