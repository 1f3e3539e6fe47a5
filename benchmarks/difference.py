"""Issue 45's targets for the CUD interval of a difference (``cudbound.compare.cud_difference_interval``).

    PYTHONPATH=$PWD python benchmarks/difference.py [--resamples 500] [--seeds 0 1 2] [--repeats 7] [--out FILE.json]

Two cases, each on ``cudbound.datasets.LinearGaussian(n_features=2, flip_probability=0.2)`` drawn
with the seed:

- ``squared50``: n = 50, A the squared loss on the linear basis (3 coefficients), B the squared
  loss on ``poly:2`` (6 coefficients); the target is at most 3 times the time of the two single CUD
  intervals (``cudbound.cud_interval`` of A and of B, same B and seed), which the case times too;
- ``logistic100``: n = 100, A the logistic loss on the linear basis, B the logistic loss on
  ``poly:2``; the target is under 60 s on one core.

Each case runs once untimed first at B = 20 (imports, compiled kernels), then timed (``--repeats`` times in
a row, each run timing the difference and then the single intervals, with the medians recorded): wall and CPU
seconds of this process (on a loaded machine the CPU seconds are the steadier figure). Peak memory
is the process's maximum resident set (``resource.getrusage``), after every case. BLAS runs on one
thread. The machine is shared: the load average is printed with every case, and any figure taken
from this script must say so. Writes one JSON record per case and seed to ``--out`` (default
``raw/DATE_COMMIT_difference_targets.json``) and prints them.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy is imported
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rawname  # noqa: E402

CASES = {"squared50": (50, "squared"), "logistic100": (100, "logistic")}


def _data(n, seed):
    from cudbound.datasets import LinearGaussian
    return LinearGaussian(n_features=2, flip_probability=0.2).sample(n, seed)


def _median(xs):
    xs = sorted(xs)
    k = len(xs)
    return xs[k // 2] if k % 2 else 0.5 * (xs[k // 2 - 1] + xs[k // 2])


def _repeated(case, B, seed, singles, repeats):
    """:func:`_run` ``repeats`` times in a row (the difference and the single intervals interleaved, so that
    both see the machine's same moments); the record of the first run with every run's seconds and their
    medians (the ratio of the medians, when the case has single intervals)."""
    runs = [_run(case, B, seed, singles) for _ in range(repeats)]
    out = dict(runs[0])
    if repeats == 1:
        return out
    for key in ("seconds", "cpu_seconds", "single_cud_seconds", "single_cud_cpu_seconds"):
        if key in out:
            out[f"{key}_runs"] = [r[key] for r in runs]
            out[f"median_{key}"] = _median(out[f"{key}_runs"])
    if singles:
        out["median_ratio"] = out["median_seconds"] / out["median_single_cud_seconds"]
        out["median_cpu_ratio"] = out["median_cpu_seconds"] / out["median_single_cud_cpu_seconds"]
    out["same_interval_every_run"] = all(r["interval"] == out["interval"] for r in runs)
    out["peak_rss_mib"] = max(r["peak_rss_mib"] for r in runs)
    return out


def _run(case, B, seed, singles):
    import cudbound
    from cudbound.compare import cud_difference_interval

    n, loss = CASES[case]
    X, y = _data(n, seed)
    a, b = cudbound.Procedure(loss=loss), cudbound.Procedure(basis="poly:2", loss=loss)
    out = {"case": case, "n": n, "loss": loss, "resamples": B, "seed": seed}
    t0, c0 = time.perf_counter(), time.process_time()
    res = cud_difference_interval(a, b, X, y, n_resamples=B, rng=seed)
    out.update(seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0,
               interval=list(res.confidence_interval), estimate=res.estimate,
               half_width=res.details["half_width"], nodes_total=res.details["search_nodes_total"],
               conservative=res.details["conservative"])
    if singles:
        t1, c1 = time.perf_counter(), time.process_time()
        for proc in (a, b):
            cudbound.cud_interval(X, y, proc, n_resamples=B, rng=seed)
        out["single_cud_seconds"] = time.perf_counter() - t1
        out["single_cud_cpu_seconds"] = time.process_time() - c1
        out["ratio"] = out["seconds"] / out["single_cud_seconds"]
        out["cpu_ratio"] = out["cpu_seconds"] / out["single_cud_cpu_seconds"]
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    out["load_average"] = os.getloadavg()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resamples", type=int, default=500)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--repeats", type=int, default=1,
                    help="runs of each case and seed in a row; with more than one, the medians (and their ratio)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    out_path = args.out or os.path.join(rawname.RAW, f"{datetime.date.today()}_{rawname.head_commit()}_"
                                        f"difference_targets{'_uncommitted' if rawname.cudbound_dirty() else ''}.json")
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, python {platform.python_version()}")
    print("command:", " ".join([sys.executable, *sys.argv]))
    warnings.simplefilter("ignore")
    records = []
    for case in args.cases:
        _run(case, 20, 0, singles=case == "squared50")    # warm-up: imports and compiled kernels
        for seed in args.seeds:
            rec = _repeated(case, args.resamples, seed, case == "squared50", args.repeats)
            print(json.dumps(rec))
            records.append(rec)
            with open(out_path, "w") as fh:
                json.dump({"machine": platform.platform(), "records": records}, fh, indent=1)
    print("written:", out_path)


if __name__ == "__main__":
    main()
