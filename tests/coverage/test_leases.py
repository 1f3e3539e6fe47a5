"""Several runs on one store split the work (cudbound/coverage/leases.py and ResultStore.claim): a task
is claimed with a lease in one transaction, computed once, and taken over when its run dies or its
lease expires; runs sharing a store give exactly the rows of a single run."""
from __future__ import annotations

import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from fake_tasks import fake_result, use_fake_tasks
from processes import wait_for
from store_rows import stored

import cudbound.coverage.leases as leases
from cudbound.cli import main
from cudbound.coverage import ResultStore, Task, check_store, parse_config, run_study

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "experiments" / "smoke.toml"

FAST = """
[study]
name = "lease"
seed = 5
repetitions = {reps}
sizes = [30]
confidence_level = 0.95
test_size = 500
loss = "squared"
methods = ["kohavi", "martin", "langford", "yang"]

[options]
n_boot = 20

[[datasets]]
name = "donut"

[[datasets]]
name = "three_points"
"""


def count(path, sql):
    try:
        with sqlite3.connect(path, timeout=10) as db:
            return db.execute(sql).fetchone()[0]
    except sqlite3.Error:
        return 0


def small_config(reps=4):
    return parse_config(SMOKE.read_text().replace("repetitions = 4", f"repetitions = {reps}"), source="smoke")


# ------------------------------------------------------------------ the claims themselves

def test_claims_leases_expiry_dead_owners_and_release(tmp_path):
    config = small_config(3)
    tasks = config.tasks()
    here = socket.gethostname()
    with ResultStore(tmp_path / "s.sqlite", config) as store:
        a, b = f"{here}:{os.getpid()}:aaaa", "elsewhere:1:bbbb"
        out = store.claim(tasks, a, lease=60, limit=2)
        assert out["claimed"] == tasks[:2] and out["rest"] == tasks[2:]
        out = store.claim(tasks, b, lease=60, limit=10)
        assert out["held"] == tasks[:2] and out["claimed"] == tasks[2:]
        assert store.claim(tasks[:2], a, lease=60, limit=5)["claimed"] == tasks[:2]      # one's own: renewed
        assert store.renew(a, 60) == 2 and store.renew(b, 60) == len(tasks) - 2
        # writing a task drops its claim; a finished task is never claimed again
        store.write(fake_result(config, tasks[0]))
        assert store.claim(tasks[:1], b, lease=60, limit=5)["done"] == tasks[:1]
        assert (tasks[0].dataset, tasks[0].n, tasks[0].rep) not in {(c["dataset"], c["n"], c["rep"])
                                                                   for c in store.claims()}
        # an expired lease is taken over, and the log says so
        store.renew(b, -1)
        out = store.claim(tasks[2:4], a, lease=60, limit=5)
        assert out["claimed"] == tasks[2:4]
        log = store.claim_log()
        assert [r["event"] for r in log][-2:] == ["reclaim", "reclaim"] and log[-1]["owner"] == a
        # a live lease of a dead process of this host is taken over at once
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        ghost = f"{here}:{dead.pid}:cccc"
        assert store.claim(tasks[4:5], ghost, lease=600, limit=1)["claimed"] == tasks[4:5]
        assert leases.owner_gone(ghost) and not leases.owner_gone(a) and not leases.owner_gone(b)
        assert store.claim(tasks[4:5], b, lease=60, limit=1, gone=leases.owner_gone)["claimed"] == tasks[4:5]
        assert store.release(a) == 3 and all(c["owner"] == b for c in store.claims())
    assert check_store(tmp_path / "s.sqlite").ok


