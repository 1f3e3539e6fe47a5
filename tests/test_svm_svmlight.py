"""radius="svmlight" against SVM-light V6.02 itself: the estimates it printed on 40 generated
problems (recorded by experiments/svmlight_reference.py, which also generates the problems)."""
import importlib.util
import json
import warnings
from pathlib import Path

import pytest

from cudbound.svm import UnstableSVMWarning, xi_alpha

ROOT = Path(__file__).resolve().parents[1]
RECORD = json.loads((ROOT / "tests" / "fixtures" / "svmlight_xialpha.json").read_text())
_spec = importlib.util.spec_from_file_location("svmlight_reference", ROOT / "experiments" / "svmlight_reference.py")
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


@pytest.mark.parametrize("rec", RECORD["problems"], ids=lambda r: f"{r['seed']}-{r['kernel']}")
def test_the_svmlight_radius_reproduces_svmlight(rec):
    X, y, kernel, C = reference.problem(rec["seed"])
    assert (kernel, C, len(y)) == (rec["kernel"], rec["C"], rec["n"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnstableSVMWarning)
        e = xi_alpha(X, y, C=C, kernel=kernel, gamma=0.5, degree=2, coef0=1.0, radius="svmlight")
    assert e.rho == 1.0
    assert round(100 * e.estimate, 2) == rec["error"]
    assert round(100 * e.recall, 2) == rec["recall"]
    assert round(100 * e.precision, 2) == rec["precision"]
