"""The command line (in-process through main(argv), and once as a subprocess), and
reproducibility: the same seed gives the same interval."""
import csv
import json
import re
import subprocess
import sys
import time
import types

import numpy as np
import pytest

from cudbound import cud_interval, intervals
from cudbound.cli import main, read_csv
from cudbound.datasets import LinearGaussian, demo_data

N = 30
FAST = ["--resamples", "20"]  # the smallest B allowed at the default level 0.95
INTERVAL = re.compile(r"interval\s+\[(\d\.\d+), (\d\.\d+)\]")


def run(capsys, *argv):
    """main(argv) -> (exit status, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture(scope="module")
def sample():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((N, 2))
    y = np.where(X[:, 0] - X[:, 1] + 0.8 * rng.standard_normal(N) >= 0, 1, -1)
    return X, y


@pytest.fixture
def yes_no_csv(tmp_path, sample):
    X, y = sample
    rows = [[f"{a:.6f}", "yes" if v == 1 else "no", f"{b:.6f}"] for (a, b), v in zip(X, y)]
    return write_csv(tmp_path / "yes_no.csv", ["x1", "outcome", "x2"], rows)


@pytest.fixture
def zero_one_csv(tmp_path, sample):
    X, y = sample
    rows = [[f"{a:.6f}", f"{b:.6f}", (v + 1) // 2] for (a, b), v in zip(X, y)]
    return write_csv(tmp_path / "zero_one.csv", ["x1", "x2", "label"], rows)


def check_record(record):
    """The one CUD result of a demo/interval --json output, checked and returned."""
    assert record["schema_version"] == 1 and len(record["results"]) == 1
    cud = record["results"][0]
    assert cud["method"] == "cud" and cud["quantity"] == "error rate" and cud["estimate"] == cud["train_error"]
    assert 0.0 <= cud["low"] <= cud["train_error"] <= cud["high"] <= 1.0
    assert cud["half_width"] >= 0.0
    assert cud["n_resamples"] == 20 and cud["search"]["replicates"] == 20
    return cud


def without_timings(record):
    cud = dict(record["results"][0], seconds=None)
    cud["search"] = dict(cud["search"], seconds_median=None)
    cud["details"] = {k: v for k, v in cud["details"].items() if k != "compile_seconds"}   # a first run only
    return dict(record, results=[cud])


# ------------------------------------------------------------------ demo

def test_demo_prints_interval_and_search_table(capsys):
    code, out, err = run(capsys, "demo", "--n", N, *FAST)
    assert code == 0, err
    low, high = map(float, INTERVAL.search(out).groups())
    train = float(re.search(r"training error\s+(\d\.\d+)", out).group(1))
    assert 0.0 <= low <= train <= high <= 1.0
    for row in ("half-width", "true error", "time", "nodes", "solves", "pruned", "realisability checks",
                "screened points", "replicates cut short", "replicates bounded", "solver fallbacks",
                "-1 -> -1, 1 -> +1"):
        assert row in out
    assert int(re.search(r"solver fallbacks \(nodes handed on\)\s+(\d+)", out).group(1)) >= 0


def test_demo_reports_a_first_runs_compile_apart_from_the_intervals_time(capsys, monkeypatch):
    """A compile inside the search (a monkeypatched step: 12.5 s of compiling in 13.5 s, on an
    injected clock) has its own row, and the interval's time is the other 1 s."""
    from cudbound import _kernel_compile, cud

    assert run(capsys, "demo", "--n", N, *FAST)[0] == 0      # the kernels are in memory from here on
    code, out, _ = run(capsys, "demo", "--n", N, *FAST)
    assert code == 0 and "compiled kernels" not in out and re.search(r"\btime\s+\d+\.\d\d s", out)
    clock = types.SimpleNamespace(now=100.0)
    monkeypatch.setattr(cud, "time", types.SimpleNamespace(perf_counter=lambda: clock.now, time=time.time))
    monkeypatch.setattr(_kernel_compile, "_COMPILES", _kernel_compile._Compiles())
    search = cud.order_statistic

    def compiling_search(*args, **kwargs):
        out = search(*args, **kwargs)
        clock.now += 13.5
        _kernel_compile._COMPILES.add(12.5)
        return out

    monkeypatch.setattr(cud, "order_statistic", compiling_search)
    code, out, _ = run(capsys, "demo", "--n", N, *FAST)
    assert code == 0
    assert re.search(r"compiled kernels\s+in 12\.50 s \(first run only; cached for later runs\)\n\s+time\s+1\.00 s\n",
                     out), out
    code, out, _ = run(capsys, "demo", "--n", N, *FAST, "--json")
    result = json.loads(out)["results"][0]
    assert result["seconds"] == 1.0 and result["details"]["compile_seconds"] == 12.5


