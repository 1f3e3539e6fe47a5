"""Release hygiene (issue 29): licence, citation, changelog, type marker, one version."""
import re
import tomllib
from pathlib import Path

import cudbound

ROOT = Path(__file__).resolve().parents[1]


def test_licence_file_matches_the_metadata():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "BSD-3-Clause" in meta["license"]["text"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    assert "Neither the name of the copyright holder" in text


def test_version_is_single_sourced():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in meta["project"] and "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "cudbound.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", cudbound.__version__)
    # the citation names the same version
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^version: (\S+)$", cff, re.M).group(1) == cudbound.__version__


def test_citation_cites_the_software_and_the_paper():
    cff = (ROOT / "CITATION.cff").read_text()
    assert cff.startswith("cff-version: 1.2.0")
    assert "type: software" in cff
    assert "preferred-citation:" in cff and "CUD bound" in cff and "year: 2008" in cff


def test_changelog_has_unreleased_on_top():
    text = (ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[0] == "Unreleased"
    assert cudbound.__version__ in headings


def test_package_is_typed():
    assert (Path(cudbound.__file__).parent / "py.typed").exists()
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in meta["tool"]["setuptools"]["package-data"]["cudbound"]
