"""Pictures of results (cudbound/plotting.py): the Axes hold the expected artists."""
import numpy as np
import pytest

import cudbound

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    return X, np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)


@pytest.mark.parametrize("exact", [True, False])
def test_cud_plot_shows_every_replicate_q_hat_and_the_interval(data, exact):
    X, y = data
    res = cudbound.cud_interval(X, y, n_resamples=40, rng=2, engine_options={"exact_distribution": exact})
    ax = res.plot()
    counted = sum(p.get_height() for p in ax.patches)
    assert counted == res.n_resamples                     # every replicate in one of the histograms
    lines = [l for l in ax.get_lines() if np.allclose(l.get_xdata(), res.half_width)]
    assert len(lines) == 1                                 # Q_hat marked
    assert f"[{res.low:.3f}, {res.high:.3f}]" in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("exact" in t for t in labels)
    assert any("upper bounds" in t for t in labels) == (not res.exact_replicates.all())
    plt.close("all")


def test_forest_plot_has_one_row_per_method_in_order(data):
    X, y = data
    res = cudbound.intervals(X, y, methods=["kohavi", "yang", "martin"], rng=1)
    fig, ax = plt.subplots()
    assert cudbound.plot_intervals(res, ax=ax) is ax
    segments = [seg for c in ax.collections if isinstance(c, LineCollection) for seg in c.get_segments()]
    assert len(segments) == 3
    ys = {round(float(seg[0][1])): (float(seg[0][0]), float(seg[1][0])) for seg in segments}
    assert ys[2] == pytest.approx((res[0].low, res[0].high)) and ys[0] == pytest.approx((res[2].low, res[2].high))
    ticks = dict(zip(ax.get_yticks().tolist(), [t.get_text() for t in ax.get_yticklabels()]))
    assert ticks == {2: "kohavi", 1: "yang", 0: "martin"}          # first at the top
    assert res.plot() is not None and res[1].plot() is not None
    with pytest.raises(ValueError, match="labels"):
        cudbound.plot_intervals(res, labels=["a"])
    with pytest.raises(ValueError, match="at least one"):
        cudbound.plot_intervals([])
    plt.close("all")


def test_a_missing_matplotlib_gives_a_clear_message(data, monkeypatch):
    import builtins
    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real(name, *args, **kwargs)
    X, y = data
    res = cudbound.intervals(X, y, methods=["kohavi"], rng=1)
    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ImportError, match="pip install"):
        res.plot()


# ---- pictures a statistician would put in a paper (issue 29, point 4)
from cudbound.results import ConfidenceInterval, IntervalResult  # noqa: E402

LONG_NAMES = ["cud", "bs1", "bs2", "kohavi", "yang", "martin", "langford", "wald_cv", "corrected_t",
              "conservative_z", "nested_cv", "bccv", "e632_delta"]


def _fake_results(n=60):
    rng = np.random.default_rng(5)
    out = []
    for name in LONG_NAMES:
        c = float(rng.uniform(0.05, 0.2))
        out.append(IntervalResult(method=name, confidence_interval=ConfidenceInterval(max(0, c - 0.08), c + 0.1),
                                  confidence_level=0.95, estimate=c, n_samples=n))
    return out


def _texts_inside_the_saved_figure(fig, tmp_path):
    """Every text of the figure (titles, axis labels, tick labels, legend) lies inside the image
    that savefig writes (the issue's clipped 'orrected_t' and x-axis title)."""
    fig.savefig(tmp_path / "f.png", dpi=100)
    renderer = fig.canvas.get_renderer()
    drawn = fig.get_tightbbox(renderer)          # everything drawn (inches), matplotlib's own measure
    width, height = fig.get_size_inches()
    slack = 1 / 100                              # one pixel
    assert drawn.x0 >= -slack and drawn.y0 >= -slack, drawn
    assert drawn.x1 <= width + slack and drawn.y1 <= height + slack, (drawn, width, height)
    # and the labels that were cut before are there
    texts = {t.get_text() for t in fig.findobj(mpl.text.Text) if t.get_visible()}
    assert any(t for t in texts if t.strip())


def test_forest_plot_keeps_every_label_when_saved(tmp_path):
    ax = cudbound.plot_intervals(_fake_results(), data_name="breast cancer (60 rows)")
    _texts_inside_the_saved_figure(ax.figure, tmp_path)
    plt.close("all")


