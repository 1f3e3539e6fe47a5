"""Runs of a selection of a study's cells (``run_study(datasets=, sizes=)``, ``cudbound coverage
--datasets/--sizes``): the selected tasks only, in the study's order, with the rows and chunks a run
of the whole study gives them; runs of different selections fill one store and one chunk directory."""
import gzip
import json
import re
from pathlib import Path

import pytest
from store_rows import stored

from cudbound.cli import main
from cudbound.coverage import ResultStore, Task, parse_config, run_study
from cudbound.coverage.runner import select_tasks

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "experiments" / "smoke.toml"
TIMING = {"seconds", "task_seconds", "finished", "host"}


def config(reps=2, sizes="[30]"):
    text = SMOKE.read_text().replace("repetitions = 4", f"repetitions = {reps}").replace("sizes = [30]",
                                                                                          f"sizes = {sizes}")
    return parse_config(text, source="smoke")


def chunk_rows(directory):
    """Each chunk file's rows without the timing columns, by file."""
    out = {}
    for path in sorted(Path(directory).glob("*/n*/*.csv.gz")):
        with gzip.open(path, "rt") as fh:
            lines = fh.read().splitlines()
        head = lines[0].split(",")
        keep = [i for i, c in enumerate(head) if c not in TIMING]
        out[path.relative_to(directory).as_posix()] = [[line.split(",")[i] for i in keep] for line in lines]
    return out


def test_select_tasks_keeps_the_study_order_and_names_what_is_unknown():
    cfg = config(reps=2, sizes="[20, 30]")
    everything = cfg.tasks()
    assert select_tasks(cfg) == everything
    donut = select_tasks(cfg, datasets=["donut"])
    assert donut == [t for t in everything if t.dataset == "donut"] and len(donut) == 4
    assert select_tasks(cfg, sizes=[30]) == [t for t in everything if t.n == 30]
    assert select_tasks(cfg, datasets=["three_points", "donut"], sizes=["20"]) == [t for t in everything if t.n == 20]
    with pytest.raises(ValueError, match=r"entries of the study 'smoke' \(donut, three_points\); got nosuch"):
        select_tasks(cfg, datasets=["donut", "nosuch"])
    with pytest.raises(ValueError, match=r"training sizes of the study 'smoke' \(\[20, 30\]\); got \[50\]"):
        select_tasks(cfg, sizes=[50])
    with pytest.raises(ValueError, match="got none"):
        select_tasks(cfg, datasets=[])
    with pytest.raises(ValueError, match=r"got \['thirty', 30.5, True\]"):
        select_tasks(cfg, sizes=["thirty", 30.5, True])
    assert select_tasks(cfg, datasets="donut", sizes=30) == select_tasks(cfg, datasets=["donut"], sizes=[30])


def test_runs_of_two_selections_give_the_rows_and_chunks_of_one_whole_run(tmp_path):
    cfg = config(reps=3, sizes="[20, 30]")
    whole = run_study(cfg, tmp_path / "whole.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "c_whole",
                      chunk_size=2)
    assert whole.total == 12 and whole.computed == 12
    first = run_study(cfg, tmp_path / "parts.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "c_parts",
                      chunk_size=2, datasets=["three_points"], sizes=[20])
    assert (first.total, first.computed, first.remaining) == (3, 3, 0)
    with ResultStore(tmp_path / "parts.sqlite") as store:
        assert {(t.dataset, t.n) for t in store.finished()} == {("three_points", 20)}
    assert sorted(chunk_rows(tmp_path / "c_parts")) == ["three_points/n20/reps0000-0001.csv.gz",
                                                        "three_points/n20/reps0002-0002.csv.gz"]
    second = run_study(cfg, tmp_path / "parts.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "c_parts",
                       chunk_size=2, sizes=[30], max_tasks=4)      # two cells, capped within the selection
    assert (second.total, second.already, second.computed, second.remaining) == (6, 0, 4, 2)
    with ResultStore(tmp_path / "parts.sqlite") as store:
        assert {t.n for t in store.finished()} == {20, 30}
        assert {(t.dataset, t.rep) for t in store.finished() if t.n == 30} == {   # the study's order
            ("donut", 0), ("donut", 1), ("donut", 2), ("three_points", 0)}
    # a fresh store: the selected cell's tasks come from the chunks, not computed again
    again = run_study(cfg, tmp_path / "fresh.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "c_parts",
                      chunk_size=2, datasets="three_points", sizes=20)
    assert (again.total, again.already, again.computed) == (3, 3, 0)
    rest = run_study(cfg, tmp_path / "parts.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "c_parts",
                     chunk_size=2)
    assert (rest.total, rest.already, rest.computed) == (12, 7, 5)
    assert stored(tmp_path / "parts.sqlite") == stored(tmp_path / "whole.sqlite")
    assert chunk_rows(tmp_path / "c_parts") == chunk_rows(tmp_path / "c_whole")


