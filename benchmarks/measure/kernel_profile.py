"""Where the time of a squared-loss interval goes: seconds in the compiled replicate kernel
(cProfile), nodes, node QP solves and feasibility QPs, microseconds per node (n = 50, p = 5, seeds 2, 4).

    python benchmarks/measure/kernel_profile.py
"""
import numpy as np, time, sys, cProfile, pstats, io
from cudbound import cud_interval
from cudbound.datasets import LinearGaussian
X0, y0 = LinearGaussian(n_features=4, flip_probability=0.3).sample(20, np.random.default_rng(0))
cud_interval(X0, y0, n_resamples=20, rng=0, progress=False)
for s in [2, 4]:
    X, y = LinearGaussian(n_features=4, flip_probability=0.3).sample(50, np.random.default_rng(s))
    pr = cProfile.Profile(); pr.enable()
    t=time.perf_counter(); r=cud_interval(X, y, n_resamples=500, rng=s, progress=False); T=time.perf_counter()-t
    pr.disable()
    st = pstats.Stats(pr); kernel = sum(v[3] for k, v in st.stats.items() if k[2] == '_replicate')
    S = r.stats
    print(f"seed {s}: {T:.2f} s, kernel (set-up + search, compiled) {kernel:.2f} s; nodes {int(np.sum(S.nodes))}, solves {int(np.sum(S.solves))}, pruned {int(np.sum(S.pruned))}, realisability QPs {int(np.sum(S.realisability_checks))}; {kernel/np.sum(S.nodes)*1e6:.2f} us per node in the kernel")
