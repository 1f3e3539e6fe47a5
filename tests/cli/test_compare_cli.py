"""``cudbound compare`` (issue 31, point 3): two model SPECs (tests/cli/test_model_spec.py), one
table, --json in the package's one layout (validated against OUTPUT_SCHEMA), --plot, the method list
parsed by the package's one parser, and bad input as one line with exit status 2."""
import json
import re

import numpy as np
import pytest

from cudbound.cli import main
from cudbound.compare import DEFAULT_METHODS, Procedure, compare

FAST = ["--cv", "5", "--repeats", "2"]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def csv_file(tmp_path_factory):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((48, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.6 * rng.standard_normal(48) > 0.3, "yes", "no")
    path = tmp_path_factory.mktemp("compare") / "d.csv"
    path.write_text("x1,x2,outcome\n" + "".join(f"{a:.5f},{b:.5f},{v}\n" for (a, b), v in zip(X, y)))
    return str(path)


def base(csv_file, *more):
    return ["compare", "--data", csv_file, "--label", "outcome", "--seed", "2", *more]


# --------------------------------------------------------------------------- the command

def test_the_table_has_a_row_per_method_and_matches_compare(capsys, csv_file):
    code, out, err = run(capsys, *base(csv_file, "--model-a", "logistic_ridge", "--model-b",
                                       "sklearn.naive_bayes.GaussianNB()", "--methods", "mcnemar,tango,delong,wald_cv",
                                       *FAST[:2]))
    assert code == 0, err
    rows = {m: re.search(rf"^\s+{m}\s+(error|AUC)\s+(-?\d\.\d{{4}})", out, re.M) for m in ("mcnemar", "tango", "delong",
                                                                                          "wald_cv")}
    assert all(rows.values()), out
    from sklearn.naive_bayes import GaussianNB
    from cudbound.cli import read_csv
    X, y, _ = read_csv(csv_file, "outcome")
    expected = compare(Procedure(loss="logistic_ridge"), GaussianNB(), X, y, methods="mcnemar,tango,delong,wald_cv",
                       rng=2, cv=5, pos_label="yes")
    for r in expected:
        assert rows[r.method].group(1) == ("AUC" if r.method == "delong" else "error")
        assert float(rows[r.method].group(2)) == pytest.approx(r.estimate, abs=5e-5)
    assert "out-of-fold predictions of one 5-fold split" in out and "not independent" in out
    assert "'no' -> -1, 'yes' -> +1" in out


def test_json_is_the_one_layout_and_carries_the_folds(capsys, csv_file):
    jsonschema = pytest.importorskip("jsonschema")
    from cudbound.output import OUTPUT_SCHEMA
    code, out, err = run(capsys, *base(csv_file, "--model-a", "logistic_ridge", "--model-b", "squared,basis=poly:2",
                                       "--methods", "tango,ftest_5x2cv", "--confidence-level", "0.9", "--json"))
    assert code == 0, err
    record = json.loads(out)
    jsonschema.Draft202012Validator(OUTPUT_SCHEMA).validate(record)
    assert record["command"] == "compare" and record["seed"] == 2
    assert record["details"]["model_b"] == "squared,basis=poly:2"
    assert record["details"]["procedure_b"].startswith("Procedure(basis='poly:2'")
    tango, ftest = record["results"]
    assert tango["quantity"] == "difference of error rates" and tango["confidence_level"] == 0.9
    assert -1 <= tango["low"] <= tango["estimate"] <= tango["high"] <= 1
    assert ftest["low"] is None and ftest["no_interval_reason"] and ftest["pvalue"] is not None
    assert len(tango["details"]["folds"]) == 48 and np.array(ftest["details"]["folds"]).shape == (5, 48)


def test_the_default_methods_and_the_alternative(capsys, csv_file):
    code, out, err = run(capsys, *base(csv_file, "--model-a", "squared", "--model-b", "squared,basis=poly:2", "--json",
                                       "--alternative", "less", *FAST))
    assert code == 0, err
    record = json.loads(out)
    assert tuple(r["method"] for r in record["results"]) == DEFAULT_METHODS == ("mcnemar", "corrected_t")
    assert all(r["alternative"] == "less" for r in record["results"])
    code, _, err = run(capsys, *base(csv_file, "--model-a", "squared", "--model-b", "hinge", "--alternative", "less",
                                     "--methods", "ftest_5x2cv"))
    assert code == 2 and "two-sided" in err and "--alternative two-sided" in err


def test_plot_writes_a_forest_plot(capsys, csv_file, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "diff.png"
    code, out, err = run(capsys, *base(csv_file, "--model-a", "squared", "--model-b", "logistic_ridge",
                                       "--methods", "mcnemar,tango", "--plot", png))
    assert code == 0, err
    assert png.stat().st_size > 1000 and f"plot: {png}" in out


@pytest.mark.parametrize("more, message", [
    (["--model-a", "hinge,basis=cubic:3", "--model-b", "squared"],
     "argument --model-a: 'hinge,basis=cubic:3': the basis must be"),
    (["--model-a", "squared", "--model-b", "sklearn.linear_model.Nope()"], "argument --model-b: module"),
    (["--model-a", "squared", "--model-b", "hinge", "--methods", "tango,bogus"],
     "unknown comparison(s) bogus in --methods"),
    (["--model-a", "squared", "--model-b", "hinge", "--methods", "tango,TANGO"], "--methods lists ['tango'] more than once"),
    (["--model-a", "squared", "--model-b", "hinge", "--alternative", "bigger"], "argument --alternative: invalid choice"),
    (["--model-a", "squared", "--model-b", "hinge", "--confidence-level", "1.5"], "--confidence-level must be"),
    (["--model-a", "squared", "--model-b", "hinge", "--methods", "ttest_5x2cv,mcnemar", "--repeats", "3"],
     "--repeats is used by corrected_t, nested_cv, and none of the chosen methods"),
    (["--model-a", "squared", "--model-b", "hinge", "--methods", "tango", "--cv", "1"], "--cv must be"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, csv_file, more, message):
    code, out, err = run(capsys, *base(csv_file, *more))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], err
    assert lines[0].startswith("cudbound compare: error: ") or lines[0].startswith("cudbound: error: ")


def test_a_missing_column_or_model_is_one_line(capsys, csv_file):
    code, out, err = run(capsys, "compare", "--data", csv_file, "--label", "y", "--model-a", "squared",
                         "--model-b", "hinge")
    assert code == 2 and out == "" and err.strip() == (
        f"cudbound: error: label column 'y' is not in the header of '{csv_file}'; the columns are: x1, x2, outcome.")
    code, _, err = run(capsys, "compare", "--data", csv_file, "--label", "outcome", "--model-a", "squared")
    assert code == 2 and "the following arguments are required: --model-b" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "compare", "--data", csv_file + ".missing", "--label", "outcome", "--model-a", "squared",
                       "--model-b", "hinge")
    assert code == 2 and "not found" in err


def test_a_model_that_cannot_fit_is_named(capsys, csv_file):
    code, out, err = run(capsys, *base(csv_file, "--model-a", "squared", "--model-b",
                                       "sklearn.linear_model.LogisticRegression(C=-1.0)", "--methods", "mcnemar"))
    assert code == 2 and out == ""
    assert "procedure B (LogisticRegression) failed on training part 0" in err


def test_swapping_the_models_flips_every_difference(capsys, csv_file):
    """--model-a and --model-b swapped (with --alternative less against greater): every estimate and
    interval changes sign and every p-value stays, on the same seed's folds."""
    methods = ["--methods", "mcnemar,tango,newcombe,delong,wald_cv,ttest_5x2cv", "--cv", "5", "--json"]
    a, b = "logistic_ridge", "sklearn.naive_bayes.GaussianNB()"
    code, ab, err = run(capsys, *base(csv_file, "--model-a", a, "--model-b", b, "--alternative", "less", *methods))
    assert code == 0, err
    code, ba, err = run(capsys, *base(csv_file, "--model-a", b, "--model-b", a, "--alternative", "greater", *methods))
    assert code == 0, err
    for r, s in zip(json.loads(ab)["results"], json.loads(ba)["results"]):
        assert r["method"] == s["method"]
        assert r["estimate"] == pytest.approx(-s["estimate"], abs=1e-12)
        assert (r["pvalue"] is None and s["pvalue"] is None) or r["pvalue"] == pytest.approx(s["pvalue"], rel=1e-12)
        if r["low"] is not None:
            assert (r["low"], r["high"]) == pytest.approx((-s["high"], -s["low"]), abs=1e-12)


def test_ctrl_c_prints_the_comparisons_that_finished(capsys, csv_file):
    """Ctrl-C during the second of three comparisons: the table of the one that finished, a line naming
    the one that was running and the one not started, `interrupted` on stderr, exit status 130; with
    --json the record of the finished one and where it stopped, still the schema's."""
    from cudbound.compare import register, unregister

    def stop(pair, *, confidence_level, alternative, rng):
        raise KeyboardInterrupt
    register("ctrl_c", stop, "raises KeyboardInterrupt")
    try:
        argv = base(csv_file, "--model-a", "squared", "--model-b", "logistic_ridge", "--methods",
                    "mcnemar,ctrl_c,tango", "--cv", "5")
        code, out, err = run(capsys, *argv)
        assert code == 130
        assert re.search(r"^\s+mcnemar\s+error\s+-?\d\.\d{4}", out, re.M), out
        assert not re.search(r"^\s+tango\s", out, re.M)
        assert "interrupted during ctrl_c; not started: tango" in out
        assert "interrupted" in err
        code, out, _ = run(capsys, *argv, "--json")
        record = json.loads(out)
        assert code == 130 and [r["method"] for r in record["results"]] == ["mcnemar"]
        assert record["details"]["interrupted"] == {"during": "ctrl_c", "not_started": ["tango"]}
        jsonschema = pytest.importorskip("jsonschema")
        from cudbound.output import OUTPUT_SCHEMA
        jsonschema.validate(record, OUTPUT_SCHEMA)
    finally:
        unregister("ctrl_c")


def test_ctrl_c_before_any_comparison_finished_prints_the_header(capsys, csv_file):
    """Ctrl-C in the first comparison: no rows, the header and where it stopped, exit status 130."""
    from cudbound.compare import register, unregister

    def stop(pair, *, confidence_level, alternative, rng):
        raise KeyboardInterrupt
    register("ctrl_c", stop, "raises KeyboardInterrupt")
    try:
        code, out, err = run(capsys, *base(csv_file, "--model-a", "squared", "--model-b", "logistic_ridge",
                                           "--methods", "ctrl_c,mcnemar"))
        assert code == 130 and "Comparison of two classifiers" in out
        assert "interrupted during ctrl_c; not started: mcnemar" in out
    finally:
        unregister("ctrl_c")



# --------------------------------------------------------------------------- --time-limit

SQUARED = ["--model-a", "squared", "--model-b", "squared,basis=poly:2"]


def test_time_limit_shows_the_repetitions_a_method_used(capsys, monkeypatch, csv_file):
    """One second per refit of either procedure (a fake clock, tests/_support/fake_clock.py): corrected_t
    alone has the 25 s, 10 s a repetition of 5 folds, and stops after 3 of 6: the table says
    'time limit: repeats 3 of 6', the JSON has repeats_used = 3 and the folds of those 3."""
    from fake_clock import clock_by_the_comparison_refit

    clock_by_the_comparison_refit(monkeypatch)
    argv = base(csv_file, *SQUARED, "--methods", "corrected_t", "--cv", 5, "--repeats", 6, "--time-limit", 25)
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert re.search(r"^\s+corrected_t\s.*time limit: repeats 3 of 6$", out, re.M), out
    code, out, _ = run(capsys, *argv, "--json")
    record = json.loads(out)
    (res,) = record["results"]
    assert res["details"]["repeats_used"] == 3 and res["details"]["cut_by_time_limit"]
    assert len(res["details"]["folds"]) == 3
    assert record["details"]["time_limit"] == 25 and record["details"]["skipped"] == []


def test_time_limit_lists_the_comparisons_it_left_out(capsys, monkeypatch, csv_file):
    """``slow`` spends 100 s of 50: mcnemar is not started; the table of the two that ran, no time note on
    wald_cv (one split, run to its end), a line naming mcnemar; --json the same, valid against the schema."""
    from fake_clock import install

    from cudbound.compare import ComparisonResult, register, unregister
    from cudbound.output import OUTPUT_SCHEMA
    from cudbound.results import ConfidenceInterval

    jsonschema = pytest.importorskip("jsonschema")
    clock = install(monkeypatch)

    def slow(pair, *, confidence_level=0.95, alternative="two-sided", rng=None):
        clock.advance(100.0)
        return ComparisonResult(method="slow", estimate=0.0, statistic=0.0, pvalue=1.0, n_samples=pair.n,
                                confidence_level=confidence_level, confidence_interval=ConfidenceInterval(-0.1, 0.1))
    register("slow", slow, "moves the fake clock 100 s")
    try:
        argv = base(csv_file, *SQUARED, "--methods", "wald_cv,slow,mcnemar", "--time-limit", 50)
        code, out, err = run(capsys, *argv)
        assert code == 0, err
        assert re.search(r"^\s+wald_cv\s+error\s+[-\d. ]+$", out, re.M) and re.search(r"^\s+slow\s", out, re.M)
        assert not re.search(r"^\s+mcnemar\s", out, re.M)
        assert "not started, the time limit of 50 s having run out: mcnemar." in out
        assert "skipped" in err
        code, out, _ = run(capsys, *argv, "--json")
        record = json.loads(out)
        assert [r["method"] for r in record["results"]] == ["wald_cv", "slow"]
        assert record["details"]["skipped"] == ["mcnemar"]
        jsonschema.Draft202012Validator(OUTPUT_SCHEMA).validate(record)
    finally:
        unregister("slow")


@pytest.mark.parametrize("value", ["0", "-1", "nan", "ten"])
def test_a_bad_time_limit_is_one_line_and_status_2(capsys, csv_file, value):
    code, _, err = run(capsys, *base(csv_file, *SQUARED, "--time-limit", value))
    assert code == 2 and "--time-limit" in err and len(err.strip().splitlines()) == 1, err


def test_no_time_limit_adds_nothing_to_the_record(capsys, csv_file):
    code, out, err = run(capsys, *base(csv_file, *SQUARED, "--methods", "wald_cv", "--json"))
    assert code == 0, err
    record = json.loads(out)
    assert "time_limit" not in record["details"] and "skipped" not in record["details"]