def test_a_selection_without_a_task_is_refused():
    """An entry with sizes of its own: a label and a size each in the study, but no task of both."""
    text = SMOKE.read_text().replace("sizes = [30]", "sizes = [20, 30]")
    cfg = parse_config(text.replace('name = "three_points"', 'name = "three_points"\nsizes = [20]'), source="smoke")
    assert {(t.dataset, t.n) for t in cfg.tasks()} == {("donut", 20), ("donut", 30), ("three_points", 20)}
    with pytest.raises(ValueError, match=r"holds no task .* \(its entries' sizes: donut: 20, 30; three_points: 20\)"):
        select_tasks(cfg, datasets=["three_points"], sizes=[30])


def test_a_bad_selection_is_refused_before_the_store_is_created(tmp_path):
    with pytest.raises(ValueError, match="got nosuch"):
        run_study(config(), tmp_path / "s.sqlite", n_jobs=1, progress=False, datasets=["nosuch"])
    assert not (tmp_path / "s.sqlite").exists()


def test_cli_selection(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    smoke = tmp_path / "smoke.toml"
    smoke.write_text(SMOKE.read_text().replace("repetitions = 4", "repetitions = 2").replace("sizes = [30]",
                                                                                            "sizes = [20, 30]"))
    base = ["coverage", "--config", str(smoke), "--store", str(store), "--jobs", "1", "--no-progress"]
    assert main(base + ["--datasets", "donut", "--sizes", "30", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)["details"]
    assert (record["tasks"], record["already"], record["computed"], record["remaining"]) == (2, 0, 2, 0)
    assert record["selection"] == {"datasets": ["donut"], "sizes": [30], "exclude": None}
    with ResultStore(store) as s:
        assert {(t.dataset, t.n) for t in s.finished()} == {("donut", 30)}
    assert main(base + ["--sizes", "20,30", "--datasets", "donut, three_points"]) == 0
    out = capsys.readouterr().out
    assert "study smoke: 8 selected tasks, 2 already stored, 6 computed now, 0 failed, 0 remaining" in out
    assert main(base + ["--json"]) == 0
    record = json.loads(capsys.readouterr().out)["details"]
    assert (record["tasks"], record["already"], record["computed"]) == (8, 8, 0)
    assert record["selection"] == {"datasets": None, "sizes": None, "exclude": None}
    assert main(["coverage", "--config", str(smoke), "--check", "--store", str(store), "--sizes", "20"]) == 0
    assert "4 selected tasks of 8" in capsys.readouterr().out
    for flags, message in ((["--datasets", "nosuch"], "--datasets must name entries of the study 'smoke' "
                                                      "(donut, three_points); got nosuch."),
                           (["--sizes", "thirty"], "--sizes must be training sizes separated by commas"),
                           (["--sizes", "\u00b2"], "--sizes must be training sizes separated by commas"),
                           (["--datasets", ","], "--datasets needs at least one"),
                           (["--sizes", "50"], "--sizes must be training sizes of the study 'smoke' ([20, 30]); "
                                               "got [50].")):
        assert main(base + flags) == 2
        assert message in capsys.readouterr().err
    assert main(["coverage", "--config", str(smoke), "--check", "--datasets", "nosuch"]) == 2
    assert "got nosuch" in capsys.readouterr().err


def test_select_tasks_leaves_out_the_excluded_tasks_and_names_a_bad_one():
    cfg = config(reps=2, sizes="[20, 30]")
    everything = cfg.tasks()
    gone = [Task("donut", 30, 1), Task("three_points", 20, 0)]
    kept = select_tasks(cfg, exclude=["donut:30:1", ("three_points", "20", 0)])
    assert kept == [t for t in everything if t not in gone] and len(kept) == len(everything) - 2
    assert select_tasks(cfg, exclude=gone) == kept                       # Tasks as well as their text
    assert select_tasks(cfg, datasets="donut", exclude=["donut:30:1"]) == [
        t for t in everything if t.dataset == "donut" and t != gone[0]]
    assert select_tasks(cfg, exclude=[]) == everything
    for bad in ("donut:30:2", "donut:40:0", "nosuch:30:0", "donut:30", "donut:30:x", "donut:30:0:1"):
        with pytest.raises(ValueError, match=r"`exclude` must name tasks of the study 'smoke' as label:n:rep .*"
                                             + re.escape(repr(bad))):
            select_tasks(cfg, exclude=["donut:30:0", bad])
    with pytest.raises(ValueError, match=r"got \('donut', 30, True\)"):
        select_tasks(cfg, exclude=[("donut", 30, True)])
    with pytest.raises(ValueError, match="holds no task"):
        select_tasks(cfg, datasets="donut", sizes=20, exclude=["donut:20:0", "donut:20:1"])


def test_a_run_that_excludes_a_task_leaves_it_and_its_block_for_a_later_run(tmp_path):
    cfg = config(reps=2, sizes="[30]")
    whole = run_study(cfg, tmp_path / "whole.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "c_whole",
                      chunk_size=2)
    first = run_study(cfg, tmp_path / "s.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "c", chunk_size=2,
                      exclude=["donut:30:1"])
    assert (first.total, first.computed, first.remaining) == (3, 3, 0)
    with ResultStore(tmp_path / "s.sqlite") as store:
        assert Task("donut", 30, 1) not in store.finished() and len(store.finished()) == 3
    assert sorted(p.name for p in (tmp_path / "c" / "donut" / "n30").iterdir()) == ["partial-reps0000-0001.csv.gz"]
    rest = run_study(cfg, tmp_path / "s.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "c", chunk_size=2)
    assert (rest.total, rest.already, rest.computed) == (4, 3, 1)
    assert stored(tmp_path / "s.sqlite") == stored(tmp_path / "whole.sqlite")
    assert chunk_rows(tmp_path / "c") == chunk_rows(tmp_path / "c_whole")


def test_cli_exclude(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    smoke = tmp_path / "smoke.toml"
    smoke.write_text(SMOKE.read_text().replace("repetitions = 4", "repetitions = 2"))
    base = ["coverage", "--config", str(smoke), "--store", str(store), "--jobs", "1", "--no-progress"]
    assert main(base + ["--exclude", "donut:30:0, three_points:30:1", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)["details"]
    assert (record["tasks"], record["computed"], record["remaining"]) == (2, 2, 0)
    assert record["selection"] == {"datasets": None, "sizes": None, "exclude": ["donut:30:0", "three_points:30:1"]}
    with ResultStore(store) as s:
        assert set(s.finished()) == {Task("donut", 30, 1), Task("three_points", 30, 0)}
    assert main(["coverage", "--config", str(smoke), "--check", "--exclude", "donut:30:0"]) == 0
    assert "3 selected tasks of 4" in capsys.readouterr().out
    assert main(base + ["--exclude", "donut:30:7"]) == 2
    assert ("--exclude must name tasks of the study 'smoke' as label:n:rep (e.g. donut:30:0); got 'donut:30:7'."
            in capsys.readouterr().err)
    assert main(base) == 0
    assert "study smoke: 4 tasks, 2 already stored, 2 computed now" in capsys.readouterr().out
