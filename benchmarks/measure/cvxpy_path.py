"""The cvxpy node path (``engine="cvxpy"``: user losses, and the compiled solvers' fallback) before and after a
change: one CUD interval per loss through cvxpy, its seconds, nodes and interval; cited in benchmarks/RESULTS.md
(2026-12-02, twelfth sitting: every cvxpy solve from scratch).

    PYTHONPATH=<checkout> python benchmarks/measure/cvxpy_path.py --label LABEL [--losses hinge,squared] [--n 30]
        [--resamples 100] [--repeats 3]

``LinearGaussian(n_features=2, flip_probability=0.3)`` drawn with ``default_rng(0)``; ``cud_interval(X, y,
procedure=Procedure(loss=LOSS), n_resamples=B, rng=0, engine_options={"engine": "cvxpy"})`` after an untimed run at B = 20. Prints the
machine, the command and one JSON line per loss (the median seconds over the repeats, every repeat's seconds).
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy is imported

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402


def main():
    import numpy as np
    import cudbound
    from cudbound.datasets import LinearGaussian

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", required=True)
    ap.add_argument("--losses", default="hinge,squared")
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--resamples", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; python {platform.python_version()}")
    print("command: python " + " ".join(sys.argv))
    X, y = LinearGaussian(n_features=2, flip_probability=0.3).sample(args.n, np.random.default_rng(0))
    for loss in args.losses.split(","):
        opts = {"engine": "cvxpy"}
        cudbound.cud_interval(X, y, procedure=cudbound.Procedure(loss=loss), n_resamples=20, rng=0, engine_options=opts)
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            res = cudbound.cud_interval(X, y, procedure=cudbound.Procedure(loss=loss), n_resamples=args.resamples, rng=0,
                                         engine_options=opts)
            times.append(time.perf_counter() - t0)
        print(json.dumps({"label": args.label, "loss": loss, "median_seconds": statistics.median(times),
                          "seconds": times, "nodes": int(np.sum(res.stats.nodes)),
                          "interval": [float(v) for v in res.confidence_interval]}), flush=True)


if __name__ == "__main__":
    main()
