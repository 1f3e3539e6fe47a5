"""The influence-curve interval of a cross-validated AUC (cudbound/auc/cvauc.py).

References: a plain implementation of LeDell, Petersen & van der Laan's (2015) formulas below
(loops, every positive-negative pair of a fold compared), R's cvAUC 1.1.4 (``ci.cvAUC``,
``ci.pooled.cvAUC``) through tests/fixtures/cvauc_r.json (made by
tests/fixtures/make_cvauc_fixtures.R: cvAUC's own examples on its admissions and adherence data,
random data, tied scores, a clipped interval, one fold), and DeLong's variance
(:func:`cudbound.auc.delong_placements`) for one fold.
"""
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from cudbound.auc import auc_score, delong_placements
from cudbound.auc.cvauc import cvauc_interval

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


# --------------------------------------------------------------------------- the formulas, plainly

def plain_cvauc(y, s, folds, ids=None, ties=0.5, level=0.95):
    """(estimate, se, fold AUCs by sorted fold id, (low, high) clipped) by LeDell et al.'s formulas,
    one pair at a time. ``y`` in {0, 1}. ``ties``: what a tied score of the other class counts in
    the influence curve (1/2; cvAUC counts 0). ``ids`` given: the pooled repeated measures version."""
    n = len(y)
    p = sum(1 for v in y if v == 1) / n
    fold_aucs, mean_squares = [], []
    n_units = n if ids is None else len(set(ids))
    tau = n / n_units
    for fold in sorted(set(folds)):
        rows = [i for i in range(n) if folds[i] == fold]
        pos = [i for i in rows if y[i] == 1]
        neg = [j for j in rows if y[j] == 0]

        def h(a, b, tie):       # a scored above b: 1; tied: tie; below: 0
            return 1.0 if s[a] > s[b] else (tie if s[a] == s[b] else 0.0)

        auc = sum(h(i, j, 0.5) for i in pos for j in neg) / (len(pos) * len(neg))
        fold_aucs.append(auc)
        ic = {}
        for i in pos:
            ic[i] = (sum(h(i, j, ties) for j in neg) / len(neg) - auc) / p
        for j in neg:
            ic[j] = (sum(h(i, j, ties) for i in pos) / len(pos) - auc) / (1 - p)
        if ids is None:
            mean_squares.append(sum(ic[i] ** 2 for i in rows) / len(rows))
        else:
            per_id = defaultdict(float)
            for i in rows:
                per_id[ids[i]] += ic[i] / tau
            mean_squares.append(sum(v ** 2 for v in per_id.values()) / len(per_id))
    estimate = sum(fold_aucs) / len(fold_aucs)
    se = math.sqrt(sum(mean_squares) / len(mean_squares) / n_units)
    z = stats.norm.ppf(0.5 + level / 2)
    return estimate, se, fold_aucs, (max(0.0, estimate - z * se), min(1.0, estimate + z * se))


# Hand-built folds: small, tied scores (within and across classes), unequal fold sizes,
# imbalanced classes, string fold ids; the ids keep each subject in one fold.
HAND = {
    "small, ties": dict(
        y=[1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0],
        s=[0.9, 0.3, 0.3, 0.3, 0.5, 0.5, 0.1, 0.7, 0.2, 0.2, 0.6, 0.2],
        folds=[0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2],
        ids=[0, 0, 1, 2, 3, 3, 3, 4, 5, 6, 6, 7]),
    "unequal folds, imbalanced": dict(
        y=[1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0],
        s=[2.0, 1.0, 3.0, 0.5, 1.0, 2.0, 0.0, 4.0, 4.0, 1.5, 1.0, 0.2, 3.3, 1.0, 0.2, 0.2, 5.0],
        folds=["b", "b", "b", "b", "b", "b", "b", "a", "a", "a", "a", "c", "c", "c", "c", "c", "c"],
        ids=[10, 10, 11, 12, 12, 12, 13, 20, 20, 21, 22, 30, 31, 31, 32, 33, 33]),
    "one positive per fold": dict(
        y=[1, 0, 0, 0, 1, 0, 0],
        s=[0.4, 0.4, 0.1, 0.5, 0.8, 0.2, 0.8],
        folds=[5, 5, 5, 5, 9, 9, 9],
        ids=["x", "y", "y", "z", "u", "v", "v"]),
}


