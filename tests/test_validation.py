"""Bad input through the public functions: every error is a ValueError naming what is wrong.

Input that is accepted runs the real search, kept tiny (level 0.5 needs only two resamples).
"""
import numbers

import numpy as np
import pytest

import cudbound
from cudbound import Procedure, cud_interval, replicate_sup
from cudbound._validation import check_scalar

TINY_RUN = {"confidence_level": 0.5, "n_resamples": 2}
N = 30


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, 2))
    y = np.where(X[:, 0] + 0.7 * rng.standard_normal(N) >= 0, 1, -1)
    return X, y


@pytest.fixture(scope="module")
def design(data):
    X, y = data
    return np.column_stack([np.ones(N), X]), y.astype(float)


@pytest.fixture(scope="module")
def reference(data):
    X, y = data
    return cud_interval(X, y, rng=5, **TINY_RUN)


# ------------------------------------------------------------------ features

@pytest.mark.parametrize("value, fragment", [
    (np.nan, "NaN at row 3, column 1"),
    (np.inf, "an infinite value at row 3, column 1"),
    (-np.inf, "an infinite value at row 3, column 1"),
])
def test_non_finite_feature_names_row_and_column(data, value, fragment):
    X, y = data
    X = X.copy()
    X[3, 1] = value
    with pytest.raises(ValueError, match=fragment):
        cud_interval(X, y, **TINY_RUN)


def test_several_non_finite_features_are_counted(data):
    X, y = data
    X = X.copy()
    X[[5, 9], 0] = np.nan
    with pytest.raises(ValueError, match="2 non-finite entries; the first is NaN at row 5, column 0"):
        cud_interval(X, y, **TINY_RUN)


def test_non_numeric_features(data):
    X, y = data
    with pytest.raises(ValueError, match="`X` must be a numeric array"):
        cud_interval(np.array([["a", "b"]] * N), y, **TINY_RUN)


def test_empty_features():
    with pytest.raises(ValueError, match="`X` is empty"):
        cud_interval(np.empty((0, 2)), np.array([]), **TINY_RUN)


# ------------------------------------------------------------------ labels

