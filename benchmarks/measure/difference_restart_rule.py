"""The CUD interval of a difference with a dropped state's search going to the end, or restarting under the
budget of a round M rounds ahead (``cudbound.compare.cud.RESTART_AHEAD``, :func:`cudbound.quantile.order_statistic`'s
``restart_ahead``), and with more memory for the states kept between rounds
(``cudbound.compare.cud.STATE_BYTES``); cited in benchmarks/RESULTS.md and docs/engine.md.

    python benchmarks/measure/difference_restart_rule.py --runs logistic100:0:end,logistic100:0:2 \\
        [--core 1] [--timeout 3600] [--data DIR] [--out FILE]

A run is CASE:SEED:RULE[:STATE_MIB]: CASE ``logistic100`` or ``squared50`` (``benchmarks/difference.py``'s
cases, B = 500) or ``liverREP`` (the third study's `cud` task of Liver, n = 100, repetition REP, as the study's
runner computes it: ``experiments/study3_cud.toml``; SEED is then ignored), RULE ``end`` or M (0, 1, 2, ...),
STATE_MIB the states' memory (default: the package's). Each run is a process of its own (pinned to ``--core``,
BLAS on one thread), timed after an untimed call at B = 20 for the two benchmark cases; a run that passes
``--timeout`` seconds is recorded as such. Prints the machine, the command and one JSON line per run: CPU and
wall seconds, total nodes, the interval, peak memory.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy is imported

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import rawname  # noqa: E402

CASES = {"squared50": (50, "squared"), "logistic100": (100, "logistic")}


def one(case: str, seed: int, rule: str, state_mib: float | None, data: str | None) -> dict:
    """One run in this process: the record printed as the last line of its output."""
    import resource

    import cudbound
    import cudbound.compare.cud as cud_module
    from cudbound.compare import cud_difference_interval
    from cudbound.datasets import LinearGaussian

    cud_module.RESTART_AHEAD = None if rule == "end" else int(rule)
    if state_mib is not None:
        cud_module.STATE_BYTES = int(state_mib * (1 << 20))
    out = {"case": case, "seed": seed, "rule": rule, "state_bytes": cud_module.STATE_BYTES}
    if case.startswith("liver"):
        from cudbound.coverage import Task, load_config
        from cudbound.coverage.tasks import run_task

        config = load_config(os.path.join(rawname.REPO, "experiments", "study3_cud.toml"), data_home=data)
        t0, c0 = time.perf_counter(), time.process_time()
        rows = run_task(config, Task("liver", 100, int(case[5:])), data)["rows"]
        row = next(r for r in rows if r["method"] == "compare.cud")
        interval, nodes = [row["low"], row["high"]], row["details"]["search_nodes_total"]
    else:
        n, loss = CASES[case]
        X, y = LinearGaussian(n_features=2, flip_probability=0.2).sample(n, seed)
        a, b = cudbound.Procedure(loss=loss), cudbound.Procedure(basis="poly:2", loss=loss)
        cud_difference_interval(a, b, X, y, n_resamples=20, rng=seed)
        t0, c0 = time.perf_counter(), time.process_time()
        res = cud_difference_interval(a, b, X, y, n_resamples=500, rng=seed)
        interval, nodes = list(res.confidence_interval), res.details["search_nodes_total"]
    out.update(seconds=round(time.perf_counter() - t0, 2), cpu_seconds=round(time.process_time() - c0, 2),
               nodes_total=int(nodes), interval=interval,
               peak_rss_mib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default=None, help="CASE:SEED:RULE[:STATE_MIB],... (module docstring)")
    ap.add_argument("--core", type=int, default=None, help="pin every run to this core")
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--data", default=os.environ.get("CUDBOUND_DATA"), help="the UCI files (default $CUDBOUND_DATA)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)   # a single run, in the child process
    args = ap.parse_args()
    if args.one is not None:
        case, seed, rule, *mib = args.one.split(":")
        print(json.dumps(one(case, int(seed), rule, float(mib[0]) if mib else None, args.data)), flush=True)
        return
    if not args.runs:
        ap.error("--runs CASE:SEED:RULE[,...] is required")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"python {platform.python_version()}")
    print("command: python " + " ".join(sys.argv), flush=True)
    record = {"command": "python " + " ".join(sys.argv), "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
              "runs": []}
    out = args.out or rawname.stem("difference_restart_rule") + ".json"
    for spec in args.runs.split(","):
        case, _seed, rule, *_ = spec.split(":")
        if (case not in CASES and not case.startswith("liver")) or not (rule == "end" or rule.isdigit()):
            ap.error(f"bad run {spec!r}: CASE:SEED:RULE[:STATE_MIB], CASE in {sorted(CASES)} or liverREP, "
                     "RULE end or a number of rounds ahead")
        cmd = [sys.executable, os.path.abspath(__file__), "--one", spec] + (["--data", args.data] if args.data else [])
        if args.core is not None:
            cmd = ["taskset", "-c", str(args.core)] + cmd
        t0 = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            row = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {
                "run": spec, "failed": done.stderr[-2000:]}
        except subprocess.TimeoutExpired:
            row = {"run": spec, "timed_out_after_seconds": round(time.perf_counter() - t0, 1)}
        row["load_average"] = os.getloadavg()
        record["runs"].append(row)
        print(json.dumps(row), flush=True)
        rawname.write_record("difference_restart_rule", record, out)


if __name__ == "__main__":
    main()
