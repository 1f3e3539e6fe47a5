"""Data sets for examples, tests and coverage studies.

Simulated generators (``simulated``) know their generalization error exactly.
Loaders for the real UCI data sets of Laber & Murphy (2008) will live beside
them (one module, re-exported here).
"""
from .simulated import LinearGaussian, demo_data
from .paper_simulated import Donut, Outlier, ChiSquareSmall, ThreePoints, SIMULATED
from .uci import DATASETS, ChecksumError, Dataset, DownloadError, available, get_data_home, load

__all__ = [
    # simulated
    "LinearGaussian", "demo_data",
    "Donut", "Outlier", "ChiSquareSmall", "ThreePoints", "SIMULATED",
    # real (UCI)
    "DATASETS", "Dataset", "load", "available", "get_data_home", "ChecksumError", "DownloadError",
]
