"""Nodes and seconds of the quantile refinement with resumed searches against restarted ones
(squared loss, n = 50, p = 5, noisy, B = 500), same build, same process; cited in docs/engine.md.

    python benchmarks/measure/resume_vs_restart.py squared 50 5 1,2,6
"""
import numpy as np, time, sys
import cudbound.quantile as q
from cudbound import Procedure, cud_interval
from cudbound.datasets import LinearGaussian
loss = sys.argv[1]; n=int(sys.argv[2]); p=int(sys.argv[3]); seeds=[int(x) for x in sys.argv[4].split(",")]
X0, y0 = LinearGaussian(n_features=p-1, flip_probability=0.3).sample(20, np.random.default_rng(0))
cud_interval(X0, y0, Procedure(loss=loss), n_resamples=20, rng=0, progress=False)
for s in seeds:
    X, y = LinearGaussian(n_features=p-1, flip_probability=0.3).sample(n, np.random.default_rng(s))
    row=[]
    for mode in ("restart","resume","restart","resume"):
        q.RESUME_TOTAL_BYTES = 0 if mode=="restart" else 256<<20
        t=time.perf_counter(); r=cud_interval(X, y, Procedure(loss=loss), n_resamples=500, rng=s, progress=False)
        row.append((mode, round(time.perf_counter()-t,2), int(np.sum(r.stats.nodes)), r.confidence_interval.low, r.confidence_interval.high))
    print(loss, s, row, flush=True)
