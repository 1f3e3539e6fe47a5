"""Issue 12's target benchmark: each case on bcb6719 ("before") and on this checkout ("after").

Every run is one whole ``cudbound.cud_interval`` call in a fresh subprocess
(``benchmarks/case.py``) pinned to one core (``--core``), after an untimed warm-up that
compiles the numba kernels and imports cvxpy. "before" runs the interpreter given by
``--python-before``, a virtual environment with bcb6719 installed (non-editable), from a
temporary directory outside any checkout; "after" runs ``--python-after`` (default: this
interpreter) with ``PYTHONPATH`` = the checkout this file is in. Each subprocess prints
which ``cudbound`` it imported and the driver refuses a run that imported the wrong one.
Before and after alternate run by run, so both see the same load on the machine.

Build the "before" environment (once):

    git archive bcb6719 | tar -x -C /tmp/cudbound_bcb6719     # DIR must exist (mkdir -p first)
    python -m venv /work/venv_before
    /work/venv_before/bin/pip install /tmp/cudbound_bcb6719

Full benchmark (writes ``benchmarks/raw/DATE_COMMIT_run_vs_bcb6719.json`` and the report beside it,
``.md``: the day of the run, this checkout's head; ``benchmarks/RESULTS.md`` is edited by hand,
see ``benchmarks/README.md``):

    python benchmarks/run.py --python-before /work/venv_before/bin/python --core 1

Smoke test (small B, a few cases, to stdout):

    python benchmarks/run.py --python-before /work/venv_before/bin/python --resamples 20 \\
        --cases sq50,hinge30 --seeds 0 --out - --json -

Data: ``LinearGaussian(n_features=p - 1, flip_probability=0.3)`` (Bayes error 0.3; p counts
the intercept) drawn with ``numpy.random.default_rng(seed)``, bootstrap ``rng=seed``, exactly
as ``benchmarks/grid.py`` (the former run.py); the Pima case uses the first 40 rows of the raw
Pima file. The data are generated once by this driver and written to an ``.npz`` file that
both versions read, and each run reports a hash of what it read.

The older grid and ablation benchmark is ``python benchmarks/run.py grid ...``
(``benchmarks/grid.py``; its results are the 2026-11-22 section of ``benchmarks/RESULTS.md``).
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rawname  # noqa: E402  (benchmarks/rawname.py: default output names in benchmarks/raw/)

REPO = os.path.dirname(HERE)
CASE_PY = os.path.join(HERE, "case.py")
FULL_B = 500
NOISE = 0.3
PIMA_N = 40
PIMA_FEATURES = ("glucose", "bmi", "age", "diabetes_pedigree")

# name: (description, loss, basis, n, p, default seeds, must, goal, must seconds, goal seconds)
# p counts the intercept; the Pima case's p is that of poly:2 on four features (1 + 4 + 10).
CASES = {
    "sq50": ("squared, n = 50, p = 5, median over seeds", "squared", "linear", 50, 5, range(10),
             "<= 1 s and >= 6x", "0.5 s, 10x", 1.0, 0.5),
    "sq100": ("squared, n = 100, p = 5", "squared", "linear", 100, 5, range(3), "<= 10 s", "5 s", 10.0, 5.0),
    "sq200": ("squared, n = 200, p = 5", "squared", "linear", 200, 5, range(3), "<= 60 s", "20 s", 60.0, 20.0),
    "logistic50": ("logistic, n = 50, p = 5", "logistic", "linear", 50, 5, range(1),
                   "<= 20 s", "10 s and <= 5x squared", 20.0, 10.0),
    "hinge50": ("hinge, n = 50, p = 5", "hinge", "linear", 50, 5, range(1),
                "<= 20 s", "10 s and <= 5x squared", 20.0, 10.0),
    "exponential50": ("exponential, n = 50, p = 5", "exponential", "linear", 50, 5, range(1),
                      "<= 20 s", "10 s and <= 5x squared", 20.0, 10.0),
    "logistic30": ("logistic, n = 30, p = 3", "logistic", "linear", 30, 3, range(1), "<= 3 s", "1 s", 3.0, 1.0),
    "hinge30": ("hinge, n = 30, p = 3", "hinge", "linear", 30, 3, range(1), "<= 3 s", "1 s", 3.0, 1.0),
    "pima_poly2": ("squared, Pima n = 40, 4 features, poly:2 (p = 15)", "squared", "poly:2", PIMA_N, 15,
                   range(1), "<= 20 s", "5 s", 20.0, 5.0),
    "user30": ("user-defined cvxpy loss (squared hinge), n = 30, p = 3", "user:squared_hinge", "linear", 30, 3,
               range(1), "<= 2 min", "30 s", 120.0, 30.0),
}
MEMORY_MUST_MIB = 1024.0


# ---------------------------------------------------------------------------------------- data
def make_data(name: str, seed: int, directory: str, pima_features, data_home) -> str:
    """Write the case's data to ``directory`` as .npz (X, y) and return the path."""
    desc, loss, basis, n, p = CASES[name][:5]
    if name == "pima_poly2":
        from cudbound.datasets import load
        ds = load("diabetes", data_home=data_home, download=False)
        cols = [list(ds.feature_names).index(f) for f in pima_features]
        X, y = ds.X[:PIMA_N, cols], ds.y[:PIMA_N]
    else:
        from cudbound.datasets import LinearGaussian
        X, y = LinearGaussian(n_features=p - 1, flip_probability=NOISE).sample(n, np.random.default_rng(seed))
    path = os.path.join(directory, f"{name}_seed{seed}.npz")
    np.savez(path, X=np.asarray(X, dtype=float), y=np.asarray(y, dtype=np.int64))
    return path


