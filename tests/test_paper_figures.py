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


def test_report_summary_table_is_the_committed_one():
    """results/REPORT.md's per-method table says what results/study2/tables.md says (the counts of
    cells above / straddling / below 0.95 and the mean widths, per n), so the report cannot go stale."""
    import re
    report = (ROOT / "results" / "REPORT.md").read_text()
    tables = (ROOT / "results" / "study2" / "tables.md").read_text()
    committed = {}
    for n, method, above, straddles, below, width in re.findall(
            r"^\| (\d+) \| ([^|]+) \| (\d+) \| (\d+) \| (\d+) \| ([0-9.]+) \|$", tables, flags=re.M):
        committed[(int(n), method.strip())] = (f"{above} / {straddles} / {below}", width)
    assert committed
    header = re.search(r"^\| method \| n = (\d+): cells above / straddling / below \| mean width \|(.*)$", report, re.M)
    assert header, "REPORT.md has no per-method table"
    sizes = [int(header.group(1))] + [int(n) for n in re.findall(r"n = (\d+) \|", header.group(2))]
    reported = {}
    for line in report[header.end():].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        for i, n in enumerate(sizes):
            reported[(n, cells[0])] = (cells[1 + 2 * i], cells[2 + 2 * i])
    assert reported == committed


def test_study3_tables_from_chunks(tmp_path):
    """The third study's tables from the chunk rows of a small AUC study: every coverage and its exact
    interval (statsmodels' Clopper-Pearson), every bias, every size and power count, recomputed
    from the store's raw rows; and its two figures."""
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
    for c in cmp_:
        rows = mine(c, "compare." + c["method"])
        null = [r for r in rows if abs(r["target"]) <= 0.005]
        alt = [r for r in rows if abs(r["target"]) > 0.005]

        def decide(r):
            return r["pvalue"] < 0.05 if r["pvalue"] is not None else not (r["low"] <= 0 <= r["high"])
        assert int(c["null_reps"]) == len(null) and int(c["alt_reps"]) == len(alt) == len(rows) - len(null)
        assert int(c["null_rejections"]) == sum(decide(r) for r in null)
        assert int(c["alt_rejections"]) == sum(decide(r) and np.sign(r["centre"]) == np.sign(r["target"]) for r in alt)
        assert int(c["alt_wrong_sign"]) == sum(decide(r) and np.sign(r["centre"]) != np.sign(r["target"]) for r in alt)
        if c["method"] in ("mcnemar", "ttest_5x2cv"):            # tests without an interval
            assert c["coverage"] == "" and c["position"] == ""
        else:
            assert int(c["covered"]) == sum(r["low"] <= r["target"] <= r["high"] for r in rows)
    text = (tmp_path / "out" / "tables.md").read_text()
    assert "Complete cells only: 2 of the 2 (data set, n) pairs of `smoke-auc`" in text
    for heading in ("## 1. AUC intervals", "## 2. The cross-validated AUC", "## 3. Comparisons", "### Tests:"):
        assert heading in text
    figure = script("study3_figure")
    assert figure.main(["--chunks", str(chunks), "--out", str(tmp_path / "fig")]) == 0
    for name in ("auc_coverage_width.png", "difference_coverage_width.png"):
        assert (tmp_path / "fig" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _study3_sections(report: str) -> str:
    """The REPORT's sections on the third study: from its first heading to the next top-level section."""
    import re
    start = report.index("## 4. Which AUC interval keeps its promise")
    rest = report[start:]
    following = re.search(r"^## (?!4\.|5\.)", rest[3:], flags=re.M)
    return rest if following is None else rest[: following.start() + 3]


def test_report_study3_sections_quote_the_committed_tables():
    """Every table row of results/REPORT.md's sections on the third study is a row of
    results/study3/tables.md, and every decimal number in their text is one the tables print, so the
    report cannot say what the study did not find."""
    import re
    report = (ROOT / "results" / "REPORT.md").read_text()
    tables = (ROOT / "results" / "study3" / "tables.md").read_text()
    sections = _study3_sections(report)
    assert "## 5. Which comparison of two classifiers keeps its promise" in sections
    rows = [line for line in sections.splitlines() if line.startswith("| ") and not set(line) <= set("|- ")]
    data_rows = [r for r in rows if re.match(r"^\| \d+ \|", r)]
    assert len(data_rows) >= 20
    missing = [r for r in data_rows if r not in tables.splitlines()]
    assert missing == []
    prose = "\n".join(line for line in sections.splitlines() if not line.startswith("|"))
    numbers = set(re.findall(r"(?<![\w.])[+-]?\d\.\d{3}(?![\d])", prose))
    assert numbers, "the verdicts quote no number"
    unknown = sorted(x for x in numbers if x not in tables)
    assert unknown == []
