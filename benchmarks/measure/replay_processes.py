"""Replay captured replicate searches with several versions, each in many processes of its own,
and compare the versions by the per-process minimum (issue 30, 2026-11-26).

    python benchmarks/measure/replay_processes.py CALLS.pkl LABEL=PYTHON [LABEL=PYTHON ...] \
        [--processes 10] [--rounds 6] [--core 1]

``CALLS.pkl`` comes from ``capture_replicates.py``; each ``PYTHON`` is an interpreter with one
version of cudbound installed (e.g. ``before=/tmp/venv_8af/bin/python``, ``after=.venv/bin/python``).
The versions run in turn, one process each, ``--processes`` times; a process replays the calls
once to warm up, then ``--rounds`` times, timing each round (CPU seconds). Prints one JSON line
per process and a summary per version: the median over processes of the per-process minimum and
of the per-process median, with their ranges.

Why processes and minima: on this machine the time of a round depends on the process far more
than on the round. One process of a version repeats its time to a few percent, while another
process of the same version, started a second later, can take 1.6 times as long for every round
(two modes, seen with the machine idle and with address-space randomisation off). Within one
process, rounds also jump between the modes. A version is therefore judged by many processes,
and by the minimum of each, which sits in the fast mode.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, pickle, sys, time
from cudbound.search.core import compiled_replicate
calls = pickle.load(open(sys.argv[1], "rb"))
# capture_replicates.py stores argument tuples; older captures (args, kwargs) pairs
calls = [c if len(c) == 2 and isinstance(c[1], dict) else (c, {}) for c in calls]
def replay():
    for args, kwargs in calls:
        compiled_replicate(*args, **kwargs)
replay()
out = []
for _ in range(int(sys.argv[2])):
    t = time.process_time()
    replay()
    out.append((time.process_time() - t) * 1e3)
print(json.dumps(out))
"""


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("calls")
    ap.add_argument("versions", nargs="+", help="LABEL=PYTHON")
    ap.add_argument("--processes", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--core", type=int, default=1)
    args = ap.parse_args(argv)
    versions = [v.split("=", 1) for v in args.versions]
    per = {label: [] for label, _ in versions}
    for i in range(args.processes):
        for label, python in versions:
            cmd = ["taskset", "-c", str(args.core), python, "-c", CHILD, args.calls, str(args.rounds)]
            res = subprocess.run(cmd, capture_output=True, text=True, check=True)
            rounds = json.loads(res.stdout.strip().splitlines()[-1])
            per[label].append(rounds)
            print(json.dumps({"process": i, "version": label, "ms_per_round": [round(x, 1) for x in rounds]}))
    print(f"# {os.uname().nodename}, {os.cpu_count()} cores, core {args.core}; {' '.join(sys.argv)}")
    for label, runs in per.items():
        mins = sorted(min(r) for r in runs)
        meds = sorted(statistics.median(r) for r in runs)
        print(f"{label}: per-process minimum, median {statistics.median(mins):.1f} ms [{mins[0]:.1f}..{mins[-1]:.1f}];"
              f" per-process median, median {statistics.median(meds):.1f} ms [{meds[0]:.1f}..{meds[-1]:.1f}]")


if __name__ == "__main__":
    main()
