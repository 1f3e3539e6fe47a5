"""Nodes of one pass over all B replicates with the floor (and stop_above) at given thresholds:
the oracle cost of deciding Q_hat (squared loss, n = 50, p = 5, seed 2: Q_hat = 0.30).

    python benchmarks/measure/threshold_oracle.py 2 0.30:0.30 0.22:0.36
"""
import numpy as np, sys, dataclasses
import cudbound.quantile as q, cudbound.cud as cudmod
from cudbound import cud_interval
from cudbound.datasets import LinearGaussian
s = int(sys.argv[1]); pairs = [tuple(map(float, x.split(":"))) for x in sys.argv[2:]]
orig = q.order_statistic
def wrapped(run, B, k, options, **kw):
    for f, st in pairs:
        opts = dataclasses.replace(options, floor=f - 2e-12, stop_above=st)
        outs = run(list(range(B)), [opts]*B, lambda i, o: None)
        print("floor", f, "stop", st, "nodes", sum(o.nodes for o in outs), flush=True)
    raise SystemExit
cudmod.order_statistic = wrapped
X, y = LinearGaussian(n_features=4, flip_probability=0.3).sample(50, np.random.default_rng(s))
r = cud_interval(X, y, n_resamples=500, rng=s, progress=False)
