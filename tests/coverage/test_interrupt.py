"""A coverage run's workers never outlive it (kill -9 included), and Ctrl-C stops it cleanly: exit
status 130, no traceback, the finished tasks kept, a message saying how to resume
(cudbound/lifeline.py, cudbound/coverage/runner.py)."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fake_tasks import fake_result
from processes import LINUX, children, running, sigint_as_in_a_terminal, wait_for

import cudbound.coverage.runner as runner
from cudbound.cli import main
from cudbound.coverage import ResultStore, check_store, parse_config, run_study
from cudbound.coverage.runner import RunInterrupted

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "experiments" / "smoke.toml"
def stored_tasks(path) -> int:
    if not Path(path).exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
    except sqlite3.Error:
        return 0


def start_run(tmp_path, reps, store="s.sqlite"):
    config = tmp_path / "study.toml"
    config.write_text(SMOKE.read_text().replace("repetitions = 4", f"repetitions = {reps}"))
    cmd = [sys.executable, "-m", "cudbound", "coverage", "--config", str(config), "--store", str(tmp_path / store),
           "--jobs", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=sigint_as_in_a_terminal)
    return proc, cmd


def _end(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)


@LINUX
def test_kill_minus_nine_of_the_run_ends_its_workers(tmp_path):
    proc, _ = start_run(tmp_path, reps=40)
    workers = []
    try:
        workers = wait_for(lambda: (lambda k: k if len(k) >= 2 else None)(children(proc.pid)), 120)
        assert workers and len(workers) == 2, "the run did not start its two workers"
        assert wait_for(lambda: stored_tasks(tmp_path / "s.sqlite") >= 1, 120), "no task finished"
        assert all(running(w) for w in workers)
        os.kill(proc.pid, signal.SIGKILL)                 # the run only: its workers are not signalled
        assert wait_for(lambda: not any(running(w) for w in workers), 5), \
            f"workers {[w for w in workers if running(w)]} outlived the run by 5 s"
    finally:
        for w in workers:
            if running(w):
                os.kill(w, signal.SIGKILL)
        _end(proc)


WATCHDOG_PARENT = textwrap.dedent("""
    import os, sys, time
    from concurrent.futures import ProcessPoolExecutor
    import cudbound.lifeline as lifeline

    def init(run):
        lifeline._death_signal = lambda: None     # the portable watchdog alone, as on macOS
        lifeline.init_worker(run)

    def work(_):
        end = time.time() + 120
        while time.time() < end:                   # busy, as a task computing
            sum(range(1000))
        return os.getpid()

    pool = ProcessPoolExecutor(2, initializer=init, initargs=(os.getpid(),))
    futures = [pool.submit(work, i) for i in range(2)]
    print("started", flush=True)
    time.sleep(600)