@pytest.mark.parametrize("labels, fragment", [
    (np.tile([0, 1, 2], N // 3), "exactly two classes; found 3: 0, 1, 2"),
    (np.ones(N, dtype=int), "exactly two classes; found 1: 1"),
    (np.array(["yes"] * N), "exactly two classes; found 1: 'yes'"),
])
def test_labels_must_have_exactly_two_classes(data, labels, fragment):
    X, _ = data
    with pytest.raises(ValueError, match=fragment):
        cud_interval(X, labels, **TINY_RUN)


def test_missing_labels(data):
    X, y = data
    with pytest.raises(ValueError, match="non-finite label at position 4"):
        cud_interval(X, np.where(np.arange(N) == 4, np.nan, y.astype(float)), **TINY_RUN)
    with pytest.raises(ValueError, match=r"missing label \(None\) at position 2"):
        cud_interval(X, [None if i == 2 else int(v) for i, v in enumerate(y)], **TINY_RUN)


@pytest.mark.parametrize("encode, negative, positive", [
    (lambda y: y, -1, 1),
    (lambda y: y.astype(float), -1, 1),
    (lambda y: (y + 1) // 2, 0, 1),
    (lambda y: (y + 1) / 2.0, 0, 1),
    (lambda y: y == 1, False, True),
    (lambda y: list((y == 1).tolist()), False, True),
])
def test_recognised_label_pairs_are_accepted(data, reference, encode, negative, positive):
    X, y = data
    res = cud_interval(X, encode(y), rng=5, **TINY_RUN)
    assert (res.label_encoding.negative, res.label_encoding.positive) == (negative, positive)
    np.testing.assert_array_equal(res.bootstrap_distribution, reference.bootstrap_distribution)
    assert res.confidence_interval == reference.confidence_interval


@pytest.mark.parametrize("positive, negative", [("yes", "no"), ("Yes", "NO"), ("True", "False"), ("true", "false"),
                                                ("1", "0")])
def test_text_label_pairs_are_mapped_automatically(data, reference, positive, negative):
    """The pairs a CSV file gives: true/false, yes/no, 1/0 in any case; positive = true, yes, 1."""
    X, y = data
    res = cud_interval(X, np.where(y == 1, positive, negative), rng=5, **TINY_RUN)
    assert (res.label_encoding.negative, res.label_encoding.positive) == (negative, positive)
    np.testing.assert_array_equal(res.bootstrap_distribution, reference.bootstrap_distribution)
    flipped = cud_interval(X, np.where(y == 1, positive, negative), pos_label=negative, rng=5, **TINY_RUN)
    assert flipped.label_encoding.positive == negative


def test_other_label_pairs_need_pos_label(data, reference):
    X, y = data
    words = np.where(y == 1, "yes", "maybe")
    with pytest.raises(ValueError, match=r"labels \['maybe', 'yes'\].*Pass `pos_label=`"):
        cud_interval(X, words, **TINY_RUN)
    with pytest.raises(ValueError, match=r"labels \[1, 2\].*pos_label"):
        cud_interval(X, np.where(y == 1, 2, 1), **TINY_RUN)
    words = np.where(y == 1, "yes", "no")

    res = cud_interval(X, words, pos_label="yes", rng=5, **TINY_RUN)
    assert (res.label_encoding.negative, res.label_encoding.positive) == ("no", "yes")
    np.testing.assert_array_equal(res.bootstrap_distribution, reference.bootstrap_distribution)
    res = cud_interval(X, np.where(y == 1, 2, 1), pos_label=2, rng=5, **TINY_RUN)
    assert (res.label_encoding.negative, res.label_encoding.positive) == (1, 2)
    np.testing.assert_array_equal(res.bootstrap_distribution, reference.bootstrap_distribution)


def test_pos_label_can_override_the_default_pair(data):
    X, y = data
    res = cud_interval(X, (y + 1) // 2, pos_label=0, rng=5, **TINY_RUN)
    assert (res.label_encoding.negative, res.label_encoding.positive) == (1, 0)


def test_pos_label_must_be_a_label(data):
    X, y = data
    with pytest.raises(ValueError, match=r"`pos_label`='maybe' is not one of the labels found in `y`"):
        cud_interval(X, np.where(y == 1, "yes", "no"), pos_label="maybe", **TINY_RUN)


def test_length_mismatch(data):
    X, y = data
    with pytest.raises(ValueError, match=f"X has {N} rows but `y` has {N - 1} labels"):
        cud_interval(X, y[:-1], **TINY_RUN)


def test_labels_must_be_one_dimensional(data):
    X, y = data
    with pytest.raises(ValueError, match="`y` must be 1-D"):
        cud_interval(X, np.column_stack([y, y]), **TINY_RUN)


# ------------------------------------------------------------------ design (basis applied to X)

def test_fewer_rows_than_basis_columns():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [-1.0, 0.5]])
    with pytest.raises(ValueError, match="4 rows but 6 basis columns"):  # poly:2 in 2-D: p = 6
        cud_interval(X, [1, -1, 1, -1], procedure=Procedure(basis="poly:2"), **TINY_RUN)


@pytest.mark.parametrize("columns", [
    lambda X: np.column_stack([X, X[:, 0]]),             # duplicated column
    lambda X: np.column_stack([X, np.full(len(X), 3.0)]),  # constant column beside the intercept
    lambda X: np.column_stack([X, X[:, 0] - 2 * X[:, 1]]),  # linear combination
])
def test_rank_deficient_design(data, columns):
    X, y = data
    with pytest.raises(ValueError, match=r"rank-deficient \(rank 3 < 4 columns\)"):
        cud_interval(columns(X), y, **TINY_RUN)


@pytest.mark.parametrize("basis", ["poly", "pca:x", "cubic", 7])
def test_bad_basis(data, basis):
    X, y = data
    with pytest.raises(ValueError, match="`basis` must be"):
        cud_interval(X, y, procedure=Procedure(basis=basis), **TINY_RUN)


def test_bad_loss(data):
    X, y = data
    with pytest.raises(ValueError, match="`loss` must be one of"):
        cud_interval(X, y, procedure=Procedure(loss="cubic"), **TINY_RUN)


# ------------------------------------------------------------------ level, resamples, alpha_n

@pytest.mark.parametrize("level", [0, 1, 1.5, -0.2, 0.0, 1.0, float("nan"), True, "0.95", None])
def test_confidence_level_strictly_between_0_and_1(data, level):
    X, y = data
    with pytest.raises(ValueError, match="`confidence_level` must be a number strictly between 0 and 1"):
        cud_interval(X, y, confidence_level=level, n_resamples=500)


@pytest.mark.parametrize("level, B, need", [(0.95, 10, 20), (0.95, 19, 20), (0.99, 50, 100), (0.9, 9, 10)])
def test_too_few_resamples_for_the_level(data, level, B, need):
    X, y = data
    with pytest.raises(ValueError, match=rf"`n_resamples`={B} is too few .* at least .* = {need} resamples"):
        cud_interval(X, y, confidence_level=level, n_resamples=B)


@pytest.mark.parametrize("B", [0, -5, 2.5, 20.000001, float("inf"), True, "20"])
def test_resamples_must_be_a_positive_integer(data, B):
    X, y = data
    with pytest.raises(ValueError, match="`n_resamples` must be a positive integer"):
        cud_interval(X, y, confidence_level=0.5, n_resamples=B)


def test_a_float_holding_a_whole_number_counts_as_that_integer(data):
    """Issue 17's input contract: 20.0 is 20 where an integer is meant (2.5 is refused above)."""
    X, y = data
    a = cud_interval(X, y, confidence_level=0.5, n_resamples=20.0, rng=1)
    b = cud_interval(X, y, confidence_level=0.5, n_resamples=20, rng=1)
    assert a.n_resamples == 20 and a.confidence_interval == b.confidence_interval


@pytest.mark.parametrize("alpha_n", [-1.0, float("inf"), float("nan"), True, "n"])
def test_alpha_n_finite_and_non_negative(data, alpha_n):
    X, y = data
    with pytest.raises(ValueError, match="`alpha_n` must be a finite non-negative number"):
        cud_interval(X, y, alpha_n=alpha_n, **TINY_RUN)


# ------------------------------------------------------------------ replicate_sup

def test_replicate_sup_accepts_valid_counts(design):
    Phi, y = design
    assert replicate_sup(Phi, y, np.ones(N)) == 0.0  # no point changes weight: Q^(b) = 0
    counts = np.random.default_rng(1).multinomial(N, np.full(N, 1 / N))
    value = replicate_sup(Phi, y, counts)
    assert 0.0 <= value <= 1.0
    assert replicate_sup(Phi, y, counts.astype(float)) == value  # whole floats are fine


def _counts(*edits):
    counts = np.ones(N)
    for i, v in edits:
        counts[i] = v
    return counts


@pytest.mark.parametrize("counts, fragment", [
    (_counts((0, 2)), f"must sum to n = {N} .*it sums to {N + 1}"),
    (_counts((0, 0)), f"must sum to n = {N} .*it sums to {N - 1}"),
    (_counts((0, -1), (1, 3)), r"whole numbers >= 0; entry 0 is \S*-1"),
    (_counts((3, 1.5), (4, 0.5)), r"whole numbers >= 0; entry 3 is \S*1\.5"),
    (_counts((2, np.nan)), r"whole numbers >= 0; entry 2 is \S*nan"),
    (np.ones(N - 1), f"1-D array of length n = {N}; got shape \\({N - 1},\\)"),
    (np.ones((N, 1)), f"1-D array of length n = {N}; got shape \\({N}, 1\\)"),
    (np.array(["1"] * N), "must be numeric"),
])
def test_replicate_sup_bad_counts(design, counts, fragment):
    Phi, y = design
    with pytest.raises(ValueError, match=fragment):
        replicate_sup(Phi, y, counts)


def test_replicate_sup_bad_design(design):
    Phi, y = design
    with pytest.raises(ValueError, match="3 rows but 4 basis columns"):
        replicate_sup(np.eye(4)[:3], y[:3], np.ones(3))
    with pytest.raises(ValueError, match="rank-deficient"):
        replicate_sup(np.column_stack([Phi, Phi[:, 1]]), y, np.ones(N))
    bad = Phi.copy()
    bad[7, 2] = np.nan
    with pytest.raises(ValueError, match="NaN at row 7, column 2"):
        replicate_sup(bad, y, np.ones(N))


def test_replicate_sup_labels(design):
    Phi, y = design
    with pytest.raises(ValueError, match=f"{N} labels"):
        replicate_sup(Phi, y[:-1], np.ones(N))
    # labels 0/1 map as everywhere else (issue 30: one contract; they were refused here)
    assert replicate_sup(Phi, (y + 1) / 2, np.ones(N)) == replicate_sup(Phi, y, np.ones(N))
    with pytest.raises(ValueError, match=r"labels \[1.0, 2.0\].*Map them to -1/\+1 first"):
        replicate_sup(Phi, np.where(y > 0, 2.0, 1.0), np.ones(N))


@pytest.mark.parametrize("alpha_n", [-0.5, float("inf")])
def test_replicate_sup_alpha_n(design, alpha_n):
    Phi, y = design
    with pytest.raises(ValueError, match="`alpha_n` must be a finite non-negative number"):
        replicate_sup(Phi, y, np.ones(N), alpha_n=alpha_n)


# ---------------------------------------------------------------- the one scalar validator
@pytest.mark.parametrize("value, kwargs, expected", [
    (3, {"min_val": 1}, 3),
    (np.int64(2), {"min_val": 2, "max_val": 2}, 2),
    (0.25, {"target_type": numbers.Real, "min_val": 0.0, "max_val": 0.5, "include_boundaries": "left"}, 0.25),
    (0.0, {"target_type": numbers.Real, "min_val": 0.0}, 0.0),
    (np.float32(1.5), {"target_type": numbers.Real}, 1.5),
    (40.0, {"min_val": 1}, 40),                  # a float holding a whole number is that integer
    (np.float64(2.0), {"min_val": 2, "max_val": 2}, 2),
])
def test_check_scalar_accepts_and_converts(value, kwargs, expected):
    out = check_scalar(value, "x", **kwargs)
    assert out == expected and type(out) is type(expected)


@pytest.mark.parametrize("value, kwargs, message", [
    (True, {"min_val": 1}, "`x` must be a positive integer; got True."),
    (1.5, {"min_val": 1}, "`x` must be a positive integer; got 1.5."),
    (0.0, {"min_val": 1}, "`x` must be a positive integer; got 0.0."),
    (0, {"min_val": 1}, "`x` must be a positive integer; got 0."),
    (-1, {"min_val": 0}, "`x` must be a non-negative integer; got -1."),
    (1, {"min_val": 2}, "`x` must be an integer >= 2; got 1."),
    (6, {"min_val": 2, "max_val": 5}, "`x` must be an integer between 2 and 5; got 6."),
    (0.5, {"target_type": numbers.Real, "min_val": 0.0, "max_val": 0.5, "include_boundaries": "left"},
     r"`x` must be a number in \[0, 0.5\); got 0.5."),
    (1.0, {"target_type": numbers.Real, "min_val": 0.0, "max_val": 1.0, "include_boundaries": "neither"},
     "`x` must be a number strictly between 0 and 1; got 1.0."),
    (0.0, {"target_type": numbers.Real, "min_val": 0.0, "include_boundaries": "neither"},
     "`x` must be a finite positive number; got 0.0."),
    (float("nan"), {"target_type": numbers.Real}, "`x` must be a finite number; got nan."),
    (float("inf"), {"target_type": numbers.Real, "min_val": 0.0}, "`x` must be a finite non-negative number"),
    ("3", {"min_val": 1}, "`x` must be a positive integer; got '3'."),
])
def test_check_scalar_rejects_with_one_message_format(value, kwargs, message):
    with pytest.raises(ValueError, match=message):
        check_scalar(value, "x", **kwargs)


def test_check_scalar_is_the_validator_of_the_package():
    """No module checks ``isinstance(..., numbers.Integral/Real)`` by hand any more: scalar
    arguments go through check_scalar (a hand-written check is the next inconsistent message)."""
    import pathlib
    import re
    root = pathlib.Path(cudbound.__file__).parent
    hand = [f"{p.relative_to(root)}:{i + 1}" for p in root.rglob("*.py") if p.name != "_validation.py"
            for i, line in enumerate(p.read_text().splitlines())
            if re.search(r"not isinstance\(\w+, numbers\.(Integral|Real)\)", line)]
    assert hand == []


def test_check_scalar_whole_numbers():
    assert check_scalar(3.0, "k", "whole", min_val=0) == 3 and check_scalar(np.int32(2), "k", "whole") == 2
    for bad in (2.5, True, float("inf"), "2"):
        with pytest.raises(ValueError, match="`k` must be a whole number between 0 and 5"):
            check_scalar(bad, "k", "whole", min_val=0, max_val=5)


@pytest.mark.parametrize("bad, error, fragment", [
    ("abc", TypeError, "`rng` must be None, a non-negative int seed"),
    (2.5, TypeError, "got float 2.5"),
    (True, TypeError, "got bool True"),
    ([1, 2], TypeError, "got list"),
    (-1, ValueError, "non-negative int seed"),
])
def test_rng_outside_the_scipy_contract_is_refused_naming_rng(data, bad, error, fragment):
    from cudbound import intervals
    X, y = data
    with pytest.raises(error, match=fragment):
        cud_interval(X, y, rng=bad, **TINY_RUN)
    with pytest.raises(error, match=fragment):
        intervals(X, y, methods=["kohavi"], rng=bad)


@pytest.mark.parametrize("good", [None, 3, np.int64(3), np.random.SeedSequence(3), np.random.default_rng(3)])
def test_rng_in_the_scipy_contract_is_accepted(data, good):
    X, y = data
    res = cud_interval(X, y, rng=good, **TINY_RUN)
    assert 0.0 <= res.low <= res.high <= 1.0


def test_complex_features_are_refused(data):
    X, y = data
    with pytest.raises(ValueError, match="`X` has complex values"):
        cud_interval(X.astype(complex), y, **TINY_RUN)


def test_a_label_encoding_is_a_record_written_as_text_by_to_dict():
    """LabelEncoding is a plain record (not a ``str``): equal by its two values, shown as text, and
    converted to that text where a result is made plain (``to_dict``, JSON)."""
    import json
    import pickle

    import cudbound
    from cudbound._validation import LabelEncoding
    enc = LabelEncoding("no", "yes")
    assert not isinstance(enc, str) and enc == LabelEncoding("no", "yes") != LabelEncoding("yes", "no")
    assert str(enc) == repr(enc) == "'no' -> -1, 'yes' -> +1" and pickle.loads(pickle.dumps(enc)) == enc
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + rng.normal(size=30) > 0, "yes", "no")
    res = cudbound.intervals(X, y, methods=["kohavi"], pos_label="yes", rng=1)[0]
    assert res.details["label_encoding"] == enc
    record = res.to_dict()
    assert record["details"]["label_encoding"] == "'no' -> -1, 'yes' -> +1"
    assert json.loads(json.dumps(record)) == record


def test_n_jobs_is_read_as_scikit_learn_reads_it(monkeypatch):
    """One convention for every worker count (cud_interval, run_study, --jobs): None is 1, -1 every
    core, -k every core but k - 1; 0, fractions, booleans and a -k that leaves no core are refused."""
    from cudbound._validation import check_n_jobs
    monkeypatch.setattr("cudbound._validation.os.cpu_count", lambda: 4)
    assert [check_n_jobs(v) for v in (None, 1, 3, 7, -1, -2, -4)] == [1, 1, 3, 7, 4, 3, 1]
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(ValueError, match=r"`n_jobs` must be a positive integer, -1 \(every core\)"):
            check_n_jobs(bad)
    with pytest.raises(ValueError, match="`n_jobs` = -5 asks for every core but 4, and this machine has 4"):
        check_n_jobs(-5)
