"""
A scikit-learn pipeline
=======================

The procedure of :func:`cudbound.cud_interval` and :func:`cudbound.intervals` may be a
scikit-learn classifier or a ``Pipeline`` ending in one, fitted or not, in place of a
:class:`cudbound.Procedure` of a basis and a loss (:mod:`cudbound.sklearn_bridge`): its earlier
steps become the basis, fitted on the training set, and its objective the exact loss, so that cudbound's
fitted coefficients are the estimator's own. Here: standardised features and an l2-penalised
logistic regression, whose objective is the ``logistic_ridge`` loss with LAM = 1 / (2 C n).
"""

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import cudbound
from cudbound.datasets import demo_data

X, y = demo_data(n=40, seed=1)
X = X * np.array([1.0, 100.0]) + np.array([0.0, 5.0])  # features on different scales
pipeline = make_pipeline(StandardScaler(), LogisticRegression(C=0.5))

res = cudbound.cud_interval(X, y, pipeline, n_resamples=200, rng=0)
print(res)
print(f"loss: {res.details['loss']}")

# %%
# The same coefficients as scikit-learn's own fit (on the standardised features):
fitted = pipeline.fit(X, y)
clf = fitted[-1]
print("cudbound    ", np.round(res.coef, 5))
print("scikit-learn", np.round(np.r_[clf.intercept_, clf.coef_.ravel()], 5))

# %%
# ``cudbound.intervals`` runs several interval methods on the same data, seed and estimator;
# ``cudbound.plot_intervals`` draws them as a forest plot. With an integer seed, its ``"cud"``
# is exactly ``cud_interval(..., rng=seed)``, so the CUD interval above is put in front
# instead of being computed again. CUD is centred at the training error, the paper's
# baselines at the .632 estimate (here from 50 bootstrap fits, ``n_boot``), the others at
# their own estimates. Every method refits the pipeline's classifier, with the penalty of the
# full fit, on the parts of the data it resamples.
others = cudbound.intervals(X, y, methods=["kohavi", "langford", "wald_cv", "corrected_t"],
                            procedure=pipeline, rng=0, n_boot=50)
results = [res, *others]
for r in results:
    print(f"{r.method:<12} [{r.low:.3f}, {r.high:.3f}]  estimate {r.estimate:.3f}")

ax = cudbound.plot_intervals(results)
ax.figure.tight_layout()  # room for the axis labels in the saved image
