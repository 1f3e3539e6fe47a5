"""Every interval method at n = 60 with each model (issue 44's first target): the wall and CPU time of
``intervals(X, y, methods="all", procedure=...)`` for the squared loss, ``logistic_ridge:1/120``,
scikit-learn's ``LogisticRegression()``, the plain ``hinge`` loss, ``LinearSVC(loss="hinge")`` and
``SVC(kernel="linear")`` (``--models`` picks some), for the code on ``sys.path`` (run it once per version,
with PYTHONPATH pointing at each checkout), then ``--merge`` the two files.

    PYTHONPATH=/path/to/before python benchmarks/all_methods.py --label before --resamples 20 --out /tmp/b.json
    PYTHONPATH=$PWD python benchmarks/all_methods.py --label after --resamples 20 --out /tmp/a.json
    python benchmarks/all_methods.py --merge /tmp/b.json /tmp/a.json     # raw/DATE_COMMIT_all_methods_n60.json

The data: scikit-learn's breast-cancer data (30 features), the first 60 rows after
``np.random.default_rng(0).permutation``. ``--resamples R`` sets ``n_resamples`` (B of CUD, BS1 and
BS2; their defaults without it: 1000 for BS1/BS2, the whole run then takes hours before the batched
refits); each model is run once untimed first (imports, compiled kernels), then ``--repeats`` times.
BLAS runs on one thread (``OPENBLAS_NUM_THREADS=1`` unless set): on a shared two-core machine a
threaded BLAS on these small matrices is several times slower. Prints the machine, the command, the
medians and each method's own ``seconds``; writes them as JSON.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy is imported
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

MODELS = ("squared", "logistic_ridge", "LogisticRegression", "hinge", "LinearSVC", "SVC")


def _data():
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    rows = np.random.default_rng(0).permutation(len(y))[:60]
    return X[rows], y[rows]


def _procedure(model: str):
    from cudbound import Procedure
    if model == "squared":
        return Procedure()
    if model == "logistic_ridge":
        return Procedure(loss=f"logistic_ridge:{1.0 / 120!r}")     # LogisticRegression(C=1)'s at n = 60
    if model == "hinge":
        return Procedure(loss="hinge")
    if model in ("LinearSVC", "SVC"):
        from sklearn.svm import SVC, LinearSVC
        return LinearSVC(loss="hinge") if model == "LinearSVC" else SVC(kernel="linear")
    from sklearn.linear_model import LogisticRegression
    return LogisticRegression()


def _run(model: str, resamples: int | None, repeats: int) -> dict:
    import cudbound
    X, y = _data()
    options = {} if resamples is None else {"n_resamples": resamples}
    cudbound.intervals(X, y, methods=["cud", "kohavi"], procedure=_procedure(model), rng=0, n_resamples=20,
                       n_boot=5)   # warm-up: imports, the search's compiled kernels
    cpu, wall, per_method = [], [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        results = cudbound.intervals(X, y, methods="all", procedure=_procedure(model), rng=0, **options)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        per_method.append({r.method: float(getattr(r, "seconds", float("nan"))) for r in results})
    methods = list(per_method[0])
    return {"model": model, "wall_median": statistics.median(wall), "cpu_median": statistics.median(cpu),
            "wall": wall, "cpu": cpu,
            "method_seconds_median": {m: statistics.median(run[m] for run in per_method) for m in methods},
            "estimates": {r.method: [r.estimate, r.low, r.high] for r in results}}


def _merge(before_path: str, after_path: str, out: str | None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from rawname import RAW, commit_of, head_commit
    with open(before_path) as fh:
        before = json.load(fh)
    with open(after_path) as fh:
        after = json.load(fh)
    date = time.strftime("%Y-%m-%d")
    path = out or os.path.join(RAW, f"{date}_{commit_of(after.get('commit')) or head_commit()}_all_methods_n60.json")
    with open(path, "w") as fh:
        json.dump({"before": before, "after": after}, fh, indent=1)
    rows = {r["model"]: r for r in after["results"]}
    squared_after = rows.get("squared", {}).get("wall_median")
    print("| model | before wall s (CPU s) | after wall s (CPU s) | before / after | after / squared after "
          "| largest change of an estimate or bound |")
    print("|---|---|---|---|---|---|")
    for b in before["results"]:
        a = rows[b["model"]]
        ratio = b["wall_median"] / a["wall_median"]
        rel = a["wall_median"] / squared_after if squared_after else float("nan")
        change = max((abs(x - z) for m, v in b["estimates"].items() for x, z in zip(v, a["estimates"].get(m, v))
                      if x is not None and z is not None), default=float("nan"))
        print(f"| {b['model']} | {b['wall_median']:.2f} ({b['cpu_median']:.2f}) | {a['wall_median']:.2f} "
              f"({a['cpu_median']:.2f}) | {ratio:.1f}x | {rel:.1f}x | {change:.2g} |")
    print(f"\nwritten: {path}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {', '.join(MODELS)}")
    parser.add_argument("--resamples", type=int, default=None, help="n_resamples (B of CUD, BS1, BS2)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label", default="")
    parser.add_argument("--commit", default=None, help="the commit measured (default: the imported checkout's head)")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--merge", nargs=2, metavar=("BEFORE", "AFTER"),
                        help="join two runs' files into raw/DATE_COMMIT_all_methods_n60.json (or --out) and print "
                             "the table")
    args = parser.parse_args(argv)
    if args.merge:
        return _merge(*args.merge, args.out)
    import cudbound
    import subprocess
    commit = args.commit or subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(cudbound.__file__)),
                                            "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; cudbound from {os.path.dirname(cudbound.__file__)} ({commit}); "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}; load average {os.getloadavg()}")
    print("command: python " + " ".join(sys.argv), flush=True)
    warnings.simplefilter("ignore")
    results = []
    for model in args.models.split(","):
        row = _run(model.strip(), args.resamples, args.repeats)
        results.append(row)
        slowest = sorted(row["method_seconds_median"].items(), key=lambda kv: -kv[1])[:4]
        print(f"{args.label:>8} {model:>18}: median wall {row['wall_median']:.2f} s, CPU {row['cpu_median']:.2f} s "
              f"({args.repeats} runs); slowest methods " + ", ".join(f"{m} {s:.1f} s" for m, s in slowest), flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"label": args.label, "commit": commit, "resamples": args.resamples, "repeats": args.repeats,
                       "cudbound": os.path.dirname(cudbound.__file__), "load_average": os.getloadavg(),
                       "results": results}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
