"""
The README example: a CUD interval on simulated data
====================================================

:func:`cudbound.cud_interval` puts a confidence interval around the error of a linear
classifier fitted to a small training set. Here it runs on the demo's data set
(:func:`cudbound.datasets.demo_data`: two Gaussian features, a linear Bayes boundary and 20%
label noise), with n = 50 points and B = 500 bootstrap resamples, exactly as in the README's
worked example. Because the data are simulated, the true error of the fitted classifier is
known exactly, so we can check that the interval covers it.
"""

import cudbound
from cudbound.datasets import LinearGaussian, demo_data

X, y = demo_data(n=50, seed=0)  # the data of `cudbound demo` (seed 0)
res = cudbound.cud_interval(X, y, confidence_level=0.95, n_resamples=500, rng=0)

low, high = res.confidence_interval  # clipped to [0, 1]
print(f"95% CUD interval [{low:.3f}, {high:.3f}]")
print(f"training error {res.train_error:.3f}, half-width {res.half_width:.3f}")
print(f"conservative: {res.conservative}")

# %%
# The search statistics: nodes, solves and pruned nodes of the branch and bound, per
# replicate, and how many replicates were solved to the end (``"exact"``) or only bounded on
# the right side of the quantile Q_hat (``"bounded"``, which is all the interval needs).
for key, value in res.stats.summary().items():
    if key != "seconds_median":  # the one entry that depends on the machine
        print(f"{key:<28} {value}")

# %%
# The true error of this classifier, from the simulator's exact formula:
truth = LinearGaussian(n_features=2, flip_probability=0.2).error_rate(res.coef)
print(f"true error of this classifier {truth:.3f}; covered: {low <= truth <= high}")

# %%
# ``result.plot()`` draws the bootstrap distribution of the replicate suprema Q^(b) with
# Q_hat (their ceil(0.95 B)-th smallest) and the interval marked. A replicate that was only
# bounded is drawn at its upper bound.
ax = res.plot()
ax.figure.tight_layout()  # room for the axis labels in the saved image
