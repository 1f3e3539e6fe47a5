import os
import sys

# The slow references and helpers (tests/_support/) are importable by name whatever the import mode.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_support"))

import pytest  # noqa: E402


@pytest.fixture
def shared_data():
    """The directory of the raw UCI files (``CUDBOUND_DATA``; CI sets it to ../shared/data/uci)."""
    path = os.environ.get("CUDBOUND_DATA", "")
    if not path or not os.path.isfile(os.path.join(path, "MANIFEST.tsv")) and not os.path.isfile(
            os.path.join(path, "bupa.data")):
        pytest.skip("real UCI files not available: set CUDBOUND_DATA to the directory with the raw files")
    return path
