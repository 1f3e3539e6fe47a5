"""Keyword arguments kept for one release after a rename.

One helper for every renamed keyword (:func:`renamed`). It emits a :class:`DeprecationWarning`
that names the new name; a call that gives the old and the new name at once is refused.
``CHANGELOG.md`` ("Deprecated") lists every such name.

>>> import warnings
>>> @renamed(k="cv")
... def folds(*, cv=10):
...     return cv
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     folds(k=5)
5
>>> str(caught[0].message)
'folds(): `k` is deprecated and will be removed in the next release; use `cv` instead.'
>>> folds(k=5, cv=5)
Traceback (most recent call last):
    ...
TypeError: folds() got both `k` (deprecated) and `cv`; pass `cv` only.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ._warnings import warn

__all__ = ["renamed", "apply_renames", "renames_of", "warn_renamed"]


def _message(where: str, old: str, new: str) -> str:
    return f"{where}: `{old}` is deprecated and will be removed in the next release; use `{new}` instead."


def warn_renamed(where: str, old: str, new: str) -> None:
    """The DeprecationWarning of a renamed name, attributed to the user's line."""
    warn(_message(where, old, new), DeprecationWarning)


def apply_renames(where: str, renames: Mapping[str, str], kwargs: Mapping[str, Any],
                  given: frozenset | set = frozenset()) -> dict:
    """``kwargs`` with every deprecated name replaced by its new one (a DeprecationWarning each,
    attributed to the user's line: the first caller outside the package).

    ``where`` names the function in the messages; ``given`` holds the new names already given
    otherwise (positionally). An old and a new name given together raise TypeError, before
    anything is warned or computed.
    """
    for old, new in renames.items():
        if old in kwargs and (new in kwargs or new in given):
            raise TypeError(f"{where} got both `{old}` (deprecated) and `{new}`; pass `{new}` only.")
    out = dict(kwargs)
    for old, new in renames.items():
        if old in out:
            warn_renamed(where, old, new)
            out[new] = out.pop(old)
    return out


def renamed(**renames: str) -> Callable[[Callable], Callable]:
    """Decorate a function whose keyword ``old`` is now ``new``: ``@renamed(k="cv")``.

    The old keyword still works for one release, with a DeprecationWarning naming the new one;
    both at once raise TypeError. The signature shown (``inspect.signature``, the documentation)
    is the function's own, with the new names only; ``renames_of(function)`` gives the old ones.
    """
    def decorate(func: Callable) -> Callable:
        sig = inspect.signature(func)
        for old, new in renames.items():
            if new not in sig.parameters:
                raise TypeError(f"{func.__qualname__} has no parameter {new!r} to rename {old!r} to.")
            if old in sig.parameters:
                raise TypeError(f"{func.__qualname__} still has a parameter {old!r}.")
        name = func.__qualname__.removesuffix(".__init__") + "()"

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if any(old in kwargs for old in renames):
                given = set(sig.bind_partial(*args).arguments) if args else set()
                kwargs = apply_renames(name, renames, kwargs, given)
            return func(*args, **kwargs)

        wrapper.__deprecated_renames__ = {**renames_of(func), **renames}  # type: ignore[attr-defined]
        return wrapper
    return decorate


def renames_of(func: Callable) -> dict[str, str]:
    """The deprecated keywords of a function decorated with :func:`renamed` (old name -> new)."""
    return dict(getattr(func, "__deprecated_renames__", {}))
