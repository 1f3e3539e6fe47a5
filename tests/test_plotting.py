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
    res = cudbound.cud_interval(X, y, n_resamples=40, rng=2, exact_distribution=exact)
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