def test_a_budget_stopped_interval_says_why_it_is_conservative(capsys):
    code, out, err = run(capsys, "demo", "--n", N, "--resamples", 20, "--max-nodes", 2)
    assert code == 0, err
    m = re.search(r"(\d+) replicate\(s\) hold only a certified upper bound \((\d+) stopped by a budget, "
                  r"(\d+) by solver failures\)", out)
    assert m and int(m.group(1)) == int(m.group(2)) + int(m.group(3)) and int(m.group(2)) > 0


def test_demo_json_matches_the_python_api(capsys):
    code, out, _ = run(capsys, "demo", "--n", N, "--seed", 1, *FAST, "--json")
    assert code == 0
    record = json.loads(out)
    cud = check_record(record)
    assert cud["n_samples"] == N and record["seed"] == 1 and record["data"]["n"] == N
    X, y = demo_data(N, seed=1)  # the documented way to reproduce the command
    res = cud_interval(X, y, n_resamples=20, rng=1)
    assert (cud["low"], cud["high"]) == tuple(res.confidence_interval)
    truth = record["details"]["true_error"]
    assert truth == pytest.approx(LinearGaussian().error_rate(res.coef))
    assert record["details"]["covered"] == (cud["low"] <= truth <= cud["high"])


# slow (a fresh interpreter): the README's command keeps the demo in process
# (test_demo_prints_interval_and_search_table) and `python -m cudbound demo` as a process
# (tests/cli/test_cli_flags.py::test_a_closed_pipe_ends_quietly)
@pytest.mark.slow
def test_demo_as_a_subprocess():
    proc = subprocess.run([sys.executable, "-m", "cudbound", "demo", "--n", str(N), *FAST],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert INTERVAL.search(proc.stdout)


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("cudbound ")


# ------------------------------------------------------------------ interval

def test_interval_table_with_pos_label(capsys, yes_no_csv):
    code, out, err = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--pos-label", "yes",
                         "--seed", 1, *FAST)
    assert code == 0, err
    assert "'no' -> -1, 'yes' -> +1" in out
    assert "2 features: x1, x2" in out
    low, high = map(float, INTERVAL.search(out).groups())
    assert 0.0 <= low <= high <= 1.0


def test_interval_json_with_pos_label(capsys, yes_no_csv):
    code, out, _ = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--pos-label", "yes",
                       "--seed", 1, *FAST, "--json")
    assert code == 0
    record = json.loads(out)
    cud = check_record(record)
    assert record["data"]["label_column"] == "outcome"
    assert record["data"]["source"] == str(yes_no_csv)
    assert record["data"]["label_mapping"] == {"positive": "yes", "negative": "no"}
    assert record["data"]["features"] == ["x1", "x2"]
    assert cud["n_samples"] == N == record["data"]["n"] and len(cud["coef"]) == 3


def test_interval_json_with_zero_one_labels(capsys, zero_one_csv):
    code, out, _ = run(capsys, "interval", "--data", zero_one_csv, "--label", "label", *FAST, "--json")
    assert code == 0
    record = json.loads(out)
    check_record(record)
    assert record["data"]["label_mapping"] == {"positive": 1, "negative": 0}
    assert record["seed"] == 0  # every command's default seed, reported with the result


def test_interval_options_reach_the_computation(capsys, zero_one_csv):
    code, out, _ = run(capsys, "interval", "--data", zero_one_csv, "--label", "label", "--basis", "poly:2",
                       "--confidence-level", 0.9, "--alpha-n", 100, "--resamples", 10, "--seed", 3, "--json")
    assert code == 0
    cud = json.loads(out)["results"][0]
    assert cud["basis"] == "PolynomialBasis(degree=2)" and len(cud["coef"]) == 6
    assert (cud["confidence_level"], cud["alpha_n"], cud["n_resamples"]) == (0.9, 100.0, 10)


