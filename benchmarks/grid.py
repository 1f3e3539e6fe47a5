"""Grid benchmark of the exact CUD engine: one whole ``cud_interval`` per cell, on one core.

(The grid and ablation of ``benchmarks/run.py`` before issue 12's targets; run it as
``python benchmarks/run.py grid ...`` or ``python benchmarks/grid.py ...``. Its last results,
measured on the code of bcb6719's time, are the 2026-11-22 section of ``benchmarks/RESULTS.md``.)

Grid: n in {30, 50, 100, 200}, p in {3, 5, 8} (p counts the intercept), a low-noise and a
noisy setting (LinearGaussian with label-flip probability 0.1 and 0.3, i.e. Bayes error
0.1 and 0.3), B = 500, for the compiled engine ("auto") and the generic cvxpy engine.
Each cell runs in a fresh subprocess pinned to one core (peak memory = that process's
peak RSS); the numba cache and cvxpy are warmed up before the clock starts. Reported:
median wall time over the repeats (data sets drawn with seeds 0, 1, ...), and medians
over all replicates of nodes and node solves per replicate.

An ablation section measures each exact bound's effect on nodes per replicate.

    python benchmarks/run.py grid                     # full grid, writes benchmarks/raw/DATE_COMMIT_grid.md
    python benchmarks/run.py grid --n 50 --p 5 --noise 0.3 --repeats 1 --out -   # one cell, to stdout
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import time

import numpy as np


def _cell(args) -> dict:
    """Run one cell in this process (called in a subprocess by the driver)."""
    if hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {args.core if args.core in cores else cores[0]})
    import cudbound
    from cudbound.datasets import LinearGaussian
    from cudbound.search import SearchOptions

    warm = LinearGaussian(n_features=2, flip_probability=0.2).sample(20, np.random.default_rng(99))
    cudbound.cud_interval(*warm, n_resamples=20, rng=0, engine_options={"engine": args.engine})  # numba cache, cvxpy import
    gen = LinearGaussian(n_features=args.p - 1, flip_probability=args.noise)
    X, y = gen.sample(args.n, np.random.default_rng(args.seed))
    if args.ablation:
        from cudbound.cud import bootstrap_counts, search_replicate
        design = np.column_stack([np.ones(args.n), X])
        counts = bootstrap_counts(args.n, args.resamples, np.random.default_rng(args.seed + 1000))
        opts = SearchOptions(flip_cost=args.flip_cost, branching=args.branching, screen=args.screen)
        t0 = time.perf_counter()
        outs = [search_replicate(design, y, c, search_options=opts) for c in counts]
        seconds = time.perf_counter() - t0
        return {"seconds": seconds, "nodes": [o.nodes for o in outs], "solves": [o.solves for o in outs],
                "screened": [o.screened for o in outs], "values": [o.value for o in outs],
                "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    t0 = time.perf_counter()
    res = cudbound.cud_interval(X, y, n_resamples=args.resamples, rng=args.seed, engine_options={"engine": args.engine})
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "nodes": res.stats.nodes.tolist(), "solves": res.stats.solves.tolist(),
            "screened": res.stats.screened.tolist(), "half_width": res.half_width,
            "not_exact": res.stats.n_inexact,
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _run_cell(timeout=None, **kw) -> dict | None:
    """One cell in a fresh process; None if it ran longer than ``timeout`` seconds."""
    cmd = [sys.executable, os.path.abspath(__file__), "--cell"]
    # import the checkout this file belongs to (not whatever ``cudbound`` the interpreter has installed)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [repo, os.environ.get("PYTHONPATH")])))
    for k, v in kw.items():
        flag = "--" + k.replace("_", "-")
        if isinstance(v, bool):
            cmd += [flag] if v else [f"--no-{k.replace('_', '-')}"]
        else:
            cmd += [flag, str(v)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=timeout,
                             env=env)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def machine() -> str:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import cvxpy
    import numba
    import scipy
    return (f"{cpu}; {os.cpu_count()} cores ({'one core per cell' if hasattr(os, 'sched_setaffinity') else 'no pinning'}); "
            f"{platform.system()} {platform.release()}; Python {platform.python_version()}, numpy {np.__version__}, "
            f"scipy {scipy.__version__}, numba {numba.__version__}, cvxpy {cvxpy.__version__}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[30, 50, 100, 200])
    ap.add_argument("--p", type=int, nargs="+", default=[3, 5, 8])
    ap.add_argument("--noise", type=float, nargs="+", default=[0.1, 0.3])
    ap.add_argument("--engines", nargs="+", default=["auto", "cvxpy"])
    ap.add_argument("--cvxpy-cells", default="50:5:0.3",
                    help="cells (n:p:noise, comma-separated, or 'all') run with the cvxpy engine; default "
                         "the target cell only, as one cvxpy cell takes many minutes")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cvxpy-repeats", type=int, default=1, help="repeats for cvxpy cells (each takes minutes)")
    ap.add_argument("--resamples", type=int, default=500)
    ap.add_argument("--cell-timeout", type=float, default=600.0,
                    help="stop a run after this many seconds and report it as stopped")
    ap.add_argument("--ablation-n", type=int, nargs="*", default=[50, 100, 200])
    ap.add_argument("--ablation-resamples", type=int, default=100)
    ap.add_argument("--out", default=None,
                    help="Markdown report, '-' for stdout (default: benchmarks/raw/DATE_COMMIT_grid.md, the day of "
                         "the run and this checkout's head; never benchmarks/RESULTS.md, which is edited by hand)")
    # internal: one cell
    ap.add_argument("--core", type=int, default=0, help="the core each cell is pinned to (default 0)")
    ap.add_argument("--cell", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--engine", default="auto", help=argparse.SUPPRESS)
    ap.add_argument("--ablation", action=argparse.BooleanOptionalAction, default=False, help=argparse.SUPPRESS)
    ap.add_argument("--flip-cost", action=argparse.BooleanOptionalAction, default=True, help=argparse.SUPPRESS)
    ap.add_argument("--screen", action=argparse.BooleanOptionalAction, default=True, help=argparse.SUPPRESS)
    ap.add_argument("--branching", default="critical", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.cell:
        args.n, args.p, args.noise = args.n[0], args.p[0], args.noise[0]
        print(json.dumps(_cell(args)))
        return 0
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import rawname  # benchmarks/rawname.py: default output names in benchmarks/raw/
    rawname.refuse_results_md(args.out, ap.error)
    if args.out is None:
        args.out = rawname.stem("grid", rawname.head_commit(), rawname.cudbound_dirty(), exts=("md",)) + ".md"
    if args.out != "-":
        rawname.ensure_dir(args.out)

    command = "python benchmarks/run.py grid " + " ".join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    lines = [f"# Benchmark results ({datetime.date.today().isoformat()})", "",
             f"Command: `{command.strip()}`", "", f"Machine: {machine()}", "",
             "One whole `cud_interval` (fit, B bootstrap count vectors, B exact replicate suprema) per run, "
             f"B = {args.resamples}, on one core. Time: median over {args.repeats} data sets "
             f"({args.cvxpy_repeats} for the cvxpy engine) "
             "(LinearGaussian, seeds 0..). Nodes and solves: medians per replicate over all replicates of all "
             "repeats (of the runs that finished). Peak memory: largest peak RSS of a cell's process "
             "(Python, numpy, cvxpy and numba included).", "",
             "| engine | n | p | Bayes error | median s | nodes/replicate | solves/replicate | peak MiB | not exact |",
             "|---|---|---|---|---|---|---|---|---|"]
    cvx_cells = None if args.cvxpy_cells == "all" else {
        tuple(float(x) for x in c.split(":")) for c in args.cvxpy_cells.split(",") if c}
    for engine in [e for e in args.engines if e != "none"]:
        for n in args.n:
            for p in args.p:
                for noise in args.noise:
                    if engine == "cvxpy" and cvx_cells is not None and (n, p, noise) not in cvx_cells:
                        continue
                    reps = args.cvxpy_repeats if engine == "cvxpy" else args.repeats
                    runs = [_run_cell(timeout=args.cell_timeout, n=n, p=p, noise=noise, engine=engine, seed=r,
                                      resamples=args.resamples, core=args.core) for r in range(reps)]
                    stopped = sum(r is None for r in runs)
                    runs = [r for r in runs if r is not None]
                    if not runs:
                        row = (f"| {engine} | {n} | {p} | {noise} | > {args.cell_timeout:.0f} (all {reps} runs "
                               f"stopped) | - | - | - | - |")
                        print(row, flush=True)
                        lines.append(row)
                        continue
                    secs = statistics.median([r["seconds"] for r in runs] + [math.inf] * stopped)
                    nodes = statistics.median(x for r in runs for x in r["nodes"])
                    solves = statistics.median(x for r in runs for x in r["solves"])
                    peak = max(r["peak_mib"] for r in runs)
                    inexact = sum(r["not_exact"] for r in runs)
                    shown = f"{secs:.2f}" if math.isfinite(secs) else f"> {args.cell_timeout:.0f}"
                    if stopped:
                        shown += f" ({stopped} of {reps} runs stopped at {args.cell_timeout:.0f} s)"
                    row = (f"| {engine} | {n} | {p} | {noise} | {shown} | {nodes:.0f} | {solves:.0f} | "
                           f"{peak:.0f} | {inexact} |")
                    print(row, flush=True)
                    lines.append(row)
    if args.ablation_n:
        lines += ["", "## Effect of each exact bound (nodes per replicate)", "",
                  f"p = 5, Bayes error 0.3, {args.ablation_resamples} replicates of one data set (seed 0); "
                  "every variant returns identical Q^(b) (checked). Compiled engine. 'paper' = the paper's "
                  "bound (reachable |C| at g(m)) with a static branching order; the parent's minimiser is "
                  "reused by the non-flip child in every variant (solves/nodes shows its saving: about half).",
                  "", "| n | variant | median nodes | mean nodes | median solves | median screened | seconds |",
                  "|---|---|---|---|---|---|---|"]
        variants = [("paper bound, static order, no screening", dict(flip_cost=False, branching="static", screen=False)),
                    ("+ screening", dict(flip_cost=False, branching="static", screen=True)),
                    ("+ flip-cost bound", dict(flip_cost=True, branching="static", screen=True)),
                    ("+ dearest-flip branching", dict(flip_cost=True, branching="dearest", screen=True)),
                    ("+ the bound's critical flip (default)", dict(flip_cost=True, branching="critical", screen=True)),
                    ("default but most-ambiguous branching", dict(flip_cost=True, branching="ambiguous", screen=True))]
        for n in args.ablation_n:
            ref = None
            for name, kw in variants:
                r = _run_cell(n=n, p=5, noise=0.3, seed=0, resamples=args.ablation_resamples, ablation=True,
                              core=args.core, **kw)
                vals = np.array(r["values"])
                if ref is None:
                    ref = vals
                if np.max(np.abs(vals - ref)) > 1e-9:
                    raise SystemExit(f"variant {name!r} changed Q^(b) at n={n}")
                row = (f"| {n} | {name} | {np.median(r['nodes']):.0f} | {np.mean(r['nodes']):.0f} | "
                       f"{np.median(r['solves']):.0f} | {np.median(r['screened']):.0f} | {r['seconds']:.2f} |")
                print(row, flush=True)
                lines.append(row)
    text = "\n".join(lines) + "\n"
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w") as f:
            f.write(text)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
