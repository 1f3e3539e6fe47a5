"""paper_figures/: tables and figures from a small study store, checked against the raw rows."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from cudbound.coverage import ResultStore, load_config, run_study

ROOT = Path(__file__).resolve().parents[1]
FIGS = ROOT / "paper_figures"


def script(name):
    sys.path.insert(0, str(FIGS))
    spec = importlib.util.spec_from_file_location(f"paper_figures_{name}", FIGS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("study") / "smoke.sqlite"
    run_study(load_config(ROOT / "experiments" / "smoke.toml"), path, n_jobs=1, progress=False)
    return path


def test_published_values_are_the_papers_tables():
    published = script("published")
    assert set(published.PUBLISHED) == {("coverage", 30), ("width", 30), ("coverage", 50), ("width", 50)}
    for table in published.PUBLISHED.values():
        assert list(table) == list(published.DATASETS)
        assert all(0 < v <= 1 for row in table.values() for v in row.values())
    # spot checks against the paper's Table 2 and Table 5
    assert published.PUBLISHED[("coverage", 30)]["three_points"]["yang"] == 0.753
    assert published.PUBLISHED[("width", 50)]["magic"]["bs1"] == 0.209


def test_tables_match_the_raw_rows(store, tmp_path):
    tables = script("tables")
    built = tables.build(store)
    methods, rows = built[("coverage", 30)]
    with ResultStore(store) as s:
        raw = s.results()
    for label, reps, entries in rows:
        name = {"Donut": "donut", "Three Points": "three_points"}[label]
        for m, (ours, paper, _) in zip(methods, entries):
            cov = [r["covered"] for r in raw if r["dataset"] == name and r["method"] == m]
            assert reps == len(cov) == 4
            assert ours == pytest.approx(np.mean(cov))
            assert paper == (script("published").PUBLISHED[("coverage", 30)][name].get(m))
        _, wrows = built[("width", 30)]
    widths = {(lab, m): e[0] for lab, _, es in wrows for m, e in zip(methods, es)}
    w = [r["high"] - r["low"] for r in raw if r["dataset"] == "donut" and r["method"] == "bs1"]
    assert widths[("Donut", "bs1")] == pytest.approx(np.mean(w))
    assert tables.main(["--store", str(store), "--out", str(tmp_path)]) == 0
    md = (tmp_path / "tables.md").read_text()
    assert "## Coverage, n = 30" in md and "| Three Points | 4 |" in md and "(.999)" in md  # Donut's CUD
    assert "## Summary by method" in md
    summary = tables.by_method(built)
    cud_cov = [np.mean([r["covered"] for r in raw if r["dataset"] == d and r["method"] == "cud"])
               for d in ("donut", "three_points")]
    assert summary["cud"]["cells"] == 2 and summary["cud"]["ours_ok"] == sum(c >= 0.95 for c in cud_cov)
    assert np.mean(summary["cud"]["cov"]) == pytest.approx(np.mean(cud_cov))
    tex = (tmp_path / "tables.tex").read_text()
    assert "\\begin{tabular}" in tex and "\\toprule" in tex


def test_kurtosis_figure(store, tmp_path):
    fig = script("figure_kurtosis")
    pts = fig.points(store)
    with ResultStore(store) as s:
        train = [t["train_error"] for t in s.tasks() if t["dataset"] == "donut"]
    k = abs(stats.kurtosis(train))
    assert any(p[0] == pytest.approx(k) and p[2] == "donut" for p in pts["cud"])
    out = tmp_path / "k.png"
    assert fig.main(["--store", str(store), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the numbers beside the figure: scipy's kurtosis of the stored training errors, and each
    # method's share of covered repetitions, computed here from the raw rows
    import csv
    with open(out.with_suffix(".csv")) as fh:
        written = list(csv.DictReader(fh))
    with ResultStore(store) as s:
        tasks, raw = s.tasks(), s.results()
    assert {(r["dataset"], int(r["n"])) for r in written} == {(t["dataset"], t["n"]) for t in tasks}
    for r in written:
        train = [t["train_error"] for t in tasks if (t["dataset"], t["n"]) == (r["dataset"], int(r["n"]))]
        assert float(r["abs_kurtosis"]) == pytest.approx(abs(stats.kurtosis(train)), rel=1e-5)
        for m in ("cud", "yang", "martin", "kohavi"):
            mine = [x["covered"] for x in raw if (x["dataset"], x["n"], x["method"]) == (r["dataset"], int(r["n"]), m)]
            assert float(r[m]) == pytest.approx(np.mean(mine), abs=1e-6)


def test_alpha_figure(store, tmp_path):
    fig = script("figure_alpha")
    data = fig.series(store)
    assert set(data[("donut", 30)]) == {"1", "n"}
    cov, width, reps = data[("donut", 30)]["1"]
    with ResultStore(store) as s:
        rows = [r for r in s.results(method="cud_alpha_1") if r["dataset"] == "donut"]
    assert reps == 4 and cov == pytest.approx(np.mean([r["covered"] for r in rows]))
    assert width == pytest.approx(np.mean([r["width"] for r in rows]))
    out = tmp_path / "a.png"
    assert fig.main(["--store", str(store), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_csv_export_holds_every_row(store, tmp_path):
    import csv
    import gzip
    assert script("export_csv").main(["--store", str(store), "--out", str(tmp_path / "smoke")]) == 0
    with gzip.open(tmp_path / "smoke_results.csv.gz", "rt") as f:
        rows = list(csv.DictReader(f))
    with ResultStore(store) as s:
        raw = s.results()
    assert len(rows) == len(raw) == 8 * 8
    assert {(r["dataset"], r["rep"], r["method"]) for r in rows} == {(r["dataset"], str(r["rep"]), r["method"])
                                                                      for r in raw}
    assert float(rows[0]["low"]) == pytest.approx(raw[0]["low"], abs=1e-11)


def test_a_store_rebuilt_from_its_csv_export_gives_the_same_tables(store, tmp_path):
    """export_csv.py then import_csv.py: the tables of the rebuilt store are the original's."""
    assert script("export_csv").main(["--store", str(store), "--out", str(tmp_path / "smoke")]) == 0
    rebuilt = tmp_path / "rebuilt.sqlite"
    assert script("import_csv").main(["--config", str(ROOT / "experiments" / "smoke.toml"), "--csv",
                                      str(tmp_path / "smoke"), "--store", str(rebuilt)]) == 0
    tables = script("tables")
    for out, path in (("a", store), ("b", rebuilt)):
        assert tables.main(["--store", str(path), "--out", str(tmp_path / out)]) == 0
    assert (tmp_path / "a" / "tables.md").read_text() == (tmp_path / "b" / "tables.md").read_text()
    with ResultStore(store) as a, ResultStore(rebuilt) as b:
        assert len(a.results()) == len(b.results()) > 0