def test_the_coefficients_are_printed_with_their_names(capsys, yes_no_csv):
    """Each coefficient beside the basis column it multiplies: the intercept and the features for
    the linear basis, in the text and in --json (coef_names beside coef)."""
    code, out, _ = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--seed", 1, *FAST)
    assert code == 0
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("coefficients"))
    shown = [lines[at].split("coefficients", 1)[1].split()] + [line.split() for line in lines[at + 1:at + 3]]
    _, plain, _ = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--seed", 1, *FAST, "--json")
    cud = json.loads(plain)["results"][0]
    assert cud["coef_names"] == [name for name, _ in shown] == ["intercept", "x1", "x2"]
    assert [float(value) for _, value in shown] == pytest.approx(cud["coef"], abs=5e-5)


@pytest.mark.parametrize("basis", ["poly:2", "cols:1", "poly:2(cols:0-1)", "zpca:2", "poly:2(zpca:2)"])
def test_the_coefficient_names_say_which_column_each_multiplies(basis):
    """A monomial's name evaluated on the named features (or principal component scores) is the
    basis's column at its place."""
    from cudbound.basis import make_basis
    from cudbound.cli.output import _coefficient_names
    from cudbound.refit import Procedure
    X = np.random.default_rng(4).normal(size=(25, 3))
    names = _coefficient_names(Procedure(basis=basis), X, np.tile([1, -1], 13)[:25], ["a", "b", "c"])
    fitted = make_basis(basis).fit(X)
    design = fitted.transform(X)
    scores = make_basis("zpca:2").fit(X).transform(X)[:, 1:] if "pca" in basis else None
    values = {"a": X[:, 0], "b": X[:, 1], "c": X[:, 2]} if scores is None else {"PC1": scores[:, 0], "PC2": scores[:, 1]}
    assert len(names) == design.shape[1] and names[0] == "intercept" and len(set(names)) == len(names)
    for j, name in enumerate(names[1:], start=1):
        column = np.prod([values[f.split("^")[0]] ** int(f.split("^")[1] if "^" in f else 1) for f in name.split("*")],
                         axis=0)
        np.testing.assert_allclose(design[:, j], column, atol=1e-12, err_msg=name)


def _numbers(record):
    """Each result's method and numbers (not its timing) from a --json record."""
    return [{k: r[k] for k in ("method", "low", "high", "estimate") + (("coef",) if "coef" in r else ())}
            for r in record["results"]]


def test_a_model_spec_gives_the_interval_of_the_same_classifier_in_python(capsys, yes_no_csv):
    """--model names the classifier as compare's SPECs do: a scikit-learn classifier by import path gives
    the interval of that estimator in Python, and a loss with a basis that of --loss and --basis."""
    from sklearn.linear_model import LogisticRegression
    X, y, _ = read_csv(yes_no_csv, "outcome")
    spec = "sklearn.linear_model.LogisticRegression(C=0.5)"
    code, out, err = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--pos-label", "yes",
                         "--model", spec, "--seed", 1, *FAST, "--json")
    assert code == 0, err
    record = json.loads(out)
    direct = cud_interval(X, y, LogisticRegression(C=0.5), n_resamples=20, rng=1, pos_label="yes")
    (cud,) = record["results"]
    assert (cud["low"], cud["high"]) == tuple(direct.confidence_interval) and cud["coef"] == pytest.approx(direct.coef)
    assert cud["loss"] == direct.details["loss"] and record["details"]["model"] == spec
    code, out, err = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--pos-label", "yes",
                         "--model", spec, "--seed", 1, "--methods", "kohavi,wald_cv", "--json")
    assert code == 0, err
    several = intervals(X, y, methods=["kohavi", "wald_cv"], procedure=LogisticRegression(C=0.5), rng=1,
                        pos_label="yes")
    assert [(r["low"], r["high"]) for r in json.loads(out)["results"]] == [tuple(r.confidence_interval) for r in several]
    flags = ["interval", "--data", yes_no_csv, "--label", "outcome", "--seed", 2, *FAST, "--json"]
    _, by_spec, _ = run(capsys, *flags, "--model", "ridge:0.5,basis=poly:2")
    _, by_flags, _ = run(capsys, *flags, "--loss", "ridge:0.5", "--basis", "poly:2")
    assert _numbers(json.loads(by_spec)) == _numbers(json.loads(by_flags))


