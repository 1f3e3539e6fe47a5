"""Cost of a user-defined loss: built-in logistic against the same loss written as a user Loss with
derivatives, and the squared hinge with and without derivatives (n = 30, p = 3, B = 500); docs/losses.md.

    python benchmarks/measure/user_loss_cost.py
"""
import numpy as np, time, cvxpy as cp
from cudbound import Procedure, cud_interval
from cudbound.losses import Loss
from cudbound.datasets import LinearGaussian
class SqH(Loss):
    name = "squared_hinge"
    def pointwise(self, y, t): return np.maximum(0.0, 1.0 - y * t) ** 2
    def cvxpy_pointwise(self, y, t): return cp.square(cp.pos(1.0 - cp.multiply(y, t)))
class SqHD(SqH):
    name = "squared_hinge_d"
    def derivatives(self, y, t):
        h = np.maximum(0.0, 1.0 - y * t); return -2.0 * y * h, 2.0 * (h > 0)
class LogD(Loss):
    name = "user_logistic"
    def pointwise(self, y, t): return np.logaddexp(0.0, -y * t)
    def cvxpy_pointwise(self, y, t): return cp.logistic(-cp.multiply(y, t))
    def derivatives(self, y, t):
        s = 1.0 / (1.0 + np.exp(y * t)); return -y * s, s * (1 - s)
X, y = LinearGaussian(n_features=2, flip_probability=0.3).sample(30, np.random.default_rng(0))
for loss in (SqHD(), LogD(), "logistic", SqH()):
    cud_interval(X[:20], y[:20], Procedure(loss=loss), n_resamples=20, rng=0, progress=False)
    t = time.perf_counter(); r = cud_interval(X, y, Procedure(loss=loss), n_resamples=500, rng=0, progress=False)
    print(getattr(loss, "name", loss), round(time.perf_counter() - t, 2), r.confidence_interval, int(np.sum(r.stats.nodes)), "fallbacks", r.fallbacks, flush=True)
