"""Run a coverage study's unfinished tasks, locally or on a Dask cluster, into a store.

Workers compute; only this process writes to the store, one transaction per finished
task. Results do not depend on the number of workers or the order of completion,
because every task draws its random numbers from its own SeedSequence
(:meth:`StudyConfig.task_seed`).

Several runs may share one store, at the same time, on one machine or several: they split
the tasks by leases in the store (:mod:`cudbound.coverage.leases`), so each task is computed
once, and a run's tasks are taken over by the others if it dies.

Stopping: local worker processes never outlive the run (:mod:`cudbound.lifeline`:
they end within a second of its death, ``kill -9`` included). Ctrl-C (SIGINT) stops the run
cleanly: the workers are stopped, the tasks finished so far stay in the store, and
:class:`RunInterrupted` (a ``KeyboardInterrupt``) carries the report; rerunning the same
command resumes.
"""
from __future__ import annotations

import numbers
import os
import re
import traceback
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from .._validation import check_n_jobs
from .chunks import ChunkDir
from .config import StudyConfig, Task
from .leases import LeaseKeeper, TaskSource, new_owner
from ..lifeline import InFlight, init_worker, stop_workers
from .store import ResultStore
from .tasks import run_task

__all__ = ["run_study", "select_tasks", "RunReport", "RunInterrupted"]


@dataclass
class RunReport:
    """What one invocation did: tasks in the study (in its selection, when the run selects data sets or
    sizes), already stored, computed now, failed, stored meanwhile by other runs sharing the store,
    computed but found stored by another run."""

    total: int
    already: int
    computed: int = 0
    failed: list = field(default_factory=list)  # (task, message)
    chunks_written: list = field(default_factory=list)  # paths of the chunk files written
    others: int = 0
    duplicates: int = 0

    @property
    def remaining(self) -> int:
        return self.total - self.already - self.computed - self.others - self.duplicates


class RunInterrupted(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C); its workers are stopped, its finished tasks are in the
    store at ``store`` and ``report`` says what it did. Rerunning the same command resumes."""

    def __init__(self, report: RunReport, store: str | os.PathLike[str]):
        super().__init__(f"interrupted after {report.computed} task(s); {report.remaining} remain")
        self.report, self.store = report, store


def _safe_task(config, task, data_home):
    """run_task, with a failure turned into a value so one bad task does not stop the study."""
    try:
        return run_task(config, task, data_home)
    except Exception as exc:  # noqa: BLE001 - reported with its traceback, never swallowed
        return {"failed": True, "task": task, "message": f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"}


def select_tasks(config: StudyConfig, datasets: str | Iterable[str] | None = None,
                 sizes: int | Iterable[int] | None = None, exclude: Iterable | None = None) -> list[Task]:
    """The study's tasks (in its order) of the data-set entries ``datasets`` (labels; one label may
    be given alone) and the training sizes ``sizes`` (integers; one may be given alone); None
    selects every one. ``exclude``: tasks left out (each a :class:`Task` or a (label, n, rep)
    triple; :func:`exclusions` reads ``"label:n:rep"``), e.g. one that a run cannot finish in its time. A
    label or a size the study does not have, a task to exclude that is not the study's, or a
    selection that holds no task (an entry with sizes of its own), is an error: a ValueError naming
    the study's."""
    tasks = config.tasks()
    if exclude is not None:
        left_out = exclusions(exclude, tasks, config.name)
        tasks = [t for t in tasks if t not in left_out]
    labels = [d.label for d in config.datasets]
    if datasets is not None:
        wanted = _items(datasets)
        unknown = [str(x) for x in wanted if not isinstance(x, str) or x not in labels]
        if unknown or not wanted:
            raise ValueError(f"`datasets` must name entries of the study {config.name!r} ({', '.join(labels)}); "
                             f"got {', '.join(unknown) if unknown else 'none'}.")
        tasks = [t for t in tasks if t.dataset in wanted]
    if sizes is not None:
        known = sorted({t.n for t in config.tasks()})
        wanted_n = [_size(x) for x in _items(sizes)]
        unknown_n = [x for x in wanted_n if not isinstance(x, int) or x not in known]
        if unknown_n or not wanted_n:
            raise ValueError(f"`sizes` must be training sizes of the study {config.name!r} ({known}); "
                             f"got {unknown_n if unknown_n else 'none'}.")
        tasks = [t for t in tasks if t.n in wanted_n]
    if not tasks and (datasets is not None or sizes is not None or exclude is not None):
        cells = "; ".join(f"{d.label}: {', '.join(map(str, config.sizes_of(d)))}" for d in config.datasets)
        raise ValueError(f"the selection holds no task of the study {config.name!r} (its entries' sizes: {cells}).")
    return tasks


