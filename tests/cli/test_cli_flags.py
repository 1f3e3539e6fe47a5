"""The command line speaks in flags (issue 29, point 5): errors name the flag typed, usage
errors are one line with where to read more, a closed pipe ends quietly, a note when n is small
for the number of coefficients, a pandas index column is recognised, --cv reaches every
method that cross-validates and an error names the method, progress bars only on a terminal."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from cudbound import SmallSampleWarning, cud_interval
from cudbound.cli import in_flags, main, read_csv

FAST = ["--resamples", "20"]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def csv_file(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 2))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(40) > 0, 1, 0)
    path = tmp_path / "d.csv"
    path.write_text("x1,x2,y\n" + "".join(f"{a:.5f},{b:.5f},{v}\n" for (a, b), v in zip(X, y)))
    return path


@pytest.mark.parametrize("message, want", [
    ("`confidence_level` must be a number strictly between 0 and 1; got -0.95.",
     "--confidence-level must be a number strictly between 0 and 1; got -0.95."),
    ("`n_resamples`=3 is too few for confidence_level=0.95: at least 20",
     "--resamples 3 is too few for --confidence-level 0.95: at least 20"),
    ("use loss='logistic_ridge:0.1', or the hinge loss", "use --loss logistic_ridge:0.1, or the hinge loss"),
    ("`cv` must be an integer between 2 and 5; got 10.", "--cv must be an integer between 2 and 5; got 10."),
    ("the alpha_nothing and `rng_state` stay", "the alpha_nothing and `rng_state` stay"),
    ("in 'hinge,basis=poly:2': LinearSVC(loss='squared_hinge') is not", "in 'hinge,basis=poly:2': LinearSVC(loss='squared_hinge') is not"),
])
def test_library_names_become_flags(message, want):
    assert in_flags(message) == want


@pytest.mark.parametrize("flags, names", [
    (["--confidence-level", "-0.95"], ["--confidence-level"]),
    (["--resamples", "3"], ["--resamples", "--confidence-level"]),
])
def test_validation_errors_name_the_flags(capsys, csv_file, flags, names):
    code, out, err = run(capsys, "interval", "--data", csv_file, "--label", "y", *flags)
    assert code == 2 and out == ""
    assert all(name in err for name in names), err
    assert "confidence_level" not in err and "n_resamples" not in err


@pytest.mark.parametrize("argv, prog, flag", [
    (["interval", "--data", "{csv}", "--label", "y", "--jobs", "0"], "cudbound interval", "--jobs"),
    (["interval", "--data", "{csv}", "--label", "y", "--bogus"], "cudbound interval", "--bogus"),
    (["interval", "--label", "y"], "cudbound interval", "--data"),
    (["demo", "--n", "many"], "cudbound demo", "--n"),
    (["store", "check"], "cudbound store check", "FILE.sqlite"),
    (["nonsense"], "cudbound", "nonsense"),
])
def test_usage_errors_are_one_line(capsys, csv_file, argv, prog, flag):
    code, out, err = run(capsys, *[a.format(csv=csv_file) for a in argv])
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{prog}: error: ") and flag in lines[0]
    assert lines[0].endswith(f"(see '{prog} --help')")


def test_a_closed_pipe_ends_quietly(tmp_path):
    """`cudbound demo | head -1`: the reader is gone before the report is written (its end of
    the pipe is closed before the command starts, so the write must fail): no traceback, and
    the status a shell gives a writer killed by SIGPIPE."""
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([sys.executable, "-m", "cudbound", "demo", "--n", "30", *FAST, "--no-progress"],
                              stdout=w, stderr=subprocess.PIPE, text=True, timeout=600)
    finally:
        os.close(w)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert proc.returncode == 141


def test_small_n_for_the_coefficients_warns():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [0.5, 3.0], [3.0, 1.0], [1.0, 1.0]])
    y = np.array([1, -1, 1, -1, 1, -1])
    with pytest.warns(SmallSampleWarning, match=r"n = 6 rows for 3 coefficients"):
        cud_interval(X, y, n_resamples=20, rng=0)
    Xs = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    ys = np.array([-1, -1, -1, 1, 1, 1])           # separable: training error 0
    with pytest.warns(SmallSampleWarning, match="training error is 0"):
        cud_interval(Xs, ys, n_resamples=20, rng=0)
    rng = np.random.default_rng(0)
    Xb = rng.standard_normal((15, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)   # 15 rows, 3 coefficients: no warning
        cud_interval(Xb, np.where(Xb[:, 0] > 0, 1, -1), n_resamples=20, rng=0)


def test_pandas_index_column_is_dropped_with_a_note(capsys, tmp_path, csv_file):
    lines = csv_file.read_text().splitlines()
    indexed = tmp_path / "indexed.csv"
    indexed.write_text("," + lines[0] + "\n" + "".join(f"{i},{row}\n" for i, row in enumerate(lines[1:])))
    code, out, err = run(capsys, "interval", "--data", indexed, "--label", "y", "--seed", 1, *FAST, "--json")
    assert code == 0
    record = json.loads(out)
    assert record["data"]["features"] == ["x1", "x2"]
    assert "row index" in err
    _, plain, _ = run(capsys, "interval", "--data", csv_file, "--label", "y", "--seed", 1, *FAST, "--json")
    same = ("low", "high", "coef", "half_width", "train_error")
    assert [{k: r[k] for k in same} for r in json.loads(plain)["results"]] == \
        [{k: r[k] for k in same} for r in record["results"]]


def _interval_json(capsys, path, *flags):
    """``interval --methods wald_cv,kohavi --json`` on ``path``: the record (each result's interval and
    estimate) and stderr."""
    code, out, err = run(capsys, "interval", "--data", path, "--label", "y", "--methods", "wald_cv,kohavi",
                         "--seed", 1, "--json", *flags)
    assert code == 0, err
    record = json.loads(out)
    record["results"] = [{k: r[k] for k in ("method", "low", "high", "estimate")} for r in record["results"]]
    return record, err


def test_pandas_sample_round_trip(capsys, tmp_path, csv_file):
    """``df.sample(...).to_csv(path)`` writes the shuffled row labels as an unnamed first column: it is
    read as that index and dropped, with one line on stderr, and the result is the one of the same
    rows written without it."""
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(csv_file).sample(frac=1, random_state=0)
    assert list(frame.index) != list(range(len(frame)))
    frame.to_csv(tmp_path / "sampled.csv")
    frame.to_csv(tmp_path / "plain.csv", index=False)
    record, err = _interval_json(capsys, tmp_path / "sampled.csv")
    assert record["data"]["features"] == ["x1", "x2"]
    assert len(err.strip().splitlines()) == 1 and "row index" in err and "--keep-index-column" in err
    plain, _ = _interval_json(capsys, tmp_path / "plain.csv")
    assert record["results"] == plain["results"]


def test_an_unnamed_first_column_is_the_index_whatever_it_holds(capsys, tmp_path, csv_file):
    """The file pandas writes after ``sample`` or a filter, written by hand: row labels in any order."""
    lines = csv_file.read_text().splitlines()
    labels = np.random.default_rng(5).permutation(100)[:len(lines) - 1]
    indexed = tmp_path / "indexed.csv"
    indexed.write_text("," + lines[0] + "\n" + "".join(f"{i},{row}\n" for i, row in zip(labels, lines[1:])))
    record, err = _interval_json(capsys, indexed)
    assert record["data"]["features"] == ["x1", "x2"] and "row index" in err
    assert record["results"] == _interval_json(capsys, csv_file)[0]["results"]
    X, _, features = read_csv(indexed, "y", keep_index_column=True)
    assert features == ["index", "x1", "x2"] and X[:, 0].tolist() == labels.tolist()


def test_keep_index_column_keeps_it_as_a_feature(capsys, tmp_path):
    path = tmp_path / "k.csv"
    rows = [(7, 0.5, 1.0, 1), (3, 1.5, 0.0, 0), (9, -0.5, 2.0, 1), (1, 0.0, 1.0, 0), (4, 2.0, 0.5, 1), (8, 1.0, 1.5, 0)]
    path.write_text(",x1,x2,y\n" + "".join(f"{a},{b},{c},{d}\n" for a, b, c, d in rows))
    code, out, err = run(capsys, "xi-alpha", "--data", path, "--label", "y", "--keep-index-column", "--json")
    assert code == 0, err
    assert json.loads(out)["data"]["features"] == ["index", "x1", "x2"] and "row index" not in err
    path.write_text(",index,x2,y\n" + "".join(f"{a},{b},{c},{d}\n" for a, b, c, d in rows))
    assert read_csv(path, "y", keep_index_column=True)[2] == ["level_0", "index", "x2"]
    for command in ("interval", "compare", "auc", "xi-alpha"):
        assert "--keep-index-column" in run(capsys, command, "--help")[1]


def test_other_unnamed_columns_are_refused(capsys, tmp_path):
    path = tmp_path / "u.csv"
    path.write_text("x1,,y\n5,1,1\n3,2,0\n4,0,1\n1,1,0\n")
    code, _, err = run(capsys, "interval", "--data", path, "--label", "y", *FAST)
    assert code == 2 and "column 2 of" in err and "has no name in the header; name it" in err


def test_folds_reach_every_method_that_cross_validates(capsys, csv_file):
    code, out, err = run(capsys, "interval", "--data", csv_file, "--label", "y", "--seed", 2, "--json",
                         "--methods", "wald_cv,yang,nested_cv", "--cv", 4)
    assert code == 0, err
    results = json.loads(out)["results"]
    assert [r["details"]["k"] for r in results] == [4, 4, 4]


def test_folds_for_a_method_without_folds_is_an_error(capsys, csv_file):
    code, _, err = run(capsys, "interval", "--data", csv_file, "--label", "y", "--cv", 4, *FAST)
    assert code == 2 and "--cv is used by" in err and "(cud)" in err


def test_a_method_that_refuses_the_folds_is_named(capsys, tmp_path):
    path = tmp_path / "five.csv"
    path.write_text("x1,x2,y\n0,1,1\n1,0,0\n2,2,1\n0.5,3,0\n3,1,1\n")
    code, _, err = run(capsys, "interval", "--data", path, "--label", "y", "--methods", "wald_cv", "--cv", 10)
    assert code == 2 and "--cv must be" in err
    code, _, err = run(capsys, "interval", "--data", path, "--label", "y", "--methods", "kohavi,wald_cv",
                       "--cv", 10, "--seed", 0)
    assert code == 2 and "interval method 'wald_cv'" in err and "--cv" in err


def test_progress_bars_only_on_a_terminal(capsys, csv_file):
    """stderr is captured here (not a terminal): the leave-one-out loop draws no bar."""
    code, _, err = run(capsys, "xi-alpha", "--data", csv_file, "--label", "y", "--loo")
    assert code == 0
    assert "%|" not in err and "it/s" not in err, err


@pytest.mark.parametrize("command", [["interval", "--methods", "wald_cv,yang,nested_cv", "--seed", 2, "--json"],
                                     ["auc", "--method", "pooled", "--seed", 1, "--json"]])
def test_the_old_folds_flag_works_for_one_release_with_a_warning_naming_cv(capsys, csv_file, command):
    """--folds is --cv's old name (issue 30, point 3): the same results, one warning line; both at once refused."""
    base = [command[0], "--data", csv_file, "--label", "y", *command[1:]]
    code, new, err = run(capsys, *base, "--cv", 4)
    assert code == 0 and "warning" not in err, err
    code, old, err = run(capsys, *base, "--folds", 4)
    assert code == 0
    line = "cudbound: warning: --folds is deprecated and will be removed in the next release; use --cv instead."
    assert line in err
    new, old = json.loads(new), json.loads(old)
    assert old.pop("warnings") == [line.removeprefix("cudbound: warning: ") + " (DeprecationWarning)"]
    new.pop("warnings")
    for record in (new, old):
        for r in record["results"]:
            r.pop("seconds", None)
            r.get("details", {}).pop("shared_seconds", None)
            r.get("details", {}).pop("compile_seconds", None)
    assert old == new
    code, _, err = run(capsys, *base, "--cv", 4, "--folds", 4)
    assert code == 2 and "argument --folds: not allowed with argument --cv" in err