def test_a_run_waits_for_tasks_held_by_another_run_and_takes_them_over_when_the_lease_expires(
        tmp_path, monkeypatch):
    use_fake_tasks(monkeypatch)
    monkeypatch.setattr(leases, "POLL_SECONDS", 0.2)
    config = small_config(4)
    path = tmp_path / "s.sqlite"
    with ResultStore(path, config) as store:
        store.claim(config.tasks()[:3], "elsewhere:1:held", lease=2.0, limit=3)     # a live run elsewhere
    t0 = time.monotonic()
    report = run_study(config, path, n_jobs=1, progress=False)
    assert time.monotonic() - t0 >= 1.5                   # it waited for the lease to expire
    assert report.computed == 8 and report.remaining == 0 and report.duplicates == 0
    with ResultStore(path) as store:
        events = Counter(r["event"] for r in store.claim_log())
        assert events == {"claim": 3 + 5, "reclaim": 3} and store.claims() == []
    # with a cap, a run does not wait for tasks it may not claim anyway
    other = tmp_path / "t.sqlite"
    with ResultStore(other, config) as store:
        store.claim(config.tasks()[:3], "elsewhere:1:held", lease=60, limit=3)
    t0 = time.monotonic()
    report = run_study(config, other, n_jobs=1, progress=False, max_tasks=5)
    assert report.computed == 5 and time.monotonic() - t0 < 10


def test_tasks_finished_by_another_run_meanwhile_are_counted_as_such(tmp_path, monkeypatch):
    config = small_config(2)
    path = tmp_path / "s.sqlite"
    ResultStore(path, config).close()
    real = fake_result

    def task(cfg, t, data_home=None):
        if t.rep == 0 and t.dataset == "donut":    # meanwhile another run stores the last task
            with ResultStore(path) as other:
                other.write(real(cfg, Task("three_points", 30, 1)))
        return real(cfg, t)
    import cudbound.coverage.runner as runner
    monkeypatch.setattr(runner, "run_task", task)
    report = run_study(config, path, n_jobs=1, progress=False)
    assert report.computed == 3 and report.others == 1 and report.remaining == 0


# ------------------------------------------------------------------ runs in separate processes

def _start(config, store, jobs="1"):
    cmd = [sys.executable, "-m", "cudbound", "coverage", "--config", str(config), "--store", str(store),
           "--jobs", jobs, "--no-progress"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True), cmd


_WAIT_FOR_A_SECOND_RUN = """
import sys, time
import cudbound.coverage.runner as runner
from cudbound.coverage.store import ResultStore
real, done = runner.run_task, [0]
def task(config, t, data_home=None):
    done[0] += 1
    if done[0] == 2:   # hold the second task until another run has claimed work (at most 120 s)
        end = time.monotonic() + 120
        while time.monotonic() < end:
            with ResultStore({store!r}) as s:
                if len({{r["owner"] for r in s.claim_log()}}) >= 2:
                    break
            time.sleep(0.05)
    return real(config, t, data_home)
runner.run_task = task
from cudbound.cli import main
sys.exit(main({argv!r}))
"""


def _start_held(config, store):
    """:func:`_start`, but the run holds its second task until a second run has claimed a task:
    the two runs overlap by construction, however loaded the machine (no timing involved)."""
    argv = ["coverage", "--config", str(config), "--store", str(store), "--jobs", "1", "--no-progress"]
    code = _WAIT_FOR_A_SECOND_RUN.format(store=str(store), argv=argv)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


# slow (two commands of 100 tasks): the README's command keeps the same sharing in one process, a run that waits
# for tasks another run holds and takes them over (test_a_run_waits_for_tasks_held_by_another_run_...), tasks
# another run finished meanwhile (test_tasks_finished_by_another_run_meanwhile_are_counted_as_such) and the claims
# themselves (test_claims_leases_expiry_dead_owners_and_release)
@pytest.mark.slow
def test_two_runs_at_once_split_the_work_and_give_the_rows_of_one_run(tmp_path):
    config = tmp_path / "fast.toml"
    config.write_text(FAST.format(reps=50))
    run_study(parse_config(config.read_text(), source="fast"), tmp_path / "one.sqlite", n_jobs=1, progress=False)
    store = tmp_path / "shared.sqlite"
    first = _start_held(config, store)
    try:
        assert wait_for(lambda: count(store, "SELECT COUNT(*) FROM tasks") >= 1, 120), "the first run did not start"
        second, _ = _start(config, store)
        outs = [p.communicate(timeout=300) for p in (first, second)]
    finally:
        for p in (first,):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
    assert first.returncode == 0 and second.returncode == 0, outs
    computed = [int(re.search(r"(\d+) computed now", out).group(1)) for out, _ in outs]
    assert sum(computed) == 100 and min(computed) > 0, computed       # both worked, together once
    with ResultStore(store) as s:
        log = s.claim_log()
        assert len(log) == 100 and {r["event"] for r in log} == {"claim"}
        assert len({(r["dataset"], r["n"], r["rep"]) for r in log}) == 100      # every task claimed once
        assert len({r["owner"] for r in log}) == 2 and s.claims() == []
    assert stored(store) == stored(tmp_path / "one.sqlite")
    assert check_store(store).ok