def test_a_model_spec_and_the_model_flags_are_not_given_together(capsys, yes_no_csv):
    code, out, err = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--model", "hinge",
                         "--basis", "poly:2", *FAST)
    assert code == 2 and out == "" and "--model names the classifier" in err and "leave out --basis" in err


def test_a_pipelines_coefficients_are_named_by_its_steps():
    """A scikit-learn pipeline's coefficients: the intercept, then the names its earlier steps give
    their columns (PolynomialFeatures' bias column, constant, is dropped as the interval drops it)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    from cudbound.cli.output import _coefficient_names
    X = np.random.default_rng(5).normal(size=(30, 2))
    y = np.tile([1, -1], 15)
    assert _coefficient_names(LogisticRegression(), X, y, ["a", "b"]) == ["intercept", "a", "b"]
    pipe = make_pipeline(StandardScaler(), PolynomialFeatures(2), LogisticRegression())
    assert _coefficient_names(pipe, X, y, ["a", "b"]) == ["intercept", "a", "b", "a^2", "a b", "b^2"]


@pytest.mark.parametrize("argv, fragment", [
    (["--data", "{missing}", "--label", "label"], "data file '.*missing.csv' not found"),
    (["--data", "{zero_one}", "--label", "klass"], "label column 'klass' is not in the header.*x1, x2, label"),
    (["--data", "{yes_no}", "--label", "outcome", "--pos-label", "maybe"], "--pos-label='maybe' is not one"),
    (["--data", "{zero_one}", "--label", "label", "--confidence-level", "1.5"], "strictly between 0 and 1"),
    (["--data", "{zero_one}", "--label", "label", "--resamples", "10"], "too few"),
])
def test_interval_errors_exit_2(capsys, tmp_path, yes_no_csv, zero_one_csv, argv, fragment):
    paths = {"missing": tmp_path / "missing.csv", "yes_no": yes_no_csv, "zero_one": zero_one_csv}
    code, out, err = run(capsys, "interval", *[a.format(**paths) for a in argv])
    assert code == 2 and out == ""
    assert err.startswith("cudbound: error: ") and re.search(fragment, err), err
    assert "Traceback" not in err


@pytest.mark.parametrize("cells, fragment", [
    (["1.0", "red", "0"], "feature column 'b' is not numeric: line 3 holds 'red'"),
    (["1.0", "nan", "0"], "feature column 'b' has a non-finite value 'nan' at line 3"),
    (["inf", "2.0", "0"], "feature column 'a' has a non-finite value 'inf' at line 3"),
    (["1.0", "", "0"], "feature column 'b' has a missing value at line 3"),
    (["1.0", "2.0", ""], "label column 'y' has a missing value at line 3"),
    (["1.0", "2.0"], "line 3 of .* has 2 fields but the header has 3"),
])
def test_bad_cells_exit_2(capsys, tmp_path, cells, fragment):
    path = write_csv(tmp_path / "bad.csv", ["a", "b", "y"], [["0.5", "1.5", "1"], cells, ["2", "1", "0"]])
    code, _, err = run(capsys, "interval", "--data", path, "--label", "y", *FAST)
    assert code == 2
    assert err.startswith("cudbound: error: ") and re.search(fragment, err), err


@pytest.mark.parametrize("text, fragment", [
    ("", "is empty"),
    ("a,b,y\n", "has a header but no data rows"),
    ("y\n1\n0\n", "no feature columns"),
    ("a,a,y\n1,2,0\n", "'a' appears more than once"),
])
def test_bad_files_exit_2(capsys, tmp_path, text, fragment):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    code, _, err = run(capsys, "interval", "--data", path, "--label", "y", *FAST)
    assert code == 2 and fragment in err, err


def test_argument_errors_exit_2(capsys, zero_one_csv):
    code, _, err = run(capsys, "interval", "--data", zero_one_csv, "--label", "label", "--basis", "cubic")
    assert code == 2 and "--basis must be" in err
    code, _, err = run(capsys, "interval", "--label", "label")
    assert code == 2 and "--data" in err
    code, _, err = run(capsys)
    assert code == 2


def test_read_csv_details(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("\ufeff x , label ,z\r\n1, 2 ,3\r\n\r\n4,1,6.5\r\n", encoding="utf-8")
    X, y, features = read_csv(path, "label")
    np.testing.assert_array_equal(X, [[1, 3], [4, 6.5]])
    assert features == ["x", "z"]
    assert y.dtype.kind == "i" and y.tolist() == [2, 1]
    path.write_text("x,label\n1,0.5\n2,1.5\n")
    assert read_csv(path, "label")[1].tolist() == [0.5, 1.5]
    path.write_text("x,label\n1,a\n2,1\n")
    assert read_csv(path, "label")[1].tolist() == ["a", "1"]


# ------------------------------------------------------------------ reproducibility

def test_cud_interval_same_rng_same_result(sample):
    X, y = sample
    first = cud_interval(X, y, n_resamples=20, rng=123)
    second = cud_interval(X, y, n_resamples=20, rng=123)
    np.testing.assert_array_equal(first.bootstrap_distribution, second.bootstrap_distribution)
    assert first.confidence_interval == second.confidence_interval
    np.testing.assert_array_equal(first.coef, second.coef)


def test_cli_same_seed_same_json(capsys, yes_no_csv):
    argv = ["interval", "--data", yes_no_csv, "--label", "outcome", "--pos-label", "yes", "--seed", 9, *FAST, "--json"]
    first = json.loads(run(capsys, *argv)[1])
    second = json.loads(run(capsys, *argv)[1])
    assert without_timings(first) == without_timings(second)


# ------------------------------------------------------------------ several methods

def test_interval_methods_table_and_json(capsys, zero_one_csv):
    code, out, _ = run(capsys, "interval", "--data", zero_one_csv, "--label", "label", "--seed", 4,
                       "--methods", "cud,kohavi,martin,langford", *FAST)
    assert code == 0
    for name in ("cud", "kohavi", "martin", "langford"):
        assert re.search(rf"^\s+{name}\s+\d\.\d{{4}}\s+\d\.\d{{4}}", out, re.M), (name, out)
    code, out, _ = run(capsys, "interval", "--data", zero_one_csv, "--label", "label", "--seed", 4,
                       "--methods", "cud,kohavi", "--json", *FAST)
    record = json.loads(out)
    assert [r["method"] for r in record["results"]] == ["cud", "kohavi"]
    for r in record["results"]:
        assert 0.0 <= r["low"] <= r["estimate"] <= r["high"] <= 1.0


def test_interval_unknown_method_exits_2(capsys, zero_one_csv):
    code, _, err = run(capsys, "interval", "--data", zero_one_csv, "--label", "label", "--methods", "cud,bogus")
    assert code == 2
    assert "unknown interval method(s) bogus" in err


def test_interval_methods_are_parsed_as_intervals_parses_them(capsys, zero_one_csv):
    """One parser (issue 30): a repeated method is refused on the command line as by intervals()."""
    code, _, err = run(capsys, "interval", "--data", zero_one_csv, "--label", "label", "--methods", "cud,kohavi,cud")
    assert code == 2
    assert "--methods lists ['cud'] more than once" in err
    with pytest.raises(ValueError, match=r"`methods` lists \['cud'\] more than once"):
        intervals(np.zeros((4, 1)), [0, 1, 0, 1], methods="cud,kohavi,cud")


def test_cud_interval_does_not_depend_on_the_other_methods(capsys, zero_one_csv):
    base = ["interval", "--data", zero_one_csv, "--label", "label", "--seed", 3, "--json", *FAST]
    alone = json.loads(run(capsys, *base)[1])
    with_others = json.loads(run(capsys, *base, "--methods", "cud,kohavi,bs1")[1])
    cud, cud_alone = with_others["results"][0], alone["results"][0]
    assert (cud["low"], cud["high"]) == (cud_alone["low"], cud_alone["high"])


@pytest.mark.parametrize("flag, value", [("--max-nodes", "0"), ("--max-nodes", "x"), ("--time-limit", "-1"),
                                         ("--time-limit", "nan")])
def test_bad_budgets_exit_2(capsys, flag, value):
    code, out, err = run(capsys, "demo", "--n", N, *FAST, flag, value)
    assert code == 2 and out == "" and flag in err, err


def test_interval_maps_yes_no_labels_without_pos_label_and_says_so(capsys, yes_no_csv):
    code, out, err = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--seed", 1, *FAST)
    assert code == 0, err
    assert "'no' -> -1, 'yes' -> +1" in out


def test_plot_option_writes_an_image_for_one_method_and_for_several(capsys, tmp_path, yes_no_csv):
    pytest.importorskip("matplotlib")
    one, many = tmp_path / "cud.png", tmp_path / "forest.png"
    code, out, err = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--seed", 1, *FAST,
                         "--plot", one)
    assert code == 0, err
    assert one.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert re.search(r"\n  plot\s+" + re.escape(str(one)), out)
    code, out, err = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--seed", 1,
                         "--methods", "kohavi,yang", "--plot", many, "--json")
    assert code == 0, err
    assert json.loads(out)["plot"] == str(many) and many.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, err = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--seed", 1, *FAST,
                         "--plot", tmp_path / "no" / "such" / "dir.png")
    assert code == 2 and "--plot: cannot write" in err


def test_warnings_are_one_line_each_without_paths(capsys, monkeypatch, zero_one_csv):
    import warnings as _warnings
    from cudbound.cli import interval

    from cudbound.cli import app as cli_main
    real = interval._interval

    def noisy(args):
        for _ in range(3):
            _warnings.warn("a refit was singular;\n   the least-norm solution was used", RuntimeWarning)
        return real(args)
    monkeypatch.setattr(interval, "_interval", noisy)
    parser_args = ["interval", "--data", zero_one_csv, "--label", "label", "--seed", 1, *FAST]
    monkeypatch.setattr(cli_main, "build_parser", _rebind(cli_main.build_parser, noisy))
    code, out, err = run(capsys, *parser_args)
    assert code == 0
    lines = [l for l in err.splitlines() if "warning" in l]
    assert lines == ["cudbound: warning: a refit was singular; the least-norm solution was used (RuntimeWarning)"]
    assert ".py" not in err and "Traceback" not in err


def _rebind(build, handler):
    """build_parser with the interval subcommand's handler replaced."""
    def patched():
        parser = build()
        for action in parser._subparsers._group_actions:
            for name, sub in action.choices.items():
                if name == "interval":
                    sub.set_defaults(handler=handler)
        return parser
    return patched