def exclusions(exclude, tasks: list[Task], study: str) -> set[Task]:
    """The tasks ``exclude`` names (Tasks, (label, n, rep) triples or ``"label:n:rep"`` strings), each one
    of ``tasks``, the study's; anything else is a ValueError naming it."""
    out, bad = set(), []
    known = set(tasks)
    for item in _items(exclude):
        if isinstance(item, Task):
            item = (item.dataset, item.n, item.rep)
        parts = item.split(":") if isinstance(item, str) else item
        try:
            label, n, rep = parts
            task = Task(str(label), _count(n), _count(rep))
        except (TypeError, ValueError):
            bad.append(repr(item))
            continue
        if task not in known:
            bad.append(repr(item))
        out.add(task)
    if bad:
        raise ValueError(f"`exclude` must name tasks of the study {study!r} as label:n:rep (e.g. "
                         f"{tasks[0].dataset}:{tasks[0].n}:{tasks[0].rep}); got {', '.join(bad)}.")
    return out


def _count(x) -> int:
    """A training size or a repetition given as an integer or its digits; anything else is a ValueError."""
    x = _size(x)
    if not isinstance(x, int) or isinstance(x, bool):
        raise ValueError(x)
    return x


def _items(x) -> list:
    """A selection as a list: a string or a single value is one item."""
    if isinstance(x, (str, bytes)) or not hasattr(x, "__iter__"):
        return [x]
    return list(x)


def _size(x):
    """A training size given as an integer or its digits (anything else is kept as given, so that it
    is named as unknown: 30.0 and True are not sizes)."""
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, str) and re.fullmatch(r"[0-9]+", x.strip()):
        return int(x)
    return x


