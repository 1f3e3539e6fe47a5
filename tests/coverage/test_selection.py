"""Runs of a selection of a study's cells (``run_study(datasets=, sizes=)``, ``cudbound coverage
--datasets/--sizes``): the selected tasks only, in the study's order, with the rows and chunks a run
of the whole study gives them; runs of different selections fill one store and one chunk directory."""
import gzip
import json
from pathlib import Path

import pytest

from cudbound.cli import main
from cudbound.coverage import ResultStore, parse_config, run_study
from cudbound.coverage.runner import select_tasks

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "experiments" / "smoke.toml"
TIMING = {"seconds", "task_seconds", "finished", "host"}


def config(reps=2, sizes="[30]"):
    text = SMOKE.read_text().replace("repetitions = 4", f"repetitions = {reps}").replace("sizes = [30]",
                                                                                          f"sizes = {sizes}")
    return parse_config(text, source="smoke")


def stored(path):
    """Every stored row without its timing columns."""
    with ResultStore(path) as store:
        tasks = [{k: v for k, v in r.items() if k not in TIMING} for r in store.tasks()]
        results = [{k: v for k, v in r.items() if k not in TIMING} for r in store.results()]
    for r in results:
        r["details"] = {k: v for k, v in json.loads(r["details"]).items() if "seconds" not in k}
    return sorted(tasks, key=repr), sorted(results, key=repr)


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
    cfg = config(reps=3)
    whole = run_study(cfg, tmp_path / "whole.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "c_whole",
                      chunk_size=2)
    assert whole.total == 6 and whole.computed == 6
    first = run_study(cfg, tmp_path / "parts.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "c_parts",
                      chunk_size=2, datasets=["three_points"])
    assert (first.total, first.computed, first.remaining) == (3, 3, 0)
    with ResultStore(tmp_path / "parts.sqlite") as store:
        assert {t.dataset for t in store.finished()} == {"three_points"}
    assert sorted(chunk_rows(tmp_path / "c_parts")) == ["three_points/n30/reps0000-0001.csv.gz",
                                                        "three_points/n30/reps0002-0002.csv.gz"]
    second = run_study(cfg, tmp_path / "parts.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "c_parts",
                       chunk_size=2, datasets=["donut"], sizes=[30])
    assert (second.total, second.already, second.computed) == (3, 0, 3)
    rest = run_study(cfg, tmp_path / "parts.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "c_parts",
                     chunk_size=2)
    assert (rest.total, rest.already, rest.computed) == (6, 6, 0)
    assert stored(tmp_path / "parts.sqlite") == stored(tmp_path / "whole.sqlite")
    assert chunk_rows(tmp_path / "c_parts") == chunk_rows(tmp_path / "c_whole")


def test_a_bad_selection_is_refused_before_the_store_is_created(tmp_path):
    with pytest.raises(ValueError, match="got nosuch"):
        run_study(config(), tmp_path / "s.sqlite", n_jobs=1, progress=False, datasets=["nosuch"])
    assert not (tmp_path / "s.sqlite").exists()


def test_cli_selection(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    smoke = tmp_path / "smoke.toml"
    smoke.write_text(SMOKE.read_text().replace("repetitions = 4", "repetitions = 2"))
    base = ["coverage", "--config", str(smoke), "--store", str(store), "--jobs", "1", "--no-progress"]
    assert main(base + ["--datasets", "donut", "--sizes", "30"]) == 0
    out = capsys.readouterr().out
    assert "study smoke: 2 selected tasks, 0 already stored, 2 computed now, 0 failed, 0 remaining" in out
    assert main(base + ["--json"]) == 0
    record = json.loads(capsys.readouterr().out)["details"]
    assert (record["tasks"], record["already"], record["computed"]) == (4, 2, 2)
    assert record["selection"] == {"datasets": None, "sizes": None}
    for flags, message in ((["--datasets", "nosuch"], "got nosuch"), (["--sizes", "thirty"], "--sizes must be"),
                           (["--datasets", ","], "--datasets needs at least one"),
                           (["--sizes", "50"], "got [50]")):
        assert main(base + flags) == 2
        assert message in capsys.readouterr().err
    assert main(["coverage", "--config", str(smoke), "--check", "--datasets", "nosuch"]) == 2
    assert "got nosuch" in capsys.readouterr().err