@pytest.mark.parametrize("error, fragment", [
    (OSError(28, "No space left on device"), "OSError: [Errno 28] No space left on device"),
    ("broken", "a worker process died"),
])
def test_a_system_failure_is_one_line_and_exit_status_1(capsys, monkeypatch, error, fragment):
    """Found in review: an OSError or a dead worker pool escaped main() as a traceback."""
    from concurrent.futures.process import BrokenProcessPool

    from cudbound.cli import interval

    def fail(args):
        raise BrokenProcessPool("A process in the process pool was terminated abruptly") if error == "broken" \
            else error

    monkeypatch.setattr(interval, "_demo", fail)
    code, out, err = run(capsys, "demo")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("cudbound: error: ") and fragment in err, err


def test_several_methods_forward_every_budget(capsys, monkeypatch, yes_no_csv):
    """--max-nodes and --time-limit reach CUD when other methods are chosen too: the same conservative
    interval as CUD alone under the same node budget; --time-limit, the whole run's, reaches CUD as
    what is left of it (all of it, on a frozen fake clock: tests/_support/fake_clock.py)."""
    from fake_clock import install
    base = ("interval", "--data", yes_no_csv, "--label", "outcome", "--seed", 3, "--resamples", 20, "--json")
    alone = json.loads(run(capsys, *base, "--max-nodes", 1)[1])["results"][0]
    code, out, err = run(capsys, *base, "--max-nodes", 1, "--methods", "cud,kohavi")
    assert code == 0, err
    both = json.loads(out)["results"][0]
    assert both["conservative"] and alone["conservative"]
    assert (both["low"], both["high"]) == (alone["low"], alone["high"])
    install(monkeypatch)
    spent = json.loads(run(capsys, *base, "--time-limit", 1e-9, "--methods", "cud,kohavi")[1])["results"][0]
    assert spent["conservative"] and spent["search"]["out_of_time"] and spent["upper_gap"] > 0
    assert spent["details"]["cut_by_time_limit"]


