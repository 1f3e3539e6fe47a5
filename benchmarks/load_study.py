"""Load test of the coverage runner: a study of many small tasks on 2 workers, the runner's
resident memory sampled from /proc while it runs, then ``cudbound store check`` timed on the
store it made (issue 17: "memory flat", "store check in seconds"; docs/reliability.md).

    python benchmarks/load_study.py --tasks 5000 --jobs 2 --out /tmp/load

Prints the machine, the command, the runner's RSS at the start (first task stored), at the
end and its maximum, the wall time, and the store check's time. Linux only (/proc).
"""
from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from pathlib import Path

CONFIG = """
[study]
name = "load"
seed = 17
repetitions = {reps}
sizes = [30]
confidence_level = 0.95
test_size = 500
loss = "squared"
methods = ["kohavi", "martin", "langford", "yang"]

[options]
n_boot = 20

[[datasets]]
name = "donut"

[[datasets]]
name = "three_points"
"""


def rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def stored(store: Path) -> int:
    import sqlite3
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
    except sqlite3.Error:
        return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5000, help="tasks in the study (two data sets; default 5000)")
    parser.add_argument("--jobs", default="2")
    parser.add_argument("--out", required=True, help="directory for the config and the store (must not hold a store)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config, store = out / "load.toml", out / "load.sqlite"
    if store.exists():
        parser.error(f"{store} exists: give an empty --out directory")
    config.write_text(CONFIG.format(reps=args.tasks // 2))
    cmd = [sys.executable, "-m", "cudbound", "coverage", "--config", str(config), "--store", str(store),
           "--jobs", args.jobs, "--no-progress"]
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()} {platform.release()}, "
          f"Python {platform.python_version()}; date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("command:", " ".join(cmd))
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = []  # (seconds, tasks stored, RSS MiB)
    while proc.poll() is None:
        rss = rss_mib(proc.pid)
        if rss is not None:
            samples.append((time.monotonic() - start, stored(store), rss))
        time.sleep(1.0)
    outs = proc.communicate()
    wall = time.monotonic() - start
    if proc.returncode != 0:
        print(outs[1], file=sys.stderr)
        return proc.returncode
    working = [s for s in samples if s[1] > 0]
    first, last = working[0], working[-1]
    print(f"tasks: {stored(store)} in {wall:.0f} s on {args.jobs} workers")
    print(f"runner RSS: {first[2]:.1f} MiB at the first stored task ({first[1]} tasks, {first[0]:.0f} s), "
          f"{last[2]:.1f} MiB at the end ({last[1]} tasks, {last[0]:.0f} s), max {max(s[2] for s in working):.1f} MiB")
    quarter = [s for s in working if s[1] >= stored(store) // 4]
    if quarter:
        print(f"runner RSS from a quarter of the tasks on: min {min(s[2] for s in quarter):.1f}, "
              f"max {max(s[2] for s in quarter):.1f} MiB")
    t0 = time.monotonic()
    check = subprocess.run([sys.executable, "-m", "cudbound", "store", "check", str(store)], capture_output=True,
                           text=True)
    print(f"cudbound store check: exit {check.returncode} in {time.monotonic() - t0:.2f} s (process start included)")
    print("   " + "\n   ".join(check.stdout.strip().splitlines()[:6]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
