"""Pictures of results: the bootstrap distribution behind a CUD interval, and a forest plot of
several intervals on the same data. matplotlib is optional (``pip install "cudbound[figures]"``)
and imported only here, when a picture is asked for: ``cud_interval(X, y).plot()``,
``cudbound.plot_intervals(cudbound.intervals(X, y))`` (tested in ``tests/test_plotting.py``).
"""
from __future__ import annotations

import numpy as np

__all__ = ["plot_replicates", "plot_intervals"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError('plotting needs matplotlib: pip install "cudbound[figures]" (or pip install matplotlib)') \
            from None
    return plt


def _axes(ax):
    if ax is not None:
        return ax
    return _pyplot().subplots(figsize=(6.0, 3.6))[1]


def plot_replicates(result, ax=None, bins=30):
    """Histogram of the replicate suprema Q^(b) of a CUD result, with Q_hat and the interval.

    Exact replicates are drawn as one histogram; replicates the quantile refinement left with
    bounds (``stats.status == "bounded"``: on one side of Q_hat, the interval is exact all the
    same) as a second, hatched one at their upper bounds. A vertical line marks Q_hat, the
    ceil(level B)-th smallest value; the title gives the interval err_D +/- Q_hat.

    Returns the matplotlib Axes.
    """
    ax = _axes(ax)
    values = np.asarray(result.bootstrap_distribution, dtype=float)
    exact = np.asarray(result.exact_replicates, dtype=bool)
    edges = np.histogram_bin_edges(values, bins=bins) if np.ptp(values) > 0 else \
        np.linspace(values.min() - 0.5 / len(values), values.max() + 0.5 / len(values), 2)
    ax.hist(values[exact], bins=edges, color="C0", alpha=0.8, label=f"Q^(b), exact ({int(exact.sum())})")
    if (~exact).any():
        ax.hist(values[~exact], bins=edges, color="C7", alpha=0.5, hatch="//",
                label=f"upper bounds, decided side of Q_hat ({int((~exact).sum())})")
    q = float(result.half_width)
    ax.axvline(q, color="C3", linewidth=2, label=f"Q_hat = {q:.3f}")
    low, high = result.confidence_interval
    ax.set_title(f"{result.confidence_level:.0%} CUD interval [{low:.3f}, {high:.3f}] = "
                 f"{result.train_error:.3f} +/- {q:.3f}", fontsize=9)
    ax.set_xlabel("replicate supremum Q^(b)")
    ax.set_ylabel("replicates")
    ax.legend(fontsize=7)
    return ax


def plot_intervals(results, ax=None, labels=None):
    """Forest plot: one row per interval (low to high, a dot at its centre), top to bottom in
    the order given; ``labels`` default to each result's method name.

    Returns the matplotlib Axes.
    """
    results = list(results)
    if not results:
        raise ValueError("plot_intervals needs at least one result.")
    names = [r.method for r in results] if labels is None else [str(x) for x in labels]
    if len(names) != len(results):
        raise ValueError(f"{len(names)} labels for {len(results)} results.")
    ax = _axes(ax)
    rows = np.arange(len(results))[::-1]
    for y, r in zip(rows, results):
        ax.hlines(y, r.low, r.high, color="C0", linewidth=2.5)
        ax.plot([r.centre], [y], "o", color="C3", markersize=5)
    ax.set_yticks(rows)
    ax.set_yticklabels(names)
    ax.set_xlim(-0.02, 1.02)
    levels = {r.confidence_level for r in results}
    ax.set_xlabel("generalization error" + (f" ({levels.pop():.0%} intervals)" if len(levels) == 1 else ""))
    ax.grid(axis="x", alpha=0.3)
    return ax
