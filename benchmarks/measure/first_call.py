"""Wall seconds of a new process's first CUD interval, per version, on a kernel cache that already
holds every kernel (each version's cache filled by an untimed run first); cited in CHANGELOG.md and
benchmarks/RESULTS.md (the smooth solver compiled in every process, fixed in 73d64d9).

    python benchmarks/measure/first_call.py --python before=/path/to/src,after=/path/to/src \
        --losses logistic,squared --repeats 3 [--core 1]

Each timed run is a fresh ``python -c`` with ``PYTHONPATH`` set to the version's source tree: the
import, then ``cud_interval`` of ``LinearGaussian(n_features=2, flip_probability=0.2).sample(100, 0)``
(``benchmarks/difference.py``'s data), B = 20, seed 0, timed from the import to the interval. (On data
drawn otherwise, ``default_rng(0)``, no replicate reached the smooth solver's Python-side call, and the
two versions took the same time.) Versions alternate within each repeat. Prints the machine, the
command and the medians; writes nothing.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile

SNIPPET = """
import time
t0 = time.perf_counter()
import numpy as np, cudbound
from cudbound.datasets import LinearGaussian
X, y = LinearGaussian(n_features=2, flip_probability=0.2).sample(100, 0)
r = cudbound.cud_interval(X, y, procedure=cudbound.Procedure(loss={loss!r}), n_resamples=20, rng=0, progress=False)
print(cudbound.__file__, time.perf_counter() - t0, r.confidence_interval.low, r.confidence_interval.high)
"""


def _once(src, loss, core):
    env = dict(os.environ, PYTHONPATH=src, OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-c", SNIPPET.format(loss=loss)]
    if core is not None:
        cmd = ["taskset", "-c", str(core), *cmd]
    # run outside any checkout: ``-c`` puts the working directory first on sys.path
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, timeout=3600,
                         cwd=tempfile.gettempdir())
    where, seconds, low, high = out.stdout.split()[-4:]
    if not where.startswith(os.path.abspath(src)):
        raise RuntimeError(f"{src}: imported {where}")
    return float(seconds), (float(low), float(high))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", required=True, help="label=source tree, comma separated")
    ap.add_argument("--losses", default="logistic,squared")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--core", type=int, default=None)
    args = ap.parse_args()
    versions = [v.split("=", 1) for v in args.python.split(",")]
    print("machine:", platform.machine(), platform.processor() or "", os.cpu_count(), "cores;",
          platform.python_version())
    print("command:", " ".join(sys.argv))
    for loss in args.losses.split(","):
        for label, src in versions:   # untimed: the version's kernels into the cache
            _once(src, loss, args.core)
        times = {label: [] for label, _ in versions}
        intervals = {}
        for _ in range(args.repeats):
            for label, src in versions:
                s, ci = _once(src, loss, args.core)
                times[label].append(s)
                intervals[label] = ci
        for label, _ in versions:
            print(f"{loss:10s} {label:8s} median {statistics.median(times[label]):7.2f} s  runs "
                  + " ".join(f"{t:.2f}" for t in times[label]) + f"  interval {intervals[label]}")


if __name__ == "__main__":
    main()
