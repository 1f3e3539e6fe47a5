"""experiments/xi_alpha_study.py runs end to end on a small draw and writes what it says."""
import csv
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_study_runs_and_is_reproducible(shared_data, tmp_path):
    spec = importlib.util.spec_from_file_location("xi_alpha_study", ROOT / "experiments" / "xi_alpha_study.py")
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    args = ["--sizes", "40", "--splits", "3", "--C", "5", "--data-home", shared_data, "--no-progress"]
    study.main(args + ["--out", str(tmp_path / "a")])
    study.main(args + ["--out", str(tmp_path / "b")])
    rows = list(csv.DictReader(open(tmp_path / "a.csv")))
    assert len(rows) == 3
    strip = [c for c in study.COLUMNS if c != "seconds"]
    again = list(csv.DictReader(open(tmp_path / "b.csv")))
    assert [[r[c] for c in strip] for r in rows] == [[r[c] for c in strip] for r in again]
    for r in rows:
        assert float(r["xa2_error"]) >= float(r["loo_error"])      # Lemma 1 (rho = 2, theorem radius)
        assert 0.0 <= float(r["test_error"]) <= 1.0 and int(r["n_refits"]) <= 40
    assert "| 40 |" in (tmp_path / "a.md").read_text()
