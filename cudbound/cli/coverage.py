"""``cudbound coverage`` (run, resume or check a coverage study) and ``cudbound store``
(``check`` and ``export`` of a study's store)."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from ..output import envelope, result_item
from ..results import COVERAGE
from .shared import EXIT_INTERRUPTED, PROG, CLIError, _show_progress, add_execution_flags, shared_flags

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    """The ``coverage`` and ``store`` subcommands."""
    cov = subparsers.add_parser("coverage", parents=[shared_flags("json", "progress")],
                                help="run (or resume) a coverage study into an SQLite store",
                                description="Run a coverage study (Laber & Murphy 2008, section 5) described by a TOML "
                                            "file. Every finished task is saved at once; rerunning the same command "
                                            "resumes where it stopped. Prints coverage and mean width per data set, "
                                            "n and method.")
    cov.add_argument("--config", required=True, metavar="FILE.toml", help="the study configuration")
    cov.add_argument("--store", default=None, metavar="FILE.sqlite",
                     help="the result store (created or resumed); required unless --check")
    cov.add_argument("--check", action="store_true",
                     help="only validate the configuration (every error at once) and, if --store exists, that "
                          "the store accepts it; compute and write nothing")
    add_execution_flags(cov, "the tasks", default=-1, default_text="-1, every core; 1 runs them in this process")
    cov.add_argument("--data-home", default=None, metavar="DIR",
                     help="directory of the real data files (default: $CUDBOUND_DATA)")
    cov.add_argument("--max-tasks", type=int, default=None, metavar="N",
                     help="compute at most N unfinished tasks, then stop")
    cov.add_argument("--chunks", default=None, metavar="DIR",
                     help="directory of immutable result chunks: loaded first (those tasks are done), and each "
                          "block of repetitions written there when it completes")
    cov.add_argument("--chunk-size", type=int, default=50, metavar="N", help="repetitions per chunk (default 50)")
    cov.add_argument("--datasets", default=None, metavar="NAME[,NAME...]",
                     help="compute only the tasks of these data-set entries (their labels in the configuration); "
                          "the store, the chunks and their protocol stay the whole study's, so runs of different "
                          "selections fill one store and one chunk directory")
    cov.add_argument("--sizes", default=None, metavar="N[,N...]",
                     help="compute only the tasks of these training sizes (as --datasets)")
    cov.add_argument("--exclude", default=None, metavar="NAME:N:REP[,...]",
                     help="leave out these tasks (data-set label, training size, repetition), e.g. one too long "
                          "for this run's time or computed by another run; they stay unfinished in the store")
    cov.set_defaults(handler=_coverage)

    store = subparsers.add_parser("store", help="check a coverage store, or export it as result chunks",
                                  description="Tools for a coverage study's SQLite store: `check` verifies it "
                                              "(SQLite's integrity and foreign-key checks, and the toolkit's: a result "
                                              "row for every task and method, numeric sanity); `export` writes its "
                                              "complete blocks as the chunk files --chunks would. Both only read the "
                                              "store.")
    store_sub = store.add_subparsers(dest="store_command", required=True, metavar="ACTION")
    _store_action(store_sub, "check", _store_check)
    export = _store_action(store_sub, "export", _store_export)
    export.add_argument("dir", metavar="DIR", help="the chunk directory (created if absent)")
    export.add_argument("--config", default=None, metavar="FILE.toml",
                        help="the study's configuration (default: the one kept in the store, with the "
                             "repetitions it was created with)")
    export.add_argument("--chunk-size", type=int, default=50, metavar="N", help="repetitions per chunk (default 50)")


_STORE_ACTIONS = {
    "check": ("verify a store; exit 0 if sound, 1 if problems are found",
              "Verify a coverage store: exit status 0 if every check passes, 1 if problems are found (listed), 2 if "
              "the file is not a store."),
    "export": ("write a store's complete blocks as result chunks",
               "Write the gzipped CSV chunk of every complete block of repetitions of the store into DIR, the files "
               "`cudbound coverage --chunks DIR` writes. Chunks already in DIR are not rewritten."),
}
"""The actions of ``cudbound store``: (summary, description)."""


def _store_action(store_sub, name, handler):
    """A ``cudbound store`` action: it reads one store (``FILE.sqlite``) and can report as JSON."""
    summary, description = _STORE_ACTIONS[name]
    action = store_sub.add_parser(name, parents=[shared_flags("json")], help=summary, description=description)
    action.add_argument("file", metavar="FILE.sqlite", help="the result store")
    action.set_defaults(handler=handler)
    return action


def _coverage(args):
    """``cudbound coverage``: validate the whole configuration (every error at once, before any task
    or the store), then run or resume the study; ``--check`` stops after the validation."""
    from ..coverage import ResultStore, load_config, run_study
    from ..coverage.runner import RunInterrupted

    data_home = args.data_home or os.environ.get("CUDBOUND_DATA") or None
    config = load_config(args.config, data_home=data_home)
    if args.max_tasks is not None and args.max_tasks < 0:
        raise CLIError(f"--max-tasks must be a non-negative integer; got {args.max_tasks}.")
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be a positive integer; got {args.chunk_size}.")
    datasets, sizes, exclude, selected = _selection(args, config)     # a bad selection: exit 2 before anything runs
    chosen = {"datasets": datasets, "sizes": sizes, "exclude": exclude}
    if args.check:
        return _coverage_check(args, config, selected, chosen)
    if args.store is None:
        raise CLIError("--store FILE.sqlite is required to run a study (only --check runs without it).")
    try:
        report = run_study(config, args.store, n_jobs=args.jobs, scheduler=args.scheduler,
                           data_home=args.data_home, progress=_show_progress(args), max_tasks=args.max_tasks,
                           chunks=args.chunks, chunk_size=args.chunk_size, datasets=datasets, sizes=sizes,
                           exclude=exclude)
        interrupted = False
    except RunInterrupted as stop:     # Ctrl-C: the workers are stopped, the finished tasks kept
        report, interrupted = stop.report, True
        print(f"{PROG}: interrupted: the {report.already + report.computed} finished tasks "
              f"{'of the selection ' if any(v is not None for v in chosen.values()) else ''}are kept in "
              f"{args.store} ({report.computed} computed now, {report.remaining} remaining); to resume, run the "
              f"same command again.", file=sys.stderr)
    with ResultStore(args.store) as store:
        summary = [r for r in store.summary() if r["method"] in config.methods]
    record = envelope("coverage", data={"source": str(args.config), "n": None},
                      seed=int(config.seed),
                      results=[_coverage_item(r) for r in summary],
                      details={"study": config.name, "store": str(args.store), "tasks": report.total,
                               "already": report.already, "computed": report.computed,
                               "remaining": report.remaining,
                               "failed": [{"task": [t.dataset, t.n, t.rep], "message": m} for t, m in report.failed],
                               "chunks_written": [str(p) for p in report.chunks_written],
                               "selection": chosen})
    selection = "" if all(v is None for v in chosen.values()) else " selected"
    lines = [f"study {config.name}: {report.total}{selection} tasks, {report.already} already stored, "
             f"{report.computed} computed now, {len(report.failed)} failed, {report.remaining} remaining",
             f"store: {args.store}"]
    if report.others or report.duplicates:     # runs sharing the store (cudbound.coverage.leases)
        record["details"].update(by_other_runs=report.others, duplicates=report.duplicates)
        lines.append(f"other runs on this store: {report.others} task(s) stored by them meanwhile, "
                     f"{report.duplicates} computed here but stored by them first")
    if args.chunks is not None:
        lines.append(f"chunks: {args.chunks} ({len(report.chunks_written)} written now)")
    lines.append("")
    lines += _coverage_table(summary, config.methods)
    for task, message in report.failed:
        lines.append(f"failed: {task}: {message.splitlines()[0]}")
    if interrupted:
        record["details"]["interrupted"] = True
        return record, "\n".join(lines), EXIT_INTERRUPTED
    return record, "\n".join(lines), (1 if report.failed else 0)


def _selection(args, config):
    """(data sets, sizes, excluded tasks as "label:n:rep", the selected tasks) of ``--datasets`` /
    ``--sizes`` / ``--exclude`` (None, None, None and every task without them); a bad selection is a
    CLIError naming the flags."""
    from ..coverage.runner import select_tasks

    datasets = _listed(args.datasets, "--datasets")
    sizes = _listed(args.sizes, "--sizes")
    if sizes is not None:
        if not all(re.fullmatch(r"[0-9]+", x) for x in sizes):
            raise CLIError(f"--sizes must be training sizes separated by commas; got {args.sizes!r}.")
        sizes = [int(x) for x in sizes]
    exclude = _listed(args.exclude, "--exclude")
    try:
        selected = select_tasks(config, datasets, sizes, exclude)
    except ValueError as exc:
        message = str(exc).replace("`datasets`", "--datasets").replace("`sizes`", "--sizes")
        raise CLIError(message.replace("`exclude`", "--exclude")) from None
    return datasets, sizes, exclude, selected


def _listed(text, flag):
    """The items of a comma-separated flag (None when the flag is absent)."""
    if text is None:
        return None
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise CLIError(f"{flag} needs at least one item; got {text!r}.")
    return items


def _coverage_item(cell: dict) -> dict:
    """One (data set, n, method) cell of a study as a JSON result: the coverage with its exact
    (Clopper-Pearson) 95% interval over the repetitions."""
    from ..coverage.store import coverage_interval
    low, high = coverage_interval(cell["covered"], cell["reps"])
    extra = {k: v for k, v in cell.items() if k not in ("method", "coverage")}
    return result_item(cell["method"], COVERAGE, cell["coverage"], low, high, 0.95, cell["n"], **extra)


def _coverage_check(args, config, tasks, selection):
    """``cudbound coverage --check``: the configuration is valid (load_config raised otherwise); with
    an existing --store, whether it would accept the configuration. ``tasks``: those selected
    (``selection``: --datasets, --sizes, --exclude; every task without them). Creates and writes nothing."""
    from ..coverage import ResultStore

    sizes = sorted({n for d in config.datasets for n in config.sizes_of(d)})
    reps = sorted({config.repetitions_for(n) for n in sizes})
    details = {"check": True, "ok": True, "study": config.name, "tasks": len(tasks),
               "datasets": [d.label for d in config.datasets], "sizes": sizes, "methods": list(config.methods),
               "selection": selection}
    whole = len(config.tasks())
    counted = f"{len(tasks)} tasks" if len(tasks) == whole else f"{len(tasks)} selected tasks of {whole}"
    lines = [f"configuration OK: {counted} ({len(config.datasets)} data set entries, sizes "
             f"{', '.join(map(str, sizes))}, {'/'.join(map(str, reps))} repetitions), {len(config.methods)} methods "
             f"({', '.join(config.methods)}); {args.config}"]
    if args.store is not None:
        if Path(args.store).exists():
            with ResultStore(args.store, readonly=True) as store:
                store.check_protocol(config)
                done = len(store.finished() & set(tasks))
            details.update(store=str(args.store), stored=done)
            lines.append(f"store {args.store}: same protocol, {done} of the {len(tasks)} "
                         f"{'selected ' if len(tasks) != whole else ''}tasks already stored")
        else:
            details.update(store=str(args.store), stored=0)
            lines.append(f"store {args.store}: does not exist yet (a run creates it)")
    record = envelope("coverage", data={"source": str(args.config), "n": None}, seed=int(config.seed), results=[],
                      details=details)
    return record, "\n".join(lines)


def _coverage_table(summary, methods) -> list[str]:
    """Coverage (mean width) per data set and n, one column per method."""
    cells = {(r["dataset"], r["n"], r["method"]): r for r in summary}
    keys = sorted({(r["dataset"], r["n"]) for r in summary})
    if not keys:
        return ["(no finished tasks yet)"]
    shown = {r["method"] for r in summary}
    methods = [m for m in methods if m in shown]     # an AUC study's estimates and tests have no coverage
    head = f"{'data set':<14} {'n':>4} {'reps':>5}  " + "  ".join(f"{m:>13}" for m in methods)
    out = ["coverage (mean width)", head, "-" * len(head)]
    for d, n in keys:
        reps = max(cells[(d, n, m)]["reps"] for m in methods if (d, n, m) in cells)
        row = [f"{cells[(d, n, m)]['coverage']:.3f} ({cells[(d, n, m)]['mean_width']:.3f})"
               if (d, n, m) in cells else "-" for m in methods]
        out.append(f"{d:<14} {n:>4} {reps:>5}  " + "  ".join(f"{c:>13}" for c in row))
    return out


def _store_check(args):
    """``cudbound store check FILE``: :func:`cudbound.coverage.check.check_store`; status 1 when a
    check fails (a file that is not a store is a StoreError: status 2)."""
    from ..coverage.check import check_store

    result = check_store(args.file)
    record = envelope("store check", data={"source": str(args.file), "n": None}, results=[],
                      details=result.to_dict())
    return record, result.report(), (0 if result.ok else 1)


def _store_export(args):
    """``cudbound store export FILE DIR``: :func:`cudbound.coverage.chunks.export_store`."""
    from ..coverage import load_config
    from ..coverage.chunks import export_store

    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be a positive integer; got {args.chunk_size}.")
    config = load_config(args.config) if args.config else None
    out = export_store(args.file, args.dir, config, args.chunk_size)
    details = {"store": str(args.file), "directory": str(args.dir), "chunk_size": args.chunk_size,
               "written": [str(p) for p in out.written], "existing": [str(p) for p in out.existing],
               "incomplete": [{"dataset": d, "n": n, "reps": [a, b], "stored": k} for d, n, a, b, k in out.incomplete],
               "outside_configuration": out.outside}
    record = envelope("store export", data={"source": str(args.file), "n": None}, results=[], details=details)
    lines = [f"exported {args.file} to {args.dir}: {len(out.written)} chunk file(s) written, "
             f"{len(out.existing)} already there (left as they are)"]
    lines += [f"  wrote {p}" for p in out.written]
    if out.incomplete:
        lines.append(f"{len(out.incomplete)} incomplete block(s) not exported (a chunk holds every repetition "
                     f"of its block; finish the study to export them):")
        lines += [f"  {d} n = {n} reps {a}-{b}: {k} of {b - a + 1} stored" for d, n, a, b, k in out.incomplete]
    if out.outside:
        lines.append(f"{out.outside} stored task(s) are not tasks of the configuration and were not exported; "
                     f"pass the study's current configuration with --config.")
    return record, "\n".join(lines)
