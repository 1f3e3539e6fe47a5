"""Coverage studies: how often does each interval contain the true error? (Laber & Murphy 2008, section 5)

* :mod:`~cudbound.coverage.config`: the study's protocol from a TOML file, and its tasks.
* :mod:`~cudbound.coverage.tasks`: one task (draw, fit, every interval, the true error).
* :mod:`~cudbound.coverage.store`: the resumable SQLite store of the results (:class:`StoreError`
  for every problem with its file).
* :mod:`~cudbound.coverage.check`: verify a store (``cudbound store check``).
* :mod:`~cudbound.coverage.chunks`: immutable result chunks (one gzipped CSV per data set, n and
  block of repetitions) that a long study is committed in and resumed from.
* :mod:`~cudbound.coverage.runner`: run the unfinished tasks on local processes or a Dask cluster.
* :mod:`~cudbound.coverage.leases`: several runs on one store split the tasks by leases.
* the workers of a local run end with it and leave Ctrl-C to it (:mod:`cudbound.lifeline`).

Command line: ``cudbound coverage --config experiments/paper.toml --store results/paper.sqlite``;
``cudbound store check FILE`` and ``cudbound store export FILE DIR``.
"""
from __future__ import annotations

from .check import StoreCheck, check_store
from .chunks import ChunkDir, ExportReport, export_store, load_chunks
from .config import ConfigError, DatasetSpec, StudyConfig, Task, load_config, parse_config
from .runner import RunInterrupted, RunReport, run_study
from .store import (ResultStore, StoreCorruptError, StoreError, StoreMismatchError, StoreNotFoundError,
                    StoreVersionError)
from .tasks import run_task

__all__ = ["load_config", "parse_config", "StudyConfig", "DatasetSpec", "Task", "ConfigError",
           "run_task", "run_study", "RunReport", "RunInterrupted", "ResultStore", "StoreError", "StoreNotFoundError",
           "StoreVersionError", "StoreCorruptError", "StoreMismatchError", "check_store", "StoreCheck",
           "ChunkDir", "load_chunks", "export_store", "ExportReport"]
