"""Fuzzing the public API and the command line (hypothesis): random shapes, dtypes, scales,
duplicate rows, constant columns, one-class and three-class labels, extreme levels, alpha_n and
seeds. Every call either returns a result meeting its invariants or raises one of the
documented errors (ValueError, including its subclasses, or TypeError for a bad ``rng``);
never anything else. The command line answers bad input with one line and exit status 2."""
import csv
import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import cudbound
from cudbound.auc import KernelRLS, cv_auc, lpo_auc
from cudbound.cli import main
from cudbound.svm import xi_alpha

DOCUMENTED = (ValueError, TypeError)
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])

LABEL_PAIRS = [(-1, 1), (0, 1), (False, True), ("no", "yes"), ("a", "b"), (1.5, 2.5)]


@st.composite
def features(draw, clean):
    """A feature matrix as a user might pass it: any shape, dtype, scale, duplicates, constants.
    A clean one has finite floats and enough rows, so that the results are checked too."""
    n = draw(st.integers(12, 24) if clean else st.integers(1, 24))
    d = draw(st.integers(1, 3) if clean else st.integers(0, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    X = np.random.default_rng(seed).standard_normal((n, d))
    if d and draw(st.booleans()):          # a column's unit and origin
        j = draw(st.integers(0, d - 1))
        X[:, j] = X[:, j] * 10.0 ** draw(st.integers(-8, 8)) + 10.0 ** draw(st.integers(-3, 9))
    if d and n > 1 and draw(st.booleans()):  # duplicate rows
        X[n // 2:] = X[: n - n // 2]
    if d and draw(st.integers(0, 3)) == 0:  # a constant column
        X[:, draw(st.integers(0, d - 1))] = draw(st.sampled_from([0.0, 1.0, -3.5e7]))
    if clean:
        return X
    if d and draw(st.integers(0, 3)) == 0:  # a NaN or an infinity
        X[draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))] = draw(st.sampled_from([np.nan, np.inf]))
    kind = draw(st.sampled_from(["float64", "float32", "int", "bool", "object", "complex", "list"]))
    if kind == "int":
        return np.round(X * 3).astype(np.int64) if np.all(np.isfinite(X)) else X
    if kind == "bool":
        return X > 0
    if kind == "object":
        return X.astype(object)
    if kind == "complex":
        return X + 0j
    if kind == "list":
        return X.tolist()
    return X.astype(kind)


@st.composite
def labels(draw, n, clean):
    """Labels of one, two or three classes, in the forms the API maps (or must refuse); clean
    ones have two classes that are mapped without ``pos_label``."""
    classes = 2 if clean else draw(st.sampled_from([1, 2, 3]))
    pair = draw(st.sampled_from(LABEL_PAIRS[:4] if clean else LABEL_PAIRS))
    values = list(pair) + (["c"] if isinstance(pair[0], str) else [7])
    seed = draw(st.integers(0, 2**32 - 1))
    idx = np.random.default_rng(seed).integers(0, classes, size=n)
    if classes >= 2 and n >= classes:      # every drawn class present
        idx[:classes] = np.arange(classes)
    y = [values[i] for i in idx]
    if not clean and draw(st.integers(0, 4)) == 0 and n:
        y[0] = None if isinstance(pair[0], str) else float("nan")
    return y


def one_of(draw, clean, good, bad):
    """A value from ``good``, or when not ``clean`` sometimes from ``bad``."""
    return draw(st.sampled_from(good if clean or draw(st.booleans()) else bad))


def check_interval(res):
    assert 0.0 <= res.low <= res.high <= 1.0
    assert math.isfinite(res.estimate)


def call(f, *args, **kwargs):
    """f(*args, **kwargs), or None if it raised a documented error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f(*args, **kwargs)
        except DOCUMENTED:
            return None


GOOD_RNGS = [None, 0, 7, 2**31, np.random.SeedSequence(5)]
BAD_RNGS = ["abc", 1.5, -1, [1, 2]]


def draw_case(data):
    """(clean, X, y, rng) for one example: half clean, half anything."""
    clean = data.draw(st.booleans())
    X = data.draw(features(clean))
    y = data.draw(labels(len(X), clean))
    rng = one_of(data.draw, clean, GOOD_RNGS, BAD_RNGS)
    return clean, X, y, rng


@SETTINGS
@given(data=st.data())
def test_cud_interval(data):
    clean, X, y, rng = draw_case(data)
    kw = dict(confidence_level=one_of(data.draw, clean, [0.95, 0.9, 0.5, 0.999], [0.0, 1.0, -0.1, 1.2, float("nan")]),
              alpha_n=one_of(data.draw, clean, [None, 0.0, 1e-12, 1.0, 1e12], [-1.0, float("inf"), float("nan")]),
              n_resamples=one_of(data.draw, clean, [20, 40, 20.0], [20.5, 0, -3, 1]),
              procedure={"loss": one_of(data.draw, clean, ["squared", "hinge", "logistic_ridge", "ridge:0.1"],
                                        ["bogus"])},
              rng=rng, engine_options={"max_nodes": 2000})
    if kw["confidence_level"] > 0.95 and kw["n_resamples"] < 1000:
        kw["n_resamples"] = 1000 if clean else kw["n_resamples"]
    res = call(cudbound.cud_interval, X, y, **kw)
    event("result" if res is not None else "documented error")
    if res is None:
        return
    check_interval(res)
    assert res.low <= res.train_error <= res.high
    if isinstance(rng, int):  # equal seeds, equal results
        again = call(cudbound.cud_interval, X, y, **kw)
        assert again is not None and again.confidence_interval == res.confidence_interval


@SETTINGS
@given(data=st.data())
def test_intervals(data):
    clean, X, y, rng = draw_case(data)
    methods = data.draw(st.one_of(st.just("all"), st.lists(st.sampled_from(cudbound.method_names()), min_size=1,
                                                           max_size=3))
                        if clean else st.sampled_from(["kohavi", ["bogus"], [], None, "all", ["yang", "yang"]]))
    level = one_of(data.draw, clean, [0.95, 0.8], [0.0, 1.0, 2.0])
    fast = {"n_boot": 20, "n_resamples": 20, "n_inner": 5} if methods == "all" else {}
    out = call(cudbound.intervals, X, y, methods=methods, confidence_level=level, rng=rng,
               cud_options={"n_resamples": 20, "engine_options": {"max_nodes": 2000}}, **fast)
    event("result" if out is not None else "documented error")
    if out is None:
        return
    for res in out:
        check_interval(res)
    if isinstance(rng, int):
        again = call(cudbound.intervals, X, y, methods=methods, confidence_level=level, rng=rng,
                     cud_options={"n_resamples": 20, "engine_options": {"max_nodes": 2000}}, **fast)
        assert [r.confidence_interval for r in again] == [r.confidence_interval for r in out]


@SETTINGS
@given(data=st.data())
def test_auc(data):
    clean, X, y, rng = draw_case(data)
    regparam = one_of(data.draw, clean, [1.0, 1e-6, 1e6], [0.0, -1.0])
    kernel = one_of(data.draw, clean, ["linear", "gaussian"], ["poly"])
    res = call(lambda: lpo_auc(KernelRLS(regparam=regparam, kernel=kernel), X, y))
    event("result" if res is not None else "documented error")
    if res is not None:
        assert 0.0 <= res.estimate <= 1.0
    cv = one_of(data.draw, clean, [2, 3], [1, 100])
    res = call(lambda: cv_auc(KernelRLS(regparam=regparam, kernel=kernel), X, y, cv=cv, rng=rng))
    if res is not None:
        assert math.isnan(res.estimate) or 0.0 <= res.estimate <= 1.0


@SETTINGS
@given(data=st.data())
def test_xi_alpha(data):
    clean, X, y, _ = draw_case(data)
    C = one_of(data.draw, clean, [1.0, 1e-3, 1e3], [0.0, -1.0])
    kernel = one_of(data.draw, clean, ["linear", "rbf"], ["bogus"])
    est = call(xi_alpha, X, y, C=C, kernel=kernel)
    event("result" if est is not None else "documented error")
    if est is not None:
        assert 0.0 <= est.estimate <= 1.0 and 0 <= est.n_errors <= est.n_samples


@SETTINGS
@given(data=st.data())
def test_replicate_sup_and_cud_from_design(data):
    """The design-level functions: Q^(b) in [0, 1] and 0 for all-ones counts; cud_from_design as cud_interval."""
    clean, X, y, rng = draw_case(data)
    design = X if not clean else np.column_stack([np.ones(len(X)), X])
    n = len(X)
    counts = (np.random.default_rng(data.draw(st.integers(0, 99))).multinomial(n, np.full(n, 1.0 / n))
              if clean else data.draw(st.sampled_from([np.ones(max(n, 1)), np.full(n, 2), -np.ones(n),
                                                       np.full(n, 0.5), np.zeros(n)])))
    labels = np.where(np.asarray([v in (1, True, "yes") for v in y]), 1, -1) if clean else y
    loss = one_of(data.draw, clean, ["squared", "hinge", "logistic_ridge"], ["bogus"])
    q = call(cudbound.replicate_sup, design, labels, counts, loss=loss)
    event("result" if q is not None else "documented error")
    if q is not None:
        assert 0.0 <= q <= 1.0
        ones = call(cudbound.replicate_sup, design, labels, np.ones(n), loss=loss)
        assert ones == 0.0
    res = call(cudbound.cud_from_design, design, labels, loss=loss, n_resamples=20, rng=rng,
               engine_options={"max_nodes": 2000})
    if res is not None:
        check_interval(res)
        assert res.low <= res.train_error <= res.high


@st.composite
def study_configs(draw):
    """A study configuration with good and bad values in every key (some of them all good)."""
    clean = draw(st.sampled_from([True, False, True]))

    def pick(key, *values):
        return key + " = " + (values[0] if clean else draw(st.sampled_from(values)))
    lines = ["[study]", 'name = "fuzz"', pick("seed", "1", "-1", "1.5", '"x"'),
             pick("repetitions", "2", "0", "-3", "2.0", "2.5"),
             pick("sizes", "[30]", "[2]", "[]", "[30, 30]", "[0]", '["30"]'),
             pick("confidence_level", "0.95", "1.0", "0", "-0.5", "0.9"), pick("test_size", "200", "0", "-1"),
             pick("loss", '"squared"', '"hinge"', '"bogus"', "3"),
             pick("methods", '["cud", "kohavi", "bs1"]', '["bogus"]', "[]", '["bs1"]', '["cud"]'),
             "", "[options.cud]", pick("n_resamples", "20", "5", "-1", "20.5"),
             "", "[options.bs1]", pick("n_inner", "5", "-10", "0"),
             "", "[[datasets]]", pick("name", '"donut"', '"three_points"', '"outlier"', '"nosuch"')]
    if draw(st.booleans()):
        lines.append(pick("basis", '"linear"', '"poly:2"', '"pca:9"', '"bogus"'))
    if not clean and draw(st.integers(0, 5)) == 0:
        lines.append("unknown_key = 1")
    return "\n".join(lines) + "\n"


@SETTINGS
@given(text=study_configs())
def test_coverage_check_answers_every_configuration(tmp_path_factory, text):
    """``cudbound coverage --check``: exit 0 for a valid configuration, else 2 with the errors; never a
    traceback, never a store."""
    folder = tmp_path_factory.mktemp("cfg")
    config, store = folder / "study.toml", folder / "s.sqlite"
    config.write_text(text)
    capture = _Capture()
    with capture:
        code = main(["coverage", "--config", str(config), "--store", str(store), "--check"])
    event(f"exit {code}")
    assert code in (0, 2), capture.err
    assert not store.exists() and "Traceback" not in capture.err
    if code == 2:
        assert capture.err.startswith("cudbound: error:")


@SETTINGS
@given(data=st.data())
def test_demo_command(data):
    clean = data.draw(st.booleans())
    n, seed, level, resamples = (one_of(data.draw, clean, good, bad) for good, bad in (
        (["30", "12", "40"], ["5", "2", "0", "-1", "x", "30.5"]), (["0", "2", "99"], ["-1", "x"]),
        (["0.95", "0.9", "0.5"], ["1", "nan", "0"]), (["20", "40"], ["3", "-1"])))
    capture = _Capture()
    with capture:
        code = main(["demo", "--n", n, "--seed", seed, "--confidence-level", level, "--resamples", resamples, "--no-progress",
                     "--max-nodes", "2000"])
    event(f"exit {code}")
    assert code in (0, 2), capture.err
    assert "Traceback" not in capture.err
    if code == 0:
        low, high = map(float, re.search(r"interval\s+\[(\d\.\d+), (\d\.\d+)\]", capture.out).groups())
        assert 0.0 <= low <= high <= 1.0


# ------------------------------------------------------------------ the command line

@st.composite
def csv_files(draw):
    """Rows of a CSV file: a header, then numbers, blanks, text, NaN or ragged rows (or, half the
    time, a clean file)."""
    clean = draw(st.booleans())
    n = draw(st.integers(14, 20) if clean else st.integers(0, 20))
    d = draw(st.integers(1, 3) if clean else st.integers(0, 3))
    header = [f"x{j}" for j in range(d)] + ["label"]
    if not clean and draw(st.integers(0, 9)) == 0:
        header = header[:-1] + [header[0] if d else "label"] * 2  # duplicate or missing label column
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pair = draw(st.sampled_from([("0", "1"), ("yes", "no"), ("True", "False"), ("sick", "well"), ("-1", "1")]))
    rows = []
    for i in range(n):
        row = [f"{v:.6g}" for v in rng.standard_normal(d) * 10.0 ** draw(st.integers(-5, 5))]
        row.append(pair[i % 2] if clean or draw(st.integers(0, 19)) else draw(st.sampled_from(["", "maybe",
                                                                                                pair[0]])))
        if not clean and draw(st.integers(0, 24)) == 0:
            row[0] = draw(st.sampled_from(["", "abc", "nan", "inf", "1e400"]))
        if not clean and draw(st.integers(0, 29)) == 0:
            row = row[:-1]
        rows.append(row)
    return header, rows


@SETTINGS
@given(content=csv_files(), command=st.sampled_from(["interval", "auc", "xi-alpha"]),
       extra=st.lists(st.sampled_from([["--confidence-level", "0.9"], ["--confidence-level", "1"], ["--resamples", "5"],
                                       ["--alpha-n", "-1"], ["--basis", "poly:2"], ["--basis", "pca:9"],
                                       ["--loss", "hinge"], ["--pos-label", "sick"], ["--methods", "kohavi,yang"],
                                       ["--seed", "3"], ["--json"]]), max_size=3))
def test_command_line_answers_bad_input_with_one_line(tmp_path_factory, content, command, extra):
    path = tmp_path_factory.mktemp("fuzz") / "d.csv"
    header, rows = content
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    argv = [command, "--data", str(path), "--label", "label"]
    if command == "interval":
        argv += ["--resamples", "20", "--no-progress", "--max-nodes", "2000"]
    for pair in extra:
        if command == "interval" or pair[0] in ("--pos-label", "--json"):
            argv += pair
    capture = _Capture()
    with capture:
        code = main(argv)
    assert code in (0, 2), (argv, capture.err)
    event(f"exit {code}")
    if code == 2:
        errors = [line for line in capture.err.splitlines() if line.startswith("cudbound: error:")]
        assert len(errors) == 1 and "Traceback" not in capture.err and 'File "' not in capture.err, capture.err
    else:
        assert capture.out.strip()


class _Capture:
    """Capture stdout and stderr of main() without pytest's function-scoped capsys (hypothesis runs many
    examples in one test call)."""

    def __enter__(self):
        import contextlib
        import io
        self._out, self._err = io.StringIO(), io.StringIO()
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(contextlib.redirect_stdout(self._out))
        self._stack.enter_context(contextlib.redirect_stderr(self._err))
        return self

    def __exit__(self, *exc):
        self._stack.close()
        self.out, self.err = self._out.getvalue(), self._err.getvalue()
        return False


def test_fuzzing_would_see_an_undocumented_error():
    """The harness itself: an undocumented exception is not swallowed."""
    with pytest.raises(ZeroDivisionError):
        call(lambda: 1 / 0)
