"""cudbound.compare (issue 31, points 1 and 2) against independent references.

References: statsmodels' ``mcnemar`` and binomial tails summed by hand; R's ``mcnemar.test``,
``binom.test`` and pROC's ``roc.test`` (tests/fixtures/make_compare_fixtures.R); the published worked
examples of the paired intervals (Newcombe 1998, Table II; the Cavo et al. 2012 table of Fagerland,
Lydersen & Laake's book, as its companion package contingencytables prints it); a plain O(n^2)
DeLong; mlxtend's 5x2cv tests (tests/fixtures/make_compare_mlxtend_fixture.py) and hand-computed
folds; scipy.stats.t and norm built by hand.
"""
import inspect
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import comb
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import RepeatedStratifiedKFold, ShuffleSplit
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier

from cudbound.auc import delong_placements
from cudbound.compare import (ComparisonResult, Procedure, combined_ftest_5x2cv, compare, corrected_t_test,
                              delong_test, error_difference_interval, get_method, mcnemar, method_names,
                              nested_cv_test, paired_table, paired_ttest_5x2cv, register, unregister, wald_cv_test)
from cudbound.results import NoConfidenceIntervalError

FIXTURES = Path(__file__).parents[1] / "fixtures"


def predictions(n11, b, c, n22):
    """Labels and two prediction vectors whose paired table is [[n11, b], [c, n22]] (A wrong/right
    by B wrong/right): every label is 1, a wrong prediction 0."""
    n = n11 + b + c + n22
    y = np.ones(n, dtype=int)
    y[:1] = 0                                   # two classes in y_true: flip the first point's label...
    a_wrong = np.r_[np.ones(n11 + b, bool), np.zeros(c + n22, bool)]
    b_wrong = np.r_[np.ones(n11, bool), np.zeros(b, bool), np.ones(c, bool), np.zeros(n22, bool)]
    pa = np.where(a_wrong, 1 - y, y)            # ...and keep each prediction's right/wrong status
    pb = np.where(b_wrong, 1 - y, y)
    return y, pa, pb


def test_predictions_helper_makes_the_table():
    assert paired_table(*predictions(3, 4, 5, 6)).tolist() == [[3, 4], [5, 6]]


# --------------------------------------------------------------------------- McNemar

def _binom_tail(k, N):
    """P(X <= k), X ~ Bin(N, 1/2), summed by hand."""
    return sum(comb(N, j, exact=True) for j in range(k + 1)) / 2 ** N


@pytest.mark.parametrize("table", [(59, 6, 16, 80), (36, 12, 2, 0), (10, 5, 5, 10), (3, 1, 0, 2), (20, 30, 9, 41),
                                   (0, 7, 1, 0), (5, 0, 9, 5)])
def test_mcnemar_against_statsmodels_and_binomial_tails(table):
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
    y, pa, pb = predictions(*table)
    b, c = table[1], table[2]
    m = np.array([[table[0], b], [c, table[3]]])
    exact = mcnemar(y, pa, pb)
    ref = sm_mcnemar(m, exact=True)
    assert exact.statistic == ref.statistic == min(b, c)
    assert exact.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    assert exact.pvalue == pytest.approx(min(1.0, 2 * _binom_tail(min(b, c), b + c)), rel=1e-12)
    assert exact.estimate == pytest.approx((b - c) / sum(table))
    raw = mcnemar(y, pa, pb, exact=False, correction=False)
    ref = sm_mcnemar(m, exact=False, correction=False)
    assert (raw.statistic, raw.pvalue) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-12)
    if abs(b - c) >= 1:       # statsmodels does not floor |b - c| - 1 at 0 (R does, and so do we)
        cc = mcnemar(y, pa, pb, exact=False)
        ref = sm_mcnemar(m, exact=False, correction=True)
        assert (cc.statistic, cc.pvalue) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-12)


def test_mcnemar_against_r():
    """R 4.2.2: mcnemar.test (correct = TRUE / FALSE) and binom.test (two.sided, less, greater)."""
    rows = pd.read_csv(FIXTURES / "compare_mcnemar.csv")
    for row in rows.itertuples():
        y, pa, pb = predictions(row.n11, row.b, row.c, row.n22)
        cc = mcnemar(y, pa, pb, exact=False)
        raw = mcnemar(y, pa, pb, exact=False, correction=False)
        if row.b + row.c == 0:        # R gives NaN; documented here: no discordant pair, p-value 1
            assert math.isnan(row.p_cc) and (cc.statistic, cc.pvalue, raw.pvalue) == (0.0, 1.0, 1.0)
        else:
            assert (cc.statistic, cc.pvalue) == pytest.approx((row.chi2_cc, row.p_cc), rel=1e-12)
            assert (raw.statistic, raw.pvalue) == pytest.approx((row.chi2, row.p), rel=1e-12)
        for alternative, column in (("two-sided", "exact_two_sided"), ("less", "exact_b_less"),
                                    ("greater", "exact_b_greater")):
            res = mcnemar(y, pa, pb, alternative=alternative)
            assert res.pvalue == pytest.approx(getattr(row, column), rel=1e-12), (row, alternative)


def test_mcnemar_floors_the_correction_as_r_does():
    y, pa, pb = predictions(10, 5, 5, 10)
    res = mcnemar(y, pa, pb, exact=False)
    assert (res.statistic, res.pvalue) == (0.0, 1.0)


