"""Data sets for examples, tests and coverage studies.

Simulated generators (``simulated``) know their generalization error exactly.
Loaders for the real UCI data sets of Laber & Murphy (2008) will live beside
them (one module, re-exported here).
"""
from .simulated import LinearGaussian, demo_data

__all__ = [
    # simulated
    "LinearGaussian", "demo_data",
    # real (UCI): to come
]
