"""The one contract of features and labels (``cudbound.design.PreparedData``), at every public entry point.

Each function that takes labels gets the same class of inputs: labels {0, 1}, booleans and the text
pair yes/no (accepted, with the result of labels -1/+1), another pair of strings (accepted with
``pos_label`` where the function takes it, refused otherwise), one class only, a missing label
(NaN, None), labels of the wrong length or shape, and NaN or a wrong shape in the features or
the design. A refusal is a ValueError whose message says what is wrong.
"""
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import cudbound
from cudbound import baselines as bl
from cudbound.auc import KernelRLS, auc_interval, auc_score, cv_auc, lpo_auc
from cudbound.compare import Procedure, wald_cv_test
from cudbound.resampling import fold_assignments
from cudbound.svm import loo_error, xi_alpha

N = 20
_rng = np.random.default_rng(3)
X = _rng.normal(size=(N, 2))
Y = np.where(X[:, 0] + 0.8 * _rng.normal(size=N) > 0, 1, -1)
Y[:2] = (1, -1)
DESIGN = np.column_stack([np.ones(N), X])
COUNTS = np.bincount(np.random.default_rng(4).integers(0, N, N), minlength=N)


@dataclass(frozen=True)
class Entry:
    call: Callable            # call(A, y, **kw): A is X (takes="X") or the design (takes="design")
    takes: str = "design"     # what the first argument is: "X", "design", or "none" (labels only)
    pos_label: bool = False   # the function takes pos_label=


def _interval(r):
    return tuple(r.confidence_interval)


ENTRIES = {
    # features and labels
    "cud_interval": Entry(lambda A, y, **kw: _interval(cudbound.cud_interval(A, y, n_resamples=20, rng=0, **kw)),
                          "X", True),
    "intervals": Entry(lambda A, y, **kw: [_interval(r) for r in cudbound.intervals(
        A, y, methods=["kohavi", "cud"], rng=0, n_resamples=20, **kw)], "X", True),
    "estimate_error": Entry(lambda A, y, **kw: bl.estimate_error(A, y, "cv", cv=3, rng=0, **kw).estimate, "X", True),
    "xi_alpha": Entry(lambda A, y, **kw: xi_alpha(A, y, **kw).estimate, "X", True),
    "loo_error": Entry(lambda A, y, **kw: loo_error(A, y, **kw).estimate, "X", True),
    "cv_auc": Entry(lambda A, y, **kw: cv_auc(KernelRLS(), A, y, cv=3, rng=0, **kw).estimate, "X", True),
    "lpo_auc": Entry(lambda A, y, **kw: lpo_auc(KernelRLS(), A, y, **kw).estimate, "X", True),
    "auc_interval": Entry(lambda A, y, **kw: _interval(auc_interval(KernelRLS(), A, y, cv=3, rng=0, **kw)), "X", True),
    "KernelRLS.fit": Entry(lambda A, y: tuple(KernelRLS().fit(A, y).dual_coef_), "X"),
    "compare.wald_cv_test": Entry(lambda A, y, **kw: _interval(wald_cv_test(Procedure(), Procedure(loss="hinge"), A, y,
                                                                          cv=4, rng=0, **kw)), "X", True),
    # a design and labels
    "cud_from_design": Entry(lambda A, y: _interval(cudbound.cud_from_design(A, y, n_resamples=20, rng=0))),
    "replicate_sup": Entry(lambda A, y: cudbound.replicate_sup(A, y, COUNTS)),
    "search_replicate": Entry(lambda A, y: cudbound.search_replicate(A, y, COUNTS).value),
    "replicate_sup_difference": Entry(lambda A, y: cudbound.replicate_sup_difference(A, A[:, :2], y, COUNTS,
                                                                                    loss_b="hinge")),
    "intervals_from_design": Entry(lambda A, y: [_interval(r) for r in cudbound.registry.intervals_from_design(
        A, y, ["kohavi"], rng=0)]),
    "resubstitution": Entry(lambda A, y: bl.resubstitution(A, y).estimate),
    "loo_bootstrap": Entry(lambda A, y: bl.loo_bootstrap(A, y, n_resamples=20, rng=0).estimate),
    "e632": Entry(lambda A, y: bl.e632(A, y, n_resamples=20, rng=0).estimate),
    "e632plus": Entry(lambda A, y: bl.e632plus(A, y, n_resamples=20, rng=0).estimate),
    "cross_validation": Entry(lambda A, y: bl.cross_validation(A, y, cv=3, rng=0).estimate),
    "leave_one_out": Entry(lambda A, y: bl.leave_one_out(A, y).estimate),
    "bootstrap_632_distribution": Entry(lambda A, y: tuple(bl.bootstrap_632_distribution(
        A, y, n_resamples=4, n_inner=3, rng=0))),
    "bs1": Entry(lambda A, y: _interval(bl.bs1(A, y, n_resamples=20, n_inner=3, n_boot=20, rng=0))),
    "bs2": Entry(lambda A, y: _interval(bl.bs2(A, y, n_resamples=20, n_inner=3, n_boot=20, rng=0))),
    "kohavi": Entry(lambda A, y: _interval(bl.kohavi(A, y, n_boot=20, rng=0))),
    "yang": Entry(lambda A, y: _interval(bl.yang(A, y, n_boot=20, repeats=2, rng=0))),
    "martin": Entry(lambda A, y: _interval(bl.martin(A, y, n_boot=20, rng=0))),
    "langford": Entry(lambda A, y: _interval(bl.langford(A, y, n_boot=20, rng=0))),
    "wald_cv": Entry(lambda A, y: _interval(bl.wald_cv(A, y, cv=3, rng=0))),
    "corrected_t": Entry(lambda A, y: _interval(bl.corrected_t(A, y, n_splits=3, rng=0))),
    "conservative_z": Entry(lambda A, y: _interval(bl.conservative_z(A, y, n_splits=3, rng=0))),
    "nested_cv": Entry(lambda A, y: _interval(bl.nested_cv(A, y, cv=3, repeats=2, rng=0))),
    "bccv": Entry(lambda A, y: _interval(bl.bccv(A, y, n_resamples=20, rng=0))),
    "e632_delta": Entry(lambda A, y: _interval(bl.e632_delta(A, y, n_resamples=20, rng=0))),
    # labels only
    "auc_score": Entry(lambda A, y: auc_score(y, np.arange(len(y), dtype=float)), "none"),
    "fold_assignments": Entry(lambda A, y: fold_assignments(y, 3, 1, rng=0).tolist(), "none"),
}

