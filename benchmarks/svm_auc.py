"""Benchmark of issue 14's targets: xi_alpha at n = 2000 (linear kernel), loo_error at n = 500
against one fit, lpo_auc with KernelRLS at n = 1000 (time and peak memory).

    python benchmarks/svm_auc.py [--repeats 3] [--inner 5] [--data-home DIR] [--json OUT] [--only xi|loo|lpo]

The raw results go to ``--json``, by default ``benchmarks/raw/DATE_COMMIT_svm_auc.json`` (the day
of the run, this checkout's head; ``--json -`` for none).

Each case runs in a fresh process (so peak memory is that case's), after one warm-up call
in the same process (numba compiles the solver once per installation and loads it from its
cache in each process). The leave-one-out cases time one fit and the leave-one-out each
``--inner`` times in the process and keep the medians. Prints the
machine, the command and the median over the repeats. Data: the study's "magic" and "spam"
files (standardised features, rows drawn with a fixed seed) and a synthetic linear Gaussian
design.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import resource
import statistics
import sys
import time

import numpy as np


def _data(name, n, seed, data_home):
    rng = np.random.default_rng(seed)
    if name == "synthetic":
        X = rng.normal(size=(n, 10))
        y = np.where(X[:, :3].sum(1) + 1.5 * rng.normal(size=n) > 0, 1, -1)
        return X, y
    from cudbound.datasets.registry import get_dataset
    X, y = get_dataset(name).load(data_home)
    rows = rng.choice(len(y), size=n, replace=False)
    X = X[rows]
    sd = X.std(0)
    return (X - X.mean(0)) / np.where(sd > 0, sd, 1.0), y[rows]


def _case(kind, name, n, C, seed, data_home, out, inner=1):
    from cudbound.auc import KernelRLS, lpo_auc
    from cudbound.svm import loo_error, xi_alpha
    X, y = _data(name, n, seed, data_home)
    res = {}
    if kind == "lpo":
        lpo_auc(KernelRLS(regparam=1.0), X[:50], y[:50])  # warm-up
        t = time.perf_counter()
        r = lpo_auc(KernelRLS(regparam=1.0), X, y)
        res.update(seconds=time.perf_counter() - t, auc=r.estimate, n_pairs=r.n_pairs)
    else:
        xi_alpha(X[:40], y[:40], C=C)  # warm-up: load the compiled solver from numba's cache
        if kind == "loo":
            loo_error(X[:40], y[:40], C=C)
        # median of `inner` timings in the process (single timings of 10-20 ms vary by 2x here)
        fits = []
        for _ in range(inner):
            t = time.perf_counter()
            e = xi_alpha(X, y, C=C)
            fits.append(time.perf_counter() - t)
        res.update(fit_seconds=statistics.median(fits), d=e.n_errors, n_sv=int((e.alpha > 0).sum()))
        if kind == "loo":
            loos = []
            for _ in range(inner):
                t = time.perf_counter()
                r = loo_error(X, y, C=C)
                loos.append(time.perf_counter() - t)
            res.update(loo_seconds=statistics.median(loos), n_refits=r.n_refits, loo_errors=r.n_errors)
            res["ratio"] = res["loo_seconds"] / res["fit_seconds"]
    res["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.put(res)


def run(kind, name, n, C, seed, data_home, inner=1):
    q = mp.get_context("spawn").Queue()
    p = mp.get_context("spawn").Process(target=_case, args=(kind, name, n, C, seed, data_home, q, inner))
    p.start()
    res = q.get()
    p.join()
    return res


CASES = [("xi", "synthetic", 2000, 1.0), ("xi", "magic", 2000, 1.0), ("xi", "spam", 2000, 1.0),
         ("loo", "synthetic", 500, 1.0), ("loo", "magic", 500, 1.0), ("loo", "spam", 500, 1.0),
         ("lpo", "synthetic", 1000, None), ("lpo", "magic", 1000, None)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data-home", default=os.environ.get("CUDBOUND_DATA"))
    ap.add_argument("--json", default=None,
                    help="raw results (default: benchmarks/raw/DATE_COMMIT_svm_auc.json; '-' for none)")
    ap.add_argument("--only", choices=("xi", "loo", "lpo"), help="run the cases of one kind only")
    ap.add_argument("--inner", type=int, default=5,
                    help="timings per process of the loo cases' fit and leave-one-out (their median is kept)")
    args = ap.parse_args(argv)
    if args.json is None:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import rawname  # benchmarks/rawname.py: default output names in benchmarks/raw/
        args.json = rawname.stem("svm_auc", rawname.head_commit(), rawname.cudbound_dirty()) + ".json"
        rawname.ensure_dir(args.json)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}")
    print("command:", " ".join([os.path.basename(sys.executable)] + sys.argv))
    rows = []
    for kind, name, n, C in CASES:
        if args.only and kind != args.only:
            continue
        reps = [run(kind, name, n, C, seed, args.data_home, args.inner if kind == "loo" else 1)
                for seed in range(args.repeats)]
        keys = [k for k in reps[0] if isinstance(reps[0][k], (int, float))]
        med = {k: statistics.median(r[k] for r in reps) for k in keys}
        rows.append(dict(kind=kind, data=name, n=n, C=C, median=med, runs=reps))
        print(f"{kind:4s} {name:9s} n={n:5d} " + " ".join(f"{k}={v:.3g}" for k, v in med.items()), flush=True)
    if args.json != "-":
        with open(args.json, "w") as f:
            json.dump(dict(machine=platform.processor(), rows=rows), f, indent=1)
        print("wrote", args.json)


if __name__ == "__main__":
    main()
