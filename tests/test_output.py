"""One --json layout for every command: each command's output validated against
cudbound.output.OUTPUT_SCHEMA (jsonschema, draft 2020-12), and the schema in docs/json.md."""
import csv
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

jsonschema = pytest.importorskip("jsonschema")

from cudbound import cli  # noqa: E402
from cudbound.cli import interval as cli_interval  # noqa: E402
from cudbound.output import OUTPUT_SCHEMA, SCHEMA_VERSION  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "experiments" / "smoke.toml"
VALIDATOR = jsonschema.Draft202012Validator(OUTPUT_SCHEMA, format_checker=jsonschema.FormatChecker())


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(OUTPUT_SCHEMA)


def test_the_schema_rejects_what_it_should():
    good = {"schema_version": SCHEMA_VERSION, "command": "auc", "cudbound_version": "0", "seed": None,
            "data": {"source": "x.csv", "n": 3}, "results": [{"method": "lpo_auc", "quantity": "AUC", "estimate": 0.5,
                                                              "low": None, "high": None, "confidence_level": None,
                                                              "n_samples": 3}],
            "details": {}, "warnings": [], "plot": None}
    VALIDATOR.validate(good)
    for broken in ({**good, "extra": 1}, {k: v for k, v in good.items() if k != "warnings"},
                   {**good, "command": "bogus"}, {**good, "schema_version": SCHEMA_VERSION + 1},
                   {**good, "results": [{"method": "lpo"}]},
                   {**good, "results": [{**good["results"][0], "quantity": "auc"}]},   # one vocabulary
                   {**good, "results": [{k: v for k, v in good["results"][0].items() if k != "n_samples"}]},
                   {**good, "results": [dict(good["results"][0], confidence_level=1.5)]}):
        assert not VALIDATOR.is_valid(broken)


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 2))
    y = np.where(X[:, 0] + 0.8 * rng.standard_normal(30) > 0, "yes", "no")
    path = tmp_path_factory.mktemp("json") / "d.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["a", "b", "outcome"])
        w.writerows([[f"{a:.6f}", f"{b:.6f}", t] for (a, b), t in zip(X, y)])
    return str(path)


def commands(data_csv, tmp_path):
    base = ["--data", data_csv, "--label", "outcome"]
    return {
        "demo": ["demo", "--n", "30", "--resamples", "20"],
        "interval": ["interval", *base, "--resamples", "20", "--seed", "2"],
        "interval --methods": ["interval", *base, "--resamples", "20", "--seed", "2", "--methods", "cud,kohavi,wald_cv"],
        "coverage": ["coverage", "--config", str(SMOKE), "--store", str(tmp_path / "s.sqlite"), "--jobs", "1",
                     "--no-progress", "--max-tasks", "1"],
        "auc lpo": ["auc", *base],
        "auc pooled": ["auc", *base, "--method", "pooled", "--cv", "3", "--seed", "1"],
        "xi-alpha": ["xi-alpha", *base, "--loo", "--no-progress"],
        "compare": ["compare", *base, "--model-a", "logistic_ridge", "--model-b", "squared,basis=poly:2", "--seed", "3",
                    "--methods", "mcnemar,tango,delong,ttest_5x2cv,corrected_t", "--cv", "5", "--repeats", "2"],
    }


COMMANDS = ["demo", "interval", "interval --methods", "compare", "coverage", "auc lpo", "auc pooled", "xi-alpha"]


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_prints_one_valid_layout(name, data_csv, tmp_path, capsys):
    argv = commands(data_csv, tmp_path)[name]
    assert cli.main([*argv, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    VALIDATOR.validate(record)
    assert record["command"] == argv[0] and record["results"]
    for item in record["results"]:
        if item["low"] is not None:     # a rate in [0, 1], a difference of two in [-1, 1]
            assert (-1.0 if "difference" in item["quantity"] else 0.0) <= item["low"] <= item["high"] <= 1.0
    if argv[0] != "coverage":
        assert record["data"]["source"] in (data_csv, record["data"]["source"])
    if "--data" in argv:
        assert record["data"]["label_mapping"] == {"positive": "yes", "negative": "no"}
        assert record["data"]["features"] == ["a", "b"] and record["data"]["n"] == 30
        assert [item["n_samples"] for item in record["results"]] == [30] * len(record["results"])


def test_coverage_cells_carry_the_exact_binomial_interval(tmp_path, capsys):
    """The coverage of each cell with its Clopper-Pearson interval, checked against statsmodels' "beta"."""
    proportion_confint = pytest.importorskip("statsmodels.stats.proportion").proportion_confint
    argv = ["coverage", "--config", str(SMOKE), "--store", str(tmp_path / "s.sqlite"), "--jobs", "1",
            "--no-progress", "--json"]
    assert cli.main(argv) == 0
    record = json.loads(capsys.readouterr().out)
    VALIDATOR.validate(record)
    assert record["details"]["remaining"] == 0
    for cell in record["results"]:
        assert cell["covered"] == round(cell["estimate"] * cell["reps"])
        low, high = proportion_confint(cell["covered"], cell["reps"], alpha=0.05, method="beta")
        assert cell["low"] == pytest.approx(low, abs=1e-12) and cell["high"] == pytest.approx(high, abs=1e-12)
        assert cell["confidence_level"] == 0.95


def test_warnings_reach_the_json_output_one_line_each(monkeypatch, capsys):
    original = cli_interval._demo

    def noisy(args):
        warnings.warn("something to know\n  on two lines", RuntimeWarning)
        return original(args)

    monkeypatch.setattr(cli_interval, "_demo", noisy)
    assert cli.main(["demo", "--n", "30", "--resamples", "20", "--json"]) == 0
    out, err = capsys.readouterr()
    record = json.loads(out)
    VALIDATOR.validate(record)
    assert record["warnings"] == ["something to know on two lines (RuntimeWarning)"]
    assert err.strip() == "cudbound: warning: something to know on two lines (RuntimeWarning)"


def test_docs_state_the_schema_the_code_uses():
    text = (ROOT / "docs" / "json.md").read_text()
    block = re.search(r"```json\n(.*?)```", text, re.S).group(1)
    assert json.loads(block) == OUTPUT_SCHEMA


def test_a_results_to_dict_and_a_commands_result_entry_are_built_by_one_function():
    """The layout of one result is written once (cudbound.results.result_item): every result's
    to_dict() and the commands' other --json entries (cudbound.output.result_item is it)."""
    import json

    from cudbound import output, results
    assert output.result_item is results.result_item
    res = results.IntervalResult(method="m", confidence_interval=results.ConfidenceInterval(0.1, 0.3),
                                 confidence_level=0.9, estimate=float("nan"), n_samples=10)
    record = res.to_dict()
    assert list(record)[:7] == list(results.result_item("m", "error rate", 0.0)) == list(results.COMMON_COLUMNS)
    assert record["estimate"] is None and json.loads(json.dumps(record, allow_nan=False)) == record