# slow (a command killed, then 80 tasks): the README's command keeps a dead owner's claims taken over
# (test_claims_leases_expiry_dead_owners_and_release) and a command killed with kill -9 and resumed
# (tests/coverage/test_study.py::test_kill_minus_nine_and_resume_loses_nothing_and_duplicates_nothing)
@pytest.mark.slow
def test_a_killed_runs_tasks_are_redone_by_the_next_run(tmp_path):
    config = tmp_path / "fast.toml"
    config.write_text(FAST.format(reps=40))
    run_study(parse_config(config.read_text(), source="fast"), tmp_path / "one.sqlite", n_jobs=1, progress=False)
    store = tmp_path / "s.sqlite"
    proc, cmd = _start(config, store, jobs="2")
    try:
        assert wait_for(lambda: count(store, "SELECT COUNT(*) FROM tasks") >= 3, 120), "no task finished"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.communicate(timeout=30)
    orphaned = count(store, "SELECT COUNT(*) FROM claims")
    assert orphaned >= 1, "the killed run held no claim"          # it had tasks in flight
    assert main(cmd[3:]) == 0                                     # at once: the dead run's leases are taken over
    with ResultStore(store) as s:
        events = Counter(r["event"] for r in s.claim_log())
        assert events["reclaim"] == orphaned and s.claims() == []
    assert stored(store) == stored(tmp_path / "one.sqlite")


@pytest.mark.slow    # one kill -9 and resume: tests/coverage/test_study.py::test_kill_minus_nine_and_resume_...
def test_a_study_killed_at_random_moments_and_resumed_gives_the_rows_of_an_uninterrupted_run(tmp_path):
    """Several kill -9s of the whole run (workers included) at random moments, each followed by a
    resume; the last run completes the study. The rows equal those of one uninterrupted run.

    A moment is a random number of tasks (1 to 15) stored by the run, not a time: the study's 200
    tasks take about 1.5 s on an idle core, so a kill timed in seconds could come after the end
    (on 2026-11-30 it did, once); counted in tasks, every run is killed with most of the study left
    (at about 120 tasks a second and a poll every 0.05 s, a run stores a few more before its kill)."""
    import random
    config = tmp_path / "fast.toml"
    config.write_text(FAST.format(reps=100))
    run_study(parse_config(config.read_text(), source="fast"), tmp_path / "one.sqlite", n_jobs=1, progress=False)
    store = tmp_path / "s.sqlite"
    moments = random.Random(20261125)
    kills = 0
    for _ in range(4):
        proc, cmd = _start(config, store, jobs="2")
        try:
            target = count(store, "SELECT COUNT(*) FROM tasks") + moments.randint(1, 15)
            assert wait_for(lambda: count(store, "SELECT COUNT(*) FROM tasks") >= target or proc.poll() is not None,
                            120), "the run stored no task in two minutes"
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                kills += 1
        finally:
            proc.communicate(timeout=30)
    assert kills == 4, "a run finished before its kill: the study is too short for its moments"
    assert main(cmd[3:]) == 0
    assert stored(store) == stored(tmp_path / "one.sqlite")
    assert check_store(store).ok
