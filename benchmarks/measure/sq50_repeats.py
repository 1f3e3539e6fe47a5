"""run.py's sq50 case timed again and again in one process, for two versions run alternately (issue 30, 2026-11-26).

    python benchmarks/measure/sq50_repeats.py DATA_DIR REPEATS     # prints one JSON line

``DATA_DIR`` holds run.py's sq50 data (``sq50_seed{0,1,2}.npz``; ``make_data`` of run.py writes
them). The process is pinned to core 1, warms up on a tiny squared-loss interval, then times
``cud_interval(X, y, n_resamples=200, rng=seed, n_jobs=1)`` (the squared loss) REPEATS times per
seed (CPU seconds, ``time.process_time``). Run it with the interpreters of the two versions in
turn, several times, and compare medians and minima: run.py times each seed once, and single
calls of 0.1-2 s vary by 30% or more on this machine even when it is idle.
"""
import json
import os
import sys
import time

import numpy as np

import cudbound


def main(data_dir: str, repeats: int) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {1})
    X0 = np.random.default_rng(5).normal(size=(20, 5))
    y0 = np.where(X0[:, 0] > 0, 1, -1)
    y0[:3] *= -1
    cudbound.cud_interval(X0, y0, n_resamples=20, rng=0, n_jobs=1)  # compile or load the kernels
    times = {}
    for seed in (0, 1, 2):
        data = np.load(os.path.join(data_dir, f"sq50_seed{seed}.npz"))
        X, y = data["X"], data["y"]
        times[seed] = []
        for _ in range(repeats):
            c = time.process_time()
            cudbound.cud_interval(X, y, n_resamples=200, rng=seed, n_jobs=1)
            times[seed].append(time.process_time() - c)
    print(json.dumps({"file": cudbound.__file__, "times": times}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
