"""What both kinds of study task share: whether a training draw is usable, and the rows' JSON details."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..basis import make_basis
from ..fit import check_minimiser_exists
from ..losses import NoMinimiserError, get_loss

__all__ = ["MAX_REDRAWS"]

MAX_REDRAWS = 1000
"""A task whose training draws are degenerate this many times in a row fails."""


def _usable(basis_spec, Xtr, ytr, loss=None):
    """The fitted basis and design if the draw has both classes, a full-rank design and (for
    ``loss``) a minimiser, else None."""
    if np.unique(ytr).size < 2:
        return None
    basis = make_basis(basis_spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            design = basis.fit_transform(Xtr)
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            return None
    if not np.all(np.isfinite(design)):
        return None
    s = np.linalg.svd(design, compute_uv=False)
    if s[-1] <= s[0] * max(design.shape) * np.finfo(float).eps * 1e3:
        return None
    if loss is not None:
        try:
            check_minimiser_exists(design, ytr, get_loss(loss))
        except NoMinimiserError:
            return None
    return basis, design


def _jsonable(details):
    return {k: v for k, v in details.items() if isinstance(v, (int, float, str, bool, type(None)))
            and not (isinstance(v, float) and not math.isfinite(v))}