def random_case(seed, n=60, n_folds=4, decimals=1):
    gen = np.random.default_rng(seed)
    y = gen.binomial(1, 0.35, n)
    folds = gen.integers(0, n_folds, n)
    for f in range(n_folds):                     # both classes in every fold
        y[np.flatnonzero(folds == f)[:2]] = [0, 1]
    s = np.round(gen.normal(size=n) + y, decimals)
    ids = np.array([f * 1000 + i // 3 for i, f in enumerate(folds)])   # ~3 rows a subject, in one fold
    return dict(y=y.tolist(), s=s.tolist(), folds=folds.tolist(), ids=ids.tolist())


CASES = {**HAND, **{f"random {seed}": random_case(seed) for seed in range(4)}}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("pooled", [False, True])
def test_the_interval_is_the_papers_formulas_computed_pair_by_pair(name, pooled):
    case = CASES[name]
    ids = case["ids"] if pooled else None
    for level in (0.95, 0.8):
        est, se, fold_aucs, ci = plain_cvauc(case["y"], case["s"], case["folds"], ids=ids, level=level)
        res = cvauc_interval(case["y"], case["s"], case["folds"], pooled=pooled, ids=ids, confidence_level=level)
        assert res.method == ("cvauc_pooled" if pooled else "cvauc")
        assert res.estimate == pytest.approx(est, abs=1e-12)
        assert res.standard_error == pytest.approx(se, abs=1e-12)
        assert res.details["fold_auc"] == pytest.approx(fold_aucs, abs=1e-12)
        assert res.confidence_interval == pytest.approx(ci, abs=1e-12)
        assert res.details["fold_ids"] == sorted(set(case["folds"]))
        assert res.n_samples == len(case["y"]) and res.confidence_level == level


def test_the_hand_built_cases_hold_ties_across_classes():
    """Else the tests above could not tell the influence curve's 1/2 for a tie from cvAUC's 0."""
    for name in ("small, ties", "unequal folds, imbalanced", "one positive per fold"):
        case = CASES[name]
        a = plain_cvauc(case["y"], case["s"], case["folds"])[1]
        b = plain_cvauc(case["y"], case["s"], case["folds"], ties=0.0)[1]
        assert abs(a - b) > 1e-3, name


def test_one_small_case_by_hand():
    """'one positive per fold', p = 2/7. Fold 5: positive 0.4 against 0.4, 0.1, 0.5: AUC 1/2,
    its placement (1/2 + 1 + 0) / 3 = 1/2; the negatives' placements (fractions of the positives
    above them) 1/2, 1, 0: IC 0 (positive) and (1/2 - 1/2) / (5/7), (1 - 1/2) / (5/7),
    (0 - 1/2) / (5/7) = 0, 0.7, -0.7: mean IC^2 (0.49 + 0.49) / 4 = 0.245.
    Fold 9: positive 0.8 against 0.2, 0.8: AUC 3/4, placements 3/4; negatives 1, 1/2: IC
    0, (1 - 3/4) 7/5 = 0.35, (1/2 - 3/4) 7/5 = -0.35: mean IC^2 0.245 / 3 = 0.08166...
    sigma^2 = (0.245 + 0.245 / 3) / 2 = 0.163333..., SE = sqrt(sigma^2 / 7)."""
    case = HAND["one positive per fold"]
    res = cvauc_interval(case["y"], case["s"], case["folds"])
    assert res.estimate == pytest.approx(0.625, abs=1e-15)
    assert res.details["variance"] == pytest.approx((0.245 + 0.245 / 3) / 2, abs=1e-15)
    assert res.standard_error == pytest.approx(math.sqrt((0.245 + 0.245 / 3) / 2 / 7), abs=1e-15)


# --------------------------------------------------------------------------- R's cvAUC

def r_cases():
    data = json.loads((FIXTURES / "cvauc_r.json").read_text(encoding="utf-8"))
    assert data["meta"]["cvAUC"] == "1.1.4"
    return data["cases"]


def _run(case, **kwargs):
    y, s = np.array(case["labels"]), np.array(case["predictions"])
    folds = np.zeros(y.size, dtype=int) if case["folds"] is None else np.array(case["folds"])
    pooled = case["function"] == "ci.pooled.cvAUC"
    res = cvauc_interval(y, s, folds, pooled=pooled, ids=case["ids"] if pooled else None,
                         confidence_level=case["confidence"], **kwargs)
    return y, s, folds, res


def _ties_across_classes(y, s, folds):
    return sum(int(np.sum(s[(folds == f) & (y == 1)][:, None] == s[(folds == f) & (y == 0)][None, :]))
               for f in np.unique(folds))


def test_the_fixture_holds_every_case():
    names = [(c["name"], c["function"]) for c in r_cases()]
    assert names == [("admissions", "ci.cvAUC"), ("admissions", "ci.cvAUC"), ("adherence", "ci.pooled.cvAUC"),
                     ("adherence", "ci.cvAUC"), ("random", "ci.cvAUC"), ("random", "ci.pooled.cvAUC"),
                     ("ties", "ci.cvAUC"), ("ties", "ci.pooled.cvAUC"), ("clipped", "ci.cvAUC"),
                     ("one_fold", "ci.pooled.cvAUC")]


@pytest.mark.parametrize("index", range(10))
def test_against_r_cvauc(index):
    """Where no positive ties a negative inside a fold, cvAUC's numbers to 1e-10; where some do
    (cvAUC's admissions example has 3 such pairs, identical applicants; the 'ties' case many),
    cvAUC's estimate and fold AUCs to 1e-10, and its standard error is the formula with a tie
    counted 0 in the influence curve (to 1e-10), which differs from ours (1/2)."""
    case = r_cases()[index]
    y, s, folds, res = _run(case)
    assert res.estimate == pytest.approx(case["cvAUC"], abs=1e-10)
    assert res.details["fold_auc"] == pytest.approx(case["fold_auc"], abs=1e-10)
    ties = _ties_across_classes(y, s, folds)
    if ties == 0:
        assert res.standard_error == pytest.approx(case["se"], abs=1e-10)
        assert res.confidence_interval == pytest.approx(case["ci"], abs=1e-10)
        return
    assert case["name"] in ("admissions", "ties")
    ids = case["ids"] if case["function"] == "ci.pooled.cvAUC" else None
    yl, sl, fl = y.tolist(), s.tolist(), folds.tolist()
    strict = plain_cvauc(yl, sl, fl, ids=ids, ties=0.0, level=case["confidence"])
    assert strict[1] == pytest.approx(case["se"], abs=1e-10)
    assert strict[3] == pytest.approx(case["ci"], abs=1e-10)
    half = plain_cvauc(yl, sl, fl, ids=ids, level=case["confidence"])
    assert res.standard_error == pytest.approx(half[1], abs=1e-12)
    assert abs(res.standard_error - case["se"]) > 1e-7


def test_cvaucs_examples_as_published_today():
    """The admissions example of ?ci.cvAUC run under R 4.2 (whose sample() differs from the one
    the help page's printed numbers, 0.9046473 and 0.01620238, come from), rounded as R prints."""
    case = r_cases()[0]
    _, _, _, res = _run(case)
    assert round(res.estimate, 7) == 0.8973285
    assert (round(case["se"], 8), round(res.standard_error, 8)) == (0.01651137, 0.01651073)
    pooled = r_cases()[2]
    _, _, _, res = _run(pooled)
    assert (round(res.estimate, 7), round(res.standard_error, 8)) == (0.8635634, 0.01525864)
    assert res.details["n_ids"] == 500 and res.details["rows_per_id"] == pytest.approx(2002 / 500)


def test_the_clipped_case_is_clipped_as_cvauc_clips_it():
    case = next(c for c in r_cases() if c["name"] == "clipped")
    _, _, _, res = _run(case)
    assert case["ci"][1] == 1.0 and res.high == 1.0
    assert res.details["clipped"] and res.details["high_unclipped"] > 1.0
    assert res.details["low_unclipped"] == res.low


# --------------------------------------------------------------------------- one fold: DeLong

@pytest.mark.parametrize("seed", range(5))
def test_one_fold_is_delongs_variance_with_divisors_m_and_k(seed):
    """One fold, one row per subject: SE^2 = sum (V10 - A)^2 / m^2 + sum (V01 - A)^2 / k^2, i.e.
    DeLong's S10 / m + S01 / k with the sample variances' divisors m - 1, k - 1 replaced by m, k:
    SE^2 = (m - 1) / m * S10 / m + (k - 1) / k * S01 / k. No single factor such as (n - 1) / n
    relates the two unless m = k, where SE^2 = (m - 1) / m * DeLong's variance."""
    gen = np.random.default_rng(seed)
    m, k = 7 + seed, 20 - seed
    y = np.r_[np.ones(m), -np.ones(k)]
    s = np.round(gen.normal(size=m + k) + y / 2, 1)
    res = cvauc_interval(y, s, np.zeros(m + k), pooled=True)
    pl = delong_placements(y, s)
    s10, s01 = np.var(pl.positives[0], ddof=1), np.var(pl.negatives[0], ddof=1)
    assert res.standard_error ** 2 == pytest.approx((m - 1) / m * s10 / m + (k - 1) / k * s01 / k, rel=1e-12)
    assert res.estimate == pytest.approx(pl.auc[0], abs=1e-15)
    if seed == 0:
        assert res.standard_error ** 2 != pytest.approx(pl.covariance()[0, 0] * (m + k - 1) / (m + k), rel=1e-3)


def test_one_fold_with_equal_classes_is_delong_times_m_minus_1_over_m():
    gen = np.random.default_rng(7)
    y = np.tile([1, -1], 15)
    s = gen.normal(size=30) + y
    res = cvauc_interval(y, s, ["all"] * 30, pooled=True)
    assert res.standard_error ** 2 == pytest.approx(14 / 15 * delong_placements(y, s).covariance()[0, 0], rel=1e-12)


# --------------------------------------------------------------------------- what pooled means

def test_pooled_without_ids_is_the_averaged_version():
    case = CASES["random 1"]
    a = cvauc_interval(case["y"], case["s"], case["folds"])
    b = cvauc_interval(case["y"], case["s"], case["folds"], pooled=True)
    assert (a.estimate, a.standard_error, a.confidence_interval) == (b.estimate, b.standard_error,
                                                                     b.confidence_interval)
    assert b.details["n_ids"] == len(case["y"]) and b.details["rows_per_id"] == 1.0


def test_pooled_estimates_the_fold_averaged_auc_not_the_auc_of_all_scores():
    case = CASES["random 2"]
    res = cvauc_interval(case["y"], case["s"], case["folds"], pooled=True, ids=case["ids"])
    assert res.estimate == pytest.approx(np.mean(res.details["fold_auc"]), abs=1e-15)
    assert abs(res.estimate - auc_score(case["y"], case["s"])) > 1e-3


def test_clustering_changes_the_standard_error_only():
    case = CASES["random 3"]
    a = cvauc_interval(case["y"], case["s"], case["folds"])
    b = cvauc_interval(case["y"], case["s"], case["folds"], pooled=True, ids=case["ids"])
    assert a.estimate == b.estimate and abs(a.standard_error - b.standard_error) > 1e-4


# --------------------------------------------------------------------------- invariances

@pytest.mark.parametrize("pooled", [False, True])
def test_an_increasing_transform_of_each_folds_scores_changes_nothing(pooled):
    """Both versions average the folds' AUCs, and each fold's placements depend on the order of its
    scores only: a different increasing map in each fold leaves them as they are (the AUC of all
    the scores together does change, so the maps are not trivial)."""
    case = CASES["random 0"]
    s, folds = np.array(case["s"]), np.array(case["folds"])
    maps = {0: np.exp, 1: lambda v: 5 * v - 3, 2: lambda v: v ** 3 + 40, 3: np.arctan}
    t = s.copy()
    for f, g in maps.items():
        t[folds == f] = g(s[folds == f])
    ids = case["ids"] if pooled else None
    a = cvauc_interval(case["y"], s, folds, pooled=pooled, ids=ids)
    b = cvauc_interval(case["y"], t, folds, pooled=pooled, ids=ids)
    assert b.estimate == pytest.approx(a.estimate, abs=1e-14)
    assert b.standard_error == pytest.approx(a.standard_error, abs=1e-14)
    assert abs(auc_score(case["y"], t) - auc_score(case["y"], s)) > 1e-3


@pytest.mark.parametrize("pooled", [False, True])
def test_a_global_increasing_transform_changes_nothing(pooled):
    case = CASES["random 1"]
    s = np.array(case["s"])
    ids = case["ids"] if pooled else None
    a = cvauc_interval(case["y"], s, case["folds"], pooled=pooled, ids=ids)
    b = cvauc_interval(case["y"], 1 / (1 + np.exp(-2 * s)), case["folds"], pooled=pooled, ids=ids)
    assert (b.estimate, b.standard_error) == pytest.approx((a.estimate, a.standard_error), abs=1e-14)


@pytest.mark.parametrize("pooled", [False, True])
def test_relabelling_the_folds_and_ids_and_permuting_the_rows_change_nothing(pooled):
    case = CASES["random 2"]
    y, s = np.array(case["y"]), np.array(case["s"])
    folds, ids = np.array(case["folds"]), np.array(case["ids"])
    ref = cvauc_interval(y, s, folds, pooled=pooled, ids=ids if pooled else None)
    names = {0: "w", 1: "z", 2: "x", 3: "y"}                # a different order of the folds
    perm = np.random.default_rng(3).permutation(y.size)
    new_folds = np.array([names[f] for f in folds])[perm]
    new_ids = (ids * 7 + 13)[perm]
    res = cvauc_interval(y[perm], s[perm], new_folds, pooled=pooled, ids=new_ids if pooled else None)
    assert res.estimate == pytest.approx(ref.estimate, abs=1e-14)
    assert res.standard_error == pytest.approx(ref.standard_error, abs=1e-14)
    assert res.confidence_interval == pytest.approx(ref.confidence_interval, abs=1e-14)
    by_name = dict(zip(res.details["fold_ids"], res.details["fold_auc"]))
    assert [by_name[names[f]] for f in ref.details["fold_ids"]] == pytest.approx(ref.details["fold_auc"], abs=1e-15)
    assert res.details["fold_ids"] == ["w", "x", "y", "z"]


def test_swapping_the_positive_class_gives_one_minus_the_estimate_and_the_same_se():
    """With ties 1/2, F1 = 1 - F0 and the influence curve only changes sign: the same SE. (With
    cvAUC's tie counted 0 in the influence curve this fails when a tie crosses the classes.)"""
    case = CASES["small, ties"]
    labels = np.where(np.array(case["y"]) == 1, "sick", "well")
    a = cvauc_interval(labels, case["s"], case["folds"], pos_label="sick")
    b = cvauc_interval(labels, -np.array(case["s"]), case["folds"], pos_label="well")
    c = cvauc_interval(case["y"], case["s"], case["folds"])
    assert (a.estimate, a.standard_error) == pytest.approx((c.estimate, c.standard_error), abs=1e-15)
    assert (b.estimate, b.standard_error) == pytest.approx((a.estimate, a.standard_error), abs=1e-15)
    d = cvauc_interval(labels, case["s"], case["folds"], pos_label="well")
    assert d.estimate == pytest.approx(1 - a.estimate, abs=1e-15)
    assert d.standard_error == pytest.approx(a.standard_error, abs=1e-15)
    strict_a = plain_cvauc(case["y"], case["s"], case["folds"], ties=0.0)[1]
    strict_d = plain_cvauc([1 - v for v in case["y"]], case["s"], case["folds"], ties=0.0)[1]
    assert abs(strict_a - strict_d) > 1e-3


# --------------------------------------------------------------------------- the result

def test_the_result_and_its_details():
    case = CASES["unequal folds, imbalanced"]
    res = cvauc_interval(case["y"], case["s"], case["folds"], pooled=True, ids=case["ids"], confidence_level=0.9)
    d = res.details
    assert d["n_folds"] == 3 and d["fold_ids"] == ["a", "b", "c"] and d["fold_sizes"].tolist() == [4, 7, 6]
    assert (d["n_positive"], d["n_negative"], d["n_ids"]) == (4, 13, 11)
    assert d["rows_per_id"] == pytest.approx(17 / 11)
    assert str(d["label_encoding"]) == "0 -> -1, 1 -> +1"
    assert res.standard_error == pytest.approx(math.sqrt(d["variance"] / 11), rel=1e-15)
    z = stats.norm.ppf(0.95)
    assert (d["low_unclipped"], d["high_unclipped"]) == pytest.approx(
        (res.estimate - z * res.standard_error, res.estimate + z * res.standard_error), abs=1e-15)
    out = json.loads(json.dumps(res.to_dict()))
    assert out["method"] == "cvauc_pooled" and out["standard_error"] == res.standard_error
    assert out["details"]["n_ids"] == 11


def test_perfectly_separated_folds_give_a_zero_standard_error():
    y = [1, 0, 1, 0, 1, 0, 1, 0]
    s = [0.9, 0.1, 0.8, 0.2, 0.7, 0.3, 0.6, 0.4]
    res = cvauc_interval(y, s, [0, 0, 0, 0, 1, 1, 1, 1])
    assert (res.estimate, res.standard_error, tuple(res.confidence_interval)) == (1.0, 0.0, (1.0, 1.0))


# --------------------------------------------------------------------------- bad input

Y = [1, 0, 1, 0, 1, 0, 1, 0]
S = [0.9, 0.1, 0.4, 0.6, 0.7, 0.3, 0.2, 0.5]
F = [0, 0, 0, 0, 1, 1, 1, 1]


@pytest.mark.parametrize("kwargs, message", [
    (dict(folds=["a", "a", "b", "b", "b", "b", "a", "a"], y_true=[1, 1, 0, 0, 1, 0, 1, 1]),
     "fold 'a' holds one class only (4 row(s), all positive)"),
    (dict(folds=[0, 2, 0, 2, 1, 1, 1, 1]), "fold 0 holds one class only (2 row(s), all positive)"),
    (dict(folds=[3] * 8), "needs at least 2 folds; `folds` holds 1 (3)"),
    (dict(scores=[0.9, np.nan, 0.4, 0.6, 0.7, 0.3, 0.2, 0.5]),
     "`scores` has 1 non-finite score(s); the first is nan at position 1"),
    (dict(scores=[0.9, 0.1, 0.4, 0.6, 0.7, 0.3, 0.2, -np.inf]), "the first is -inf at position 7"),
    (dict(scores=S[:7]), "`scores` must hold one score per label of `y_true` (8); got shape (7,)"),
    (dict(folds=F + [1]), "`folds` must hold one value per label of `y_true` (8); got shape (9,)"),
    (dict(pooled=True, ids=[0, 1, 2]), "`ids` must hold one value per label of `y_true` (8); got shape (3,)"),
    (dict(scores=["a"] * 8), "`scores` must hold numbers (scores)"),
    (dict(confidence_level=1.0), "`confidence_level` must be a number strictly between 0 and 1; got 1.0"),
    (dict(confidence_level=0), "`confidence_level` must be a number strictly between 0 and 1; got 0"),
    (dict(confidence_level=-0.5), "`confidence_level` must be a number strictly between 0 and 1"),
    (dict(ids=[0, 1, 2, 3, 4, 5, 6, 7]), "`ids` is for the pooled repeated measures version: pass pooled=True"),
    (dict(y_true=[1] * 8), "`y_true` must contain exactly two classes; found 1: 1"),
    (dict(pooled=True, ids=[0, 0, 1, 1, 2, 2, 0, 3]), "the rows of id 0 lie in several folds ([0, 1])"),
    (dict(folds=[0, 0, 0, None, 1, 1, 1, 1]), "`folds` has a missing value (None) at position 3"),
    (dict(folds=[0, 0, 0, 0, 1, 1, 1, float("nan")]), "`folds` has a missing value (nan) at position 7"),
    (dict(pooled="yes"), "`pooled` must be True or False; got 'yes'"),
    (dict(y_true=["a", "b"] * 4), "Pass `pos_label=` to say which value is the positive class"),
])
def test_bad_input_is_refused_with_a_clear_message(kwargs, message):
    args = dict(y_true=Y, scores=S, folds=F)
    args.update(kwargs)
    with pytest.raises(ValueError, match=None) as info:
        cvauc_interval(args.pop("y_true"), args.pop("scores"), args.pop("folds"), **args)
    assert message in str(info.value)


def test_the_good_input_of_the_bad_input_tests_is_good():
    """Each bad-input case above changes one thing of this call, which succeeds."""
    res = cvauc_interval(Y, S, F)
    assert res.details["n_folds"] == 2
    assert cvauc_interval(Y, S, F, pooled=True, ids=[0, 0, 1, 1, 2, 2, 3, 3]).details["n_ids"] == 4
