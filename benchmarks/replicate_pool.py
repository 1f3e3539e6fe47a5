"""The replicate pool (``cudbound interval --jobs 2``): wall time before and after a change.

    python benchmarks/replicate_pool.py --python-before /work/venv_before_e1/bin/python \\
        --resamples 2000 6000 --runs 5

Each run is the whole command in a fresh process, on the README's example file with a
degree-2 basis and every replicate solved to the end (``--exact-distribution``). The time
compared is the interval's own (the ``seconds`` of its JSON result: the fit, the replicate pool's
start, its searches and its shutdown), not the process's wall time, which also counts the imports
and differs by about 0.1 s between an installed package and a checkout on ``PYTHONPATH``; the
wall time is shown beside it. "before" runs ``--python-before`` (a virtual environment with the
older cudbound installed, non-editable) from a temporary directory; "after" runs this checkout
(``PYTHONPATH``). Before and after alternate run by run, so both see the same load. Each pair
of outputs must agree (the interval, its half-width, the search's node and solve counts); the
driver stops otherwise.
Prints the machine, the command and the median wall time per B, and writes the same Markdown to
``--out``: by default ``benchmarks/raw/DATE_COMMIT_replicate_pool.md`` (the day of the run, this
checkout's head), ``--out -`` for stdout only. ``benchmarks/RESULTS.md`` is edited by hand
(``benchmarks/README.md``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def command(python: str, resamples: int) -> list:
    return [python, "-m", "cudbound", "interval", "--data", str(ROOT / "docs" / "data" / "patients.csv"),
            "--label", "outcome", "--pos-label", "yes", "--seed", "1", "--jobs", "2", "--resamples", str(resamples), "--basis", "poly:2",
            "--exact-distribution", "--no-progress", "--json"]


def essentials(record) -> tuple:
    """What both versions' JSON records hold, whatever their layout: the interval's ends, its
    half-width and the search's node and solve counts (the record, or its first result)."""
    cud = record["results"][0] if "results" in record else record
    search = cud["search"]
    return cud["low"], cud["high"], cud["half_width"], search["nodes_total"], search["solves_total"]


def seconds(record) -> float:
    """The interval's own computation time, as it reports it."""
    return float((record["results"][0] if "results" in record else record)["seconds"])


def run(python: str, resamples: int, env: dict, cwd: str) -> tuple:
    start = time.perf_counter()
    proc = subprocess.run(command(python, resamples), capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{python} failed:\n{proc.stderr}")
    record = json.loads(proc.stdout)
    return wall, seconds(record), essentials(record)


def cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-before", required=True, help="interpreter of the environment with the older cudbound")
    parser.add_argument("--resamples", type=int, nargs="+", default=[2000, 6000])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per version and B (default 5)")
    parser.add_argument("--out", default=None,
                        help="markdown file for the results, '-' for stdout only (default: "
                             "benchmarks/raw/DATE_COMMIT_replicate_pool.md; never benchmarks/RESULTS.md, which is "
                             "edited by hand)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import rawname  # benchmarks/rawname.py: default output names in benchmarks/raw/
    rawname.refuse_results_md(args.out, parser.error)
    if args.out is None:
        args.out = rawname.stem("replicate_pool", rawname.head_commit(), rawname.cudbound_dirty(),
                                exts=("md",)) + ".md"
    if args.out != "-":
        rawname.ensure_dir(args.out)
    after_env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    lines = [f"# Replicate pool, before and after ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})", "",
             f"- machine: {cpu()}; {os.cpu_count()} cores; {platform.system()} {platform.release()}; "
             f"Python {platform.python_version()}",
             f"- command: `python {' '.join(sys.argv)}`",
             f"- each run: `{' '.join(command('python', 0)).replace('--resamples 0', '--resamples B')}`",
             f"- before: {args.python_before}; after: {ROOT} (PYTHONPATH)",
             f"- {args.runs} timed runs per version and B after one untimed run of each; before and after "
             "alternate; every pair of outputs identical: interval, half-width, nodes, solves (checked)", "",
             "| B | before: median s (interval) | after: median s (interval) | ratio before / after "
             "| before: median wall s | after: median wall s |", "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as away:
        for B in args.resamples:
            run(args.python_before, B, before_env, away)      # warm-up: numba's caches, imports
            run(sys.executable, B, after_env, str(ROOT))
            before, after = [], []
            for _ in range(args.runs):
                b = run(args.python_before, B, before_env, away)
                a = run(sys.executable, B, after_env, str(ROOT))
                if b[2] != a[2]:
                    raise SystemExit(f"B = {B}: before and after disagree")
                before.append(b[:2])
                after.append(a[:2])
            (wb, sb), (wa, sa) = ([statistics.median(x) for x in zip(*v)] for v in (before, after))
            lines.append(f"| {B} | {sb:.3f} | {sa:.3f} | {sb / sa:.1f}x | {wb:.2f} | {wa:.2f} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out != "-":
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