# ---------------------------------------------------------------------------------------- one run
def run_case(python: str, case: dict, *, cwd: str, env: dict, warm_cap: float, cap: float, log) -> dict:
    """One subprocess of ``case.py``; the cap starts when it reports its warm-up done.

    Returns the result dict, or ``{"timeout": phase, ...}`` when the warm-up or the timed call
    ran past its cap (the subprocess is then killed), or ``{"crash": ...}`` if it died.
    """
    errpath = os.path.join(cwd, f"stderr_{case['name']}_{case['version']}_{case['rng']}.txt")
    with open(errpath, "w") as err:
        proc = subprocess.Popen([python, CASE_PY, json.dumps(case)], stdout=subprocess.PIPE, stderr=err,
                                text=True, cwd=cwd, env=env, start_new_session=True)
    lines: queue.Queue = queue.Queue()

    def reader():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=reader, daemon=True).start()
    phase, deadline, result, warm = "warm-up", time.monotonic() + warm_cap, None, None
    try:
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                out = {"timeout": phase, "cap": cap if phase == "timed call" else warm_cap}
                if warm:
                    out.update({k: warm[k] for k in ("cudbound_file", "data_sha256_16", "warmup_seconds")
                                if k in warm})
                return out
            if line is None:
                break
            line = line.strip()
            if not line.startswith("{"):
                log(f"    [{case['version']}] {line}")
                continue
            msg = json.loads(line)
            if msg.get("event") == "warm":
                warm = dict(msg, warmup_seconds=msg["seconds"])
                phase, deadline = "timed call", time.monotonic() + cap + 5.0  # 5 s to report and exit
            elif msg.get("event") == "result":
                result = msg
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if result is None:
        with open(errpath) as f:
            tail = f.read()[-1500:]
        return {"crash": f"exit status {proc.returncode} in the {phase}", "stderr": tail}
    if result["seconds"] > cap and not result.get("error"):
        result["over_cap"] = True
    return result


def check_import(version: str, res: dict) -> None:
    """Refuse a run that imported the wrong package (before: installed bcb6719; after: this checkout)."""
    path = res.get("cudbound_file")
    if path is None:
        return
    inside = os.path.realpath(path).startswith(os.path.realpath(REPO) + os.sep)
    if version == "after" and not inside:
        raise SystemExit(f"'after' imported {path}, not the checkout {REPO}")
    if version == "before" and inside:
        raise SystemExit(f"'before' imported {path} from this checkout, not the bcb6719 environment")


