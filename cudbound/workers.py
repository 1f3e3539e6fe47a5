"""Running replicate searches: in this process, on local processes, or on a Dask cluster.

Each replicate is one task, handed to the next free worker (dynamic scheduling: one
heavy replicate never idles the others). A worker builds the search engine for the
(design, labels, loss) once and reuses it for every replicate it receives. The results
are returned in the order asked for, so nothing depends on which worker ran what.

Local workers never outlive the process that started them, ``kill -9`` included, and leave
Ctrl-C to it: on any exception while replicates run, Ctrl-C included, the workers are stopped
at once rather than waited for (:mod:`cudbound.lifeline`).
"""
from __future__ import annotations

import itertools
import os
from concurrent.futures import ProcessPoolExecutor

from .engine import ReplicateEngine
from .lifeline import InFlight, init_worker, stop_workers

__all__ = ["ReplicateRunner"]


_WORKER = {}


def _init_worker(spec, parent):
    init_worker(parent)
    _WORKER["spec"] = spec
    _WORKER["engine"] = None


def _engine_for(spec):
    if _WORKER.get("spec_id") != id(spec) or _WORKER.get("engine") is None:
        design, y, loss, engine, solver, _, _ = spec
        _WORKER["engine"] = ReplicateEngine(design, y, loss, engine=engine, solver=solver)
        _WORKER["spec_id"] = id(spec)
    return _WORKER["engine"]


def _run_one(counts, options):
    spec = _WORKER["spec"]
    _, _, _, _, _, beta_hat, alpha = spec
    return _engine_for(spec).search(counts, beta_hat, alpha, options)


def _run_one_dask(spec, counts, options):
    eng = _WORKER.get(("dask", id(spec)))
    if eng is None:
        design, y, loss, engine, solver, _, _ = spec
        _WORKER.clear()
        eng = _WORKER[("dask", id(spec))] = ReplicateEngine(design, y, loss, engine=engine, solver=solver)
    _, _, _, _, _, beta_hat, alpha = spec
    return eng.search(counts, beta_hat, alpha, options)


class ReplicateRunner:
    """``runner(indices, options_list, on_done)`` -> SearchOutcomes, in order (see ``quantile``).

    ``n_jobs == 1`` and no ``scheduler``: in this process. ``n_jobs > 1``: a local process
    pool, kept for the runner's lifetime (use it as a context manager). ``scheduler``: the
    address of a Dask scheduler (needs ``distributed``); the data are scattered once.
    """

    def __init__(self, design, y, loss, counts, beta_hat, alpha, *, engine="auto", solver=None, n_jobs=1,
                 scheduler=None):
        self.counts = counts
        self.spec = (design, y, loss, engine, solver, beta_hat, alpha)
        self.n_jobs = n_jobs
        self.scheduler = scheduler
        self._pool = self._client = self._spec_future = None
        self._local = None
        if scheduler is not None:
            try:
                from distributed import Client
            except ImportError:  # pragma: no cover - depends on the installation
                raise ImportError("a Dask scheduler needs the 'distributed' package: pip install 'cudbound[cluster]'") from None
            self._client = Client(scheduler) if isinstance(scheduler, str) else scheduler
            self._owns_client = isinstance(scheduler, str)
            self._spec_future = self._client.scatter(self.spec, broadcast=True)
        elif n_jobs > 1:
            self._pool = ProcessPoolExecutor(max_workers=n_jobs, initializer=_init_worker,
                                             initargs=(self.spec, os.getpid()))
        else:
            self._local = ReplicateEngine(design, y, loss, engine=engine, solver=solver)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
        if self._client is not None and getattr(self, "_owns_client", False):
            self._client.close()
        self._client = None

    def __call__(self, indices, options_list, on_done=None):
        _, _, _, _, _, beta_hat, alpha = self.spec
        results = [None] * len(indices)
        if self._local is not None:
            for j, (i, opts) in enumerate(zip(indices, options_list)):
                results[j] = self._local.search(self.counts[i], beta_hat, alpha, opts)
                if on_done is not None:
                    on_done(i, results[j])
            return results
        if self._client is not None:
            from distributed import as_completed

            futures = {self._client.submit(_run_one_dask, self._spec_future, self.counts[i], opts, pure=False): j
                       for j, (i, opts) in enumerate(zip(indices, options_list))}
            for fut in as_completed(list(futures)):
                j = futures[fut]
                results[j] = fut.result()
                if on_done is not None:
                    on_done(indices[j], results[j])
            return results
        if self._pool is None:
            raise RuntimeError("this replicate runner is closed (or an error or interrupt stopped its workers)")
        return self._run_on_pool(indices, options_list, on_done, results)

    def _run_on_pool(self, indices, options_list, on_done, results):
        """The replicates on the process pool, at most ``2 * n_jobs`` in flight
        (:class:`cudbound.lifeline.InFlight`); on any exception, Ctrl-C included, the workers are
        stopped at once."""
        window = 2 * self.n_jobs
        todo = iter(enumerate(zip(indices, options_list)))
        flight = InFlight(self._pool)

        def fill():
            for j, (i, opts) in itertools.islice(todo, window - len(flight)):
                flight.submit(j, _run_one, self.counts[i], opts)

        try:
            fill()
            while len(flight):
                j, fut = flight.next()
                results[j] = fut.result()
                if on_done is not None:
                    on_done(indices[j], results[j])
                fill()
        except BaseException:
            pool, self._pool = self._pool, None
            stop_workers(pool)
            raise
        return results