def test_replicate_histogram_keeps_every_label_when_saved(tmp_path, data):
    X, y = data
    res = cudbound.cud_interval(X, y, n_resamples=40, rng=2)
    ax = res.plot()
    _texts_inside_the_saved_figure(ax.figure, tmp_path)
    plt.close("all")


def test_forest_axis_fits_the_intervals_and_can_show_all_of_0_1():
    results = _fake_results()
    ax = cudbound.plot_intervals(results)
    lo, hi = ax.get_xlim()
    assert lo <= min(r.low for r in results) and hi >= max(r.high for r in results)
    assert hi - lo < 0.6                                   # fitted, not 0-1 (the intervals span ~0.35)
    assert lo >= -0.005                                    # no negative error rates on the axis
    ax = cudbound.plot_intervals(results, full_range=True)
    assert ax.get_xlim() == pytest.approx((-0.02, 1.02))
    plt.close("all")


def test_forest_title_and_legend_say_what_is_drawn():
    ax = cudbound.plot_intervals(_fake_results(n=60), data_name="pilot.csv")
    assert ax.get_title() == "95% confidence intervals for pilot.csv (n = 60)"
    # our own figure: one legend below the axes (a figure legend), so it never hides a row
    assert ax.get_legend() is None and len(ax.figure.legends) == 1
    legend = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert legend == ["estimate: training error (cud)", "estimate: .632 estimate (the paper's baselines)",
                      "estimate: the method's own estimate"]
    assert ax.get_xlabel() == "generalization error"
    fig, mine = plt.subplots()
    cudbound.plot_intervals(_fake_results(), ax=mine)          # the caller's Axes: the legend inside it
    assert mine.get_legend() is not None and not fig.legends
    assert cudbound.plot_intervals(_fake_results(), title="mine").get_title() == "mine"
    plt.close("all")


def test_exact_and_bounded_bars_do_not_hide_each_other():
    """The bounded replicates' bars stand on the exact ones' in the bins both share: no two bars
    overlap, each bin's bars add up to its replicates, and the bounded ones are hatched."""
    from types import SimpleNamespace

    from cudbound.plotting import plot_replicates
    n = 20
    exact_values = np.array([1, 2, 2, 3, 3, 3, 4, 5]) / n
    bounded_values = np.array([3, 3, 4, 6, 6]) / n                # bins 3 and 4 hold both kinds
    result = SimpleNamespace(bootstrap_distribution=np.concatenate([exact_values, bounded_values]),
                             exact_replicates=np.r_[np.ones(8, bool), np.zeros(5, bool)], n_samples=n,
                             half_width=0.25, confidence_interval=(0.05, 0.55), confidence_level=0.95,
                             train_error=0.3)
    ax = plot_replicates(result)
    exact_bars, bounded_bars = ax.containers
    bars = [(round(p.get_x() * n + 0.5), p.get_y(), p.get_y() + p.get_height())
            for p in ax.patches if p.get_height() > 0]
    for k in {b[0] for b in bars}:
        spans = sorted((lo, hi) for kk, lo, hi in bars if kk == k)
        assert all(hi <= lo for (_, hi), (lo, _) in zip(spans, spans[1:])), (k, spans)   # stacked, not overlapping
        assert sum(hi - lo for lo, hi in spans) == np.sum(np.round(result.bootstrap_distribution * n) == k)
    assert [p.get_height() for p in exact_bars if p.get_height() > 0] == [1, 2, 3, 1, 1]
    tops = {round(p.get_x() * n + 0.5): (p.get_y(), p.get_height()) for p in bounded_bars if p.get_height() > 0}
    assert tops == {3: (3, 2), 4: (1, 1), 6: (0, 2)}
    assert all(p.get_hatch() == "//" for p in bounded_bars) and not any(p.get_hatch() for p in exact_bars)
    plt.close("all")


def test_histogram_bins_are_the_counts_even_off_the_grid(data):
    """With g < 1 some suprema fall between the counts k/n: the bins stay one per count (the
    issue's spikes and gaps came from equal bins over such values), every replicate counted."""
    X, y = data
    res = cudbound.cud_interval(X, y, n_resamples=60, rng=3, engine_options={"exact_distribution": True})
    n = res.n_samples
    values = np.asarray(res.bootstrap_distribution)
    assert not np.allclose(values * n, np.round(values * n))  # some off the grid
    ax = res.plot()
    assert all(p.get_width() == pytest.approx(1 / n) for p in ax.patches)
    assert sum(p.get_height() for p in ax.patches) == len(values)
    plt.close("all")


