"""
AUC under cross-validation
==========================

:mod:`cudbound.auc` estimates a classifier's AUC from a small sample in the three ways
compared by Suominen, Pahikkala & Salakoski (2008): per fold and averaged, pooled over the
folds, and leave-pair-out (every positive-negative pair held out together). For regularized
least squares (:class:`cudbound.auc.KernelRLS`) leave-pair-out is exact and needs no refit.
Pooling compares scores of different models and is biased, most often downwards
(``docs/auc.md``).
"""

import matplotlib.pyplot as plt
import numpy as np

from cudbound.auc import KernelRLS, cv_auc, lpo_auc

rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
model = KernelRLS(regparam=1.0)

lpo = lpo_auc(model, X, y)
averaged = cv_auc(model, X, y, cv=5, pooling="averaged", rng=0)
pooled = cv_auc(model, X, y, cv=5, pooling="pooled", rng=0)
print(f"leave-pair-out {lpo.estimate:.3f} ({lpo.computation}, {lpo.n_pairs} pairs)")
print(f"5-fold, averaged {averaged.estimate:.3f}; per fold {np.round(averaged.fold_auc, 3)}")
print(f"5-fold, pooled   {pooled.estimate:.3f}")

# %%
# Any scikit-learn estimator with ``decision_function`` works too; leave-pair-out then
# refits it once per pair (here on the first 20 points: one fit of a logistic regression per
# positive-negative pair).
from sklearn.linear_model import LogisticRegression  # noqa: E402

small_X, small_y = X[:20], y[:20]
refitted = lpo_auc(LogisticRegression(), small_X, small_y)
print(f"logistic regression: leave-pair-out {refitted.estimate:.3f} ({refitted.computation}, {refitted.n_pairs} fits), "
      f"averaged {cv_auc(LogisticRegression(), small_X, small_y, cv=5, rng=0).estimate:.3f}")

# %%
# The pooling bias, shown: on data sets with no signal at all (labels independent of X) the
# true AUC is 1/2. Leave-one-out pooled over its folds averages well below it; leave-pair-out
# stays near it.
pooled_loo, lpo_null = [], []
for seed in range(20):
    r = np.random.default_rng(seed)
    Xn = r.normal(size=(30, 3))
    yn = np.where(np.arange(30) < 15, 1, -1)
    pooled_loo.append(cv_auc(model, Xn, yn, cv=np.arange(30), pooling="pooled").estimate)
    lpo_null.append(lpo_auc(model, Xn, yn).estimate)
print(f"no signal: pooled leave-one-out {np.mean(pooled_loo):.3f}, leave-pair-out {np.mean(lpo_null):.3f}")

fig, ax = plt.subplots(figsize=(5, 3))
ax.boxplot([pooled_loo, lpo_null])
ax.set_xticks([1, 2], ["pooled leave-one-out", "leave-pair-out"])
ax.axhline(0.5, color="k", lw=0.8, ls="--")
ax.set_ylabel("AUC (no signal: truth 1/2)")
fig.tight_layout()
