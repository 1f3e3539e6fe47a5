"""README.md as a user meets it: its Python tour gives the outputs it shows, and every shell
command in it runs as written (the install commands run in CI's `.ci/run`, which checks they are
the README's own)."""
import doctest
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def shell_commands() -> list[str]:
    """Every line of every ```sh block (a trailing comment dropped)."""
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if line]


INSTALL = [c for c in shell_commands() if "pip install" in c and "sphinx" not in c]
DOCS = [c for c in shell_commands() if "sphinx" in c]


def test_the_tour_gives_the_outputs_it_shows():
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    result = doctest.testfile(str(README), module_relative=False, encoding="utf-8", report=True,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 20 and result.failed == 0


def test_the_install_commands_are_the_ones_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert len(INSTALL) == 2 and INSTALL[0].endswith("cudbound demo") and INSTALL[1].endswith("pytest -q -n auto")
    assert '"$venv_python" -m pytest -q -n auto ||' in ci       # the README's test command, on every core
    assert "README_FIRST_RUN" in ci and "sed -n" in ci  # .ci/run extracts and runs the first one as written
    assert len(DOCS) == 1 and "-m sphinx -W --keep-going" in DOCS[0] and "-m sphinx -W --keep-going" in ci


def test_the_readme_command_leaves_out_the_slow_tests_and_ci_runs_them():
    """pyproject.toml marks a test ``slow`` only under a registered marker, the README's command
    (its addopts) deselects them, and CI runs them after it: CI runs every test."""
    import tomllib

    pytest_ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    addopts = shlex.split(pytest_ini["addopts"])
    assert "--strict-markers" in addopts and addopts[addopts.index("-m") + 1] == "not slow"
    assert any(m.startswith("slow:") for m in pytest_ini["markers"])
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    readme_run, slow_run = ci.index('"$venv_python" -m pytest -q -n auto ||'), ci.index('-m pytest -q -n auto -m slow ||')
    assert readme_run < slow_run < ci.index("ci: passed")
    assert 'exit "$slow_status"' in ci[slow_run:ci.index("ci: passed")]   # a failing slow test fails CI


def test_install_lines_use_the_virtual_environment():
    """Every line that installs or runs Python uses the .venv the first command made (issue 29:
    the docs line used a bare `pip` and `python`)."""
    for command in INSTALL + DOCS:
        for part in command.split("&&"):
            if part.split()[:3] == ["python", "-m", "venv"]:
                continue            # the system's Python makes the environment
            for word in shlex.split(part):
                assert word not in ("pip", "python", "cudbound"), (word, command)


def test_the_first_command_installs_what_the_tour_imports():
    """The tour's third-party imports are dependencies of the package or of the extras its first
    command names (issue 29: the tour imported pandas, which `pip install .` did not install)."""
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = re.findall(r"\.\[([\w,]+)\]", INSTALL[0])
    requirements = list(meta["dependencies"]) + [r for group in extras for name in group.split(",")
                                                 for r in meta["optional-dependencies"][name]]
    installed = {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}
    text = README.read_text(encoding="utf-8")
    imported = set(re.findall(r"^>>> (?:import|from) ([\w]+)", text, flags=re.M))
    module_to_dist = {"sklearn": "scikit-learn", "cudbound": None}
    stdlib = set(sys.stdlib_module_names)
    needed = {module_to_dist.get(m, m) for m in imported if m not in stdlib} - {None}
    assert needed and needed <= installed, needed - installed


def test_every_shell_command_is_covered_here():
    """A new command in the README must be run by this file (or by CI, the installs)."""
    known = INSTALL + DOCS + [c for c in shell_commands() if c.startswith("export ")]
    rest = [c for c in shell_commands() if c not in known]
    assert rest == [c for c in rest if c in RUN_AS_WRITTEN or c in NEEDS_DATA], rest


def _argv(command: str) -> list[str]:
    """The command's words, `cudbound` and `python` mapped to this interpreter's."""
    words = shlex.split(command)
    while "=" in words[0]:
        words = words[1:]
    if words[0] == "cudbound":
        return [sys.executable, "-m", "cudbound", *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    raise AssertionError(f"unknown program in README command: {command}")


def _workdir(tmp_path: Path) -> Path:
    """A copy of the parts of the repository the commands read, so they may write where they say."""
    work = tmp_path / "repo"
    for name in ("docs", "experiments", "paper_figures"):
        shutil.copytree(ROOT / name, work / name, ignore=shutil.ignore_patterns("_build", "auto_examples"))
    shutil.copytree(ROOT / "results", work / "results")
    return work


RUN_AS_WRITTEN = [c for c in shell_commands() if c.startswith(("cudbound interval", "cudbound auc", "cudbound compare",
                                                                "cudbound xi-alpha", "cudbound coverage --config "
                                                                "experiments/smoke", "python paper_figures/"))]
NEEDS_DATA = [c for c in shell_commands() if c.startswith("CUDBOUND_DATA=")]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return _workdir(tmp_path_factory.mktemp("readme"))


def _slow_if_whole_study(commands):
    """Rebuilding every table of results/, and loading the whole committed study, take minutes: marked
    slow (tests/test_paper_figures.py runs the same scripts and chunk loading on small studies). So is
    the small AUC study (tests/coverage/test_auc_study.py runs it through the command by default)."""
    return [pytest.param(c, marks=pytest.mark.slow) if "rebuild_all" in c or c in NEEDS_DATA or "smoke_auc" in c else c
            for c in commands]


def _run_as_written(command, workdir, monkeypatch, capsys):
    """(exit status, stdout, stderr) of ``command`` run in ``workdir``. The README's first command and
    its ``python`` scripts run as processes of their own, as a user starts them (the entry point
    included); every other ``cudbound`` command runs through ``cudbound.cli.main``, the function that
    entry point calls, on the same words in this process, which spares the 3 s or so of CPU a new
    process spends importing the package."""
    if command == RUN_AS_WRITTEN[0] or not command.startswith("cudbound "):
        proc = subprocess.run(_argv(command), cwd=workdir, capture_output=True, text=True, timeout=900)
        return proc.returncode, proc.stdout, proc.stderr
    from cudbound.cli import main

    monkeypatch.chdir(workdir)
    capsys.readouterr()
    code = main(shlex.split(command)[1:])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", _slow_if_whole_study(RUN_AS_WRITTEN))
def test_the_command_runs_as_written(command, workdir, monkeypatch, capsys):
    if "rebuild_all" in command:
        pytest.importorskip("matplotlib")
    returncode, stdout, stderr = _run_as_written(command, workdir, monkeypatch, capsys)
    assert returncode == 0, stderr
    if "rebuild_all" in command:  # the rebuilt tables are the committed ones, byte for byte
        for rel in ("tables.md", "tables.tex", "figure1_kurtosis.csv", "study2/tables.md", "study2/cells.csv",
                    "study2/figure1_kurtosis.csv", "figure1_kurtosis.md", "study2/figure1_kurtosis.md",
                    "sensitivity/summary.md",
                    "sensitivity/summary.csv", "study3/tables.md", "study3/auc_cells.csv", "study3/estimates.csv",
                    "study3/comparison_cells.csv"):
            assert (workdir / "results" / rel).read_bytes() == (ROOT / "results" / rel).read_bytes(), rel
    elif command.startswith("cudbound interval"):
        assert "'no' -> -1, 'yes' -> +1" in stdout
    elif command.startswith("cudbound compare"):
        for method in ("mcnemar", "tango", "delong", "wald_cv", "corrected_t"):
            assert re.search(rf"^\s+{method}\s+(error|AUC)\s+-?\d\.\d{{4}}", stdout, flags=re.M), stdout


@pytest.mark.parametrize("command", _slow_if_whole_study(NEEDS_DATA))
def test_the_study_command_resumes_its_chunks_and_refuses_the_record_of_the_earlier_refit_rule(command, workdir):
    """The study's command, as written, resumes from the committed chunks of today's rule (with
    --max-tasks 0: it loads them, computes nothing); the same command on the chunks kept as the record
    of the earlier rule (``chunks_shared_basis``, the README says so) is refused, naming that
    difference and no other, instead of mixing rows of two protocols."""
    from cudbound.coverage.chunks import chunk_files, read_chunk as read_tasks
    data = os.environ.get("CUDBOUND_DATA")
    if not data:
        pytest.skip("real UCI files not available: set CUDBOUND_DATA to the directory with the raw files")
    env = {**os.environ, "CUDBOUND_DATA": data}
    chunks = re.search(r"--chunks (\S+)", command).group(1)
    committed = sum(len({(t["dataset"], t["n"], t["rep"]) for t in read_tasks(p)}) for p in chunk_files(workdir / chunks))
    proc = subprocess.run(_argv(command) + ["--no-progress", "--max-tasks", "0"], cwd=workdir, capture_output=True,
                          text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr
    assert re.search(rf"(\d+) tasks, {committed} already stored, 0 computed now, 0 failed", proc.stdout), proc.stdout
    record = chunks.replace("/chunks", "/chunks_shared_basis")
    assert chunk_files(workdir / record)
    old = command.replace(f"--chunks {chunks}", f"--chunks {record}").replace("--store ", "--store old_")
    proc = subprocess.run(_argv(old) + ["--no-progress", "--max-tasks", "0"], cwd=workdir, capture_output=True,
                          text=True, timeout=900, env=env)
    assert proc.returncode == 2, proc.stdout
    diffs = re.search(r"\((protocol\..*); 'store' meaning the chunks\)", proc.stderr)
    assert diffs and diffs.group(1).startswith("protocol.refits: store has '<absent>'"), proc.stderr
    assert diffs.group(1).count("protocol.") == 1, proc.stderr           # the refit rule is the only difference
