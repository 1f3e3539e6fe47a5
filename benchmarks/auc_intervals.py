"""Time the intervals for the AUC of one score vector (``cudbound.auc.intervals``, issue 32, point 1).

    PYTHONPATH=. python benchmarks/auc_intervals.py [--n 100000] [--repeats 7] [--bootstrap-n 2000] [--resamples 2000]

from the root of the checkout to measure (without ``PYTHONPATH`` the script imports whichever
``cudbound`` is installed; it prints the one it imported).

Issue 32's target: ``delong_interval`` at n = 100,000 in well under a second. The closed-form
intervals (DeLong on both scales, Hanley & McNeil, Newcombe) are timed at ``--n`` points, the
bootstrap (percentile and BCa, ``--resamples`` resamples) at ``--bootstrap-n`` points (0 to
skip it). Data: scores N(0.8 y, 1) rounded to 2 decimals (ties), labels Bernoulli(1/2), from
``default_rng(--seed)``. Each function is called once untimed, then ``--repeats`` times; the
median and the minimum wall time (``time.perf_counter``) are printed with the machine and the
command. Prints only (no file in ``raw/``).
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np


def _data(n: int, seed: int):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    return y, np.round(rng.normal(size=n) + 0.8 * y, 2)


def _time(call, repeats: int) -> list[float]:
    call()                                            # warm-up (imports, first allocation)
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        call()
        out.append(time.perf_counter() - t)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="points for the closed-form intervals")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--bootstrap-n", type=int, default=2000, help="points for the bootstrap (0: skip it)")
    ap.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import cudbound
    from cudbound.auc.intervals import bootstrap_interval, delong_interval, hanley_mcneil_interval, newcombe_interval

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, numpy {np.__version__}, load average "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    env = f"PYTHONPATH={os.environ['PYTHONPATH']} " if os.environ.get("PYTHONPATH") else ""
    print("command:", env + " ".join([os.path.basename(sys.executable)] + sys.argv))
    print("cudbound:", cudbound.__file__)
    y, s = _data(args.n, args.seed)
    cases = [("delong", args.n, lambda: delong_interval(y, s)),
             ("delong_logit", args.n, lambda: delong_interval(y, s, transform="logit")),
             ("hanley_mcneil", args.n, lambda: hanley_mcneil_interval(y, s)),
             ("newcombe", args.n, lambda: newcombe_interval(y, s))]
    if args.bootstrap_n > 0:
        yb, sb = _data(args.bootstrap_n, args.seed)
        for method in ("percentile", "bca"):
            cases.append((f"bootstrap_{method} (B={args.resamples})", args.bootstrap_n,
                          lambda method=method: bootstrap_interval(yb, sb, method=method,
                                                                   n_resamples=args.resamples, rng=0)))
    print(f"{'interval':32s} {'n':>8s} {'median s':>10s} {'min s':>10s}")
    for name, n, call in cases:
        times = _time(call, args.repeats)
        print(f"{name:32s} {n:8d} {statistics.median(times):10.4f} {min(times):10.4f}", flush=True)


if __name__ == "__main__":
    main()
