"""A study configuration is validated completely when it is read (cudbound/coverage/config.py): every
method option (by the method's own validation, cudbound.registry.check_options), sizes, levels, data
sets, bases and data files, with every error reported at once, before any task runs or the store is
touched; `cudbound coverage --check` only validates."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fake_tasks import use_fake_tasks

from cudbound.cli import main
from cudbound.coverage import ConfigError, load_config, parse_config
from cudbound.registry import check_options, get_method, method_names, options_check, register, unregister

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "experiments" / "smoke.toml"

# the three configuration errors of the issue, which used to be found only when a task ran
ISSUE_EDITS = [("n_resamples = 20      # B", "n_resamples = 5      # B"),
               ("n_inner = 10", "n_inner = -10"),
               ("sizes = [30]", "sizes = [2]")]


def edited(*edits, text=None):
    text = SMOKE.read_text() if text is None else text
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_issue_errors_are_all_reported_at_once_when_the_file_is_read(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(edited(*ISSUE_EDITS))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    errors, text = info.value.errors, str(info.value)
    assert text.startswith(f"{path} has {len(errors)} errors:")
    assert any(re.search(r"\[options\.cud\].*`n_resamples`=5 is too few for confidence_level=0\.95: at least .* 20",
                         e) for e in errors), errors
    assert any("[options.bs1]" in e and "`n_inner` must be a positive integer; got -10" in e for e in errors)
    assert any("size(s) [2]" in e and "donut" in e for e in errors)
    assert any("size(s) [2]" in e and "three_points" in e for e in errors)
    # each problem once, one line each
    assert len(errors) == len(set(errors)) and all("\n" not in e for e in errors)


@pytest.mark.parametrize("edit", ISSUE_EDITS)
def test_each_issue_error_alone_is_refused_before_the_store_is_touched(tmp_path, capsys, edit):
    bad = tmp_path / "bad.toml"
    bad.write_text(edited(edit))
    store = tmp_path / "s.sqlite"
    code, out, err = run_cli(capsys, "coverage", "--config", bad, "--store", store, "--jobs", "1", "--no-progress")
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith(f"cudbound: error: {bad}")
    assert not store.exists()


def test_after_a_refused_configuration_the_corrected_one_runs_on_the_same_store(tmp_path, capsys, monkeypatch):
    use_fake_tasks(monkeypatch)
    bad, good, store = tmp_path / "bad.toml", tmp_path / "good.toml", tmp_path / "s.sqlite"
    bad.write_text(edited(*ISSUE_EDITS))
    good.write_text(SMOKE.read_text())
    argv = ["--store", store, "--jobs", "1", "--no-progress"]
    assert run_cli(capsys, "coverage", "--config", bad, *argv)[0] == 2
    code, out, _ = run_cli(capsys, "coverage", "--config", good, *argv)
    assert code == 0 and "8 computed now" in out


def test_check_only_validates_and_never_creates_the_store(tmp_path, capsys, monkeypatch):
    bad, good, store = tmp_path / "bad.toml", tmp_path / "good.toml", tmp_path / "s.sqlite"
    bad.write_text(edited(*ISSUE_EDITS))
    good.write_text(SMOKE.read_text())
    code, out, err = run_cli(capsys, "coverage", "--config", bad, "--check", "--store", store)
    assert code == 2 and out == ""
    assert err.startswith(f"cudbound: error: {bad} has ") and err.count("\n  - ") >= 4
    code, out, err = run_cli(capsys, "coverage", "--config", good, "--check", "--store", store)
    assert code == 0 and out.startswith("configuration OK: 8 tasks (2 data set entries, sizes 30, 4 repetitions), "
                                        "8 methods")
    assert "does not exist yet" in out
    assert not store.exists()
    code, out, _ = run_cli(capsys, "coverage", "--config", good, "--check", "--json")      # no --store needed
    record = json.loads(out)
    assert code == 0 and record["command"] == "coverage" and record["results"] == []
    assert record["details"]["check"] and record["details"]["tasks"] == 8
    jsonschema = pytest.importorskip("jsonschema")
    from cudbound.output import OUTPUT_SCHEMA
    jsonschema.Draft202012Validator(OUTPUT_SCHEMA).validate(record)
    # an existing store: whether it accepts the configuration, read only
    use_fake_tasks(monkeypatch)
    assert run_cli(capsys, "coverage", "--config", good, "--store", store, "--jobs", "1", "--no-progress",
                   "--max-tasks", "3")[0] == 0
    before = store.read_bytes()
    code, out, _ = run_cli(capsys, "coverage", "--config", good, "--check", "--store", store)
    assert code == 0 and "same protocol, 3 of the 8 tasks already stored" in out
    other = tmp_path / "other.toml"
    other.write_text(edited(("seed = 12345", "seed = 7")))
    code, out, err = run_cli(capsys, "coverage", "--config", other, "--check", "--store", store)
    assert code == 2 and "seed: store has 12345, configuration has 7" in err
    assert store.read_bytes() == before
    code, _, err = run_cli(capsys, "coverage", "--config", good)
    assert code == 2 and "--store FILE.sqlite is required" in err


OPTION_ERRORS = [
    # (method, option line, fragment of the method's own message)
    ("cud", "engine_options = {max_nodes = 0}", "`max_nodes` must be a positive integer"),
    ("cud", 'engine_options = {engine = "fast"}', "`engine` must be one of"),
    ("cud", "engine_options = {max_node = 10}", "`engine_options` has no field(s) ['max_node']"),
    ("cud", "alpha_n = -1.0", "`alpha_n` must be a finite non-negative number"),
    ("cud", "alpha_n = [1]", "`alpha_n` must be a finite number; got [1]. Or give one of the rules"),
    ("bs1", "n_resamples = 1", "`n_resamples` must be an integer >= 2"),
    ("bs2", 'distribution = "smooth"', "`distribution` must be 'literal' or 'bias_corrected'"),
    ("kohavi", 'form = "exact"', "`form` must be 'wilson'"),
    ("yang", "cv = 31", "`cv` must be at most n = 30"),
    ("martin", "prior = [0, 1]", "`prior[0]` must be a number > 0"),
    ("langford", 'alternative = "both"', "`alternative` must be 'two-sided', 'less' or 'greater'"),
    ("wald_cv", "cv = 1", "`cv` must be an integer between 2 and 30"),
    ("corrected_t", "test_fraction = 1.5", "`test_fraction` must be a number strictly between 0 and 1"),
    ("conservative_z", "n_halves = 0", "`n_halves` must be a positive integer"),
    ("nested_cv", "cv = 20", "nested cross-validation needs at least 2 points per fold"),
    ("bccv", 'bias_correction = "yes"', "`bias_correction` must be True or False"),
    ("e632_delta", 'point_estimate = "loo"', "`point_estimate` must be '.632+', '.632' or 'err1'"),
]


@pytest.mark.parametrize("method, line, fragment", OPTION_ERRORS)
def test_every_methods_own_option_checks_run_when_the_file_is_read(method, line, fragment):
    """A variant of each method with one bad option (the smoke study, n = 30)."""
    label = f"{method}_variant"
    text = edited(('"cud_alpha_1"]', f'"cud_alpha_1", "{label}"]'))
    text += f'\n[options.{label}]\nmethod = "{method}"\n{line}\n'
    with pytest.raises(ConfigError) as info:
        parse_config(text, source="t.toml")
    assert any(e.startswith(f"[options.{label}]") and fragment in e for e in info.value.errors), info.value.errors
    assert len(info.value.errors) == 1


def test_b_too_small_for_the_level_is_found_at_every_level():
    text = edited(("confidence_level = 0.95", "confidence_level = 0.99"))
    with pytest.raises(ConfigError, match=r"`n_resamples`=20 is too few for confidence_level=0\.99: .* 100"):
        parse_config(text)
    parse_config(edited(("confidence_level = 0.95", "confidence_level = 0.9")))   # 20 >= 10: fine


def test_a_problem_at_some_sizes_only_names_the_smallest():
    text = edited(("sizes = [30]", "sizes = [30, 50, 100]")) + "\n[options.yang]\ncv = 40\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, source="t")
    assert info.value.errors == ["[options.yang] at n = 30: `cv` must be at most n = 30; got 40."]


def test_sizes_below_the_basis_dimension_and_unknown_data_sets():
    text = edited(("sizes = [30]", "sizes = [6, 30]"), ('name = "donut"', 'name = "nosuch"'))
    with pytest.raises(ConfigError) as info:
        parse_config(text + '\n[[datasets]]\nname = "donut"\nlabel = "donut-p3"\nbasis = "poly:3"\n', source="t")
    errors = info.value.errors
    assert any("unknown data set 'nosuch'" in e for e in errors)
    assert any("'donut-p3': size(s) [6] are at most the 10 functions of its basis 'poly:3'" in e for e in errors)
    assert not any("'three_points':" in e for e in errors)          # linear on one feature: p = 2 < 6
    with pytest.raises(ConfigError, match="'donut': basis 'pca:3' does not apply to its 2 feature"):
        parse_config(edited(('name = "donut"', 'name = "donut"\nbasis = "pca:3"')))


def test_data_files_are_checked_when_the_data_directory_is_known(tmp_path, capsys, monkeypatch):
    text = edited(('name = "three_points"', 'name = "liver"'))
    parse_config(text)                                   # no data directory: downloaded at run time if missing
    with pytest.raises(ConfigError, match=r"data set 'liver': its file 'bupa.data' is not in the data directory"):
        parse_config(text, data_home=tmp_path)
    (tmp_path / "bupa.data").write_text("")            # present but not the UCI file: every task would fail
    with pytest.raises(ConfigError, match=r"data set 'liver': its file 'bupa.data' in '.*' is not the UCI original "
                                          r"\(its SHA-256 differs\)\. Replace it by the original: delete it and "
                                          r"fetch it once: python -c \"import cudbound.datasets as d; "
                                          r"d.load\('liver', '.*'\)\""):
        parse_config(text, data_home=tmp_path)
    config = tmp_path / "real.toml"
    config.write_text(text)
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_cli(capsys, "coverage", "--config", config, "--check", "--data-home", empty)
    assert code == 2 and "'bupa.data' is not in the data directory" in err
    monkeypatch.setenv("CUDBOUND_DATA", str(empty))
    code, _, err = run_cli(capsys, "coverage", "--config", config, "--check")
    assert code == 2 and "'bupa.data' is not in the data directory" in err


def test_sizes_that_leave_a_real_data_set_no_test_rows_are_refused_when_read(shared_data, tmp_path, capsys):
    """Liver has 345 rows: n = 345 leaves no test set (every task would fail), n = 344 leaves one
    row; a data set with its own sizes is checked at those."""
    text = edited(('name = "three_points"', 'name = "liver"'), ("sizes = [30]", "sizes = [30, 345, 400]"))
    with pytest.raises(ConfigError) as info:
        parse_config(text, data_home=shared_data)
    assert info.value.errors == ["data set 'liver': size(s) [345, 400] leave no test set: it has 345 rows, and the "
                                 "rows not drawn for training are the test set; use sizes below 345."]
    assert parse_config(edited(("sizes = [30]", "sizes = [30, 344]"), text=text.replace("[30, 345, 400]", "[30]")),
                        data_home=shared_data).tasks()
    own = text.replace('name = "liver"', 'name = "liver"\nsizes = [30]')   # liver at n = 30 only: fine
    assert {t.n for t in parse_config(own, data_home=shared_data).tasks() if t.dataset == "liver"} == {30}
    config = tmp_path / "real.toml"
    config.write_text(text)
    code, _, err = run_cli(capsys, "coverage", "--config", config, "--check", "--data-home", shared_data)
    assert code == 2 and "leave no test set" in err
    config.write_text(text.replace("[30, 345, 400]", "[30]"))
    assert run_cli(capsys, "coverage", "--config", config, "--check", "--data-home", shared_data)[0] == 0


@pytest.mark.parametrize("path", sorted((ROOT / "experiments").glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_configuration_passes_the_full_validation(path):
    assert load_config(path).tasks()


def test_check_options_of_the_registry():
    for name in method_names():
        check_options(name, 30, loss="squared")                      # the defaults are valid at n = 30
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['n_boot'\] for interval method 'cud'"):
        check_options("cud", 30, n_boot=10)
    with pytest.raises(ValueError, match="`n`"):
        check_options("cud", 1)

    def wald(design, y, *, confidence_level, rng, width=1.0):
        raise AssertionError("a check never computes")

    def wald_iv(design, y, confidence_level, width):
        if not width > 0:
            raise ValueError(f"`width` must be positive; got {width!r}.")

    register("wald_test", wald, "test method")                       # no check: names only
    try:
        check_options("wald_test", 30, width=-1)
        with pytest.raises(ValueError, match=r"unknown option\(s\) \['height'\] for interval method 'wald_test'"):
            check_options("wald_test", 30, height=1)
        register("wald_test", wald, "test method", check=options_check(wald, wald_iv), replace=True)
        with pytest.raises(ValueError, match="`width` must be positive; got -1"):
            check_options("wald_test", 30, width=-1)
        assert get_method("wald_test").check is not None
    finally:
        unregister("wald_test")
    with pytest.raises(TypeError, match="does not"):
        options_check(wald, lambda design, y, height: None)
