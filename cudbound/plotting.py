"""Pictures of results: the bootstrap distribution behind a CUD interval, and a forest plot of
several results on the same data (intervals, or differences A - B of two classifiers with the zero
line). matplotlib is optional (``pip install "cudbound[examples]"``) and imported only here, when a
picture is asked for: ``cud_interval(X, y).plot()``, ``cudbound.intervals(X, y).plot()`` and
``cudbound.compare.compare(a, b, X, y).plot()`` (both :func:`plot_intervals`; tested in
``tests/test_plotting.py``).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes

# The results are typed Any here: cudbound.results imports this module (its plot methods), so
# naming CUDResult / IntervalResult would be an import cycle (tests/test_import_graph.py).

__all__ = ["plot_replicates", "plot_intervals"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError('plotting needs matplotlib: pip install "cudbound[figures]" (or pip install matplotlib)') \
            from None
    return plt


def _axes(ax, size=(6.4, 3.8)):
    """The given Axes, or a new figure's with constrained layout (a ``savefig`` keeps every label)."""
    if ax is not None:
        return ax
    return _pyplot().subplots(figsize=size, layout="constrained")[1]


def _replicate_edges(values, n, bins):
    """Histogram edges: one bin per attainable count k/n (Q^(b) = |C|/n times a factor g in
    [0, 1]: a value with g < 1 falls in the bin of the nearest k/n), so the bars have neither the
    gaps nor the spikes of equal bins over discrete values; ``bins`` (numpy's rule when "auto")
    when n is unknown or the values span more than 200 counts."""
    if n and len(values):
        k = np.round(values * n)
        if k.max() - k.min() <= 200:
            return (np.arange(k.min(), k.max() + 2) - 0.5) / n
    if np.ptp(values) > 0:
        return np.histogram_bin_edges(values, bins=bins)
    return np.linspace(values.min() - 0.5 / len(values), values.max() + 0.5 / len(values), 2)


def plot_replicates(result: Any, ax: Axes | None = None, bins: int | str | Sequence[float] = "auto",
                    title: str | None = None) -> Axes:
    """Histogram of the replicate suprema Q^(b) of a CUD result, with Q_hat and the interval.

    Exact replicates are drawn as one histogram; replicates the quantile refinement left with
    bounds (``stats.status == "bounded"``: on one side of Q_hat, the interval is exact all the
    same) as a second, hatched one at their upper bounds, stacked on the first (a bar's height is
    every replicate of its bin; neither kind hides the other). The bins are the attainable counts
    k/n (one bar per count; ``bins`` when n is unknown). A vertical line
    marks Q_hat, the ceil(level B)-th smallest value; the title gives the interval
    err_D +/- Q_hat, n and B (``title`` replaces it). Labels are typeset (matplotlib's mathtext).

    Returns the matplotlib Axes.
    """
    ax = _axes(ax)
    values = np.asarray(result.bootstrap_distribution, dtype=float)
    exact = np.asarray(result.exact_replicates, dtype=bool)
    edges = _replicate_edges(values, getattr(result, "n_samples", None), bins)
    label = f"$Q^{{(b)}}$, exact ({int(exact.sum())})"
    if exact.all():
        ax.hist(values, bins=edges, color="C0", label=label)
    else:       # the bounded replicates stacked on the exact ones, hatched: no bar hides another
        bounded = rf"upper bounds, side of $\hat Q$ decided ({int((~exact).sum())})"
        _, _, containers = ax.hist([values[exact], values[~exact]], bins=edges, stacked=True, color=["C0", "0.85"],
                                   label=[label, bounded])
        upper = cast("list[Any]", containers)[1]          # one BarContainer per stacked data set
        for patch in upper:
            patch.set(hatch="//", edgecolor="0.45", linewidth=0.5)
    q = float(result.half_width)
    ax.axvline(q, color="C3", linewidth=2, label=rf"$\hat Q$ = {q:.3f}")
    low, high = result.confidence_interval
    if title is None:
        title = (f"{result.confidence_level:.0%} CUD interval [{low:.3f}, {high:.3f}] = "
                 f"{result.train_error:.3f} $\\pm$ {q:.3f}\n(n = {result.n_samples}, B = {len(values)})")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(r"replicate supremum $Q^{(b)}$")
    ax.set_ylabel("replicates")
    ax.legend(fontsize=7)
    return ax


