"""Stand-in task results for tests of the coverage machinery (store, chunks, runner) that need
finished tasks but not the intervals themselves: deterministic, instant, and shaped exactly as
:func:`cudbound.coverage.run_task` returns them."""
from __future__ import annotations

import zlib


def fake_result(config, task) -> dict:
    """A task's result with plausible numbers derived from the task's key alone."""
    h = zlib.crc32(f"{task.dataset}/{task.n}/{task.rep}".encode())
    true_error = 0.1 + (h % 300) / 1000.0
    rows = []
    for i, label in enumerate(config.methods):
        low = round(max(0.0, true_error - 0.05 - 0.01 * i - (h % 7) / 100.0), 6)
        high = round(min(1.0, low + 0.2 + 0.01 * i), 6)
        rows.append({"method": label, "low": low, "high": high, "centre": (low + high) / 2, "width": high - low,
                     "covered": int(low <= true_error <= high), "seconds": 0.001, "details": {"fake": True}})
    return {"dataset": task.dataset, "n": task.n, "rep": task.rep, "train_error": round(true_error - 0.05, 6),
            "true_error": true_error, "test_size": config.test_size, "redraws": 0, "warnings": [],
            "seconds": 0.001, "host": "test", "rows": rows}


def use_fake_tasks(monkeypatch):
    """Make the runner compute every task with :func:`fake_result` (in-process runs, n_jobs=1)."""
    import cudbound.coverage.runner as runner

    monkeypatch.setattr(runner, "run_task", lambda config, task, data_home=None: fake_result(config, task))