@pytest.mark.parametrize("flag, value", [("--max-nodes", 5), ("--alpha-n", 10),
                                         ("--replicate-time-limit", 3), ("--exact-distribution", None)])
def test_an_option_no_chosen_method_takes_is_an_error(capsys, yes_no_csv, flag, value):
    extra = (flag,) if value is None else (flag, value)
    code, out, err = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--seed", 1,
                         "--methods", "kohavi,yang", *extra)
    assert code == 2 and out == "", err
    assert flag in err and "cud" in err and err.count("\n") == 1, err


def test_resamples_reach_every_resampling_method(capsys, yes_no_csv):
    from cudbound import intervals
    base = ("interval", "--data", yes_no_csv, "--label", "outcome", "--seed", 4, "--json")
    got = json.loads(run(capsys, *base, "--resamples", 30, "--methods", "cud,bs1")[1])["results"]
    X, y, _ = read_csv(yes_no_csv, "outcome")
    want = intervals(X, y, methods=["cud", "bs1"], rng=4, cud_options={"n_resamples": 30},
                     bs1_options={"n_resamples": 30})
    assert [(r["low"], r["high"]) for r in got] == [(r.low, r.high) for r in want]


def test_ctrl_c_prints_the_methods_that_finished(capsys, zero_one_csv):
    """Ctrl-C during the third of four methods: the table of the two that finished, a line naming the
    method that was running and the one not started, `interrupted` on stderr, exit status 130; with
    --json the record of the finished ones and where it stopped."""
    from cudbound.registry import register, unregister

    def stop(design, y, *, confidence_level=0.95, rng=None):
        raise KeyboardInterrupt
    register("ctrl_c", stop, "raises KeyboardInterrupt")
    try:
        argv = ["interval", "--data", zero_one_csv, "--label", "label", "--seed", 4,
                "--methods", "kohavi,yang,ctrl_c,langford"]
        code, out, err = run(capsys, *argv)
        assert code == 130
        assert re.search(r"^\s+kohavi\s+\d\.\d{4}", out, re.M) and re.search(r"^\s+yang\s+\d\.\d{4}", out, re.M)
        assert not re.search(r"^\s+langford\s", out, re.M)
        assert "interrupted during ctrl_c; not started: langford" in out
        assert "interrupted" in err
        code, out, _ = run(capsys, *argv, "--json")
        record = json.loads(out)
        assert code == 130 and [r["method"] for r in record["results"]] == ["kohavi", "yang"]
        assert record["details"]["interrupted"] == {"during": "ctrl_c", "not_started": ["langford"]}
        jsonschema = pytest.importorskip("jsonschema")
        from cudbound.output import OUTPUT_SCHEMA
        jsonschema.validate(record, OUTPUT_SCHEMA)       # the record of an interrupted run is still the schema's
    finally:
        unregister("ctrl_c")


