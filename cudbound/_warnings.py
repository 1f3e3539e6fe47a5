"""Warnings attributed to the user's line, whatever the depth of the call that issues them.

A fixed ``stacklevel`` is right for one call path only: ``cud_interval`` and ``cud_from_design``
reach the same small-sample warning at different depths, and a refit's warning is issued from
one to five frames below the function the user called. :func:`warn` attributes a warning to the
first frame outside the package instead (Python's default filters then show it once per line of
the user's code, and a DeprecationWarning only there).

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     warn("a message", UserWarning)
>>> str(caught[0].message), caught[0].category.__name__
('a message', 'UserWarning')
"""
from __future__ import annotations

import sys
import warnings

__all__ = ["warn", "user_stacklevel"]

_PACKAGE = __name__.partition(".")[0]


def user_stacklevel() -> int:
    """The ``stacklevel`` for the function that calls this one and then ``warnings.warn``: it
    attributes the warning to the first frame outside the package (1, that function's own line,
    when the stack ends first)."""
    try:
        frame, level = sys._getframe(2), 2   # 1: the function calling warnings.warn
    except ValueError:
        return 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == _PACKAGE:
        frame, level = frame.f_back, level + 1
    return level


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)`` attributed to the user's line (:func:`user_stacklevel`)."""
    warnings.warn(message, category, stacklevel=user_stacklevel())
