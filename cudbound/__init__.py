"""cudbound: small-sample confidence sets for a classifier's generalization error.

The CUD bound of Laber & Murphy (UAI 2008), computed exactly by branch and bound
over the sign patterns of a linear-in-basis classifier.
"""
from . import _kernel_cache, _kernel_compile

_kernel_cache.install()  # compiled kernels cache outside the installed package (before any is defined)
_kernel_compile.install()  # a kernel's first compile says so once and is timed apart

from .baselines import DegenerateResampleWarning
from .basis import ComposedBasis, FunctionBasis, LinearBasis, PCABasis, PolynomialBasis, make_basis
from .cud import EngineOptions, SmallSampleWarning, cud_from_design, cud_interval, replicate_sup, search_replicate
from .cud_difference import replicate_sup_difference
from .registry import intervals, method_names, register
from .losses import (ExponentialLoss, FunctionLoss, HingeLoss, LogisticLoss, Loss, NoMinimiserError, RidgeLoss,
                     SquaredLoss, get_loss)
from .plotting import plot_intervals
from .refit import Procedure
from .results import ConfidenceInterval, CUDResult, IntervalResult, ResultList, SearchStats

__version__ = "0.1.0"

__all__ = [
    "cud_interval", "cud_from_design", "replicate_sup", "replicate_sup_difference", "search_replicate", "EngineOptions", "intervals", "Procedure",
    "method_names", "register", "DegenerateResampleWarning", "SmallSampleWarning",
    "CUDResult", "IntervalResult", "ResultList", "ConfidenceInterval", "SearchStats", "plot_intervals",
    "Loss", "SquaredLoss", "RidgeLoss", "HingeLoss", "LogisticLoss", "ExponentialLoss", "FunctionLoss",
    "NoMinimiserError", "get_loss",
    "LinearBasis", "PolynomialBasis", "PCABasis", "ComposedBasis", "FunctionBasis", "make_basis",
]
