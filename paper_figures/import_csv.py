"""Rebuild a study store from its CSV exports (the inverse of ``export_csv.py``).

    python paper_figures/import_csv.py --config experiments/paper.toml --csv results/paper --store /tmp/paper.sqlite

The SQLite stores are not committed; ``results/*_tasks.csv.gz`` and ``*_results.csv.gz``
are. A store rebuilt from them (numbers as exported, to 12 significant digits; no JSON
details) gives the tables and figures of ``results/`` again, so they can be regenerated and
compared without rerunning the study.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402,F401  (puts cudbound on the path the same way as the other scripts)

from cudbound.coverage import ResultStore, load_config  # noqa: E402
from cudbound.coverage.chunks import parse_value as _value  # noqa: E402  (the chunks' parser: one reading of an export)
from cudbound.coverage.store import RESULT_COLUMNS  # noqa: E402

def _read(path):
    with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
        return [{k: _value(k, v) for k, v in row.items()} for row in csv.DictReader(fh)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="the study's configuration (its protocol is stored)")
    parser.add_argument("--csv", required=True, help="path prefix of the two CSV files (as given to export_csv.py)")
    parser.add_argument("--store", required=True, help="the store to create (must not exist)")
    args = parser.parse_args(argv)
    prefix, store_path = Path(args.csv), Path(args.store)
    if store_path.exists():
        parser.error(f"{store_path} exists; choose a new path")
    rows = defaultdict(list)
    for r in _read(prefix.with_name(prefix.name + "_results.csv.gz")):
        rows[(r["dataset"], r["n"], r["rep"])].append({k: r[k] for k in ("method",) + RESULT_COLUMNS if k in r})
    tasks = _read(prefix.with_name(prefix.name + "_tasks.csv.gz"))
    with ResultStore(store_path, load_config(args.config)) as store:
        store.write_many({**t, "host": "csv", "rows": rows[(t["dataset"], t["n"], t["rep"])]} for t in tasks)
    print(f"wrote {len(tasks)} tasks and {sum(map(len, rows.values()))} result rows to {store_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