# ---------------------------------------------------------------------------------------- machine
def interpreter_info(python: str, cwd: str, env: dict) -> dict:
    code = ("import json, sys, platform, importlib.metadata as m\n"
            "out = {'python': platform.python_version(), 'executable': sys.executable}\n"
            "for p in ('numpy', 'scipy', 'numba', 'cvxpy', 'highspy', 'tqdm', 'cudbound'):\n"
            "    try: out[p] = m.version(p)\n"
            "    except Exception: out[p] = None\n"
            "import cudbound; out['cudbound_file'] = cudbound.__file__\n"
            "print(json.dumps(out))")
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, cwd=cwd, env=env,
                             timeout=300)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError) as exc:
        return {"error": str(exc)}


def machine() -> str:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kib = int(next(line.split()[1] for line in f if line.startswith("MemTotal")))
        mem = f", {kib / 1024 ** 2:.1f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{cpu}; {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}"


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def git_describe() -> str:
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--", "cudbound"], capture_output=True,
                               text=True, check=True).stdout.strip()
        return head + (" (with uncommitted changes in cudbound/)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# ---------------------------------------------------------------------------------------- tables
def fmt_s(x: float) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:.3g}" if x < 10 else f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def fmt_n(x) -> str:
    if x is None:
        return "-"
    x = float(x)
    return f"{x:.0f}" if x < 1e4 else f"{x / 1e3:.0f}k" if x < 1e6 else f"{x / 1e6:.2g}M"


def run_seconds(r: dict | None) -> float | None:
    """Seconds of a finished run, inf for a run stopped at the cap, None if it failed or was not run."""
    if r is None or r.get("crash") or r.get("error") or r.get("timeout") == "warm-up":
        return None
    if r.get("timeout") or r.get("over_cap"):
        return math.inf
    return r["seconds"]


def shown_time(runs: list, cap: float) -> tuple[str, float | None]:
    """Median over the runs (a stopped run counts as +inf); '> cap' when the median is a stopped run."""
    secs = [run_seconds(r) for r in runs]
    if not runs:
        return "not run", None
    failed = [r for r, s in zip(runs, secs) if s is None]
    ok = [s for s in secs if s is not None]
    if not ok:
        r = failed[0]
        if r is None:
            return "not run", None
        if r.get("error"):
            return f"error after {fmt_s(r['seconds'])} s: {r['error'][:80]}", None
        if r.get("timeout") == "warm-up":
            return f"warm-up > {r['cap']:.0f} s", None
        return f"crash ({r.get('crash')})", None
    med = float(np.median(ok))
    text = f"> {cap:.0f} s" if math.isinf(med) else f"{fmt_s(med)} s"
    stopped = sum(math.isinf(s) for s in ok)
    notes = []
    if len(runs) > 1:
        notes.append(f"median of {len(ok)}")
    if stopped and len(runs) > 1:
        notes.append(f"{stopped} stopped at {cap:.0f} s")
    if failed:
        notes.append(f"{len(failed)} failed")
    return text + (f" ({', '.join(notes)})" if notes else ""), med


def pooled_nodes(runs: list) -> str:
    """Nodes per replicate pooled over all replicates of the finished runs: median / p99 / max."""
    nodes = [x for r in runs if r and r.get("nodes") is not None for x in r["nodes"]]
    if not nodes:
        return "-"
    a = np.asarray(nodes, dtype=float)
    return f"{fmt_n(np.median(a))} / {fmt_n(np.percentile(a, 99))} / {fmt_n(a.max())}"


def peak(runs: list) -> float | None:
    """Largest peak RSS of the timed calls (the whole process's where the reset was not possible)."""
    vals = [r.get("peak_mib") or r.get("process_peak_mib") for r in runs if r]
    vals = [v for v in vals if v is not None]
    return max(vals) if vals else None


