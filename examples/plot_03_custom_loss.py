"""
A loss of your own
==================

The CUD bound holds for any surrogate loss that is convex in the coefficients. A loss is a
subclass of :class:`cudbound.losses.Loss` with two methods: the loss l(y, t) elementwise in
NumPy (``pointwise``) and as a convex cvxpy expression of t (``cvxpy_pointwise``); the
optional ``derivatives`` lets the search solve its nodes by certified Newton-type steps
instead of a conic solver. An instance goes wherever a loss name is accepted, e.g. as the
loss of a :class:`cudbound.Procedure` (``docs/losses.md``, "Adding a loss").

Here is the squared hinge loss l(y, t) = max(0, 1 - y t)^2, the class of ``docs/losses.md``.
"""

import cvxpy as cp
import numpy as np

import cudbound
from cudbound import Procedure
from cudbound.datasets import demo_data
from cudbound.losses import Loss


class SquaredHingeLoss(Loss):
    """l(y, t) = max(0, 1 - y t)^2, the squared hinge (a smooth hinge)."""

    name = "squared_hinge"

    def pointwise(self, y, t):  # NumPy, elementwise
        return np.maximum(0.0, 1.0 - y * t) ** 2

    def cvxpy_pointwise(self, y, t):  # cvxpy, convex in t
        return cp.square(cp.pos(1.0 - cp.multiply(y, t)))

    def derivatives(self, y, t):  # optional: dl/dt and d2l/dt2 (exact node minima)
        h = np.maximum(0.0, 1.0 - y * t)
        return -2.0 * y * h, 2.0 * (h > 0)


# %%
# A user loss runs the same search as the built-in ones, its node problems solved in Python
# (called from the compiled loop), so it is slower: a small problem here.
X, y = demo_data(n=30, seed=0)
res = cudbound.cud_interval(X, y, Procedure(loss=SquaredHingeLoss()), n_resamples=100, rng=0)
print(res)
print(f"loss {res.details['loss']}, coefficients {np.round(res.coef, 3)}")

# %%
# The built-in losses by name, on the same data and seed, for comparison (the squared loss is
# the default; ``"hinge"`` is the support vector machine's loss without its penalty):
for loss in ["squared", "hinge"]:
    r = cudbound.cud_interval(X, y, Procedure(loss=loss), n_resamples=100, rng=0)
    print(f"{r.details['loss']:<14} [{r.low:.3f}, {r.high:.3f}]  training error {r.train_error:.3f}")
print(f"{res.details['loss']:<14} [{res.low:.3f}, {res.high:.3f}]  training error {res.train_error:.3f}")

# %%
# Instead of the pointwise pair, a loss may define the whole weighted mean,
# ``value(design, y, weights, beta)`` in NumPy and ``expression(design, y, weights, beta)`` in
# cvxpy; :class:`cudbound.losses.FunctionLoss` wraps such a pair of functions without a class.
# The table of optional extras in ``docs/losses.md`` lists what each unlocks (a quadratic form
# for the compiled search, a closed-form minimiser, ...).