# what the marker of each row is: the method's estimate
_CUD_CENTRE = "training error (cud)"
_SHARED_CENTRE = ".632 estimate (the paper's baselines)"
_OWN_CENTRE = "the method's own estimate"
_AXIS_LABELS = {"error rate": "generalization error"}


def _centre_kind(result) -> str:
    if result.method == "cud":
        return _CUD_CENTRE
    if result.details.get("centre_source") == ".632" or result.method in ("bs1", "bs2", "kohavi", "yang", "martin",
                                                                             "langford"):
        return _SHARED_CENTRE
    return _OWN_CENTRE


def plot_intervals(results: Iterable[Any], ax: Axes | None = None, labels: Sequence[str] | None = None,
                   title: str | None = None, full_range: bool = False, data_name: str | None = None) -> Axes:
    """Forest plot of results (``cudbound.results.Result``): one row per result, top to bottom in the
    order given, its interval (low to high) and a marker at its estimate; ``labels`` default to each
    result's method name. What :meth:`cudbound.results.ResultList.plot` draws.

    Intervals of one quantity (an error rate, an AUC): the x axis fits them (``full_range=True``: all
    of [0, 1]); the legend says what the marker is for each kind of method (the training error for
    CUD, the .632 estimate for the paper's baselines, each other method's own estimate); a point
    estimate without an interval is a hollow marker.

    Differences A - B of two classifiers (``cudbound.compare``): a dashed line at zero (no
    difference); a test that gives no interval (McNemar, the 5x2cv tests) is drawn as its estimate
    alone, a hollow marker; the p-value of every test is written at the right end of its row; rows
    of an AUC difference (DeLong) are labelled so, since a positive AUC difference favours A where a
    positive error difference favours B (``full_range=True``: all of [-1, 1]).

    The title gives the level, n and ``data_name`` when known (``title`` replaces it). Differences and
    single quantities are not drawn on one axis (ValueError).

    Returns the matplotlib Axes.
    """
    results = list(results)
    if not results:
        raise ValueError("plot_intervals needs at least one result.")
    differences = {bool(r.is_difference) for r in results}
    if len(differences) > 1:
        raise ValueError("plot_intervals draws either differences A - B of two classifiers or single quantities "
                         "(error rates, AUCs), not both on one axis; plot them apart.")
    quantities = list(dict.fromkeys(r.quantity for r in results))
    if labels is None:   # several quantities: the AUC rows marked (both AUC quantities name the AUC)
        names = [r.method + (" (AUC)" if len(quantities) > 1 and "AUC" in r.quantity else "") for r in results]
    else:
        names = [str(x) for x in labels]
    if len(names) != len(results):
        raise ValueError(f"{len(names)} labels for {len(results)} results.")
    own = ax is None
    draw = _draw_differences if differences == {True} else _draw_estimates
    ax = draw(results, _axes(ax, size=(6.4, 1.6 + 0.34 * len(results))), full_range)
    rows = np.arange(len(results))[::-1]
    ax.set_yticks(rows)
    ax.set_yticklabels(names)
    ax.set_ylim(-0.7, len(results) - 0.3)
    with_interval = [r for r in results if r.has_confidence_interval]
    levels = {r.confidence_level for r in with_interval}
    sizes = {r.n_samples for r in results} - {None}
    if differences == {True}:
        ax.set_xlabel(f"{quantities[0]}, A - B" if len(quantities) == 1 else
                      "difference A - B (error rate; AUC where marked)")
        words = ("comparisons", "of A - B", f"on {data_name}" if data_name else "")
    else:
        ax.set_xlabel(_AXIS_LABELS.get(quantities[0], quantities[0]) if len(quantities) == 1 else "estimate")
        words = ("confidence intervals", "", f"for {data_name}" if data_name else "")
    _title_legend_grid(ax, title, levels, sizes, words, own, ncol=2 if differences == {True} else 1)
    return ax


