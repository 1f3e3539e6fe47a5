"""
Comparing two classifiers on a real data set
============================================

Is a quadratic logistic model better than a linear one? :mod:`cudbound.compare` answers with
tests and intervals for the difference of their error rates, A - B (``docs/compare.md``). Here
A is logistic regression on the features (basis ``linear``) and B the same loss on all their
squares and products (``basis="poly:2"``), on the BUPA liver disorders data of the UCI
repository (345 men, five blood tests, +1 for three or more drinks a day), read from
``$CUDBOUND_DATA`` (downloaded there if missing: :func:`cudbound.datasets.load`).

Every method refits both models on the same splits: McNemar's test, Tango's interval and
DeLong's test of the AUCs on the out-of-fold predictions of one 10-fold split (treated as one
test set: they are not independent), the 5x2cv t and F tests, the corrected repeated 10-fold t
test (three repetitions here, to keep the example fast) and the Wald-CV interval.
"""

import matplotlib.pyplot as plt

from cudbound.compare import Procedure, compare
from cudbound.datasets import load

liver = load("liver")
print(liver)
linear = Procedure(loss="logistic")
quadratic = Procedure(basis="poly:2", loss="logistic")

results = compare(linear, quadratic, liver.X, liver.y,
                  methods=["mcnemar", "tango", "delong", "ttest_5x2cv", "ftest_5x2cv", "corrected_t", "wald_cv"],
                  rng=0, corrected_t_options={"repeats": 3})
print(f"{'method':<13}{'A - B':>8}{'low':>9}{'high':>9}{'p-value':>9}")
for r in results:
    low, high = (f"{r.low:9.4f}", f"{r.high:9.4f}") if r.has_confidence_interval else (f"{'-':>9}", f"{'-':>9}")
    print(f"{r.method:<13}{r.estimate:8.4f}{low}{high}{r.pvalue:9.4f}")

# %%
# The out-of-fold table behind McNemar's test and Tango's interval: the points one model gets
# wrong and the other right (``b``: the linear model alone wrong; ``c``: the quadratic alone).
mcnemar_result = results[0]
print(mcnemar_result.details["table"], "b =", mcnemar_result.details["b"], "c =", mcnemar_result.details["c"])

# %%
# The forest plot. Every interval covers 0: on 345 points the data cannot tell the two models
# apart. Dietterich's 5x2cv t test alone comes near rejecting (or rejects): its statistic rests
# on the difference of the first of its ten fits alone, the instability Alpaydin's combined F
# test, which uses all ten, was designed to remove. Negative error differences favour the linear
# model (A); the AUC difference (DeLong) is the other way round, positive for A.
ax = results.plot(data_name="BUPA liver disorders")   # compare() returns a ResultList
plt.show()
