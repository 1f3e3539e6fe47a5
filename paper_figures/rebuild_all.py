"""Rebuild every table and figure of ``results/`` from what is committed, computing no interval.

    python paper_figures/rebuild_all.py                     # writes into results/
    python paper_figures/rebuild_all.py --out /tmp/check    # elsewhere, e.g. to compare
    python paper_figures/rebuild_all.py --dry-run           # print the steps only

Sources (all committed): the CSV exports of the first study (``results/paper_*.csv.gz``,
``results/alpha_*.csv.gz``, read back into temporary SQLite stores by ``import_csv.py``), and
the chunk directories of the second study (``results/study2/chunks``), of the basis
sensitivity study (``results/sensitivity/chunks``), of the third study (``results/study3/chunks``)
and of its null designs (``results/study3_null/chunks``); the chunks of the second and third
studies under the earlier refit rule (``chunks_shared_basis``), tabulated into ``shared_basis/``;
for "what changed with honest refits" (``refit_change.py``), the chunks of the second and third
studies under the earlier refit rule (``results/study2/chunks_shared_basis``,
``results/study3/chunks_shared_basis``) beside the current ones; the supplementary chunks of the
``cud`` comparison on the third study's tasks (``results/study3/chunks_cud``,
``results/study3_null/chunks_cud``), tabulated with the base chunks when present (complete cells only
in the summaries). A step whose source is absent is skipped with a note. The figures need matplotlib (``pip install "cudbound[figures]"``).
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"paper_figures_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _supplement(directory: Path, config: str) -> list:
    """``--supplement DIR --supplement-config TOML`` for the third study's tables when the supplementary
    chunks of ``cud`` (``chunks_cud``, of ``experiments/<config>.toml``) are there, else nothing: the
    tables are then the base chunks' alone."""
    if not (directory / "protocol.json").is_file():
        return []
    return ["--supplement", str(directory), "--supplement-config", str(ROOT / "experiments" / f"{config}.toml")]


def steps(results: Path, out: Path, stores: Path) -> list:
    """(needs, script, argv) in order; ``needs`` is the committed file or directory read (or a tuple of
    them, all needed)."""
    paper, alpha = stores / "paper.sqlite", stores / "alpha.sqlite"
    study2, sens = results / "study2" / "chunks", results / "sensitivity" / "chunks"
    study3, null = results / "study3" / "chunks", results / "study3_null" / "chunks"
    record2, record3 = results / "study2" / "chunks_shared_basis", results / "study3" / "chunks_shared_basis"
    cud3 = _supplement(results / "study3" / "chunks_cud", "study3_cud")
    cud_null = _supplement(results / "study3_null" / "chunks_cud", "study3_null_cud")
    return [
        (results / "paper_results.csv.gz", "import_csv",
         ["--config", str(ROOT / "experiments" / "paper.toml"), "--csv", str(results / "paper"), "--store", str(paper)]),
        (results / "paper_results.csv.gz", "tables", ["--store", str(paper), "--out", str(out)]),
        (results / "paper_results.csv.gz", "figure_kurtosis",
         ["--store", str(paper), "--out", str(out / "figure1_kurtosis.png")]),
        (results / "alpha_results.csv.gz", "import_csv",
         ["--config", str(ROOT / "experiments" / "alpha.toml"), "--csv", str(results / "alpha"), "--store", str(alpha)]),
        (results / "alpha_results.csv.gz", "figure_alpha", ["--store", str(alpha), "--out", str(out / "figure_alpha.png")]),
        (study2, "study2_tables", ["--chunks", str(study2), "--out", str(out / "study2"),
                                   "--config", str(ROOT / "experiments" / "study2.toml")]),
        (study2, "study2_figure", ["--chunks", str(study2), "--out", str(out / "study2" / "coverage_width.png")]),
        (study2, "figure_kurtosis", ["--chunks", str(study2), "--sizes", "30", "50",
                                     "--out", str(out / "study2" / "figure1_kurtosis.png")]),
        (sens, "sensitivity", ["--chunks", str(sens), "--out", str(out / "sensitivity")]),
        (study3, "study3_tables", ["--chunks", str(study3), "--out", str(out / "study3"),
                                   "--config", str(ROOT / "experiments" / "study3.toml")] + cud3),
        (study3, "study3_figure", ["--chunks", str(study3), "--out", str(out / "study3")]),
        (null, "study3_tables", ["--chunks", str(null), "--out", str(out / "study3_null"),
                                 "--config", str(ROOT / "experiments" / "study3_null.toml")] + cud_null),
        (null, "study3_figure", ["--chunks", str(null), "--out", str(out / "study3_null")]),
        # the record of the earlier refit rule, tabulated by today's scripts
        (record2, "study2_tables", ["--chunks", str(record2), "--out", str(out / "study2" / "shared_basis"),
                                    "--config", str(ROOT / "experiments" / "study2.toml")]),
        (record2, "study2_figure", ["--chunks", str(record2),
                                    "--out", str(out / "study2" / "shared_basis" / "coverage_width.png")]),
        (record2, "figure_kurtosis", ["--chunks", str(record2), "--sizes", "30", "50",
                                      "--out", str(out / "study2" / "shared_basis" / "figure1_kurtosis.png")]),
        (record3, "study3_tables", ["--chunks", str(record3), "--out", str(out / "study3" / "shared_basis"),
                                    "--config", str(ROOT / "experiments" / "study3.toml")]),
        (record3, "study3_figure", ["--chunks", str(record3), "--out", str(out / "study3" / "shared_basis")]),
    ] + [((old, new), "refit_change", ["--old", str(old), "--new", str(new), "--out", str(out / study / "refit_change.md")])
         for study, old, new in (("study2", results / "study2" / "chunks_shared_basis", study2),
                                 ("study3", results / "study3" / "chunks_shared_basis", study3))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(ROOT / "results"), help="the committed results (default results/)")
    parser.add_argument("--out", help="where to write (default: the --results directory itself)")
    parser.add_argument("--dry-run", action="store_true", help="print the steps, run nothing")
    args = parser.parse_args(argv)
    results = Path(args.results)
    out = Path(args.out) if args.out else results
    with tempfile.TemporaryDirectory(prefix="cudbound-rebuild-") as tmp:
        for needs, name, script_argv in steps(results, out, Path(tmp)):
            line = f"python paper_figures/{name}.py " + " ".join(script_argv)
            missing = [p for p in (needs if isinstance(needs, tuple) else (needs,)) if not p.exists()]
            if missing:
                print(f"skipped (no {missing[0]}): {line}")
                continue
            print(line, flush=True)
            if not args.dry_run:
                status = _script(name).main(script_argv)
                if status:
                    return status
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