def test_the_old_level_flag_works_for_one_release_with_a_warning(capsys):
    """--level is --confidence-level's old name: the same interval, one warning line; both at once refused."""
    argv = ["demo", "--n", 30, "--resamples", 20, "--json", "--no-progress"]
    code, new, err = run(capsys, *argv, "--confidence-level", 0.9)
    assert code == 0 and "warning" not in err, err
    code, old, err = run(capsys, *argv, "--level", 0.9)
    line = "--level is deprecated and will be removed in the next release; use --confidence-level instead."
    assert code == 0 and f"cudbound: warning: {line}" in err
    new, old = json.loads(new), json.loads(old)
    assert old.pop("warnings") == [line + " (DeprecationWarning)"] and new.pop("warnings") == []
    for record in (new, old):
        for r in record["results"]:
            r.pop("seconds"), r["search"].pop("seconds_median"), r["details"].pop("compile_seconds", None)
    assert old == new and new["results"][0]["confidence_level"] == 0.9
    code, _, err = run(capsys, *argv, "--level", 0.9, "--confidence-level", 0.9)
    assert code == 2 and "argument --confidence-level: not allowed with argument --level" in err


@pytest.mark.parametrize("command, new, old, default", [("demo", "--confidence-level", "--level", "0.95"),
                                                        ("auc", "--cv", "--folds", "5")])