_REFERENCE = {}


def _reference(name):
    """The entry's result on labels -1/+1."""
    if name not in _REFERENCE:
        _REFERENCE[name] = _call(name, Y)
    return _REFERENCE[name]


def _call(name, y, A=None, **kw):
    entry = ENTRIES[name]
    if A is None:
        A = X if entry.takes == "X" else DESIGN
    return entry.call(A, y, **kw)


def _nan(A):
    A = A.copy()
    A[3, 1] = np.nan
    return A


ACCEPTED = {
    "zero_one": lambda y: (y + 1) // 2,
    "zero_one_float": lambda y: (y + 1) / 2.0,
    "booleans": lambda y: y > 0,
    "yes_no": lambda y: np.where(y > 0, "yes", "no"),
    "column": lambda y: y.reshape(-1, 1),
}

REFUSED = {   # case -> (labels, features or design, message)
    "one_class": (lambda y: np.ones_like(y), None, "exactly two classes; found 1"),
    "three_classes": (lambda y: np.arange(len(y)) % 3, None, "exactly two classes; found 3"),
    "nan_label": (lambda y: np.where(np.arange(len(y)) == 4, np.nan, y.astype(float)), None,
                  "non-finite label at position 4"),
    "none_label": (lambda y: [None if i == 2 else int(v) for i, v in enumerate(y)], None,
                   r"missing label \(None\) at position 2"),
    "nan_in_object_labels": (lambda y: np.array([np.nan if i == 5 else str(v) for i, v in enumerate(y)], dtype=object),
                             None, "missing label .* at position 5"),
    "too_few_labels": (lambda y: y[:-1], None, f"has {N} rows but `y` has {N - 1} labels"),
    "labels_2d": (lambda y: np.column_stack([y, y]), None, r"`y` must be 1-D; got shape \(20, 2\)"),
    "nan_in_features": (lambda y: y, _nan, "non-finite entry; the first is NaN at row 3, column 1"),
    "features_3d": (lambda y: y, lambda A: A[:, :, None], "must be 2-D"),
}


ROWS = ("too_few_labels", "nan_in_features", "features_3d")   # cases about rows, features or the design
CASES = [(name, case) for name in sorted(ENTRIES) for case in [*sorted(ACCEPTED), "other_pair", *sorted(REFUSED)]
         if not (ENTRIES[name].takes == "none" and case in ROWS)]


@pytest.mark.parametrize("name, case", CASES)
def test_every_entry_point_applies_one_contract(name, case):
    entry = ENTRIES[name]
    if case in ACCEPTED:
        assert _call(name, ACCEPTED[case](Y)) == _reference(name)
    elif case == "other_pair":
        words = np.where(Y > 0, "case", "control")
        if entry.pos_label:
            assert _call(name, words, pos_label="case") == _reference(name)
            assert _call(name, words, pos_label="control") == _call(name, -Y)
        else:
            with pytest.raises(ValueError, match=r"labels \['case', 'control'\]; only .* mapped automatically"):
                _call(name, words)
    else:
        labels, data, message = REFUSED[case]
        base = X if entry.takes == "X" else DESIGN
        with pytest.raises(ValueError, match=message):
            _call(name, labels(Y), A=None if data is None else data(base))