def test_mcnemar_mid_p_against_the_book_and_by_hand():
    """Cavo et al. (2012): the McNemar tests of Fagerland, Lydersen & Laake's book (contingencytables
    prints P = 0.052479 exact, 0.034690 mid-p, 0.033006 asymptotic, 0.055009 with correction)."""
    y, pa, pb = predictions(59, 6, 16, 80)
    assert round(mcnemar(y, pa, pb).pvalue, 6) == 0.052479
    assert round(mcnemar(y, pa, pb, mid_p=True).pvalue, 6) == 0.034690
    assert round(mcnemar(y, pa, pb, exact=False, correction=False).pvalue, 6) == 0.033006
    assert round(mcnemar(y, pa, pb, exact=False).pvalue, 6) == 0.055009
    # by hand: 2 P(X <= 6) - P(X = 6), X ~ Bin(22, 1/2); b = c: 1 - P(X = k) / 2
    assert mcnemar(y, pa, pb, mid_p=True).pvalue == pytest.approx(
        2 * _binom_tail(6, 22) - comb(22, 6, exact=True) / 2 ** 22, rel=1e-12)
    y, pa, pb = predictions(4, 3, 3, 4)
    assert mcnemar(y, pa, pb, mid_p=True).pvalue == pytest.approx(1 - 0.5 * comb(6, 3, exact=True) / 64, rel=1e-12)


def test_mcnemar_without_discordant_pairs_is_p_one():
    y = np.array([0, 1, 1, 0, 1])
    for kwargs in ({}, {"mid_p": True}, {"exact": False}, {"exact": False, "correction": False}):
        res = mcnemar(y, y, y, **kwargs)
        assert (res.estimate, res.statistic, res.pvalue) == (0.0, 0.0, 1.0)


def test_mcnemar_has_no_interval_and_says_why():
    y, pa, pb = predictions(3, 4, 1, 2)
    res = mcnemar(y, pa, pb)
    assert not res.has_confidence_interval and res.confidence_level is None
    with pytest.raises(NoConfidenceIntervalError, match="error_difference_interval"):
        res.confidence_interval
    assert res.to_dict()["low"] is None and "error_difference_interval" in res.to_dict()["no_interval_reason"]


# --------------------------------------------------------------------------- paired intervals

@pytest.mark.parametrize("table, low, high", [
    ((36, 12, 2, 0), 0.0569, 0.3404), ((18, 12, 2, 18), 0.0562, 0.3290), ((53, 0, 0, 1), -0.0729, 0.0729),
    ((0, 30, 0, 0), 0.8395, 1.0)])
def test_newcombe_against_newcombe_1998_table_ii(table, low, high):
    """Newcombe (1998), Table II, method 10, examples (a)-(d): (e, f, g, h) with theta = (f - g) / n."""
    res = error_difference_interval(*predictions(*table), method="newcombe")
    assert (round(res.low, 4), round(res.high, 4)) == (low, high)


@pytest.mark.parametrize("method, low, high", [("tango", -0.1240, -0.0054), ("newcombe", -0.1186, -0.0046),
                                               ("agresti_min", -0.1182, -0.0045)])
def test_paired_intervals_against_the_cavo_example(method, low, high):
    """Cavo et al. (2012), n = [[59, 6], [16, 80]]: estimate -0.0621 and the intervals printed by
    contingencytables (Fagerland, Lydersen & Laake 2017, chapter 8; the examples of their 2014 paper)."""
    res = error_difference_interval(*predictions(59, 6, 16, 80), method=method)
    assert round(res.estimate, 4) == -0.0621
    assert (round(res.low, 4), round(res.high, 4)) == (low, high)


def test_tango_and_newcombe_at_the_edges():
    """contingencytables: Tango on n12 = 3 alone (estimate 1): -0.1230 to 1; Newcombe on [[1, 0], [0, 1]]: +/-0.5734."""
    res = error_difference_interval(*predictions(0, 3, 0, 0))
    assert (round(res.low, 4), res.high, res.estimate) == (-0.1230, 1.0, 1.0)
    res = error_difference_interval(*predictions(0, 0, 3, 0))
    assert (res.low, round(res.high, 4)) == (-1.0, 0.1230)
    res = error_difference_interval(*predictions(1, 0, 0, 1), method="newcombe")
    assert (round(res.low, 4), round(res.high, 4)) == (-0.5734, 0.5734)


def test_tango_agrees_with_the_uncorrected_mcnemar_test():
    """The score statistic at 0 is McNemar's z, so 0 is outside Tango's interval exactly when McNemar's
    uncorrected chi-square test rejects at that level."""
    gen = np.random.default_rng(5)
    for _ in range(40):
        table = tuple(int(v) for v in gen.integers(0, 15, size=4))
        if table[1] + table[2] == 0:
            continue
        data = predictions(*table)
        res = error_difference_interval(*data, confidence_level=0.9)
        chi = mcnemar(*data, exact=False, correction=False)
        assert res.statistic ** 2 == pytest.approx(chi.statistic, rel=1e-12)
        assert res.pvalue == pytest.approx(chi.pvalue, rel=1e-10)
        assert (res.low > 0 or res.high < 0) == (chi.pvalue < 0.1)


def _tango_score_by_likelihood(delta, n11, b, c, n22):
    """Tango's score statistic at ``delta`` with P(A right, B wrong) maximised numerically: the
    multinomial log-likelihood under p12 = p21 + delta, profiled over p11 and p22
    (b log(p21 + delta) + c log p21 + (n11 + n22) log(1 - 2 p21 - delta)), by scipy's bounded
    search rather than the closed form of the package."""
    from scipy.optimize import minimize_scalar
    n = n11 + b + c + n22
    lo, hi = max(0.0, -delta), (1.0 - delta) / 2.0

    def minus_loglik(p21):
        terms = [(b, p21 + delta), (c, p21), (n11 + n22, 1.0 - 2.0 * p21 - delta)]
        return -sum(k * math.log(v) for k, v in terms if k)
    p21 = minimize_scalar(minus_loglik, bounds=(lo + 1e-15, hi - 1e-15), method="bounded",
                          options={"xatol": 1e-13}).x
    return (b - c - n * delta) / math.sqrt(n * (2.0 * p21 + delta * (1.0 - delta)))


