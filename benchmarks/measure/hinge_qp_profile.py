"""Where the time of a hinge-family interval goes (cProfile): the screening solves (in Python or
compiled), the compiled search, set-up; nodes, solves and microseconds per node, on issue 28's data
(``LinearGaussian(n_features=4, flip_probability=0.2)``, ``default_rng(seed)``, ``rng=seed``).

    PYTHONPATH=. python benchmarks/measure/hinge_qp_profile.py --models svc,linsvc,hinge --n 100 \
        --resamples 100 --seeds 0,1

Models: ``svc`` (``SVC(kernel="linear")``), ``linsvc`` (``LinearSVC(loss="hinge")``), ``hinge``
(``loss="hinge"``), ``squared``. Times are wall seconds of one ``cud_interval`` call after an
untimed warm-up, and its CPU seconds (much less than wall: the core was shared); the split is
of CPU time (cProfile with ``time.process_time``), and so is the time per node.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np


def model(name):
    from sklearn.svm import SVC, LinearSVC
    return {"svc": {"procedure": SVC(kernel="linear")}, "linsvc": {"procedure": LinearSVC(loss="hinge")},
            "hinge": {"procedure": {"loss": "hinge"}}, "squared": {"procedure": {"loss": "squared"}}}[name]


def cumulative(stats, func_name, file_part):
    """Seconds (cumulative) in the functions named ``func_name`` of files containing ``file_part``."""
    return sum(v[3] for k, v in stats.stats.items() if k[2] == func_name and file_part in k[0])


def main(argv=None):
    import cudbound
    from cudbound.datasets import LinearGaussian

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="svc,linsvc,hinge")
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--resamples", type=int, default=100)
    ap.add_argument("--seeds", default="0")
    args = ap.parse_args(argv)
    data = LinearGaussian(n_features=4, flip_probability=0.2)
    print(f"cudbound from {cudbound.__file__}; n = {args.n}, B = {args.resamples}")
    for name in args.models.split(","):
        Xw, yw = data.sample(20, np.random.default_rng(99))
        cudbound.cud_interval(Xw, yw, **model(name), n_resamples=20, rng=0, progress=False)  # warm-up
        for seed in map(int, args.seeds.split(",")):
            X, y = data.sample(args.n, np.random.default_rng(seed))
            pr = cProfile.Profile(time.process_time)  # CPU time: the machine may be shared
            t0, c0 = time.perf_counter(), time.process_time()
            pr.enable()
            res = cudbound.cud_interval(X, y, **model(name), n_resamples=args.resamples, rng=seed, progress=False)
            pr.disable()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            st = pstats.Stats(pr)
            screen = cumulative(st, "_screen_by_solves", "problem.py")
            search = cumulative(st, "run_search", "core.py")
            searches = sum(v[1] for k, v in st.stats.items() if k[2] == "_search" and "engine.py" in k[0])
            nodes, solves = int(np.sum(res.stats.nodes)), int(np.sum(res.stats.solves))
            print(f"{name} seed {seed}: {wall:.2f} s wall, {cpu:.2f} s CPU; interval [{res.low:.4f}, {res.high:.4f}]; "
                  f"CPU: screening {screen:.2f} s ({screen / cpu:.0%}), compiled search {search:.2f} s "
                  f"({search / cpu:.0%}), other {cpu - screen - search:.2f} s; {searches} searches for "
                  f"{args.resamples} replicates; nodes {nodes} ({nodes / args.resamples:.0f}/rep), solves {solves} "
                  f"(screening included); {search / max(nodes, 1) * 1e6:.1f} us per node in the search", flush=True)


if __name__ == "__main__":
    main()
