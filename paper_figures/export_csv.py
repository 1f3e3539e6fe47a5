"""Export a study store's rows to gzipped CSV files (for the record; no JSON details).

    python paper_figures/export_csv.py --store results/paper.sqlite --out results/paper

writes ``results/paper_tasks.csv.gz`` (one row per task: data set, n, repetition, training
and true error, redraws, seconds) and ``results/paper_results.csv.gz`` (one row per task
and method: low, high, centre, width, covered, seconds and the CUD search statistics).
"""
from __future__ import annotations

import argparse
import csv
import gzip
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402,F401  (puts cudbound on the path the same way as the other scripts)

from cudbound.coverage import ResultStore  # noqa: E402

DROP = {"details", "warnings", "host", "finished"}


def _write(path: Path, rows: list[dict]) -> None:
    with gzip.open(path, "wt", newline="", compresslevel=9) as f:
        if not rows:
            return
        cols = [c for c in rows[0] if c not in DROP]
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow([f"{r[c]:.12g}" if isinstance(r[c], float) else r[c] for c in cols])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--out", required=True, help="path prefix of the two files")
    args = parser.parse_args(argv)
    with ResultStore(args.store) as store:
        tasks, results = store.tasks(), store.results()
    prefix = Path(args.out)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    _write(prefix.with_name(prefix.name + "_tasks.csv.gz"), tasks)
    _write(prefix.with_name(prefix.name + "_results.csv.gz"), results)
    print(f"wrote {len(tasks)} task rows and {len(results)} result rows under {prefix}_*.csv.gz")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
