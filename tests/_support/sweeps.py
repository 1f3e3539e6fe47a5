"""How a sweep is split between the README's command and CI (issue 30, point 6).

A sweep runs the same check over many cases of a few classes (class of input, size, loss, ...).
The README's command (``python -m pytest -q -n auto``; pyproject's addopts leave out ``slow``) checks
the first case of each class, in the sweep's order; the other cases are marked ``slow``, and CI runs
them after it (``.ci/run``: ``python -m pytest -m slow``), so CI still checks every case. Each sweep
names its classes (the ``shape`` of a case) where it is parametrised.
"""
import pytest


def _marked_first(cases, shape):
    """(case, whether it is the first of its shape) for each of ``cases``, in their order."""
    seen = set()
    for case in cases:
        key = shape(case)
        yield case, key not in seen
        seen.add(key)


def representatives(cases, shape):
    """The first of ``cases`` of each ``shape(case)``, in their order."""
    return [case for case, first in _marked_first(cases, shape) if first]


def first_of_each(cases, shape, ids=None):
    """``cases`` as ``pytest.param``: the first of each ``shape(case)`` as it is, every other case
    marked ``slow``. A case that is a tuple holds the parametrised arguments; ``ids(case)`` names it."""
    return [pytest.param(*(case if isinstance(case, tuple) else (case,)),
                         marks=() if first else pytest.mark.slow,
                         id=None if ids is None else ids(case))
            for case, first in _marked_first(cases, shape)]


def kept_by_default(params):
    """The cases among ``first_of_each``'s parameters that the README's command runs (not slow)."""
    return [p.values if len(p.values) > 1 else p.values[0] for p in params
            if not any(m.name == "slow" for m in p.marks)]