def _draw_estimates(results, ax, full_range):
    """The rows of intervals of single quantities: a marker per kind of estimate (``_centre_kind``),
    hollow for a point estimate without an interval; the x axis fitted to them within [0, 1]."""
    markers = {_CUD_CENTRE: "D", _SHARED_CENTRE: "o", _OWN_CENTRE: "s"}
    shown = set()
    for y, r in zip(np.arange(len(results))[::-1], results):
        kind = _centre_kind(r)
        if r.has_confidence_interval:
            ax.hlines(y, r.low, r.high, color="C0", linewidth=2.5)
            ax.plot([r.estimate], [y], markers[kind], color="C3", markersize=5,
                    label=None if kind in shown else f"estimate: {kind}")
            shown.add(kind)
        else:
            ax.plot([r.estimate], [y], markers[kind], markerfacecolor="white", markeredgecolor="C3", markersize=5,
                    label=None if "point" in shown else "point estimate (no interval)")
            shown.add("point")
    if full_range:
        ax.set_xlim(-0.02, 1.02)
    else:
        ends = [v for r in results for v in ((r.low, r.high) if r.has_confidence_interval else ()) + (r.estimate,)]
        lo, hi = min(ends), max(ends)
        pad = max(0.01, 0.05 * (hi - lo))
        ax.set_xlim(max(-0.005, lo - pad), min(1.005, hi + pad))
    return ax


def _draw_differences(results, ax, full_range):
    """The rows of differences A - B: the interval where the method gives one, the estimate (hollow
    for a test without an interval), the p-value at the right end, the dashed zero line; the x axis
    fitted to them and to zero within [-1, 1]."""
    shown = set()
    ends = [0.0]
    for y, r in zip(np.arange(len(results))[::-1], results):
        if r.has_confidence_interval:
            ax.hlines(y, r.low, r.high, color="C0", linewidth=2.5,
                      label="_nolegend_" if "ci" in shown else "confidence interval")
            shown.add("ci")
            ends += [r.low, r.high]
            ax.plot([r.estimate], [y], "s", color="C3", markersize=5,
                    label=None if "est" in shown else "estimate A - B")
            shown.add("est")
        else:
            ax.plot([r.estimate], [y], "s", markerfacecolor="white", markeredgecolor="C3", markersize=5,
                    label=None if "test" in shown else "estimate of a test without an interval")
            shown.add("test")
        ends.append(r.estimate)
        if r.pvalue is not None:
            ax.annotate(f"p = {r.pvalue:.3g}", xy=(1.0, y), xycoords=("axes fraction", "data"), xytext=(4, 0),
                        textcoords="offset points", va="center", fontsize=7)
    ax.axvline(0.0, color="k", linewidth=0.8, linestyle="--")
    if full_range:
        ax.set_xlim(-1.02, 1.02)
    else:
        lo, hi = min(ends), max(ends)
        pad = max(0.01, 0.06 * (hi - lo))
        ax.set_xlim(max(-1.02, lo - pad), min(1.02, hi + pad))
    return ax


def _title_legend_grid(ax, title, levels, sizes, words, own, ncol):
    """The title (``title``, else "<level> confidence intervals" when the results share one level,
    else ``words[0]``, then ``words[1]`` and ``words[2]`` when given, and "(n = ...)" when they
    share one size), the legend and the grid of a forest plot. The legend goes below the axes of
    our own figure (constrained layout makes room), never over a row; inside the caller's Axes."""
    if title is None:
        parts = [f"{next(iter(levels)):.0%} confidence intervals" if len(levels) == 1 else words[0]]
        parts += [w for w in words[1:] if w]
        if len(sizes) == 1:
            parts.append(f"(n = {next(iter(sizes))})")
        title = " ".join(parts)
    ax.set_title(title, fontsize=9)
    if own:
        ax.figure.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=ncol, fontsize=7,
                         frameon=False)
    else:
        ax.legend(fontsize=7, loc="best")
    ax.grid(axis="x", alpha=0.3)