def run_study(config: StudyConfig, store_path: str | os.PathLike[str], *, n_jobs: int | None = -1,
              scheduler: str | None = None, data_home: str | os.PathLike[str] | None = None, progress: bool = True,
              max_tasks: int | None = None, chunks: str | os.PathLike[str] | None = None,
              chunk_size: int = 50, datasets: str | Iterable[str] | None = None,
              sizes: int | Iterable[int] | None = None, exclude: Iterable | None = None) -> RunReport:
    """Compute every task of ``config`` (or of its selection) not yet in the store at ``store_path``.

    Parameters
    ----------
    config : StudyConfig
    store_path : str or Path
        SQLite file; created if absent, resumed if present (see :class:`ResultStore`).
    n_jobs : int or None, default -1
        Local worker processes, as scikit-learn counts them: -1 every core (the default), -k every
        core but k - 1, None or 1 in this process.
    scheduler : str, optional
        Address of a Dask distributed scheduler (e.g. ``"tcp://10.0.0.5:8786"``); the
        tasks then run on its workers, which need cudbound installed and the data
        directory (``data_home`` or ``CUDBOUND_DATA``) at the same path.
    data_home : str or path-like, optional
        Directory of the real data files (default: ``CUDBOUND_DATA``).
    progress : bool
        Show a progress bar with ETA (tqdm, on stderr).
    max_tasks : int, optional
        Compute at most this many unfinished tasks, then stop (the rest stays for a rerun).
        Without it the run ends when every task of the study (of its selection) is stored: when
        the remaining ones are held by other runs on the same store, it waits for them (or takes
        them over when their leases expire).
    chunks : str or Path, optional
        A directory of immutable result chunks (:mod:`cudbound.coverage.chunks`): its
        chunks, and the files of its blocks in progress, are loaded into the store first (their
        tasks are not computed again); each block of ``chunk_size`` repetitions is written as a
        chunk when it completes, and until then as a partial file of its finished tasks.
    chunk_size : int, default 50
        Repetitions per chunk.
    datasets, sizes : sequence, optional
        Compute only the tasks of these data-set entries (labels) and training sizes
        (:func:`select_tasks`; default every one). The study, its protocol, its store and its
        chunks stay the whole study's: runs with different selections (at once or one after the
        other, on one machine or several) fill one store and one chunk directory, each task with
        the rows a run of the whole study gives it. The report counts the selected tasks.
    exclude : sequence, optional
        Tasks this run leaves out (:func:`select_tasks`: ``Task``, (label, n, rep) or
        ``"label:n:rep"``), e.g. one another run computes, or one too long for this run's time; they
        stay unfinished in the store, and a block holding one stays a partial file until they are stored.

    Returns
    -------
    RunReport
    """
    from tqdm.auto import tqdm

    workers = check_n_jobs(n_jobs)
    tasks = select_tasks(config, datasets, sizes, exclude)     # a bad selection is refused before the store is touched
    with ResultStore(store_path, config) as store:
        chunk_dir = None
        if chunks is not None:
            chunk_dir = ChunkDir(chunks, config, chunk_size)
            chunk_dir.load_into(store, partial=True)
            report_chunks = chunk_dir.write_complete(store)
        done = store.finished()
        todo = [t for t in tasks if t not in done]
        report = RunReport(total=len(tasks), already=len(tasks) - len(todo))
        if chunk_dir is not None:
            report.chunks_written.extend(report_chunks)
        owner = new_owner()
        source = TaskSource(store, owner, todo, max_tasks=max_tasks)
        bar = tqdm(total=len(tasks), initial=report.already, unit="task", disable=not progress,
                   desc=config.name, smoothing=0.05, dynamic_ncols=True)

        def record(out):
            if out.get("failed"):
                report.failed.append((out["task"], out["message"]))
                bar.write(f"task {out['task']} failed: {out['message'].splitlines()[0]}")
            elif store.write(out):
                report.computed += 1
                if chunk_dir is not None:
                    written = chunk_dir.write_if_complete(store, Task(out["dataset"], int(out["n"]), int(out["rep"])))
                    if written is not None:
                        report.chunks_written.append(written)
            else:
                report.duplicates += 1      # another run stored it first (after this run's lease expired)
            bar.update(1)

        try:
            with LeaseKeeper(store_path, owner):
                if scheduler is not None:
                    _run_dask(config, source, scheduler, data_home, record)
                elif workers == 1:
                    _run_here(config, source, data_home, record)
                else:
                    _run_processes(config, source, workers, data_home, record)
        except KeyboardInterrupt:
            raise RunInterrupted(report, store_path) from None
        finally:
            report.others = source.by_others
            bar.close()
            source.release()
    return report


def _run_here(config, source, data_home, record):
    """The tasks one after the other in this process."""
    while True:
        batch = source.take(1)
        if batch:
            record(_safe_task(config, batch[0], data_home))
        elif source.waiting:
            source.pause()
        else:
            return


def _run_processes(config, source, workers, data_home, record):
    """The tasks on a local process pool whose workers end with this process and ignore Ctrl-C
    (:mod:`cudbound.lifeline`); on any exception here, Ctrl-C included, the workers are
    stopped at once, not waited for."""
    window = 2 * workers  # tasks in flight: enough to keep workers busy, few to lose on a kill
    pool = ProcessPoolExecutor(max_workers=workers, initializer=init_worker, initargs=(os.getpid(),))
    flight = InFlight(pool)

    def fill():
        for task in source.take(window - len(flight)):
            flight.submit(task, _safe_task, config, task, data_home)

    try:
        fill()
        while len(flight) or source.waiting:
            if not len(flight):
                source.pause()
                fill()
                continue
            _, fut = flight.next()
            record(fut.result())
            fill()
    except BaseException:
        stop_workers(pool)
        raise
    pool.shutdown(wait=True)


def _run_dask(config, source, scheduler, data_home, record):
    try:
        from distributed import Client, as_completed
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("--scheduler needs Dask distributed: pip install 'cudbound[cluster]'.") from None
    with Client(scheduler, timeout="30s") as client:
        window = 2 * max(1, sum(client.nthreads().values()))
        live = set()
        futures = as_completed()

        def fill():
            for task in source.take(window - len(live)):
                fut = client.submit(_safe_task, config, task, data_home, pure=False)
                live.add(fut)
                futures.add(fut)

        try:
            fill()
            while live or source.waiting:
                if not live:
                    source.pause()
                    fill()
                    continue
                fut = next(futures)
                record(fut.result())
                live.discard(fut)
                fut.release()
                fill()
        except BaseException:
            client.cancel(list(live))
            raise
