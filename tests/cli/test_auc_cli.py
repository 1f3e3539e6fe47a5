"""``cudbound auc``: the cross-validated AUC, or an interval for it (``--interval``, issue 32), of
kernel RLS or of any classifier a model SPEC names (``--model``), from a CSV file."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from cudbound.auc import KernelRLS, auc_interval
from cudbound.auc.registry import method_names
from cudbound.cli import main
from cudbound.output import OUTPUT_SCHEMA


@pytest.fixture
def patients(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] + rng.normal(size=40) > 0, "yes", "no")
    path = tmp_path / "p.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["a", "b", "outcome"])
        w.writerows([[f"{u:.6f}", f"{v:.6f}", lab] for (u, v), lab in zip(X, y)])
    return path, X, y


@pytest.mark.parametrize("method", ["delong", "newcombe", "bootstrap_bca", "cvauc"])
def test_the_interval_is_auc_interval_of_kernel_rls(capsys, patients, method):
    path, X, y = patients
    resamples = ["--resamples", "300"] if method.startswith("bootstrap") else []
    status = main(["auc", "--data", str(path), "--label", "outcome", "--interval", method, "--seed", "3",
                   "--cv", "4", *resamples, "--confidence-level", "0.9", "--json"])
    assert status == 0
    record = json.loads(capsys.readouterr().out)
    (item,) = record["results"]
    X6 = np.array([[float(f"{v:.6f}") for v in row] for row in X])     # as the CSV file holds them
    options = {"n_resamples": 300} if method.startswith("bootstrap") else {}
    direct = auc_interval(KernelRLS(), X6, y, method=method, cv=4, rng=3, confidence_level=0.9, **options)
    assert item["method"] == method and item["quantity"] == "AUC" and item["confidence_level"] == 0.9
    assert (item["low"], item["high"]) == pytest.approx(tuple(direct.confidence_interval), abs=1e-12)
    assert item["estimate"] == pytest.approx(direct.estimate, abs=1e-12) and item["folds"] == 4
    assert ("n_resamples" in item) == method.startswith("bootstrap")
    scalars = direct.to_dict()["details"]        # the result's row, as the CLI prints it
    assert scalars and item["details"] == pytest.approx(scalars) and item["n_samples"] == len(y)
    import jsonschema
    jsonschema.validate(record, OUTPUT_SCHEMA)


def test_the_table_line_names_the_interval(capsys, patients):
    path, _, _ = patients
    assert main(["auc", "--data", str(path), "--label", "outcome", "--interval", "delong_logit"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("AUC 0.") and "0.95 interval [" in out and "(delong_logit, standard error 0." in out


def test_every_registered_interval_is_a_choice_and_bad_flags_exit_2(capsys, patients):
    path, _, _ = patients
    assert main(["auc", "--data", str(path), "--label", "outcome", "--interval", "wilson"]) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in method_names())
    assert main(["auc", "--data", str(path), "--label", "outcome", "--interval", "delong", "--method", "lpo"]) == 2
    assert "leave out --method" in capsys.readouterr().err
    assert main(["auc", "--data", str(path), "--label", "outcome", "--interval", "delong",
                 "--confidence-level", "1.5"]) == 2
    assert main(["auc", "--data", str(path), "--label", "outcome", "--confidence-level", "0.9"]) == 2
    assert "belong to --interval" in capsys.readouterr().err
    assert main(["auc", "--data", str(path), "--label", "outcome", "--interval", "delong", "--resamples", "50"]) == 2
    assert "belongs to the bootstrap intervals" in capsys.readouterr().err


def test_a_model_spec_gives_the_auc_of_that_classifier(capsys, patients):
    """--model: any classifier with decision_function or predict_proba, or the package's, as named by
    a SPEC; the same AUC as cv_auc, lpo_auc and auc_interval of that classifier in Python."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB

    from cudbound.auc import cv_auc, lpo_auc
    from cudbound.cli import read_csv
    from cudbound.compare import Procedure
    path, _, _ = patients
    X, y, _ = read_csv(path, "outcome")
    cases = [(["--model", "sklearn.linear_model.LogisticRegression(C=0.5)", "--method", "pooled"],
              cv_auc(LogisticRegression(C=0.5), X, y, cv=5, pooling="pooled", rng=0, pos_label="yes")),
             (["--model", "sklearn.naive_bayes.GaussianNB()", "--method", "averaged", "--cv", "4", "--seed", "2"],
              cv_auc(GaussianNB(), X, y, cv=4, rng=2, pos_label="yes")),            # predict_proba's scores
             (["--model", "ridge:0.5,basis=poly:2"], lpo_auc(Procedure(basis="poly:2", loss="ridge:0.5"), X, y,
                                                                pos_label="yes")),
             (["--model", "logistic_ridge", "--interval", "delong"],
              auc_interval(Procedure(loss="logistic_ridge"), X, y, method="delong", rng=0, pos_label="yes"))]
    for flags, direct in cases:
        assert main(["auc", "--data", str(path), "--label", "outcome", *flags, "--json"]) == 0
        record = json.loads(capsys.readouterr().out)
        (item,) = record["results"]
        assert item["estimate"] == pytest.approx(direct.estimate, abs=1e-12), flags
        assert record["details"]["model_spec"] == flags[1]
    assert main(["auc", "--data", str(path), "--label", "outcome", "--model", "hinge", "--regparam", "2"]) == 2
    assert "--regparam belongs to the default classifier, kernel RLS" in capsys.readouterr().err