def same_interval(b: dict | None, a: dict | None) -> str:
    if not (b and a and b.get("interval") and a.get("interval")):
        return "-"
    d = max(abs(x - y) for x, y in zip(b["interval"], a["interval"]))
    return "yes" if d <= 1e-9 else f"NO (differs by {d:.3g})"


def ratio_text(tb: float | None, ta: float | None, cap: float) -> tuple[str, float | None]:
    """before / after; a run stopped at the cap gives a bound (cap / after, before / cap)."""
    if tb is None or ta is None:
        return "-", None
    if math.isinf(tb) and math.isinf(ta):
        return "-", None
    if math.isinf(ta):
        return f"< {tb / cap:.2g}x (after stopped)", None
    if ta <= 0:
        return "-", None
    if math.isinf(tb):
        return f"> {cap / ta:.1f}x (before stopped)", None
    return f"{tb / ta:.1f}x", tb / ta


def render(args, results: dict, meta: dict, finished: bool) -> str:
    """The Markdown report from the results so far (``results[(case, version, seed)] = run``)."""
    smoke = args.resamples != FULL_B
    cap = args.cell_timeout
    lines = [f"# Issue 12 targets: {args.before_label} (before) and this checkout (after)", ""]
    if smoke:
        lines += [f"**Smoke run with B = {args.resamples}, not the targets' B = {FULL_B}: the times are not "
                  "comparable with the targets and the must/goal columns are not evaluated.**", ""]
    shares = [r["cpu_seconds"] / r["seconds"] for r in results.values()
              if r and r.get("cpu_seconds") and r.get("seconds", 0) > 1.0]
    if shares and min(shares) < 0.9:
        lines += [f"**The pinned core was shared during some runs (CPU/wall down to {min(shares):.2f}, see "
                  "'Every run'): their wall times are inflated.**", ""]
    if not finished:
        lines += ["**Unfinished: the run was still going (or was stopped) when this file was written.**", ""]
    lines += [f"- Date: {meta['start']} to {meta['end'] or '(running)'} (local time of the machine)",
              f"- Command: `{meta['command']}` (run from `{meta['cwd']}`)",
              f"- Machine: {meta['machine']}; every run pinned to core {args.core} "
              f"(other users' jobs may share the machine; load average at the start: {meta['load']}, "
              f"at the end: {meta.get('load_end') or '-'})",
              f"- Before: {args.before_label} installed non-editable in `{meta['before'].get('executable', '-')}`: "
              f"{versions(meta['before'])}",
              f"- After: checkout `{REPO}` at {meta['commit']}, interpreter `{meta['after'].get('executable', '-')}`: "
              f"{versions(meta['after'])}",
              f"- B = {args.resamples}, confidence level 0.95, n_jobs = 1, default engine and alpha_n; "
              f"cap {cap:.0f} s per timed call (before and after separately)",
              "", "How each run is made: a fresh subprocess (`benchmarks/case.py`) pinned to one core imports the "
              "package, warms up with an untimed `cud_interval` of the same loss on n = 20, B = 20 (numba "
              "compilation or cache load, cvxpy import), then times one whole `cud_interval` call "
              "(`time.perf_counter`). Data: LinearGaussian with Bayes error 0.3 (`default_rng(seed)`), bootstrap "
              "`rng=seed`; Pima: the first 40 rows of the raw file, features "
              f"{', '.join(args.pima_features)}, basis poly:2, `rng=0`. Both versions read the same data "
              "file. Time: median over the seeds (a run stopped at the cap counts as longer than any other). "
              "Nodes: `res.stats.nodes` per replicate, pooled over all replicates of all seeds: median / 99th "
              "percentile / max (after: with the quantile-targeted default, replicates not needed for the "
              "quantile stop early, so their counts are smaller by design). Peak MiB: the largest peak RSS "
              "of a run's process during the timed call (VmHWM, reset through /proc/self/clear_refs after the "
              "warm-up; it includes what the process already held: interpreter, numpy, scipy, cvxpy, numba); "
              "the process's peak including the warm-up and numba compilation is in the raw JSON "
              "(`process_peak_mib`). Ratio = before / after median "
              "time, measured in this run. 'same interval': both ends equal to 1e-9 on every seed both "
              "finished.", "",
              "| case | before | after | ratio | must | goal | meets must | nodes/replicate before (median / p99 / max) "
              "| nodes/replicate after (median / p99 / max) | peak MiB before | peak MiB after | same interval |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    sq50_after = None
    all_peaks = []
    detail = []
    for name in meta["cases"]:
        desc, *_, must, goal, must_s, goal_s = CASES[name]
        seeds = meta["seeds"][name]
        runs = {v: [results.get((name, v, s)) for s in seeds] for v in ("before", "after")}
        done = {v: [r for r in runs[v] if r is not None] for v in runs}
        if not done["before"] and not done["after"]:
            continue
        tb_text, tb = shown_time(done["before"], cap) if "before" in args.versions else ("not run", None)
        ta_text, ta = shown_time(done["after"], cap) if "after" in args.versions else ("not run", None)
        rtext, ratio = ratio_text(tb, ta, cap)
        if name == "sq50":
            sq50_after = ta
        failed = any(run_seconds(r) is None for r in done["after"])
        meets = ("n/a (smoke)" if smoke else "NO (a run failed)" if failed
                 else meets_must(name, ta, tb, ratio, must_s, len(done["after"]), len(seeds)))
        sames = [same_interval(b, a) for b, a in zip(runs["before"], runs["after"])]
        same = "-" if all(s == "-" for s in sames) else ("yes" if all(s in ("yes", "-") for s in sames) else "NO")
        pb, pa = peak(done["before"]), peak(done["after"])
        all_peaks += [x for x in (pa,) if x is not None]
        seeds_text = f" ({seeds[0]}-{seeds[-1]})" if len(seeds) > 1 else f" (seed {seeds[0]})"
        lines.append(f"| {desc}{seeds_text} | {tb_text} | {ta_text} | {rtext} | {must} | {goal} | {meets} | "
                     f"{pooled_nodes(done['before'])} | {pooled_nodes(done['after'])} | "
                     f"{fmt_s(pb) if pb else '-'} | {fmt_s(pa) if pa else '-'} | {same} |")
        for s, b, a in zip(seeds, runs["before"], runs["after"]):
            if b is None and a is None:
                continue
            tbs, tas = run_seconds(b), run_seconds(a)
            detail.append(f"| {name} | {s} | {one_run(b, cap)} | {one_run(a, cap)} | {ratio_text(tbs, tas, cap)[0]} | "
                          f"{cpu_share(b)} | {cpu_share(a)} | "
                          f"{run_nodes(b)} | {run_nodes(a)} | {interval_text(b)} | {interval_text(a)} | "
                          f"{same_interval(b, a)} | {statuses(b)} | {statuses(a)} | "
                          f"{fmt_s(peak([b])) if peak([b]) else '-'} | {fmt_s(peak([a])) if peak([a]) else '-'} |")
    if all_peaks:
        mem_meets = "n/a (smoke)" if smoke else ("yes" if max(all_peaks) < MEMORY_MUST_MIB else "NO")
        lines.append(f"| peak memory anywhere (after) | - | {max(all_peaks):.0f} MiB | - | < 1 GiB | - | "
                     f"{mem_meets} | - | - | - | - | - |")
    if sq50_after and math.isfinite(sq50_after) and not smoke:
        parts = []
        for nm in ("logistic50", "hinge50", "exponential50"):
            if nm not in meta["cases"]:
                continue
            t = shown_time([r for r in (results.get((nm, "after", s)) for s in meta["seeds"][nm]) if r is not None],
                           cap)[1]
            if t is not None and math.isfinite(t):
                parts.append(f"{nm} {t / sq50_after:.1f}x")
        if parts:
            lines += ["", "Goal '<= 5x squared' of the non-quadratic losses at n = 50 (after time / median after "
                      f"time of squared n = 50, {fmt_s(sq50_after)} s): " + ", ".join(parts)]
    lines += ["", "## Every run", "",
              "Seconds of the timed call; nodes per replicate median / p99 / max; interval [low, high]; "
              "replicate statuses (count per status). CPU/wall: the process's CPU time during the timed call over "
              "its wall time; well below 1 means the pinned core was shared with other jobs and the wall time "
              "is inflated.", "",
              "| case | seed | before s | after s | ratio | CPU/wall before | CPU/wall after | nodes before | "
              "nodes after | interval before | interval after | same | status before | status after | "
              "peak MiB before | peak MiB after |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"] + detail
    notes = [f"- {name} seed {s} {v}: {r['error']}" for (name, v, s), r in sorted(results.items(), key=str)
             if r and r.get("error")]
    notes += [f"- {name} seed {s} {v}: {r['crash']}: `{r.get('stderr', '')[-300:]!r}`"
              for (name, v, s), r in sorted(results.items(), key=str) if r and r.get("crash")]
    if notes:
        lines += ["", "## Errors", ""] + notes
    b = args.before_label
    lines += ["", "## Reproduce", "", f"Build the before environment ({b}, non-editable, separate venv):", "",
              f"    mkdir -p /tmp/cudbound_{b} && git archive {b} | tar -x -C /tmp/cudbound_{b}",
              "    python -m venv /work/venv_before", f"    /work/venv_before/bin/pip install /tmp/cudbound_{b}",
              "", "then, from the checkout to measure (with `CUDBOUND_DATA` pointing at the UCI files):", "",
              f"    {meta['command']}", ""]
    return "\n".join(lines)


def versions(info: dict) -> str:
    if "error" in info:
        return f"(could not read versions: {info['error']})"
    keys = ("python", "numpy", "scipy", "numba", "cvxpy", "highspy", "tqdm", "cudbound")
    return ", ".join(f"{k} {info[k]}" for k in keys if info.get(k)) + f"; imports `{info.get('cudbound_file')}`"


def meets_must(name, ta, tb, ratio, must_s, n_done, n_seeds) -> str:
    if ta is None or n_done < n_seeds:
        return "-"
    ok = math.isfinite(ta) and ta <= must_s
    if name == "sq50":
        ok = ok and (ratio is not None and ratio >= 6.0 or (tb is not None and math.isinf(tb)))
    return "yes" if ok else "NO"


def one_run(r: dict | None, cap: float) -> str:
    if r is None:
        return "-"
    if r.get("error"):
        return f"error ({r['error'][:60]}) after {fmt_s(r['seconds'])}"
    if r.get("crash"):
        return "crash"
    if r.get("timeout") == "warm-up":
        return f"warm-up > {r['cap']:.0f}"
    if r.get("timeout") or r.get("over_cap"):
        return f"> {cap:.0f}"
    return fmt_s(r["seconds"])


def cpu_share(r: dict | None) -> str:
    """CPU time / wall time of the timed call (about 1 on an idle core; less when the core was shared)."""
    if not r or not r.get("cpu_seconds") or not r.get("seconds"):
        return "-"
    return f"{r['cpu_seconds'] / r['seconds']:.2f}"


def run_nodes(r: dict | None) -> str:
    s = (r or {}).get("nodes_summary")
    if not s or s.get("median") is None:
        return "-"
    return f"{fmt_n(s['median'])} / {fmt_n(s['p99'])} / {fmt_n(s['max'])}"


def interval_text(r: dict | None) -> str:
    if not r or not r.get("interval"):
        return "-"
    lo, hi = r["interval"]
    return f"[{lo:.4f}, {hi:.4f}]"


def statuses(r: dict | None) -> str:
    c = (r or {}).get("status_counts")
    if not c:
        return "-"
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) + (" (conservative)" if r.get("conservative") else "")