def test_study2_tables_from_chunks(tmp_path):
    """The chunked study's tables: every cell's coverage and exact interval from the chunk rows,
    the interval checked against statsmodels' Clopper-Pearson ('beta') interval."""
    from statsmodels.stats.proportion import proportion_confint

    from cudbound.coverage import parse_config
    text = (ROOT / "experiments" / "smoke.toml").read_text().replace("repetitions = 4", "repetitions = 5")
    config = parse_config(text, source="smoke")
    chunks = tmp_path / "chunks"
    run_study(config, tmp_path / "s.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    tables = script("study2_tables")
    assert tables.main(["--chunks", str(chunks), "--out", str(tmp_path / "out")]) == 0
    with ResultStore(tmp_path / "s.sqlite") as store:
        raw = store.results()
    import csv
    with open(tmp_path / "out" / "cells.csv") as fh:
        cells = list(csv.DictReader(fh))
    assert len(cells) == len({(r["dataset"], r["n"], r["method"]) for r in raw})
    for c in cells:
        mine = [r for r in raw if r["dataset"] == c["dataset"] and r["method"] == c["method"]]
        k = sum(r["covered"] for r in mine)
        assert (int(c["reps"]), int(c["covered"])) == (len(mine), k)
        lo, hi = proportion_confint(k, len(mine), alpha=0.05, method="beta")
        assert (float(c["coverage_low"]), float(c["coverage_high"])) == pytest.approx((lo, hi), abs=1e-5)
        assert float(c["mean_width"]) == pytest.approx(np.mean([r["width"] for r in mine]), abs=1e-5)
        trivial = np.mean([r["low"] <= 0 and r["high"] >= 1 for r in mine])
        assert float(c["trivial"]) == pytest.approx(trivial, abs=1e-5)
        want = "above" if lo > 0.95 else "below" if hi < 0.95 else "straddles"
        assert c["position"] == want
    text = (tmp_path / "out" / "tables.md").read_text()
    assert "### n = 30: coverage" in text and "| CUD |" in text
    figure = script("study2_figure")
    rows = tables.cells(chunks)
    fig = figure.draw(rows)
    (ax,) = fig.axes
    labels = [c.get_label() for c in ax.containers]
    assert labels == [tables._label(m) for m in tables._methods(rows)]       # one error-bar series per method
    assert any(tuple(line.get_ydata()) == (0.95, 0.95) for line in ax.get_lines())   # the nominal level
    assert figure.main(["--chunks", str(chunks), "--out", str(tmp_path / "f.png")]) == 0
    assert (tmp_path / "f.png").stat().st_size > 10_000


def test_study2_summary_counts_complete_cells_only_given_the_config(tmp_path):
    """With --config, the per-method summary counts the cells that hold the configured
    repetitions and names the others; a study at its full repetitions gives the plain summary."""
    from cudbound.coverage import parse_config
    smoke = (ROOT / "experiments" / "smoke.toml").read_text()
    config = parse_config(smoke, source="smoke")
    chunks = tmp_path / "chunks"
    run_study(config, tmp_path / "s.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    tables = script("study2_tables")
    rows = tables.cells(chunks)
    summary = lambda text: text[text.index("### Per method"):]  # noqa: E731

    full = summary(tables.markdown(rows, config=config))
    assert "Complete cells only: 2 of the 2 (data set, n) pairs of `smoke` have their repetitions." in full
    assert full.split("\n| n |", 1)[1] == summary(tables.markdown(rows)).split("\n| n |", 1)[1]
    assert full.count("| 30 | CUD | ") == 1

    more = parse_config(smoke.replace("repetitions = 4", "repetitions = 6"), source="smoke")
    partial = summary(tables.markdown(rows, config=more))
    assert "0 of the 2 (data set, n) pairs" in partial
    assert "still to finish: Donut n = 30, Three Points n = 30." in partial
    assert "| 30 | CUD |" not in partial                      # no incomplete cell is counted

    config_file = tmp_path / "more.toml"
    config_file.write_text(smoke.replace("repetitions = 4", "repetitions = 6"))
    assert tables.main(["--chunks", str(chunks), "--out", str(tmp_path / "out"), "--config", str(config_file)]) == 0
    assert summary((tmp_path / "out" / "tables.md").read_text()) == partial


def test_kurtosis_summary_groups_means_and_rank_correlations():
    """The Markdown summary beside Figure 1, on hand-made cells (one at |kurtosis| exactly 1, which
    counts as "at or below"; tied coverages): the cells by decreasing |kurtosis|, each method's mean
    coverage above |kurtosis| 1 and at or below it (computed here), Spearman's rho as the Pearson
    correlation of average ranks (scipy.stats.rankdata), and empty fields for a method with too few
    cells or a constant coverage."""
    fig = script("figure_kurtosis")
    k = [0.2, 1.5, 0.7, 1.1, 0.05, 1.0]
    cov = {"cud": [0.97, 0.96, 0.98, 0.95, 0.99, 0.97], "yang": [0.95, 0.95, 0.95, 0.95, 0.95, 0.95],
           "martin": [0.95, 0.83, 0.93, 0.86, 0.95, 0.93], "kohavi": [None, 0.82, None, None, None, 0.90]}
    rows = [{"dataset": f"d{i}", "n": 30, "abs_kurtosis": k[i], **{m: cov[m][i] for m in cov}} for i in range(6)]
    text = fig.summary(rows)
    cells = [line for line in text.splitlines() if line.startswith("| d") and line[3].isdigit()]
    assert [c.split(" | ")[0] for c in cells] == ["| d1", "| d3", "| d5", "| d2", "| d0", "| d4"]
    assert cells[2].startswith("| d5 | 30 | 1.000 |") and cells[3].endswith("| 0.930 |  |")
    means = {line.split(" | ")[0][2:]: line for line in text.splitlines()
             if line.startswith("| ") and line.split(" | ")[0][2:] in ("CUD", "Y", "M", "K") and line.count("|") == 6}
    assert means["M"] == f"| M | 2 | {(0.83 + 0.86) / 2:.3f} | 4 | {(0.95 + 0.93 + 0.95 + 0.93) / 4:.3f} |"
    assert means["K"] == "| K | 1 | 0.820 | 1 | 0.900 |"

    def rho(x, y):
        return np.corrcoef(stats.rankdata(x), stats.rankdata(y))[0, 1]
    rhos = {line.split(" | ")[0][2:]: line for line in text.splitlines()
            if line.startswith("| ") and line.count("|") == 5 and line.split(" | ")[0][2:] in ("CUD", "Y", "M", "K")}
    assert rhos["M"].split(" | ")[2] == f"{rho(k, cov['martin']):.2f}"
    assert rhos["CUD"].split(" | ")[2] == f"{rho(k, cov['cud']):.2f}"
    assert rhos["Y"] == "| Y | 6 |  |  |" and rhos["K"] == "| K | 2 |  |  |"


@pytest.mark.slow   # 4 s; test_kurtosis_figure covers the figure by default
def test_kurtosis_figure_from_chunks_equals_the_one_from_the_store(tmp_path):
    """Figure 1 read from committed chunks: the same points as from the store of the same run;
    --sizes keeps only the sizes asked for."""
    from cudbound.coverage import parse_config
    text = (ROOT / "experiments" / "smoke.toml").read_text().replace("repetitions = 4", "repetitions = 5") \
        .replace("sizes = [30]", "sizes = [30, 40]")
    config = parse_config(text, source="smoke")
    chunks, store = tmp_path / "chunks", tmp_path / "s.sqlite"
    run_study(config, store, n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    fig = script("figure_kurtosis")
    from_store, from_chunks = fig.points(store), fig.points(chunks=chunks)
    assert set(from_store) == set(from_chunks)
    for m in from_store:
        a, b = sorted(from_store[m], key=lambda p: p[2:]), sorted(from_chunks[m], key=lambda p: p[2:])
        assert [p[2:] for p in a] == [p[2:] for p in b] and len(a) == 4
        np.testing.assert_allclose([p[:2] for p in a], [p[:2] for p in b], rtol=0, atol=1e-9)
    only30 = fig.points(chunks=chunks, sizes=[30])
    assert {p[3] for p in only30["cud"]} == {30}
    out = tmp_path / "k.png"
    assert fig.main(["--chunks", str(chunks), "--sizes", "30", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit):
        fig.main(["--chunks", str(chunks), "--store", str(store), "--out", str(out)])


def test_sensitivity_summary_maps_labels_to_bases_and_matches_the_raw_rows(tmp_path):
    """paper_figures/sensitivity.py on a study listing Donut under two more bases: every cell's
    coverage, width and centre error recomputed from the chunk rows; the paper's coverage beside."""
    from cudbound.coverage import parse_config
    from cudbound.coverage.chunks import chunk_files, read_chunk
    text = (ROOT / "experiments" / "smoke.toml").read_text().replace("repetitions = 4", "repetitions = 3")
    text += ('\n[[datasets]]\nname = "donut"\nlabel = "donut-linear"\nbasis = "linear"\n'
             '\n[[datasets]]\nname = "donut"\nlabel = "donut-poly2z1"\nbasis = "poly:2(zpca:1)"\n')
    config = parse_config(text, source="smoke+bases")
    chunks = tmp_path / "chunks"
    run_study(config, tmp_path / "s.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=3)
    sens = script("sensitivity")
    rows = sens.summarise(chunks)
    raw = [t for p in chunk_files(chunks) for t in read_chunk(p)]
    assert {(r["dataset"], r["basis"]) for r in rows} == {("donut", "poly:2"), ("donut", "linear"),
                                                          ("donut", "poly:2(zpca:1)"), ("three_points", "linear")}
    for r in rows:
        mine = [(t, row) for t in raw if t["dataset"] == r["label"] for row in t["rows"] if row["method"] == r["method"]]
        assert r["reps"] == len(mine) == 3
        assert r["coverage"] == pytest.approx(np.mean([row["covered"] for _, row in mine]))
        assert r["mean_width"] == pytest.approx(np.mean([row["width"] for _, row in mine]))
        assert r["centre_error"] == pytest.approx(np.mean([row["centre"] - t["true_error"] for t, row in mine]))
        assert r["upper_reach"] == pytest.approx(np.mean([row["high"] - row["centre"] for _, row in mine]))
        assert r["miss_high"] == pytest.approx(np.mean([t["true_error"] > row["high"] for t, row in mine]))
        assert r["centre_rmse"] == pytest.approx(np.sqrt(np.mean([(row["centre"] - t["true_error"]) ** 2
                                                                   for t, row in mine])))
        assert r["paper_coverage"] == script("published").PUBLISHED[("coverage", 30)][r["dataset"]].get(r["method"])
    assert sens.basis_key("linear") < sens.basis_key("zpca:2") < sens.basis_key("zpca:10") < sens.basis_key("pca:1") \
        < sens.basis_key("poly:2(zpca:1)")
    assert sens.main(["--chunks", str(chunks), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "### BS1: coverage" in md and "| `poly:2(zpca:1)` |" in md and "| paper | 0.880 |" in md  # Donut 30
    published = script("published").PUBLISHED
    c, w = published[("coverage", 30)]["donut"]["kohavi"], published[("width", 30)]["donut"]["kohavi"]
    largest = max(r["centre_rmse"] for r in rows if r["dataset"] == "donut")
    assert f"| Donut | 30 | K | {c:.3f} | {w:.3f} | {w / 2 * np.sqrt(1 - c):.3f} | {largest:.3f} |" in md
    assert "| Donut | 30 | M |" in md and "| Three Points | 30 | L |" in md
    assert (tmp_path / "out" / "sensitivity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit):
        sens.main(["--chunks", str(tmp_path), "--out", str(tmp_path / "out")])


def test_rebuild_all_names_real_scripts(tmp_path):
    """The one rebuild command's steps are real scripts covering every study; the command itself runs as
    written, and its tables are compared byte for byte with the committed ones, in tests/test_readme.py."""
    rebuild = script("rebuild_all")
    names = [name for _, name, _ in rebuild.steps(ROOT / "results", tmp_path, tmp_path)]
    assert all((FIGS / f"{name}.py").exists() for name in names)
    assert {"tables", "study2_tables", "study2_figure", "figure_kurtosis", "sensitivity", "study3_tables",
            "study3_figure"} <= set(names)
    assert rebuild.main(["--dry-run"]) == 0


REPORT_SOURCES = {
    "## 1.": ["study2/tables.md"],
    "## 2.": ["study2/tables.md", "study2/shared_basis/tables.md", "study2/figure1_kurtosis.md", "sensitivity/summary.md",
              "tables.md"],
    "## 3.": ["study2/tables.md", "sensitivity/summary.md"],
    "## 4.": ["study3/tables.md"],
    "## 5.": ["study3/tables.md"],
    "## 6.": ["study3_null/tables.md"],
    "## 7.": ["study3/refit_change.md", "study2/refit_change.md"],
}
"""The tables (under results/) each section of results/REPORT.md quotes; the REPORT names them too."""

PROSE_ONLY = {"## 2.", "## 3."}
"""Sections that quote the tables in their text only (no table of their own)."""


def test_report_names_the_tables_each_section_quotes():
    """Each section the tests check names, in its text or the sources list, the tables it quotes."""
    report = (ROOT / "results" / "REPORT.md").read_text()
    for heading, sources in REPORT_SOURCES.items():
        assert heading in report, heading
        for source in sources:
            assert f"`{source}`" in report, (heading, source)
            assert (ROOT / "results" / source).exists(), source


def test_study3_tables_from_chunks(tmp_path):
    """The third study's tables from the chunk rows of a small AUC study: every coverage and its exact
    interval (statsmodels' Clopper-Pearson), misses, target standard errors and noise flags, every bias,
    every rejection count, recomputed from the store's raw rows; and its two figures."""
    import csv

    from statsmodels.stats.proportion import proportion_confint

    config = load_config(ROOT / "experiments" / "smoke_auc.toml")
    chunks = tmp_path / "chunks"
    run_study(config, tmp_path / "s.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    tables = script("study3_tables")
    assert tables.main(["--chunks", str(chunks), "--out", str(tmp_path / "out"),
                        "--config", str(ROOT / "experiments" / "smoke_auc.toml")]) == 0
    with ResultStore(tmp_path / "s.sqlite") as store:
        raw = store.results()

    def read(name):
        with open(tmp_path / "out" / name) as fh:
            return list(csv.DictReader(fh))

    def mine(c, method):
        return [r for r in raw if r["dataset"] == c["dataset"] and r["n"] == int(c["n"]) and r["method"] == method]

    auc = read("auc_cells.csv")
    assert {c["method"] for c in auc} == {"delong", "newcombe", "bootstrap_percentile", "cvauc"} and len(auc) == 8
    for c in auc:
        rows = mine(c, c["method"])
        k = sum(r["low"] <= r["target"] <= r["high"] for r in rows)
        lo, hi = proportion_confint(k, len(rows), alpha=0.05, method="beta")
        assert (int(c["reps"]), int(c["covered"])) == (len(rows), k)
        assert (float(c["coverage_low"]), float(c["coverage_high"])) == pytest.approx((lo, hi), abs=1e-5)
        assert float(c["mean_width"]) == pytest.approx(np.mean([r["high"] - r["low"] for r in rows]), abs=1e-5)
        assert float(c["miss_below"]) == pytest.approx(np.mean([r["target"] < r["low"] for r in rows]), abs=1e-9)
        assert float(c["miss_above"]) == pytest.approx(np.mean([r["target"] > r["high"] for r in rows]), abs=1e-9)
        assert c["position"] == ("above" if lo > 0.95 else "below" if hi < 0.95 else "straddles")
        mean_target = np.mean([r["target"] for r in rows])
        assert float(c["coverage_of_mean_target"]) == pytest.approx(
            np.mean([r["low"] <= mean_target <= r["high"] for r in rows]), abs=1e-5)
    est = read("estimates.csv")
    assert {c["estimate"] for c in est} == {"cv_auc.averaged", "cv_auc.pooled", "lpo_auc"}
    for c in est:
        err = np.array([r["centre"] - r["target"] for r in mine(c, c["estimate"])])
        assert float(c["bias"]) == pytest.approx(err.mean(), abs=1e-5)
        assert float(c["rmse"]) == pytest.approx(np.sqrt(np.mean(err ** 2)), abs=1e-5)
        assert float(c["bias_se"]) == pytest.approx(err.std(ddof=1) / np.sqrt(len(err)), abs=1e-5)
    cmp_ = read("comparison_cells.csv")
    assert {c["method"] for c in cmp_} == {"mcnemar", "tango", "newcombe", "delong", "ttest_5x2cv", "wald_cv"}
    import json
    kinds = {"mcnemar": "conditional", "tango": "conditional", "newcombe": "conditional", "delong": "conditional",
             "ttest_5x2cv": "expected", "wald_cv": "expected"}
    for c in cmp_:
        rows = mine(c, "compare." + c["method"])

        def decide(r):
            return r["pvalue"] < 0.05 if r["pvalue"] is not None else not (r["low"] <= 0 <= r["high"])
        assert c["target_kind"] == kinds[c["method"]] and c["null_design"] == "0"
        own = [r["target"] if c["target_kind"] == "conditional" else np.mean([x["target"] for x in rows]) for r in rows]
        assert int(c["rejections"]) == sum(decide(r) for r in rows)
        assert int(c["right_sign"]) == sum(decide(r) and r["centre"] * t > 0 for r, t in zip(rows, own))
        assert int(c["wrong_sign"]) == int(c["rejections"]) - int(c["right_sign"])
        se = [json.loads(r["details"])["target_se"] for r in rows]
        assert float(c["target_se"]) == pytest.approx(np.mean(se), rel=1e-5)
        if c["method"] in ("mcnemar", "ttest_5x2cv"):            # tests without an interval
            assert c["coverage"] == "" and c["position"] == "" and c["noisy_target"] == ""
        else:
            assert int(c["covered"]) == sum(r["low"] <= r["target"] <= r["high"] for r in rows)
            below = np.mean([r["target"] < r["low"] for r in rows])
            assert float(c["miss_below"]) == pytest.approx(below, abs=1e-9)
            assert float(c["coverage"]) + float(c["miss_below"]) + float(c["miss_above"]) == pytest.approx(1, abs=1e-9)
            shift = _noise_shift([r["low"] for r in rows], [r["high"] for r in rows], [r["target"] for r in rows], se)
            assert float(c["noise_shift"]) == pytest.approx(shift, abs=1e-5)
            assert int(c["noisy_target"]) == int(abs(shift) > 0.01)
    for c in auc:
        se = [json.loads(r["details"])["target_se"] for r in mine(c, c["method"])]
        assert float(c["target_se"]) == pytest.approx(np.mean(se), rel=1e-5)
    text = (tmp_path / "out" / "tables.md").read_text()
    assert "Complete cells only: 2 of the 2 (data set, n) pairs of `smoke-auc`" in text
    for heading in ("## 1. AUC intervals", "## 2. The cross-validated AUC", "## 3. Comparisons", "### Size:",
                    "### Power per data set", "### Power by the size of the true difference"):
        assert heading in text
    figure = script("study3_figure")
    assert figure.main(["--chunks", str(chunks), "--out", str(tmp_path / "fig")]) == 0
    for name in ("auc_coverage_width.png", "difference_coverage_width.png"):
        assert (tmp_path / "fig" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _section(report: str, heading: str) -> str:
    """The REPORT's section that starts with ``heading`` (e.g. "## 5."), up to the next top-level one."""
    import re
    start = report.index("\n" + heading) + 1
    following = re.search(r"^## ", report[start + 3:], flags=re.M)
    return report[start:] if following is None else report[start: start + 3 + following.start()]


@pytest.mark.parametrize("heading", list(REPORT_SOURCES))
def test_report_sections_quote_the_committed_tables(heading):
    """Every table row of a section of results/REPORT.md named in REPORT_SOURCES is a row of the tables
    it quotes, and every decimal number in its text is one those tables print, so the report cannot
    say what the studies did not find."""
    import re
    report = (ROOT / "results" / "REPORT.md").read_text()
    tables = "\n".join((ROOT / "results" / source).read_text() for source in REPORT_SOURCES[heading])
    section = _section(report, heading)
    rows = [line for line in section.splitlines() if line.startswith("| ") and not set(line) <= set("|- ")]
    assert rows or heading in PROSE_ONLY
    missing = [r for r in rows if r not in tables.splitlines()]
    assert missing == []
    prose = "\n".join(line for line in section.splitlines() if not line.startswith("|"))
    numbers = set(re.findall(r"(?<![\w.])[+-]?\d\.\d{3}(?![\d])", prose))
    assert numbers, "the verdicts quote no number"
    unknown = sorted(x for x in numbers if x not in tables)
    assert unknown == []


# --------------------------------------------------------------------------- miss direction, target noise, size and power

def _csv(path):
    import csv
    with open(path) as fh:
        return list(csv.DictReader(fh))


def _num(text):
    return None if text == "" else float(text)


def _noise_shift(low, high, target, se):
    """mean over repetitions of P(low <= T <= high), T ~ N(target, se^2) (the indicator when se = 0),
    minus the share of intervals holding the target: one repetition at a time, with scipy's normal."""
    terms = [(stats.norm(t, s).cdf(h) - stats.norm(t, s).cdf(lo) if s > 0 else float(lo <= t <= h)) - (lo <= t <= h)
             for lo, h, t, s in zip(low, high, target, se)]
    return float(np.mean(terms))


def test_noise_shift_is_the_expected_coverage_under_one_more_draw_of_the_noise():
    """``noise_shift`` against scipy's normal, one repetition at a time, on hand-made cells (some
    repetitions without noise); intervals narrow against the standard error are flagged, wide ones
    not; a standard error of 0 moves nothing; a repetition without one blanks the columns."""
    noise = script("common").target_noise
    low, high = [0.10, 0.18, 0.25, 0.0, 0.3], [0.30, 0.22, 0.40, 0.15, 0.3]
    target, se = [0.2, 0.21, 0.24, 0.2, 0.3], [0.02, 0.01, 0.0, 0.03, 0.0]
    out = noise(low, high, target, se)
    assert out["noise_shift"] == pytest.approx(_noise_shift(low, high, target, se), rel=1e-9)
    assert out["target_se"] == pytest.approx(0.012) and out["noisy_target"] == 1
    t, s = np.full(100, 0.2), np.full(100, 0.02)
    narrow, wide = noise(t - 0.02, t + 0.02, t, s), noise(t - 0.2, t + 0.2, t, s)
    assert narrow["noise_shift"] == pytest.approx(stats.norm.cdf(1) - stats.norm.cdf(-1) - 1)   # -0.317
    assert (narrow["noisy_target"], wide["noisy_target"]) == (1, 0) and abs(wide["noise_shift"]) < 1e-20
    exact = noise(t - 0.02, t + 0.02, t + np.linspace(-0.05, 0.05, 100), np.zeros(100))
    assert (exact["noise_shift"], exact["noisy_target"]) == (0.0, 0)
    assert noise(low, high, target, [0.02, None, 0.0, 0.03, 0.0]) == {"target_se": None, "noise_shift": None,
                                                                       "noisy_target": None}


def test_noise_shift_estimates_the_move_from_the_noise_free_coverage():
    """Simulated: true targets tau, intervals around noisy estimates of them (centred, and off by
    +0.25), stored targets t = tau + e, e ~ N(0, se^2) with known se; the coverage of t minus that of
    tau agrees with ``noise_shift`` to within 4 Monte Carlo standard errors of their paired
    difference, the shift itself (-0.012 centred, +0.003 off) more than 5 of them from 0."""
    noise, rng = script("common").target_noise, np.random.default_rng(0)
    for bias, sd, half, sign in ((0.0, 0.04, 0.08, -1), (0.25, 0.08, 0.16, 1)):
        tau, se = rng.uniform(0.1, 0.4, 200_000), rng.uniform(0.005, 0.02, 200_000)
        centre = tau + bias + rng.normal(0, sd, tau.size)
        low, high, t = centre - half, centre + half, tau + rng.normal(0, se)
        holds = lambda x: ((low <= x) & (x <= high)).astype(float)  # noqa: E731
        shift = noise(low, high, t, se)["noise_shift"]
        paired = stats.norm.cdf((high - t) / se) - stats.norm.cdf((low - t) / se) - 2 * holds(t) + holds(tau)
        mc = paired.std(ddof=1) / np.sqrt(tau.size)
        assert abs(shift - (holds(t).mean() - holds(tau).mean())) < 4 * mc and sign * shift > 5 * mc


def test_study2_cells_give_the_miss_direction_and_flag_a_noisy_target(tmp_path):
    """Hand-made chunks: the shares of misses below and above sum with the coverage to 1, each counted
    here from the rows; ``noise_shift`` against scipy's normal at the standard error sqrt(e (1 - e) / T)
    = 0.02: two intervals of half-width 0.01 around the target give -0.0124 (noisy), one gives -0.0062
    (not), misses 2.5 standard errors out +0.0006 (not); the noisy cell is left out of the per-method
    counts and named."""
    from chunk_makers import interval_row, task, write_chunks
    rows = {"cud": [(0.1, 0.3)] * 97 + [(0.19, 0.21)] * 2 + [(0.25, 0.4)],     # 2 narrow: noisy
            "bs1": [(0.1, 0.3)] * 99 + [(0.19, 0.21)],                           # 1 narrow: a move of 0.01
            "kohavi": [(0.1, 0.3)] * 90 + [(0.0, 0.15)] * 6 + [(0.25, 0.5)] * 4}  # 6 above, 4 below
    tasks = [task("donut", 30, rep, [interval_row(m, *rows[m][rep]) for m in rows], true_error=0.2, test_size=400)
             for rep in range(100)]
    chunks = write_chunks(tmp_path / "chunks", tasks)
    tables = script("study2_tables")
    assert tables.main(["--chunks", str(chunks), "--out", str(tmp_path / "out")]) == 0
    cells = {c["method"]: c for c in _csv(tmp_path / "out" / "cells.csv")}
    se = np.sqrt(0.2 * 0.8 / 400)
    for m, intervals in rows.items():
        c = cells[m]
        low, high = np.array(intervals).T
        covered = (low <= 0.2) & (0.2 <= high)
        assert float(c["coverage"]) == pytest.approx(covered.mean(), abs=1e-12)
        assert float(c["miss_below"]) == pytest.approx(np.mean(0.2 < low), abs=1e-12)
        assert float(c["miss_above"]) == pytest.approx(np.mean(0.2 > high), abs=1e-12)
        assert float(c["coverage"]) + float(c["miss_below"]) + float(c["miss_above"]) == pytest.approx(1, abs=1e-12)
        assert float(c["target_se"]) == pytest.approx(se, rel=1e-6)
        shift = _noise_shift(low, high, [0.2] * 100, [se] * 100)
        assert float(c["noise_shift"]) == pytest.approx(shift, rel=1e-5)
    assert {m: c["noisy_target"] for m, c in cells.items()} == {"cud": "1", "bs1": "0", "kohavi": "0"}
    assert (cells["kohavi"]["miss_below"], cells["kohavi"]["miss_above"]) == ("0.04", "0.06")
    text = (tmp_path / "out" / "tables.md").read_text()
    from statsmodels.stats.proportion import proportion_confint
    assert [proportion_confint(k, 100, alpha=0.05, method="beta")[0] > 0.95 for k in (99, 100, 90)] == [False, True,
                                                                                                       False]
    assert proportion_confint(90, 100, alpha=0.05, method="beta")[1] > 0.95                   # K straddles
    assert "| Donut | 100 | 0.020 | 0.990~ | 1.000+ | 0.900 |" in text         # the coverage grid, target SE
    assert "| Donut | 100 | 0.010 / 0.000 | 0.000 / 0.000 | 0.040 / 0.060 |" in text
    assert "Kept out of the counts, a noisy target" in text and "Donut n = 30 (CUD)" in text
    assert "| 30 | CUD |" not in text                                              # not counted
    assert "| 30 | K | 0 | 1 | 0 | 0.199 | 0.040 | 0.060 |" in text             # (90 x 0.2 + 6 x 0.15 + 4 x 0.25) / 100
    assert "| 30 | BS1 | 1 | 0 | 0 | 0.198 | 0.000 | 0.000 |" in text           # (99 x 0.2 + 0.02) / 100


class _NullStub:
    """A registered data set whose two procedures have equal expected error by construction."""

    @staticmethod
    def make():
        from cudbound.datasets import Simulator

        class NullStub(Simulator):
            name, n_features, basis = "null_stub", 2, "linear"
            null_by_construction = True

            def sample(self, n, rng=None):
                X = np.random.default_rng(rng).normal(size=(n, 2))
                return X, np.where(X[:, 0] >= 0, 1, -1)
        return NullStub()


@pytest.fixture
def null_stub():
    from cudbound.datasets import register, unregister
    register(_NullStub.make())
    yield "null_stub"
    unregister("null_stub")


def _study3_chunks(directory, with_se=True):
    """A hand-made third study: Donut (its AUC 0.52 on average: degenerate at the edge; differences in
    every bin, one on the edge 0.05) and a null design, 10 repetitions each at n = 30."""
    from chunk_makers import interval_row, pvalue_row, task, write_chunks
    diffs = {"donut": [0.01, -0.03, 0.3 - 0.25, 0.12, 0.25, 0.0, -0.015, 0.08, 0.3, 0.02],
             "null_stub": [0.01, -0.01, 0.02, -0.04, 0.0, 0.03, -0.02, 0.01, 0.05, -0.03]}
    aucs = {"donut": [0.5, 0.54] * 5, "null_stub": [0.8, 0.82] * 5}
    tasks = []
    for d in diffs:
        for rep in range(10):
            t, a = diffs[d][rep], aucs[d][rep]
            se = (lambda v: v) if with_se else (lambda v: None)
            centre = t + (0.04 if rep % 3 else -0.2)                 # every third estimate of the wrong sign
            p = 0.01 if rep % 2 else 0.3                             # odd repetitions reject
            tasks.append(task(d, 30, rep, [
                interval_row("delong", *{3: (a + 0.01, a + 0.2), 4: (a - 0.2, a - 0.01)}.get(rep, (a - 0.1, a + 0.1)),
                             a, target_se=se(0.03)),
                {**pvalue_row("cv_auc.averaged", a + 0.01, a, None, target_se=se(0.03))},
                pvalue_row("compare.mcnemar", centre, t, p, target_se=se(0.01)),
                interval_row("compare.tango", centre - 0.05, centre + 0.05, t, pvalue=p, target_se=se(0.01),
                             centre=centre),
                interval_row("compare.corrected_t", centre - 0.2, centre + 0.2, t, pvalue=p, target_se=se(0.01),
                             centre=centre)]))
    return write_chunks(directory, tasks, kind="auc"), diffs, aucs


def test_study3_size_only_on_null_designs_power_per_design_and_by_bins(tmp_path, null_stub):
    """Size is measured on the null design alone and power on the others, each rejection scored against
    the method's own target (a conditional test: its repetition's difference; an expected test: the
    cell's mean difference), every count and rate against a direct computation and statsmodels'
    Clopper-Pearson interval; the bins of |difference| read to 9 decimals (0.3 - 0.25 falls in
    [0.05, 0.10)); a mean AUC of 0.52 is degenerate, the null design's comparisons too."""
    from statsmodels.stats.proportion import proportion_confint
    chunks, diffs, aucs = _study3_chunks(tmp_path / "chunks")
    tables = script("study3_tables")
    assert tables.main(["--chunks", str(chunks), "--out", str(tmp_path / "out")]) == 0
    cmp_ = {(c["dataset"], c["method"]): c for c in _csv(tmp_path / "out" / "comparison_cells.csv")}
    rejects = np.arange(10) % 2 == 1
    centre = {d: np.array(diffs[d]) + np.where(np.arange(10) % 3, 0.04, -0.2) for d in diffs}
    for (d, m), c in cmp_.items():
        kind = {"mcnemar": "conditional", "tango": "conditional", "corrected_t": "expected"}[m]
        assert c["target_kind"] == kind and c["null_design"] == ("1" if d == "null_stub" else "0")
        own = np.array(diffs[d]) if kind == "conditional" else np.full(10, np.mean(diffs[d]))
        right = rejects & (centre[d] * own > 0)
        assert (int(c["rejections"]), int(c["right_sign"]), int(c["wrong_sign"])) == (
            rejects.sum(), right.sum(), rejects.sum() - right.sum())
        assert float(c["target_se"]) == pytest.approx(0.01)
        if m != "mcnemar":
            low, high = centre[d] + (-0.05, -0.2)[m == "corrected_t"], centre[d] + (0.05, 0.2)[m == "corrected_t"]
            t = np.array(diffs[d])
            assert float(c["miss_below"]) == pytest.approx(np.mean(t < low)) and float(c["miss_above"]) == pytest.approx(
                np.mean(t > high))
            assert float(c["coverage"]) + float(c["miss_below"]) + float(c["miss_above"]) == pytest.approx(1)
    auc = {c["dataset"]: c for c in _csv(tmp_path / "out" / "auc_cells.csv")}
    assert auc["donut"]["degenerate"] == "1" and auc["null_stub"]["degenerate"] == "0"
    assert float(auc["donut"]["mean_target"]) == pytest.approx(0.52)
    for d, c in auc.items():           # rep 3's interval starts above its target, rep 4's ends below it
        assert (float(c["miss_below"]), float(c["miss_above"]), float(c["coverage"])) == pytest.approx((0.1, 0.1, 0.8))
        a = np.array(aucs[d])          # reps 3 and 4 miss by 0.01 = se / 3: one more draw brings them back in
        low = np.where(np.arange(10) == 3, a + 0.01, np.where(np.arange(10) == 4, a - 0.2, a - 0.1))
        high = np.where(np.arange(10) == 3, a + 0.2, np.where(np.arange(10) == 4, a - 0.01, a + 0.1))
        assert float(c["noise_shift"]) == pytest.approx(_noise_shift(low, high, a, [0.03] * 10), rel=1e-5)
        assert float(c["noise_shift"]) > 0.07 and c["noisy_target"] == "1"
    text = (tmp_path / "out" / "tables.md").read_text()
    size = text[text.index("### Size"):text.index("### Power per data set")]
    power = text[text.index("### Power per data set"):text.index("### Power by the size")]
    assert "Null Stub" not in power and "| 30 | null_stub |" not in power and "Donut" not in size
    for m in ("mcnemar", "tango", "corrected_t"):
        k = int(rejects.sum())
        lo, hi = proportion_confint(k, 10, alpha=0.05, method="beta")
        assert f"| 30 | null_stub | {m} | {k} / 10 | {k / 10:.3f} [{lo:.3f}, {hi:.3f}] |" in size
        c = cmp_[("donut", m)]
        k = int(c["right_sign"])
        lo, hi = proportion_confint(k, 10, alpha=0.05, method="beta")
        assert (f"| 30 | Donut | {m} | {np.mean(diffs['donut']):+.3f} | {k} / 10 | {k / 10:.3f} [{lo:.3f}, {hi:.3f}] | "
                f"{c['wrong_sign']} |") in power
    bins = text[text.index("### Power by the size"):]
    edges = [0.0, 0.02, 0.05, 0.10, 0.20, np.inf]
    labels = ["[0.00, 0.02)", "[0.02, 0.05)", "[0.05, 0.10)", "[0.10, 0.20)", ">= 0.20"]
    for m, kind in (("tango", "conditional"), ("corrected_t", "expected")):
        d = np.array(diffs["donut"])
        own = d if kind == "conditional" else np.full(10, d.mean())
        where = np.digitize(np.round(np.abs(own), 9), edges[1:-1], right=False)
        for i, label in enumerate(labels):
            mine = where == i
            if not mine.any():
                assert f"| 30 | {label} | {m} |" not in bins
                continue
            right = int(np.sum(mine & rejects & (centre["donut"] * own > 0)))
            wrong = int(np.sum(mine & rejects)) - right
            lo, hi = proportion_confint(right, mine.sum(), alpha=0.05, method="beta")
            assert (f"| 30 | {label} | {m} | 1 | {right} / {mine.sum()} | {right / mine.sum():.3f} [{lo:.3f}, "
                    f"{hi:.3f}] | {wrong} |") in bins, (m, label)
    assert np.digitize(round(abs(0.3 - 0.25), 9), edges[1:-1]) == 2       # the edge case is in [0.05, 0.10)
    assert "| conditional |" in text and "| corrected_t | expected |" in text
    assert "NULL_BAND" not in (FIGS / "study3_tables.py").read_text()


def test_study3_tables_build_from_chunks_without_target_standard_errors(tmp_path, null_stub):
    """Chunks of an older run (no target_se column) build: the noise columns blank, nothing flagged noisy."""
    chunks, _, _ = _study3_chunks(tmp_path / "chunks", with_se=False)
    import gzip
    path = next(chunks.glob("donut/n30/*.csv.gz"))
    header = gzip.open(path, "rt").readline()
    tables = script("study3_tables")
    assert tables.main(["--chunks", str(chunks), "--out", str(tmp_path / "out")]) == 0
    for name in ("auc_cells.csv", "comparison_cells.csv"):
        for c in _csv(tmp_path / "out" / name):
            assert c["target_se"] == c["noisy_target"] == c["noise_shift"] == "", (name, c["method"])
    assert all(c["target_se"] == "" for c in _csv(tmp_path / "out" / "estimates.csv"))
    assert "target_se" in header        # the column is there, empty: the same as an old chunk without it
    text = (tmp_path / "out" / "tables.md").read_text()
    assert "a noisy target (`~`" not in text


def test_refit_change_compares_the_tasks_both_directories_hold(tmp_path):
    """The before/after table on hand-made chunks: the new directory lacks a cell and half of another's
    repetitions; coverage and mean width per method, per n and over both, from the paired rows only."""
    from chunk_makers import interval_row, task, write_chunks
    rng = np.random.default_rng(0)

    def tasks(shift, keep):
        out = []
        for d, n, reps in (("donut", 30, 6), ("heart", 30, 4), ("donut", 50, 4)):
            for rep in range(reps):
                if keep is None or (d, n, rep) in keep:
                    e = 0.1 + 0.05 * rep
                    lows = rng.uniform(0.0, 0.2, size=2) + shift
                    out.append(task(d, n, rep, [interval_row("cud", lows[0], lows[0] + 0.3),
                                                interval_row("kohavi", lows[1], lows[1] + 0.2 - shift)],
                                    true_error=e))
        return out
    old_tasks = tasks(0.0, None)
    keep = {("donut", 30, r) for r in range(3)} | {("donut", 50, r) for r in range(4)}
    new_tasks = tasks(0.05, keep)
    old = write_chunks(tmp_path / "study2" / "chunks_shared_basis", old_tasks, protocol={"refits": {"datasets": ["heart"]}})
    new = write_chunks(tmp_path / "study2" / "chunks", new_tasks, protocol={"refits": {"datasets": ["heart"]}})
    change = script("refit_change")
    out = tmp_path / "refit_change.md"
    assert change.main(["--old", str(old), "--new", str(new), "--out", str(out)]) == 0
    text = out.read_text()
    assert "7 of the 14 before and 7 after, 2 cells (Donut)" in text
    before = {(t["dataset"], t["n"], t["rep"]): t for t in old_tasks}
    for m, label in (("cud", "CUD"), ("kohavi", "K")):
        for n in (30, 50, "all"):
            pairs = [(before[(t["dataset"], t["n"], t["rep"])], t) for t in new_tasks if n == "all" or t["n"] == n]

            def share(t):
                r = next(r for r in t["rows"] if r["method"] == m)
                return int(r["low"] <= t["true_error"] <= r["high"]), r["width"]
            b = np.array([share(tb) for tb, _ in pairs])
            a = np.array([share(ta) for _, ta in pairs])
            cells = len({(t["dataset"], t["n"]) for _, t in pairs})
            row = (f"| {label} | {n} | {cells} | {len(pairs)} | {b[:, 0].mean():.3f} | {a[:, 0].mean():.3f} | "
                   f"{a[:, 0].mean() - b[:, 0].mean():+.3f} | {b[:, 1].mean():.3f} | {a[:, 1].mean():.3f} | "
                   f"{a[:, 1].mean() - b[:, 1].mean():+.3f} |")
            assert row in text, row
    assert "the data sets whose basis learns from the data" not in text     # Heart is not in the new directory
    full = write_chunks(tmp_path / "full", tasks(0.05, None), protocol={"refits": {"datasets": ["heart"]}})
    assert change.main(["--old", str(old), "--new", str(full), "--out", str(out)]) == 0
    heart = out.read_text().split("### Intervals of the error rate: the data sets whose basis learns from the data")[1]
    r = [(t["rows"][0], t["true_error"]) for t in old_tasks if t["dataset"] == "heart"]
    assert f"| CUD | all | 1 | 4 | {np.mean([lo['low'] <= e <= lo['high'] for lo, e in r]):.3f} |" in heart
    # the third study's kind: AUC intervals, intervals of the difference and the CV AUC apart
    chunks, diffs, aucs = _study3_chunks(tmp_path / "s3")
    assert change.main(["--old", str(chunks), "--new", str(chunks), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| delong | 30 | 2 | 20 | 0.800 | 0.800 | +0.000 | 0.198 | 0.198 | +0.000 |" in text   # (8 x 0.2 + 2 x 0.19) / 10
    assert "## Intervals of the difference A - B" in text and "| tango | all | 2 | 20 |" in text
    assert "| cv_auc.averaged | 30 | 2 | 20 | 0.010 | 0.010 | +0.000 |" in text
    assert "mcnemar" not in text                                      # a test without an interval
    rebuild = script("rebuild_all")
    names = {name: needs for needs, name, _ in rebuild.steps(tmp_path, tmp_path / "o", tmp_path)}
    assert names["refit_change"] == (tmp_path / "study3" / "chunks_shared_basis", tmp_path / "study3" / "chunks")


def _supplement_text(base_text: str) -> str:
    """A base AUC study's TOML as a supplement of ``cud`` alone (B = 40, for speed) on its tasks."""
    head = base_text[:base_text.index("methods = [")]
    return (head.replace('name = "smoke-auc"', 'name = "smoke-auc-cud"') + 'methods = []\ncomparisons = ["cud"]\n\n'
            "[comparison_options.cud]\nn_resamples = 40\n\n" + base_text[base_text.index("[[datasets]]"):])


def test_study3_tables_with_a_partial_cud_supplement(tmp_path):
    """A supplement that ran 2 of the 8 tasks: its cud rows join the base rows (the cell of 2 repetitions
    in the grids, its coverage the share covered; no complete cell, so none in the summaries, which say
    so); every other cell is the one the base chunks give alone; the base chunk files are not rewritten;
    a supplementary row whose target is not its base task's is refused; rebuild_all passes the supplement
    only when its directory is there."""
    import gzip
    import hashlib
    import shutil

    from cudbound.coverage import parse_config
    from cudbound.coverage.chunks import chunk_files, read_chunk

    base_toml = ROOT / "experiments" / "smoke_auc.toml"
    config = load_config(base_toml)
    base, sup = tmp_path / "chunks", tmp_path / "chunks_cud"
    run_study(config, tmp_path / "s.sqlite", n_jobs=1, progress=False, chunks=base, chunk_size=2)
    supplement = parse_config(_supplement_text(base_toml.read_text()))
    assert supplement.tasks() == config.tasks() and supplement.methods == ("compare.cud",)
    run_study(supplement, tmp_path / "c.sqlite", n_jobs=1, progress=False, chunks=sup, chunk_size=2, max_tasks=2)
    (written,) = chunk_files(sup)
    digests = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in base.rglob("*") if p.is_file()}
    tables = script("study3_tables")
    assert tables.main(["--chunks", str(base), "--out", str(tmp_path / "alone"), "--config", str(base_toml)]) == 0
    assert tables.main(["--chunks", str(base), "--out", str(tmp_path / "out"), "--config", str(base_toml),
                        "--supplement", str(sup)]) == 0
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in base.rglob("*") if p.is_file()} == digests
    alone = _csv(tmp_path / "alone" / "comparison_cells.csv")
    both = _csv(tmp_path / "out" / "comparison_cells.csv")
    assert [c for c in both if c["method"] != "cud"] == alone
    (cud,) = [c for c in both if c["method"] == "cud"]
    rows = [r for t in read_chunk(written) for r in t["rows"]]
    assert (cud["dataset"], cud["n"], cud["reps"], cud["target_kind"]) == ("linear_gaussian", "30", "2", "conditional")
    assert float(cud["coverage"]) == pytest.approx(np.mean([r["covered"] for r in rows]))
    assert int(cud["rejections"]) == sum(not (r["low"] <= 0 <= r["high"]) for r in rows)
    base_targets = {t["rep"]: next(r["target"] for r in t["rows"] if r["method"] == "compare.mcnemar")
                    for p in chunk_files(base) if "linear_gaussian" in p.as_posix() for t in read_chunk(p)}
    assert [r["target"] for r in rows] == [base_targets[0], base_targets[1]]
    text = (tmp_path / "out" / "tables.md").read_text()
    assert "`cud` (supplementary chunks): complete cells only, 0 of the 2, a complete cell holding 4 at n = 30" in text
    assert "| 30 | cud |" not in text                  # no complete cell: out of the summaries
    # a reduced supplement (its configuration asks for 2 repetitions): its cell of 2 is complete
    reduced = tmp_path / "reduced.toml"
    reduced.write_text(_supplement_text(base_toml.read_text()).replace("repetitions = 4", "repetitions = 2"))
    assert tables.main(["--chunks", str(base), "--out", str(tmp_path / "red"), "--config", str(base_toml),
                        "--supplement", str(sup), "--supplement-config", str(reduced)]) == 0
    text = (tmp_path / "red" / "tables.md").read_text()
    assert "`cud` (supplementary chunks of `smoke-auc-cud`): complete cells only, 1 of the 2, a complete cell " \
           "holding 2 at n = 30" in text
    assert "| 30 | cud |" in text
    # a supplementary row whose target is not its base task's
    bad = tmp_path / "bad"
    shutil.copytree(sup, bad)
    (path,) = chunk_files(bad)
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    header = lines[0].split(",")
    fields = lines[1].split(",")
    fields[header.index("target")] = "0.123456789"
    path.write_bytes(gzip.compress(("\n".join([lines[0], ",".join(fields), *lines[2:]]) + "\n").encode()))
    with pytest.raises(ValueError, match="none of the base's comparison targets"):
        tables.main(["--chunks", str(base), "--out", str(tmp_path / "bad_out"), "--supplement", str(bad)])
    rebuild = script("rebuild_all")
    argv = {name: a for _, name, a in rebuild.steps(tmp_path, tmp_path / "o", tmp_path) if name == "study3_tables"}
    assert "--supplement" not in argv["study3_tables"]
    shutil.copytree(sup, tmp_path / "study3" / "chunks_cud")
    steps = [a for _, name, a in rebuild.steps(tmp_path, tmp_path / "o", tmp_path) if name == "study3_tables"]
    assert steps[0][-4:] == ["--supplement", str(tmp_path / "study3" / "chunks_cud"), "--supplement-config",
                             str(ROOT / "experiments" / "study3_cud.toml")]
    assert "--supplement" not in steps[1]            # the null designs' supplement is absent
