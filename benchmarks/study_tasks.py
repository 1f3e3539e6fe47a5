"""CPU time of single study tasks (the unit of the coverage studies' reruns), for the code on
``sys.path`` (run it once per version with PYTHONPATH pointing at each checkout).

    PYTHONPATH=/path/to/checkout python benchmarks/study_tasks.py --config experiments/study3.toml \
        --task magic:50:357 --task spam:50:743 --repeats 3 --label after --out /tmp/after.json
    PYTHONPATH=... python benchmarks/study_tasks.py --config experiments/study2.toml --without cud \
        --task spam:30:200 --repeats 3 --label after

Prints the machine, the command, and per task the median CPU seconds (``time.process_time``) and
wall seconds over ``--repeats`` runs of the same task (after one warm-up task), and writes them
as JSON. Real data sets need ``$CUDBOUND_DATA``. CPU time is the figure to compare: the machine
may be shared, which inflates wall time more than CPU time.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="the study's TOML")
    parser.add_argument("--task", action="append", required=True, help="DATASET:N:REP (repeatable)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--without", action="append", default=[],
                        help="leave this method out of the study's methods (repeatable), e.g. cud, whose rows "
                             "the second study's rerun reuses")
    parser.add_argument("--label", default="")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    import cudbound
    from cudbound.coverage import Task, load_config, run_task
    config = load_config(args.config)
    if args.without:
        import dataclasses

        unknown = sorted(set(args.without) - set(config.methods))
        if unknown:
            parser.error(f"--without {unknown}: not among the study's methods {list(config.methods)}")
        config = dataclasses.replace(config, methods=tuple(m for m in config.methods if m not in args.without))
    data = os.environ.get("CUDBOUND_DATA")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; cudbound from {os.path.dirname(cudbound.__file__)}")
    print("command: python " + " ".join(sys.argv))
    warnings.simplefilter("ignore")
    first = config.tasks()[0]
    run_task(config, first, data)                                    # warm-up: imports, kernels
    results = []
    for spec in args.task:
        dataset, n, rep = spec.split(":")
        task = Task(dataset, int(n), int(rep))
        cpu, wall = [], []
        for _ in range(args.repeats):
            c0, w0 = time.process_time(), time.perf_counter()
            run_task(config, task, data)
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
        row = {"task": spec, "cpu_median": statistics.median(cpu), "wall_median": statistics.median(wall),
               "cpu": cpu, "wall": wall}
        results.append(row)
        print(f"{args.label:>8} {spec:>18}: median CPU {row['cpu_median']:.2f} s, wall {row['wall_median']:.2f} s "
              f"({args.repeats} runs)", flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"label": args.label, "config": args.config, "results": results}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