def test_a_loss_of_ones_own_by_import_path_gives_the_interval_of_that_loss_in_python(capsys, yes_no_csv, tmp_path,
                                                                                    monkeypatch):
    """--model with a Loss subclass by import path (docs/losses.md's squared hinge in a module of one's own):
    the command's CUD interval equals cud_interval's with an instance of the class."""
    import importlib
    module = tmp_path / "cli_squared_hinge.py"
    module.write_text("import cvxpy as cp\nimport numpy as np\nfrom cudbound.losses import Loss\n\n\n"
                      "class SquaredHingeLoss(Loss):\n    name = 'squared_hinge'\n\n"
                      "    def pointwise(self, y, t):\n        return np.maximum(0.0, 1.0 - y * t) ** 2\n\n"
                      "    def cvxpy_pointwise(self, y, t):\n        return cp.square(cp.pos(1.0 - cp.multiply(y, t)))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    try:
        X, y, _ = read_csv(yes_no_csv, "outcome")
        code, out, err = run(capsys, "interval", "--data", yes_no_csv, "--label", "outcome", "--pos-label", "yes",
                             "--model", "cli_squared_hinge.SquaredHingeLoss()", "--seed", 3, *FAST, "--json")
        assert code == 0, err
        from cli_squared_hinge import SquaredHingeLoss
        from cudbound import Procedure
        direct = cud_interval(X, y, Procedure(loss=SquaredHingeLoss()), n_resamples=20, rng=3, pos_label="yes")
        (cud,) = json.loads(out)["results"]
        assert (cud["low"], cud["high"]) == tuple(direct.confidence_interval)
        assert cud["loss"] == direct.details["loss"]
    finally:
        sys.modules.pop("cli_squared_hinge", None)


def test_time_limit_lists_the_methods_it_left_out(capsys, monkeypatch, zero_one_csv):
    """--time-limit is the whole run's: ``slow`` spends 100 s of 50 (a fake clock, tests/_support/fake_clock.py),
    so martin is not started: the table of the two that ran and a line naming martin; --json the same
    results, with the limit and the skipped methods in ``details`` (the record still matches the schema)."""
    from fake_clock import install

    from cudbound.output import OUTPUT_SCHEMA
    from cudbound.registry import register, unregister
    from cudbound.results import ConfidenceInterval, IntervalResult

    jsonschema = pytest.importorskip("jsonschema")
    clock = install(monkeypatch)

    def slow(design, y, *, confidence_level=0.95, rng=None):
        clock.advance(100.0)
        return IntervalResult(method="slow", confidence_interval=ConfidenceInterval(0.1, 0.6),
                              confidence_level=confidence_level, estimate=0.3, n_samples=len(y))
    register("slow", slow, "moves the fake clock 100 s")
    try:
        argv = ["interval", "--data", zero_one_csv, "--label", "label", "--seed", 4, "--methods", "kohavi,slow,martin",
                "--time-limit", 50]
        code, out, err = run(capsys, *argv)
        assert code == 0, err
        assert re.search(r"^\s+kohavi\s+\d\.\d{4}", out, re.M) and re.search(r"^\s+slow\s+0\.1000", out, re.M)
        assert not re.search(r"^\s+martin\s", out, re.M)
        assert "not started, the time limit of 50 s having run out: martin" in out
        assert "skipped" in err
        code, out, _ = run(capsys, *argv, "--json")
        record = json.loads(out)
        assert [r["method"] for r in record["results"]] == ["kohavi", "slow"]
        assert record["details"]["time_limit"] == 50 and record["details"]["skipped"] == ["martin"]
        jsonschema.Draft202012Validator(OUTPUT_SCHEMA).validate(record)
    finally:
        unregister("slow")


def test_time_limit_shows_the_resamples_a_method_used(capsys, monkeypatch, zero_one_csv):
    """One second per refit (a fake clock): wald_cv, one 10-fold split, runs to its end (10 s), and
    e632_delta gets the 15 s left for 60 bootstrap samples, uses the first k, and the table says
    'time limit: n_resamples k of 60', the JSON n_resamples_used = k."""
    from fake_clock import clock_by_the_refit

    clock_by_the_refit(monkeypatch)
    argv = ["interval", "--data", zero_one_csv, "--label", "label", "--seed", 4, "--methods", "wald_cv,e632_delta",
            "--resamples", 60, "--time-limit", 25]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert re.search(r"^\s+wald_cv\s+[\d. ]+$", out, re.M)
    used = int(re.search(r"^\s+e632_delta\s.*time limit: n_resamples (\d+) of 60$", out, re.M).group(1))
    assert 2 <= used < 60
    code, out, _ = run(capsys, *argv, "--json")
    delta = json.loads(out)["results"][1]
    assert delta["details"]["n_resamples_used"] == used and delta["details"]["cut_by_time_limit"]
    assert delta["details"]["n_resamples"] == 60


def test_the_time_limit_is_every_methods(capsys, zero_one_csv):
    """--time-limit with methods other than CUD is no error: it is the run's, and they honour it."""
    code, out, err = run(capsys, "interval", "--data", zero_one_csv, "--label", "label", "--seed", 1,
                         "--methods", "kohavi,yang", "--time-limit", 600, "--json")
    assert code == 0, err
    record = json.loads(out)
    assert record["details"]["skipped"] == [] and not any(r["details"]["cut_by_time_limit"] for r in record["results"])