# ---------------------------------------------------------------------------------------- main
def parse_seeds(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = part.split("-")
            out += list(range(int(lo), int(hi) + 1))
        elif part:
            out.append(int(part))
    return out


def targets_main(argv) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, from {', '.join(CASES)}")
    ap.add_argument("--versions", default="before,after", help="'before,after' (default), 'before' or 'after'")
    ap.add_argument("--seeds", default=None,
                    help="seeds for every LinearGaussian case, e.g. '0-2' or '0,3' (default: per case, "
                         "sq50 0-9, sq100 and sq200 0-2, the others 0); the Pima case always uses rng 0")
    ap.add_argument("--resamples", type=int, default=FULL_B, help=f"B (default {FULL_B}; smaller = smoke test)")
    ap.add_argument("--cell-timeout", type=float, default=600.0,
                    help="cap in seconds on one timed cud_interval call, before and after separately (default 600)")
    ap.add_argument("--warmup-timeout", type=float, default=900.0,
                    help="cap in seconds on a run's start-up and warm-up (numba compilation; default 900)")
    ap.add_argument("--core", type=int, default=0, help="the core every run is pinned to (default 0)")
    ap.add_argument("--python-before", default=None, help="interpreter of the 'before' environment")
    ap.add_argument("--before-label", default="bcb6719",
                    help="the commit installed in the --python-before environment, as the report names it "
                         "(default bcb6719, issue 12's base)")
    ap.add_argument("--python-after", default=sys.executable, help="interpreter for this checkout (default: this one)")
    ap.add_argument("--data-home", default=os.environ.get("CUDBOUND_DATA"),
                    help="directory with the raw UCI files (default $CUDBOUND_DATA)")
    ap.add_argument("--pima-features", default=",".join(PIMA_FEATURES),
                    help="the Pima features of the poly:2 case (default glucose,bmi,age,diabetes_pedigree)")
    ap.add_argument("--out", default=None,
                    help="Markdown report, rewritten after every run, '-' for stdout (default: beside the JSON, "
                         "same name with .md; never benchmarks/RESULTS.md, which is edited by hand)")
    ap.add_argument("--json", default=None,
                    help="raw results of every run (JSON), '-' for none (default: "
                         "benchmarks/raw/DATE_COMMIT_run_vs_BEFORE.json, DATE the day the run starts, COMMIT "
                         "this checkout's head)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the runs already in --json (same B and cap) and run only the missing ones "
                         "(default --json: today's file for this commit)")
    args = ap.parse_args(argv)
    rawname.refuse_results_md(args.out, ap.error)
    rawname.refuse_results_md(args.json, ap.error)
    args.versions = [v.strip() for v in args.versions.split(",") if v.strip()]
    args.pima_features = tuple(f.strip() for f in args.pima_features.split(","))
    if len(args.pima_features) != 4:
        ap.error("--pima-features takes four names (poly:2 on four features gives p = 15)")
    bad = [v for v in args.versions if v not in ("before", "after")]
    if bad or not args.versions:
        ap.error(f"--versions: 'before' and/or 'after'; got {bad or 'nothing'}")
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; choose from {', '.join(CASES)}")
    if "before" in args.versions and not args.python_before:
        ap.error("--python-before is required for the 'before' version (see the build commands above)")
    if hasattr(os, "sched_getaffinity") and args.core not in os.sched_getaffinity(0):
        ap.error(f"--core {args.core} is not available to this process: {sorted(os.sched_getaffinity(0))}")
    if "pima_poly2" in cases and not args.data_home:
        ap.error("the Pima case needs the raw UCI files: set CUDBOUND_DATA or pass --data-home")
    if args.json is None or args.out is None:
        if "after" in args.versions:
            commit, dirty = rawname.head_commit(), rawname.cudbound_dirty()
        else:
            commit, dirty = rawname.commit_of(args.before_label), False
        what = f"run_vs_{args.before_label}" if "before" in args.versions else "run_after_only"
        if args.json is None:
            args.json = rawname.stem(what, commit, dirty, fresh=not args.resume) + ".json"
        if args.out is None:
            args.out = (args.json[:-len(".json")] if args.json.endswith(".json")
                        else rawname.stem(what, commit, dirty)) + ".md"
    for path in (args.out, args.json):
        if path != "-":
            rawname.ensure_dir(path)
    override = parse_seeds(args.seeds) if args.seeds else None
    seeds = {c: ([0] if c == "pima_poly2" else override if override is not None else list(CASES[c][5]))
             for c in cases}

    sys.path.insert(0, REPO)  # the data come from this checkout's generators
    import cudbound
    if not os.path.realpath(cudbound.__file__).startswith(os.path.realpath(REPO) + os.sep):
        raise SystemExit(f"the driver imported {cudbound.__file__}, not the checkout {REPO}")

    script = os.path.relpath(os.path.abspath(sys.argv[0])) if sys.argv and sys.argv[0].endswith(".py") \
        else os.path.relpath(__file__)
    command = shlex.join([sys.executable, script] + list(argv))
    if os.environ.get("CUDBOUND_DATA"):
        command = f"CUDBOUND_DATA={shlex.quote(os.environ['CUDBOUND_DATA'])} {command}"
    work = tempfile.mkdtemp(prefix="cudbound_bench_")
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    base_env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    envs = {"before": dict(base_env), "after": dict(base_env, PYTHONPATH=REPO)}
    pythons = {"before": args.python_before, "after": args.python_after}
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731

    meta = {"start": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "end": None, "command": command,
            "cwd": os.getcwd(), "machine": machine(), "commit": git_describe(), "cases": cases, "seeds": seeds,
            "load": loadavg(),
            "before": interpreter_info(args.python_before, work, envs["before"]) if args.python_before else {},
            "after": interpreter_info(args.python_after, work, envs["after"])}
    for v in args.versions:
        check_import(v, meta[v])

    results: dict = {}
    if args.resume and args.json != "-" and os.path.exists(args.json):
        with open(args.json) as f:
            old = json.load(f)
        if old.get("resamples") == args.resamples and old.get("cell_timeout") == args.cell_timeout:
            results = {(r["case"], r["version"], r["seed"]): r["run"] for r in old["runs"]}
            log(f"resuming: {len(results)} runs kept from {args.json}")

    def save(finished: bool, final: bool = False) -> None:
        text = render(args, results, meta, finished)
        if args.out == "-":
            if final:
                print(text)
        else:
            with open(args.out, "w") as f:
                f.write(text)
        if args.json != "-":
            with open(args.json, "w") as f:
                json.dump({"resamples": args.resamples, "cell_timeout": args.cell_timeout, "meta": meta,
                           "runs": [{"case": c, "version": v, "seed": s, "run": r}
                                    for (c, v, s), r in results.items()]}, f)

    finished = False
    try:
        for name in cases:
            desc, loss, basis = CASES[name][:3]
            for seed in seeds[name]:
                path = make_data(name, seed, work, args.pima_features, args.data_home)
                for version in args.versions:
                    if (name, version, seed) in results:
                        continue
                    case = {"name": name, "version": version, "data": path, "loss": loss, "basis": basis,
                            "resamples": args.resamples, "rng": seed, "core": args.core}
                    t0 = time.monotonic()
                    r = run_case(pythons[version], case, cwd=work, env=envs[version], warm_cap=args.warmup_timeout,
                                 cap=args.cell_timeout, log=log)
                    check_import(version, r)
                    results[(name, version, seed)] = r
                    log(f"{name} seed {seed} {version}: {one_run(r, args.cell_timeout)} s "
                        f"(nodes {run_nodes(r)}, {interval_text(r)}, {statuses(r)}; "
                        f"process {time.monotonic() - t0:.0f} s)")
                    save(False)
                hashes = {results[(name, v, seed)].get("data_sha256_16") for v in args.versions
                          if (name, v, seed) in results} - {None}
                if len(hashes) > 1:
                    raise SystemExit(f"{name} seed {seed}: the versions read different data ({hashes})")
        finished = True
    finally:
        meta["end"] = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        meta["load_end"] = loadavg()
        try:
            save(finished, final=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for path in (args.out, args.json):
            if path != "-":
                log(f"wrote {path}")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "grid":
        sys.path.insert(0, HERE)
        import grid
        return grid.main(argv[1:])
    if argv and argv[0] == "targets":
        argv = argv[1:]
    return targets_main(argv)


if __name__ == "__main__":
    sys.exit(main())