def test_an_old_flag_is_one_parser_action_into_the_new_flags_dest_and_help_shows_the_default(capsys, command, new, old,
                                                                                             default):
    """The old flags are argparse actions (cudbound.cli.shared.RenamedFlag) that store where the new
    flag does; the defaults are the parser's, so --help shows them."""
    import warnings

    from cudbound.cli import build_parser
    from cudbound.cli.shared import RenamedFlag
    parser = build_parser()
    required = ["--data", "x.csv", "--label", "y"] if command == "auc" else []
    dest = new[2:].replace("-", "_")
    assert str(getattr(parser.parse_args([command, *required]), dest)) == default
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated .* use {new} instead"):
        assert getattr(parser.parse_args([command, *required, old, "3"]), dest) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert getattr(parser.parse_args([command, *required, new, "3"]), dest) == 3
    sub = next(a for a in parser._subparsers._group_actions[0].choices[command]._actions if old in a.option_strings)
    assert isinstance(sub, RenamedFlag)
    with pytest.raises(SystemExit):
        parser.parse_args([command, "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert f"(default {default}" in shown and f"{old} " in shown and f"use {new}" in shown


def _subcommands():
    """{name: its sub-parser} of every command (``store check`` and ``store export`` included)."""
    import argparse

    from cudbound.cli import build_parser

    def children(parser, prefix=""):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from children(sub, f"{prefix}{name} ")
        if prefix:
            yield prefix.strip(), parser
    return dict(children(build_parser()))


def test_shared_flags_mean_the_same_in_every_command():
    """Each shared flag is defined once (cli.shared.shared_flags): the same help, default and
    requirement wherever a command takes it; --seed defaults to 0 in every command that draws at
    random, and only xi-alpha (which draws nothing at random) and the study commands lack it."""
    from cudbound.cli.shared import DEFAULT_SEED
    seen = {}
    for command, parser in _subcommands().items():
        for action in parser._actions:
            for flag in set(action.option_strings) & {"--data", "--label", "--pos-label", "--keep-index-column",
                                                      "--seed", "--json", "--no-progress"}:
                seen.setdefault(flag, {})[command] = (action.help, action.default, action.required)
    for flag, per in seen.items():
        assert len(set(per.values())) == 1, (flag, per)
    assert set(seen["--seed"]) == {"demo", "interval", "compare", "auc"}
    assert {v[1] for v in seen["--seed"].values()} == {DEFAULT_SEED} == {0}
    assert set(seen["--data"]) == set(seen["--keep-index-column"]) == {"interval", "compare", "auc", "xi-alpha"}
    assert set(seen["--json"]) == set(_subcommands()) - {"store"}


def test_jobs_counts_workers_as_n_jobs_does(capsys, csv_file):
    """--jobs everywhere (a study run too: --workers is gone), read as n_jobs: -2 is every core but one."""
    flags = {c: {s for a in p._actions for s in a.option_strings} for c, p in _subcommands().items()}
    assert "--jobs" in flags["coverage"] and "--workers" not in flags["coverage"] and "--jobs" in flags["interval"]
    code, out, _ = run(capsys, "interval", "--data", csv_file, "--label", "y", *FAST, "--jobs", "-2", "--json")
    assert code == 0 and json.loads(out)["seed"] == 0
    code, _, err = run(capsys, "interval", "--data", csv_file, "--label", "y", "--jobs", "1.5")
    assert code == 2 and "--jobs: must be a positive integer, -1 (every core)" in err
