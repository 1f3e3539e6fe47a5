"""How the order statistic of one third-study `cud` task closes, round by round: the bracket
k-th(lo) <= Q_hat <= k-th(up) (in counts, Q_hat n) after every round of :mod:`cudbound.quantile`, with the
replicates settled so far; cited in results/study3/README.md (rep 12 of Liver n = 100, 2026-12-04).

    python benchmarks/measure/difference_task_rounds.py --dataset liver --n 100 --rep 12 [--data DIR] [--out FILE]

Runs the task as the study's runner does (:func:`cudbound.coverage.tasks.run_task` with
``experiments/study3_cud.toml``), the comparison's progress display replaced by a recorder. Prints the machine,
the command and one JSON line per round (seconds since the start, the bracket, the settled count); the record
(``benchmarks/raw/DATE_COMMIT_difference_rounds_DATASET_nN_repREP.json``) is written again after every round, with
``"finished": false`` until the task ends, so that a run stopped from outside keeps its rounds.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy is imported

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import rawname  # noqa: E402


class _Settled:
    """The replicate bar's interface (:func:`cudbound._replicate_progress.replicate_bar`), counting only."""

    def __init__(self):
        self.n = 0

    def update(self, k=1):
        self.n += k

    def set_postfix_str(self, *args, **kwargs):
        pass

    def refresh(self):
        pass

    def close(self):
        pass


def main():
    import cudbound.compare.cud as cud_module
    from cudbound.coverage import Task, load_config
    from cudbound.coverage.tasks import run_task

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="liver")
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--rep", type=int, required=True)
    ap.add_argument("--data", default=os.environ.get("CUDBOUND_DATA"), help="the UCI files (default $CUDBOUND_DATA)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; python {platform.python_version()}")
    print("command: python " + " ".join(sys.argv), flush=True)
    what = f"difference_rounds_{args.dataset}_n{args.n}_rep{args.rep}"
    out = args.out or rawname.stem(what) + ".json"
    bar = _Settled()
    record = {"command": "python " + " ".join(sys.argv), "dataset": args.dataset, "n": args.n, "rep": args.rep,
              "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rounds": [], "finished": False}
    t0 = time.perf_counter()

    def recorder(bar_, centre, deadline, **keywords):
        def show(a, c):
            row = {"seconds": round(time.perf_counter() - t0, 1), "low_counts": a * args.n,
                   "high_counts": c * args.n, "settled": bar.n}
            record["rounds"].append(row)
            print(json.dumps(row), flush=True)
            rawname.write_record(what, record, out)
        return show

    cud_module.replicate_bar = lambda progress, total, desc="": bar
    cud_module.bracket_display = recorder
    config = load_config(os.path.join(rawname.REPO, "experiments", "study3_cud.toml"), data_home=args.data)
    rows = run_task(config, Task(args.dataset, args.n, args.rep), args.data)
    record.update(finished=True, seconds=time.perf_counter() - t0, rows=rows)
    rawname.write_record(what, record, out)


if __name__ == "__main__":
    main()
