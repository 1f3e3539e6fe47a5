"""Shared numpydoc parameter blocks, filled into docstrings once at import.

The functions of one family (the six baseline intervals, the bootstrap estimators, the
hold-out bounds) take the same arguments; their descriptions are written once here and
each docstring names them with a ``%(block)s`` placeholder, as scipy's ``_lib.doccer``
does. A block's first line is placed at the placeholder; its other lines carry their own
indentation (four spaces, the indentation of a function's docstring).
"""
from __future__ import annotations

__all__ = ["fill_doc"]


def fill_doc(**blocks):
    """Decorator: replace each ``%(name)s`` in the function's docstring by ``blocks[name]``.

    >>> @fill_doc(x="x : float\\n        A number.")
    ... def f(x):
    ...     '''Parameters
    ...     ----------
    ...     %(x)s
    ...     '''
    >>> "A number." in f.__doc__
    True
    """
    def decorate(func):
        doc = func.__doc__ or ""
        for name, text in blocks.items():
            doc = doc.replace(f"%({name})s", text)
        if "%(" in doc:
            raise ValueError(f"docstring of {func.__name__} has an unfilled placeholder: "
                             f"{doc[doc.index('%('):].split(')')[0]})")
        func.__doc__ = doc
        return func
    return decorate
