"""The progress bar over a CUD interval's bootstrap replicates, and its display of the bracket.

Both CUD intervals (:func:`cudbound.cud_interval` and the difference's
:func:`cudbound.compare.cud_difference_interval`) compute the order statistic Q_hat in rounds
(:mod:`cudbound.quantile`); after each round the k-th smallest certified lower and upper bounds,
a <= Q_hat <= c, bracket it. The bar counts the replicates settled so far and shows the interval
that c certifies (centre +/- c, clipped to the interval's range) and, while the bracket is open, what
a already says of the exact interval.
"""
from __future__ import annotations

import math
import time

__all__ = ["replicate_bar", "bracket_display"]


def replicate_bar(progress: bool, total: int, desc: str = "CUD replicates"):
    """A tqdm bar over ``total`` replicates on stderr (cleared when closed), or None when not ``progress``."""
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="rep", leave=False, dynamic_ncols=True)


def bracket_display(bar, centre: float, deadline: float | None, *, low: float = 0.0, high: float = 1.0,
                    difference: bool = False):
    """``on_bounds(a, c)`` for :func:`cudbound.quantile.order_statistic`: after each round, the certified
    interval [centre - c, centre + c] clipped to [low, high] on ``bar`` and, while a < c, the exact
    interval's upper end (``difference``: its half-width) known so far; with a ``deadline`` (a
    ``time.time()`` moment) the seconds of budget left. None when there is no bar.

    >>> class Bar:
    ...     def set_postfix_str(self, text, refresh=True):
    ...         print(text)
    >>> bracket_display(Bar(), 0.2, None)(0.05, 0.1)
    certified [0.100, 0.300], exact upper end >= 0.250
    >>> bracket_display(Bar(), -0.9, None, low=-1.0, difference=True)(0.05, 0.25)
    certified [-1.000, -0.650], exact half-width >= 0.050
    """
    if bar is None:
        return None

    def show(a: float, c: float) -> None:
        text = f"certified [{max(low, centre - c):.3f}, {min(high, centre + c):.3f}]" if math.isfinite(c) else ""
        if a < c and math.isfinite(c):
            text += (f", exact half-width >= {a:.3f}" if difference
                     else f", exact upper end >= {min(high, centre + a):.3f}")
        if deadline is not None:
            text += f", {max(0.0, deadline - time.time()):.0f} s of budget left"
        bar.set_postfix_str(text, refresh=True)
    return show