""")


@LINUX
def test_the_portable_watchdog_alone_ends_orphaned_workers(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(WATCHDOG_PARENT)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, start_new_session=True)
    workers = []
    try:
        assert proc.stdout.readline().strip() == "started"
        workers = wait_for(lambda: (lambda k: k if len(k) >= 2 else None)(children(proc.pid)), 60)
        assert workers and len(workers) == 2
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGKILL)
        assert wait_for(lambda: not any(running(w) for w in workers), 5)
    finally:
        for w in workers:
            if running(w):
                os.kill(w, signal.SIGKILL)
        _end(proc)


# slow (a study of 200 tasks over two worker processes, then its resume): the README's command keeps the same clean
# stop in process (test_ctrl_c_in_process_keeps_the_finished_tasks: exit 130, the one line, the tasks kept, the
# resume) and Ctrl-C of a command's worker processes (tests/test_workers.py::test_ctrl_c_stops_the_workers_...)
@pytest.mark.slow
@LINUX
def test_ctrl_c_stops_the_run_cleanly_keeps_its_tasks_and_a_rerun_completes_the_study(tmp_path):
    proc, cmd = start_run(tmp_path, reps=100)       # long enough not to finish first on a loaded machine
    store = tmp_path / "s.sqlite"
    workers = []
    try:
        workers = wait_for(lambda: (lambda k: k if len(k) >= 2 else None)(children(proc.pid)), 120)
        assert workers and len(workers) == 2
        assert wait_for(lambda: stored_tasks(store) >= 2, 120), "no task finished"
        os.killpg(proc.pid, signal.SIGINT)               # a terminal's Ctrl-C reaches the whole group
        out, err = proc.communicate(timeout=60)
    finally:
        _end(proc)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    # the workers may say they compile (or, on a loaded machine, load slowly) the kernels first
    lines = [line for line in err.strip().splitlines() if not line.startswith("cudbound: compiling ")]
    assert len(lines) == 1 and lines[0].startswith("cudbound: interrupted: the ") and "resume" in lines[0], err
    assert "run the same command again" in lines[0] and str(store) in lines[0]
    assert "computed now" in out
    assert wait_for(lambda: not any(running(w) for w in workers), 5)
    kept = stored_tasks(store)
    assert kept >= 2 and check_store(store).ok
    code = main(cmd[3:])                                  # the same command resumes
    assert code == 0
    with ResultStore(store) as s:
        assert len(s.tasks()) == 200 and len(s.results()) == 200 * 8
    assert check_store(store).ok


def test_ctrl_c_in_process_keeps_the_finished_tasks(tmp_path, monkeypatch, capsys):
    """workers = 1 (the tasks run in this process): the same clean stop, through main()."""
    calls = []

    def task(config, task, data_home=None):
        calls.append(task)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return fake_result(config, task)
    monkeypatch.setattr(runner, "run_task", task)
    config = parse_config(SMOKE.read_text(), source="smoke")
    with pytest.raises(RunInterrupted) as info:
        run_study(config, tmp_path / "a.sqlite", n_jobs=1, progress=False)
    assert isinstance(info.value, KeyboardInterrupt)
    assert info.value.report.computed == 3 and info.value.report.remaining == 5
    with ResultStore(tmp_path / "a.sqlite") as s:
        assert len(s.tasks()) == 3
    calls.clear()
    code = main(["coverage", "--config", str(SMOKE), "--store", str(tmp_path / "b.sqlite"), "--jobs", "1",
                 "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 130 and "Traceback" not in err
    assert err.strip() == (f"cudbound: interrupted: the 3 finished tasks are kept in {tmp_path / 'b.sqlite'} "
                           f"(3 computed now, 5 remaining); to resume, run the same command again.")
    assert "3 computed now, 0 failed, 5 remaining" in out
    monkeypatch.setattr(runner, "run_task", lambda config, task, data_home=None: fake_result(config, task))
    assert main(["coverage", "--config", str(SMOKE), "--store", str(tmp_path / "b.sqlite"), "--jobs", "1",
                 "--no-progress"]) == 0
    assert "3 already stored, 5 computed now" in capsys.readouterr().out


def test_a_run_that_is_init_itself_keeps_its_workers(monkeypatch):
    """In a container the run can be pid 1: its workers' parent is then 1 without the run being gone
    (found in review: every worker exited and the pool broke)."""
    import cudbound.lifeline as lifeline

    exits, threads = [], []
    monkeypatch.setattr(lifeline.os, "getppid", lambda: 1)
    monkeypatch.setattr(lifeline, "_alive", lambda pid: True)
    monkeypatch.setattr(lifeline, "_death_signal", lambda: None)
    monkeypatch.setattr(lifeline.os, "_exit", lambda status: exits.append(status))
    monkeypatch.setattr(lifeline.threading, "Thread", lambda **kw: threads.append(kw) or type(
        "T", (), {"start": lambda self: None})())
    monkeypatch.setattr(lifeline.signal, "signal", lambda *a: None)
    lifeline.init_worker(1)
    assert exits == [] and len(threads) == 1
    lifeline.init_worker(4242)                  # a run that is not init, and the worker re-parented to init
    assert exits == [lifeline.ORPHAN_EXIT_STATUS]
