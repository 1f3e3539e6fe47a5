"""Whether a mixed-integer program bounds a side's count tightly enough to settle the third study's slow Liver
n = 100 replicates (``docs/engine.md``, "A resample on which the fit is no better than the zero classifier": the
lever named there, measured, not built); cited in benchmarks/RESULTS.md (2026-12-04).

    python benchmarks/measure/difference_count_mip.py --rep 12 --resamples 25 --only 2 4 5 19 22 24 \
        [--time-limit 120] [--data DIR]

The resamples are those of ``difference_degenerate.py`` (``default_rng(7)``, the same task), whose JSON gives each
one's Q^(b) or its bracket. For each side X (A and B) the largest count C_X = sum_i (nu_i - 1) 1{s_i != y_i} over
the patterns s realisable by the basis, bounded by HiGHS (``scipy.optimize.milp``) on the closure relaxation:
variables beta with ||beta||_inf = 1 (one coordinate at +-1, chosen by binaries) and e_i in {0, 1} for the points with
nu_i != 1 (the others weigh nothing), y_i phi_i'beta >= -M_i e_i and y_i phi_i'beta <= M_i (1 - e_i), M_i =
||phi_i||_1. Every strictly realisable pattern is feasible (scale its beta to ||beta||_inf = 1), so the program's
dual bound is an upper bound of max C_X (up to HiGHS's tolerances; equal to it when no p of the points are
linearly dependent: a tie set then has at most p - 1 independent points, which a small step of beta puts on
any sides). The least count is -max (sum_i (nu_i - 1) = 0 and -beta realises -s), so
Q^(b) <= (max C_A + max C_B) / n, as G <= 1. Prints one line per resample; writes the JSON to
``benchmarks/raw/DATE_COMMIT_difference_count_mip_liver_repREP.json``.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy is imported

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import rawname  # noqa: E402
from difference_degenerate import task_arguments  # noqa: E402


def count_bound(Z, y, counts, time_limit):
    """(incumbent, dual bound, seconds, HiGHS status) of max C over the closure relaxation above."""
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp

    w = np.asarray(counts, dtype=float) - 1.0
    keep = w != 0
    P = Z[keep] * y[keep, None]
    w = w[keep]
    m, p = P.shape
    M = np.abs(P).sum(axis=1)
    nv = p + m + 2 * p                       # beta, e, the +1 and -1 choices of the coordinate at the norm
    c = np.zeros(nv)
    c[p:p + m] = -w
    rows = np.zeros((2 * m + 2 * p + 1, nv))
    lo = np.full(len(rows), -np.inf)
    hi = np.full(len(rows), np.inf)
    for i in range(m):
        rows[2 * i, :p] = rows[2 * i + 1, :p] = P[i]
        rows[2 * i, p + i] = rows[2 * i + 1, p + i] = M[i]
        lo[2 * i] = 0.0                      # y phi'beta >= -M e
        hi[2 * i + 1] = M[i]                 # y phi'beta <= M (1 - e)
    for j in range(p):
        r = 2 * m + 2 * j
        rows[r, j], rows[r, p + m + j], lo[r] = 1.0, -2.0, -1.0                 # beta_j >= -1 + 2 u+_j
        rows[r + 1, j], rows[r + 1, p + m + p + j], hi[r + 1] = 1.0, 2.0, 1.0   # beta_j <= 1 - 2 u-_j
    rows[-1, p + m:] = 1.0
    lo[-1] = hi[-1] = 1.0                    # one coordinate at +1 or -1
    t = time.perf_counter()
    res = milp(c, constraints=LinearConstraint(rows, lo, hi), integrality=np.r_[np.zeros(p), np.ones(m + 2 * p)],
               bounds=Bounds(np.r_[-np.ones(p), np.zeros(m + 2 * p)], np.ones(nv)),
               options={"time_limit": time_limit, "mip_rel_gap": 0.0})
    incumbent = -float(res.fun) if res.x is not None else float("nan")
    bound = -float(res.mip_dual_bound) if getattr(res, "mip_dual_bound", None) is not None else float("nan")
    return incumbent, bound, time.perf_counter() - t, int(res.status)


def main():
    import numpy as np

    args, A, B = task_arguments(__doc__, 25, [
        ("--only", dict(type=int, nargs="*", default=None, help="these resamples only")),
        ("--time-limit", dict(type=float, default=120.0, help="seconds per program"))])
    n = len(A.y)
    rng = np.random.default_rng(7)
    rows = []
    for r in range(args.resamples):
        counts = rng.multinomial(n, np.ones(n) / n).astype(float)
        if args.only and r not in args.only:
            continue
        row = {"resample": r}
        for name, side in (("a", A), ("b", B)):
            inc, bound, sec, status = count_bound(side.Z, side.y, counts, args.time_limit)
            row.update({f"max_c_{name}_found": inc, f"max_c_{name}_bound": bound, f"seconds_{name}": sec,
                        f"status_{name}": status})
        row["q_counts_cap"] = row["max_c_a_bound"] + row["max_c_b_bound"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    record = {"command": "python " + " ".join(sys.argv), "rep": args.rep, "time_limit": args.time_limit,
              "rows": rows}
    rawname.write_record(f"difference_count_mip_liver_rep{args.rep}", record, args.out)


if __name__ == "__main__":
    main()