def test_histogram_bins_are_the_attainable_values(data):
    """Q^(b) = |C|/n here (g = 1): one bar per value k/n, centred on it, no gaps between bins."""
    X, y = data
    # alpha_n -> 0 makes every g factor 1 (to 1e-12), so Q^(b) = |C| / n
    res = cudbound.cud_interval(X, y, n_resamples=60, rng=3, alpha_n=1e-12, engine_options={"exact_distribution": True})
    n = res.n_samples
    values = np.asarray(res.bootstrap_distribution)
    assert np.allclose(values * n, np.round(values * n))
    ax = res.plot()
    for patch in ax.patches:
        assert patch.get_width() == pytest.approx(1 / n)
        assert (patch.get_x() + patch.get_width() / 2) * n == pytest.approx(round((patch.get_x() + 0.5 / n) * n))
    assert "$" in ax.get_xlabel() and any("$" in t.get_text() for t in ax.get_legend().get_texts())
    assert f"n = {n}" in ax.get_title()
    plt.close("all")


def test_difference_plot_has_a_row_per_comparison_and_the_zero_line(tmp_path):
    from cudbound.compare import mcnemar, delong_test, error_difference_interval
    from cudbound.results import ResultList
    y = np.array([1] * 10 + [0] * 10)
    a = np.array([1] * 9 + [0] + [0] * 10)
    b = np.array([1] * 5 + [0] * 5 + [0] * 9 + [1])
    scores = np.linspace(0, 1, 20)
    res = ResultList([mcnemar(y, a, b), error_difference_interval(y, a, b), delong_test(y, a + 0.1 * scores, scores)])
    ax = res.plot()                         # the list's plot: cudbound.plot_intervals, differences drawn as such
    assert [t.get_text() for t in ax.get_yticklabels()] == ["mcnemar", "tango", "delong (AUC)"]
    assert any(np.allclose(l.get_xdata(), 0.0) for l in ax.get_lines())          # the zero line
    segments = [s for c in ax.collections if isinstance(c, LineCollection) for s in c.get_segments()]
    assert sorted(round(s[0][0], 6) for s in segments) == sorted(round(r.low, 6) for r in res[1:])
    texts = [t.get_text() for t in ax.texts]
    assert texts == [f"p = {r.pvalue:.3g}" for r in res]
    assert ax.get_xlim()[0] < res[1].low and "n = 20" in ax.get_title()
    assert ax.get_xlabel() == "difference A - B (error rate; AUC where marked)"
    ax.figure.savefig(tmp_path / "d.png")
    assert cudbound.plot_intervals(res[:2]).get_xlabel() == "difference of error rates, A - B"
    plt.close("all")
    with pytest.raises(ValueError, match="at least one"):
        ResultList().plot()


def test_the_list_plot_draws_intervals_or_differences_never_both():
    """One plot for every list: a single quantity as intervals (no zero line), differences with it;
    a point estimate as a hollow marker; both kinds on one axis refused."""
    from cudbound.auc import KernelRLS, auc_interval, lpo_auc
    from cudbound.compare import error_difference_interval
    from cudbound.results import ResultList
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    aucs = ResultList([auc_interval(KernelRLS(), X, y, method=m, cv=3, rng=0) for m in ("delong", "newcombe")]
                      + [lpo_auc(KernelRLS(), X, y)])
    ax = aucs.plot()
    assert ax.get_xlabel() == "AUC" and [t.get_text() for t in ax.get_yticklabels()] == ["delong", "newcombe",
                                                                                           "lpo_auc"]
    assert not any(np.allclose(line.get_xdata(), 0.0) for line in ax.get_lines())
    hollow = [line for line in ax.get_lines() if line.get_markerfacecolor() == "white"]
    assert len(hollow) == 1 and hollow[0].get_xdata()[0] == aucs[2].estimate
    assert "point estimate (no interval)" in [t.get_text() for t in ax.figure.legends[0].get_texts()]
    diff = error_difference_interval(np.array([1, 0] * 5), np.array([1, 0] * 5), np.array([0, 0] * 5))
    with pytest.raises(ValueError, match="not both on one axis"):
        ResultList([aucs[0], diff]).plot()
    plt.close("all")