@pytest.mark.parametrize("table", [(59, 6, 16, 80), (1, 1, 7, 12), (10, 9, 1, 10), (0, 4, 0, 26), (12, 3, 3, 12)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_tango_limits_are_where_the_score_test_turns(table, level):
    """Tango (1998): the limits are the deltas where the score statistic, with the constrained
    MLE of p21, equals -/+ z. Checked with that MLE found numerically, not by Tango's closed form."""
    res = error_difference_interval(*predictions(*table), confidence_level=level)
    z = stats.norm.isf((1 - level) / 2)
    for limit, target in ((res.low, z), (res.high, -z)):
        if abs(limit) < 1.0:
            assert _tango_score_by_likelihood(limit, *table) == pytest.approx(target, abs=1e-6)


def test_mcnemar_one_sided_statistic_is_b():
    """One-sided, the exact test is R's binom.test(b, b + c): its statistic is b, not min(b, c)."""
    y, pa, pb = predictions(3, 7, 2, 8)
    assert mcnemar(y, pa, pb).statistic == 2
    assert mcnemar(y, pa, pb, alternative="greater").statistic == 7
    assert mcnemar(y, pb, pa, alternative="less").statistic == 2
    assert mcnemar(y, pa, pb, alternative="greater").pvalue == pytest.approx(stats.binom.sf(6, 9, 0.5), rel=1e-12)


def test_predicted_labels_may_be_any_two_values():
    """Right or wrong does not depend on which class is positive: string labels, {1, 2} and pandas
    categoricals give the table of 0/1 labels; DeLong, where the positive class matters, takes
    ``pos_label``."""
    y, pa, pb = predictions(3, 7, 2, 8)
    names = np.array(["benign", "malignant"])
    expected = error_difference_interval(y, pa, pb)
    for yy, aa, bb in ((names[y], names[pa], names[pb]), (y + 1, pa + 1, pb + 1),
                       (pd.Series(names[y], dtype="category"), pd.Series(names[pa]), list(names[pb]))):
        assert paired_table(yy, aa, bb).tolist() == [[3, 7], [2, 8]]
        assert mcnemar(yy, aa, bb).pvalue == mcnemar(y, pa, pb).pvalue
        assert error_difference_interval(yy, aa, bb).confidence_interval == expected.confidence_interval
    y = np.r_[np.zeros(10, int), np.ones(10, int)]
    s = y + np.random.default_rng(2).normal(size=y.size)
    with pytest.raises(ValueError, match="pos_label"):
        delong_test(names[y], s, -s)
    assert delong_test(names[y], s, -s, pos_label="malignant").estimate == delong_test(y, s, -s).estimate
    assert delong_test(names[y], s, -s, pos_label="benign").estimate == delong_test(1 - y, s, -s).estimate


# --------------------------------------------------------------------------- DeLong

def _delong_quadratic(labels, scores):
    """DeLong et al. (1988) by the m x n comparisons: placements and covariance, a plain reference."""
    pos, neg = scores[:, labels > 0], scores[:, labels < 0]
    psi = (pos[:, :, None] > neg[:, None, :]) + 0.5 * (pos[:, :, None] == neg[:, None, :])
    v10, v01 = psi.mean(axis=2), psi.mean(axis=1)
    S = np.cov(v10) / pos.shape[1] + np.cov(v01) / neg.shape[1]
    return psi.mean(axis=(1, 2)), v10, v01, S


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_delong_against_the_quadratic_algorithm_with_ties(seed):
    gen = np.random.default_rng(seed)
    n = 80
    labels = np.where(gen.random(n) < 0.4, 1.0, -1.0)
    labels[:2], labels[2:4] = 1.0, -1.0
    scores = np.vstack([gen.integers(0, 6, n) + (labels > 0), gen.integers(0, 4, n) * 1.0])   # many ties
    auc, v10, v01, S = _delong_quadratic(labels, scores)
    p = delong_placements(labels, scores)
    assert np.allclose(p.auc, auc, atol=1e-14) and np.allclose(p.positives, v10) and np.allclose(p.negatives, v01)
    assert np.allclose(p.covariance(), S, rtol=1e-12)
    res = delong_test(labels, scores[0], scores[1])
    var = S[0, 0] + S[1, 1] - 2 * S[0, 1]
    z = (auc[0] - auc[1]) / math.sqrt(var)
    assert res.estimate == pytest.approx(auc[0] - auc[1], abs=1e-14)
    assert res.statistic == pytest.approx(z, rel=1e-10)
    assert res.pvalue == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-10)
    half = stats.norm.isf(0.025) * math.sqrt(var)
    assert res.confidence_interval == pytest.approx((auc[0] - auc[1] - half, auc[0] - auc[1] + half), abs=1e-12)


def test_delong_against_proc_on_asah():
    """pROC 1.18.0's roc.test(method = "delong") on its aSAH data (Robin et al. 2011): the published
    s100b vs wfns comparison prints Z = -2.209, p-value = 0.02718, AUCs 0.7313686 and 0.8236789."""
    data = pd.read_csv(FIXTURES / "compare_asah.csv")
    rows = pd.read_csv(FIXTURES / "compare_delong.csv")
    first = rows.iloc[0]
    res = delong_test(data.outcome, data[first.a], data[first.b])
    assert (round(res.statistic, 3), round(res.pvalue, 5)) == (-2.209, 0.02718)
    assert (round(res.details["auc_a"], 7), round(res.details["auc_b"], 7)) == (0.7313686, 0.8236789)
    for row in rows.itertuples():
        alt = {"two.sided": "two-sided"}.get(row.alternative, row.alternative)
        res = delong_test(data.outcome, data[row.a], data[row.b], alternative=alt)
        assert res.details["auc_a"] == pytest.approx(row.auc_a, abs=1e-12)
        assert res.details["auc_b"] == pytest.approx(row.auc_b, abs=1e-12)
        assert res.statistic == pytest.approx(row.z, rel=1e-9)
        assert res.pvalue == pytest.approx(row.pvalue, rel=1e-9)
        assert res.confidence_interval == pytest.approx((row.low, row.high), abs=1e-12)
    for row in pd.read_csv(FIXTURES / "compare_delong_var.csv").itertuples():
        labels = np.where(data.outcome == 1, 1.0, -1.0)
        assert delong_placements(labels, data[row.marker]).covariance()[0, 0] == pytest.approx(row.var, rel=1e-10)


def test_delong_is_unchanged_by_increasing_transforms_of_the_scores():
    gen = np.random.default_rng(11)
    y = gen.integers(0, 2, 50)
    sa, sb = y + gen.normal(size=50), y + gen.integers(-3, 3, 50) / 4     # ties in B, exact in binary
    ref = delong_test(y, sa, sb)
    for fa, fb in ((np.exp, lambda v: 1 / (1 + np.exp(-v))), (lambda v: 3 * v - 7, lambda v: v ** 3),
                   (lambda v: stats.rankdata(v), np.arctan)):
        res = delong_test(y, fa(sa), fb(sb))
        assert (res.estimate, res.statistic, res.pvalue) == pytest.approx((ref.estimate, ref.statistic, ref.pvalue),
                                                                          rel=1e-12)


def test_delong_placements_take_100000_points_in_well_under_a_second():
    import time
    gen = np.random.default_rng(0)
    labels = np.where(gen.random(100_000) < 0.3, 1.0, -1.0)
    scores = np.round(gen.normal(size=(2, 100_000)) + (labels > 0), 2)
    t0 = time.perf_counter()
    delong_placements(labels, scores).covariance()
    assert time.perf_counter() - t0 < 1.0


# --------------------------------------------------------------------------- learning procedures

class SignRule(ClassifierMixin, BaseEstimator):
    """Predicts sign(x_0) whatever it is trained on."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.where(np.asarray(X)[:, 0] > 0, 1, -1)


class AlwaysPositive(SignRule):
    def predict(self, X):
        return np.ones(np.asarray(X).shape[0], dtype=int)


TINY_X = np.array([-3, -2, -1, -0.5, 0.5, 1, 2, 3])[:, None]
TINY_Y = np.array([-1, -1, 1, -1, 1, 1, -1, 1])
# SignRule errs at points 2 and 6, AlwaysPositive at 0, 1, 3 and 6.
TINY_FOLDS = np.array([[1, 0, 1, 0, 1, 0, 1, 0],    # fold 0 = {1, 3, 5, 7}: (0 - 2) / 4 = -0.5; fold 1: (2 - 2) / 4 = 0
                       [0, 0, 0, 0, 1, 1, 1, 1],    # {0, 1, 2, 3}: (1 - 3) / 4 = -0.5; {4, ..., 7}: (1 - 1) / 4 = 0
                       [1, 1, 0, 0, 1, 1, 0, 0],    # {2, 3, 6, 7}: (2 - 2) / 4 = 0; {0, 1, 4, 5}: -2 / 4 = -0.5
                       [0, 1, 1, 0, 0, 1, 1, 0],    # {0, 3, 4, 7}: -0.5; {1, 2, 5, 6}: 0
                       [0, 1, 0, 1, 0, 1, 0, 1]])   # {0, 2, 4, 6}: 0; {1, 3, 5, 7}: -0.5


def test_5x2cv_by_hand():
    """Each repetition: differences {0, -0.5}, mean -0.25, s_i^2 = 2 (0.25)^2 = 0.125; p_1^(1) = -0.5, so
    t = -0.5 / sqrt(0.125) = -sqrt(2) on 5 df; f = (5 (0.5)^2) / (2 (5 0.125)) = 1 on (10, 5) df."""
    t = paired_ttest_5x2cv(SignRule(), AlwaysPositive(), TINY_X, TINY_Y, cv=TINY_FOLDS)
    assert t.details["differences"].tolist() == [[-0.5, 0], [-0.5, 0], [0, -0.5], [-0.5, 0], [0, -0.5]]
    assert t.statistic == pytest.approx(-math.sqrt(2), rel=1e-14) and t.estimate == -0.25
    assert t.pvalue == pytest.approx(2 * stats.t.sf(math.sqrt(2), 5), rel=1e-12)
    # Student's closed form for odd df = 5: P(|T| > t) = 1 - (2/pi) [theta + sin cos (1 + (2/3) cos^2)], theta = atan(t / sqrt 5)
    theta = math.atan(math.sqrt(2) / math.sqrt(5))
    closed = 1 - 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * (1 + 2 / 3 * math.cos(theta) ** 2))
    assert t.pvalue == pytest.approx(closed, rel=1e-12)
    f = combined_ftest_5x2cv(SignRule(), AlwaysPositive(), TINY_X, TINY_Y, cv=TINY_FOLDS)
    assert f.statistic == pytest.approx(1.0, rel=1e-14)
    assert f.pvalue == pytest.approx(stats.f.sf(1.0, 10, 5), rel=1e-12)


def test_corrected_t_by_hand_on_the_tiny_folds():
    """The ten differences: five -0.5, five 0; mean -0.25, s^2 = 10 (0.25)^2 / 9; n2/n1 = 4/4;
    se = sqrt((1/10 + 1) s^2); t on 9 df, interval mean +/- t_{9, .975} se (scipy.stats.t by hand)."""
    res = corrected_t_test(SignRule(), AlwaysPositive(), TINY_X, TINY_Y, cv=TINY_FOLDS)
    s2 = 10 * 0.25 ** 2 / 9
    se = math.sqrt((1 / 10 + 1) * s2)
    assert res.details["test_train_ratio"] == 1.0 and res.details["df"] == 9
    assert res.statistic == pytest.approx(-0.25 / se, rel=1e-13)
    assert res.pvalue == pytest.approx(2 * stats.t.cdf(-0.25 / se, 9), rel=1e-12)
    q = stats.t.ppf(0.975, 9)
    assert res.confidence_interval == pytest.approx((-0.25 - q * se, -0.25 + q * se), rel=1e-12)


def test_wald_cv_by_hand():
    """h = l_A - l_B = (-1, -1, 1, -1, 0, 0, 0, 0): R = -0.25, sigma^2 = 3.5 / 8, se = sqrt(sigma^2 / 8)."""
    res = wald_cv_test(SignRule(), AlwaysPositive(), TINY_X, TINY_Y, cv=TINY_FOLDS[1])
    assert res.details["loss_differences"].tolist() == [-1, -1, 1, -1, 0, 0, 0, 0]
    se = math.sqrt(3.5 / 8 / 8)
    assert res.estimate == -0.25 and res.statistic == pytest.approx(-0.25 / se, rel=1e-13)
    assert res.pvalue == pytest.approx(2 * stats.norm.cdf(-0.25 / se), rel=1e-12)
    assert res.confidence_interval == pytest.approx((-0.25 - 1.959963984540054 * se, -0.25 + 1.959963984540054 * se))


@pytest.mark.parametrize("case", [0, 1])
def test_5x2cv_against_mlxtend(case):
    """mlxtend 0.25.0 on the same halvings: its accuracy difference is minus our error difference."""
    ref = json.loads((FIXTURES / "compare_mlxtend.json").read_text())
    X, y, c = np.array(ref["X"]), np.array(ref["y"]), ref["cases"][case]
    folds = np.array(c["folds"])
    t = paired_ttest_5x2cv(GaussianNB(), KNeighborsClassifier(n_neighbors=3), X, y, cv=folds)
    assert t.statistic == pytest.approx(-c["t"], rel=1e-12) and t.pvalue == pytest.approx(c["p_t"], rel=1e-12)
    f = combined_ftest_5x2cv(GaussianNB(), KNeighborsClassifier(n_neighbors=3), X, y, cv=folds)
    assert f.statistic == pytest.approx(c["f"], rel=1e-12) and f.pvalue == pytest.approx(c["p_f"], rel=1e-12)


def test_a_procedure_against_itself_is_no_difference():
    X, y = TINY_X, TINY_Y
    for res in compare(SignRule(), SignRule(), X, y, methods="ttest_5x2cv,ftest_5x2cv,corrected_t,wald_cv",
                       rng=0, cv=2):
        assert (res.estimate, res.statistic, res.pvalue) == (0.0, 0.0, 1.0), res


# --------------------------------------------------------------------------- swapping A and B

def _data(n=40, seed=3):
    gen = np.random.default_rng(seed)
    X = gen.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.6 * X[:, 1] ** 2 + 0.7 * gen.normal(size=n) > 0.3, 1, 0)
    return X, y


SWAPPABLE = [
    ("ttest_5x2cv", {}), ("ftest_5x2cv", {}), ("corrected_t", {"repeats": 3}), ("wald_cv", {"cv": 5}),
    ("nested_cv", {"cv": 4, "repeats": 2}), ("corrected_t", {"cv": ShuffleSplit(6, test_size=0.25, random_state=0)}),
]


@pytest.mark.parametrize("name, options", SWAPPABLE, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SWAPPABLE)])
def test_procedure_comparisons_swap_sign_and_keep_the_p_value(name, options):
    X, y = _data()
    a, b = Procedure(), KNeighborsClassifier(n_neighbors=3)
    ab = compare(a, b, X, y, methods=[name], rng=4, **options)[0]
    ba = compare(b, a, X, y, methods=[name], rng=4, **options)[0]
    assert ab.estimate == pytest.approx(-ba.estimate, abs=1e-15)
    assert ab.pvalue == pytest.approx(ba.pvalue, rel=1e-12)
    if name != "ftest_5x2cv":
        assert ab.statistic == pytest.approx(-ba.statistic, rel=1e-12)
    if ab.has_confidence_interval:
        assert ab.confidence_interval == pytest.approx((-ba.high, -ba.low), abs=1e-14)


@pytest.mark.parametrize("alternative", ["two-sided", "less"])
def test_out_of_fold_comparisons_swap_sign_and_keep_the_p_value(alternative):
    """compare() on out-of-fold predictions: B against A flips every estimate and interval and keeps
    the p-value (one-sided: 'less' for A against B is 'greater' for B against A)."""
    from sklearn.linear_model import LogisticRegression
    X, y = _data(n=30)
    methods = ["mcnemar", "tango", "newcombe", "agresti_min", "delong"]
    flipped = {"two-sided": "two-sided", "less": "greater"}[alternative]
    ab = compare(LogisticRegression(), Procedure(basis="poly:2"), X, y, methods=methods, rng=5, cv=5,
                 alternative=alternative)
    ba = compare(Procedure(basis="poly:2"), LogisticRegression(), X, y, methods=methods, rng=5, cv=5,
                 alternative=flipped)
    for r, s in zip(ab, ba):
        assert r.estimate == pytest.approx(-s.estimate, abs=1e-15), r.method
        assert r.pvalue == s.pvalue or r.pvalue == pytest.approx(s.pvalue, rel=1e-12), r.method
        if r.has_confidence_interval:
            assert r.confidence_interval == pytest.approx((-s.high, -s.low), abs=1e-12), r.method


def test_results_do_not_depend_on_the_order_of_methods():
    X, y = _data(n=30)
    methods = ["mcnemar", "wald_cv", "delong", "corrected_t", "ttest_5x2cv"]
    forward = compare(GaussianNB(), Procedure(), X, y, methods=methods, rng=7, repeats=2)
    backward = compare(GaussianNB(), Procedure(), X, y, methods=methods[::-1], rng=7, repeats=2)
    assert [r.method for r in backward] == methods[::-1]
    for r, s in zip(forward, backward[::-1]):
        assert (r.estimate, r.statistic, r.pvalue) == (s.estimate, s.statistic, s.pvalue), r.method


def test_prediction_comparisons_swap_sign_and_keep_the_p_value():
    gen = np.random.default_rng(8)
    y = gen.integers(0, 2, 60)
    pa = np.where(gen.random(60) < 0.2, 1 - y, y)
    pb = np.where(gen.random(60) < 0.35, 1 - y, y)
    sa, sb = y + gen.normal(size=60), y + 2 * gen.normal(size=60)
    pairs = [(lambda a, b, **k: mcnemar(y, a, b, **k), pa, pb, kw) for kw in
             ({}, {"mid_p": True}, {"exact": False}, {"exact": False, "correction": False})]
    pairs += [(lambda a, b, **k: error_difference_interval(y, a, b, **k), pa, pb, {"method": m})
              for m in ("tango", "newcombe", "agresti_min")]
    pairs += [(lambda a, b, **k: delong_test(y, a, b, **k), sa, sb, {})]
    for f, a, b, kw in pairs:
        ab, ba = f(a, b, **kw), f(b, a, **kw)
        assert ab.estimate == pytest.approx(-ba.estimate, abs=1e-15)
        if ab.pvalue is not None:
            assert ab.pvalue == pytest.approx(ba.pvalue, rel=1e-12)
        if ab.has_confidence_interval:
            assert ab.confidence_interval == pytest.approx((-ba.high, -ba.low), abs=1e-12), kw
    one = mcnemar(y, pa, pb, alternative="less")
    assert one.pvalue == pytest.approx(mcnemar(y, pb, pa, alternative="greater").pvalue, rel=1e-12)


# --------------------------------------------------------------------------- the registry and compare()

@pytest.fixture
def ctrl_c_comparison():
    """A comparison that raises KeyboardInterrupt (Ctrl-C while it runs), registered as "ctrl_c"."""
    def stop(pair, *, confidence_level, alternative, rng):
        raise KeyboardInterrupt
    register("ctrl_c", stop, "raises KeyboardInterrupt")
    yield "ctrl_c"
    unregister("ctrl_c")


def test_ctrl_c_keeps_the_comparisons_that_finished(ctrl_c_comparison):
    """Ctrl-C during the third of four comparisons: ComparisonsInterrupted (a KeyboardInterrupt) carries
    the two that finished, each equal to its run alone, the running one's name and the one not started;
    it survives pickling (a worker process) with its fields."""
    import pickle

    from cudbound.compare import ComparisonsInterrupted
    X, y = _data(n=30)
    with pytest.raises(ComparisonsInterrupted) as info:
        compare(GaussianNB(), Procedure(), X, y, methods=["mcnemar", "wald_cv", ctrl_c_comparison, "tango"], rng=7,
                cv=5)
    stop = info.value
    assert isinstance(stop, KeyboardInterrupt)
    assert [r.method for r in stop.results] == ["mcnemar", "wald_cv"]
    assert stop.method == "ctrl_c" and stop.pending == ("tango",)
    for r in stop.results:
        alone = compare(GaussianNB(), Procedure(), X, y, methods=[r.method], rng=7, cv=5)[0]
        assert (r.estimate, r.statistic, r.pvalue) == (alone.estimate, alone.statistic, alone.pvalue), r.method
    assert "interrupted during 'ctrl_c'" in str(stop) and "tango" in str(stop)
    again = pickle.loads(pickle.dumps(stop))
    assert type(again) is ComparisonsInterrupted and again.pending == ("tango",) and again.method == "ctrl_c"
    assert [r.estimate for r in again.results] == [r.estimate for r in stop.results]


def test_one_progress_bar_over_the_comparisons_names_each(capsys):
    """progress=True: one bar on stderr over the comparisons (2/2 at the end, each named while it runs);
    progress=False and the default off a terminal: nothing on stderr; the numbers do not change."""
    X, y = _data(n=30)
    shown = compare(GaussianNB(), Procedure(), X, y, methods=["mcnemar", "wald_cv"], rng=7, cv=5, progress=True)
    err = capsys.readouterr().err
    assert "2/2" in err and "compare: wald_cv" in err
    quiet = compare(GaussianNB(), Procedure(), X, y, methods=["mcnemar", "wald_cv"], rng=7, cv=5, progress=False)
    default = compare(GaussianNB(), Procedure(), X, y, methods=["mcnemar", "wald_cv"], rng=7, cv=5)
    assert capsys.readouterr().err == ""
    for a, b, c in zip(shown, quiet, default):
        assert a.estimate == b.estimate == c.estimate and a.pvalue == b.pvalue == c.pvalue


def test_the_registry_names_the_comparisons():
    assert method_names() == ("mcnemar", "tango", "newcombe", "agresti_min", "delong", "ttest_5x2cv", "ftest_5x2cv",
                              "corrected_t", "wald_cv", "nested_cv", "cud")
    assert get_method("corrected_t").options() == ["cv", "repeats"]
    with pytest.raises(ValueError, match="unknown comparison 'bogus'"):
        get_method("bogus")

    def same_error(pair, *, confidence_level, alternative, rng):
        return ComparisonResult(method="zero", estimate=0.0, n_samples=pair.n, pvalue=1.0, no_interval_reason="a stub")
    register("zero", same_error, "always no difference")
    try:
        with pytest.raises(ValueError, match="already registered"):
            register("zero", same_error, "again")
        X, y = _data()
        before = compare(GaussianNB(), Procedure(), X, y, rng=1)
        after = compare(GaussianNB(), Procedure(), X, y, methods=["zero", *[r.method for r in before]], rng=1)
        assert after[0].method == "zero"
        assert [r.to_dict()["low"] for r in after[1:]] == [r.to_dict()["low"] for r in before]   # streams by name
    finally:
        unregister("zero")


def test_each_comparison_states_the_difference_it_addresses():
    """The tests on one set of predictions address the two fitted classifiers' difference, those on refits
    over repeated splits the procedures' expected one: docs/compare.md's table, one entry per method."""
    from cudbound.compare import TARGETS
    kinds = {m: get_method(m).target for m in method_names()}
    assert {m for m, k in kinds.items() if k == "conditional"} == {"mcnemar", "tango", "newcombe", "agresti_min",
                                                                   "delong", "cud"}
    assert {m for m, k in kinds.items() if k == "expected"} == {"ttest_5x2cv", "ftest_5x2cv", "corrected_t",
                                                                "wald_cv", "nested_cv"}
    assert set(kinds.values()) == set(TARGETS)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "compare.md").read_text()
    table = doc[doc.index("## Which method answers which question"):doc.index("## Notation")]
    rows = [line.split("|")[1:-1] for line in table.splitlines() if line.startswith("| ") and "`" in line][1:]
    assert len(rows) == 6                      # the header left out
    for question, _, _, names in rows:         # the question names the target: two procedures, or two fits
        want = "expected" if "procedures" in question or "expected" in question else "conditional"
        listed = [w.strip("`(),;") for w in names.split() if w.strip("`(),;") in kinds]
        assert listed and all(kinds[w] == want for w in listed), question
    assert {w.strip("`(),;") for *_, names in rows for w in names.split()} >= set(kinds)   # every method in it

    def stub(pair, *, confidence_level, alternative, rng):
        return ComparisonResult(method="stub", estimate=0.0, n_samples=pair.n, pvalue=1.0, no_interval_reason="stub")
    with pytest.raises(ValueError, match="`target` must be one of"):
        register("stub", stub, "a stub", target="marginal")
    assert "stub" not in method_names()
    register("stub", stub, "a stub")
    try:
        assert get_method("stub").target is None
    finally:
        unregister("stub")


def test_compare_routes_options_and_refuses_unknown_ones():
    X, y = _data()
    res = compare(GaussianNB(), Procedure(loss="hinge"), X, y, methods="corrected_t, wald_cv", rng=0, cv=4,
                  corrected_t_options={"repeats": 2})
    assert res[0].details["n_splits"] == 8 and res[1].details["k"] == 4
    with pytest.raises(ValueError, match="unknown option"):
        compare(GaussianNB(), Procedure(), X, y, methods=["wald_cv"], repeats=3)
    with pytest.raises(ValueError, match=r"unknown comparison\(s\) bogus in `methods`"):
        compare(GaussianNB(), Procedure(), X, y, methods=["wald_cv", "bogus"])
    with pytest.raises(ValueError, match=r"`methods` lists \['wald_cv'\] more than once"):
        compare(GaussianNB(), Procedure(), X, y, methods="wald_cv,WALD_CV")
    with pytest.raises(ValueError,
                       match=r"unknown option\(s\) \['repeats'\] for comparison 'wald_cv' in `wald_cv_options`"):
        compare(GaussianNB(), Procedure(), X, y, methods=["wald_cv"], wald_cv_options={"repeats": 2})


def test_a_package_procedure_from_a_dict_and_a_splitter():
    X, y = _data()
    res = corrected_t_test({"basis": "poly:2"}, Procedure(), X, y,
                           cv=RepeatedStratifiedKFold(n_splits=4, n_repeats=2, random_state=0))
    assert res.details["n_splits"] == 8 and res.details["procedure_a"].startswith("Procedure(basis='poly:2'")
    assert -1 <= res.low <= res.estimate <= res.high <= 1


# --------------------------------------------------------------------------- the result vocabulary

def test_the_result_speaks_the_package_vocabulary():
    y, pa, pb = predictions(5, 7, 2, 6)
    res = error_difference_interval(y, pa, pb, method="newcombe", confidence_level=0.9)
    out = res.to_dict()
    assert list(out)[:7] == ["method", "quantity", "estimate", "low", "high", "confidence_level", "n_samples"]
    assert out["quantity"] == "difference of error rates" and out["confidence_level"] == 0.9
    assert out["statistic"] is None and out["n_samples"] == len(y)
    json.dumps(out)
    frame = res.to_frame()
    assert frame.shape[0] == 1 and frame.loc[0, "method"] == "newcombe"
    assert repr(res).startswith("ComparisonResult(method='newcombe', estimate=0.25, confidence_interval=")
    data = pd.read_csv(FIXTURES / "compare_asah.csv")
    d = delong_test(data.outcome, data.s100b, data.ndka, alternative="greater")
    assert d.to_dict()["quantity"] == "difference of AUCs" and "alternative='greater'" in repr(d)
    json.dumps(d.to_dict())


# --------------------------------------------------------------------------- bad input

BAD = [
    (lambda: mcnemar([0, 1, 1], [0, 1], [0, 1, 1]), ValueError, "one value per label"),
    (lambda: mcnemar([1, 1, 1], [1, 1, 0], [1, 1, 1]), ValueError, "exactly two classes"),
    (lambda: mcnemar([0, 1, 1], [0, 2, 1], [0, 1, 1]), ValueError, "two classes of `y_true`"),
    (lambda: mcnemar([0, 1], [0, 1], [1, 0], exact=False, alternative="less"), ValueError, "two-sided"),
    (lambda: mcnemar([0, 1], [0, 1], [1, 0], alternative="bigger"), ValueError, "`alternative`"),
    (lambda: mcnemar([0, 1], [0, 1], [1, 0], exact=False, mid_p=True), ValueError, "mid_p"),
    (lambda: error_difference_interval([0, 1], [0, 1], [1, 0], method="wald"), ValueError, "`method`"),
    (lambda: error_difference_interval([0, 1], [0, 1], [1, 0], method=["tango"]), ValueError, "`method`"),
    (lambda: mcnemar([0, 1], [0, 1], [1, 0], alternative=np.array(["less", "greater"])), ValueError,
     "`alternative`"),
    (lambda: error_difference_interval([0, 1], [0, 1], [1, 0], confidence_level=1.5), ValueError,
     "confidence_level"),
    (lambda: delong_test([0, 1, 0, 1], [0.1, np.nan, 0.3, 0.4], [1, 2, 3, 4]), ValueError, "non-finite"),
    (lambda: delong_test([0, 1, 0, 1], [0.1, 0.2, 0.3], [1, 2, 3, 4]), ValueError, "one value per label"),
    (lambda: delong_test([0, 1, 0, 0], [1, 2, 3, 4], [1, 2, 3, 4]), ValueError, "at least 2 points of each"),
    (lambda: delong_test([0, 1, 0, 1], ["a", "b", "c", "d"], [1, 2, 3, 4]), ValueError, "numbers"),
    (lambda: paired_ttest_5x2cv(SignRule(), "svm", TINY_X, TINY_Y), TypeError, "procedure B"),
    (lambda: paired_ttest_5x2cv(SignRule(), SignRule(), TINY_X, TINY_Y[:5]), ValueError, "labels"),
    (lambda: paired_ttest_5x2cv(SignRule(), SignRule(), TINY_X, np.ones(8)), ValueError, "two classes"),
    (lambda: paired_ttest_5x2cv(SignRule(), SignRule(), TINY_X, TINY_Y, cv=3), ValueError, "`cv`"),
    (lambda: combined_ftest_5x2cv(SignRule(), SignRule(), TINY_X, TINY_Y, repeats=0), ValueError, "repeats"),
    (lambda: corrected_t_test(SignRule(), SignRule(), TINY_X, TINY_Y, cv="ten"), ValueError, "`cv`"),
    (lambda: nested_cv_test(SignRule(), SignRule(), TINY_X, TINY_Y, cv=5), ValueError, "2 points per fold"),
    (lambda: wald_cv_test(SignRule(), SignRule(), np.r_[TINY_X[:7], [[np.nan]]], TINY_Y), ValueError, "NaN"),
    (lambda: wald_cv_test({"bases": "linear"}, SignRule(), TINY_X, TINY_Y), ValueError, "keys"),
]


@pytest.mark.parametrize("call, error, match", BAD, ids=range(len(BAD)))
def test_bad_input_is_one_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_a_procedure_that_cannot_fit_is_named():
    class Failing(SignRule):
        def fit(self, X, y):
            raise ArithmeticError("boom")

    X = np.arange(12.0)[:, None]
    y = np.r_[np.zeros(6, int), np.ones(6, int)]
    folds = np.array([np.arange(12) % 2])
    with pytest.raises(ValueError, match="procedure A \\(Failing\\) failed on training part 0 .*boom"):
        corrected_t_test(Failing(), SignRule(), X, y, cv=np.vstack([folds, folds]))


def test_a_training_part_with_one_class_is_the_constant_classifier_of_that_class():
    from sklearn.linear_model import LogisticRegression
    from cudbound.compare import ProcedurePair
    from cudbound.refit import DegenerateResampleWarning
    X = np.arange(12.0)[:, None]
    y = np.r_[np.zeros(10, int), [1, 1]]
    folds = np.r_[np.zeros(10, int), [1, 1]]        # fold 1 trains on class 0 alone
    pair = ProcedurePair(LogisticRegression(), Procedure(), X, y)
    with pytest.warns(DegenerateResampleWarning, match="only one class"):
        oof = pair.out_of_fold(folds)
    assert np.all(oof.pred_a[folds == 1] == -1) and np.all(oof.pred_b[folds == 1] == -1)


def test_one_default_method_list():
    """The default comparisons are defined once, cudbound.compare.DEFAULT_METHODS: compare()'s
    signature, cudbound compare's --methods (and its --help) and docs/compare.md state that list."""
    from cudbound.cli import build_parser
    from cudbound.compare import DEFAULT_METHODS, select_methods
    assert DEFAULT_METHODS == ("mcnemar", "corrected_t") and select_methods(DEFAULT_METHODS) == DEFAULT_METHODS
    assert inspect.signature(compare).parameters["methods"].default == DEFAULT_METHODS
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["compare"]
    flag = next(a for a in sub._actions if a.dest == "methods")
    assert flag.default == DEFAULT_METHODS and f"default {','.join(DEFAULT_METHODS)}," in flag.help
    page = (Path(__file__).parents[2] / "docs" / "compare.md").read_text()
    stated = re.findall(r"`cudbound\.compare\.DEFAULT_METHODS`: `([a-z0-9_,]+)`", page)
    assert [tuple(s.split(",")) for s in stated] == [DEFAULT_METHODS]
    assert "default methods are those of `compare()`" in page
