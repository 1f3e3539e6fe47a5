"""
A coverage study in miniature
=============================

How often does each interval contain the true error? :mod:`cudbound.coverage` answers it the
way Laber & Murphy (2008, section 5) do: draw many training sets from a distribution whose
error is known, build every interval on each, and count. A study is described by a TOML
configuration (the files of ``experiments/``; the format is in
:mod:`cudbound.coverage.config`) and its results go to a resumable SQLite store.

This one is far too small for inference (four repetitions, B = 20): it shows the Python API
that ``cudbound coverage --config STUDY.toml --store RESULTS.sqlite`` runs.
"""

import tempfile
from pathlib import Path

from cudbound.coverage import ResultStore, parse_config, run_study

config = parse_config("""
[study]
name = "miniature"
seed = 0                   # master seed: every task's seed is derived from it
repetitions = 4            # training sets per data set and size
sizes = [30]
confidence_level = 0.95
test_size = 2000           # test points drawn for the true error of a simulated data set
methods = ["cud", "kohavi", "bs2", "langford"]

[options]
n_boot = 20                # bootstrap fits of the .632 estimate (baselines)

[options.cud]
n_resamples = 20           # B: the smallest allowed at level 0.95
alpha_n = "n"

[options.bs2]
n_resamples = 40
n_inner = 10

[[datasets]]
name = "donut"             # two of the paper's simulated designs

[[datasets]]
name = "three_points"
""")
print(f"{len(config.tasks())} tasks; the first: {config.tasks()[0]}")

# %%
# Run every task in this process (``n_jobs=1``) into a store in a temporary directory. Each
# finished task is committed at once, so running the same call again resumes the study and
# computes nothing twice.
with tempfile.TemporaryDirectory() as tmp:
    store_path = Path(tmp) / "miniature.sqlite"
    report = run_study(config, store_path, n_jobs=1, progress=False)
    print(f"computed {report.computed} tasks, {len(report.failed)} failed")
    again = run_study(config, store_path, n_jobs=1, progress=False)
    print(f"second run: {again.already} already stored, {again.computed} computed")

    with ResultStore(store_path) as store:
        summary = store.summary()
        rows = store.results(method="cud")

# %%
# Coverage (the fraction of repetitions whose interval contains the true error) and mean
# width, per data set, n and method, as the ``cudbound coverage`` command prints them:
print(f"{'data set':<14}{'n':>4}{'reps':>6}  " + "".join(f"{m:>16}" for m in config.methods))
cells = {(r["dataset"], r["n"], r["method"]): r for r in summary}
for dataset, n in sorted({(r["dataset"], r["n"]) for r in summary}):
    line = f"{dataset:<14}{n:>4}{cells[(dataset, n, 'cud')]['reps']:>6}  "
    for m in config.methods:
        c = cells[(dataset, n, m)]
        line += f"{c['coverage']:>8.2f} ({c['mean_width']:.3f})"
    print(line)

# %%
# Every row of the store keeps the interval, the true error and whether it was covered:
for r in rows[:4]:
    print(f"{r['dataset']:<13} rep {r['rep']}: [{r['low']:.3f}, {r['high']:.3f}]  "
          f"true error {r['true_error']:.3f}  covered {bool(r['covered'])}")
