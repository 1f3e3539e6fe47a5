"""The UCI loaders: label rules and drops on the real files, and the verified download path.

Real-data tests read the raw files from the directory in ``CUDBOUND_DATA`` (CI
sets it to ``../shared/data/uci``) and are skipped, with the reason, when it is
unset. Download tests use a local HTTP server on 127.0.0.1, never the internet.
"""
import hashlib
import http.server
import io
import os
import socket
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from cudbound.datasets import DATASETS, ChecksumError, Dataset, DownloadError, available, get_data_home, load
from cudbound.datasets import uci

SHARED = os.environ.get("CUDBOUND_DATA", "")
needs_shared = pytest.mark.skipif(
    not SHARED or not Path(SHARED).is_dir(),
    reason="real UCI files not available: set CUDBOUND_DATA to the directory with the raw files "
           "(CI uses ../shared/data/uci)",
)

# name: (rows, features, +1 count, -1 count), after the documented drops (MANIFEST.tsv counts).
EXPECTED = {
    "spam": (4601, 57, 1813, 2788),
    "ionosphere": (351, 33, 225, 126),
    "heart": (270, 13, 120, 150),
    "diabetes": (768, 8, 268, 500),
    "abalone": (4177, 9, 2081, 2096),
    "liver": (345, 5, 176, 169),
    "mammogram": (830, 4, 403, 427),
    "magic": (19020, 10, 12332, 6688),
}


@pytest.fixture(autouse=True)
def _no_url_override(monkeypatch):
    monkeypatch.delenv("CUDBOUND_DATA_URL", raising=False)


# --------------------------------------------------------------------------- real files

@needs_shared
@pytest.mark.parametrize("name", DATASETS)
def test_loader_counts_and_types(name):
    data = load(name, download=False)
    rows, d, pos, neg = EXPECTED[name]
    assert isinstance(data, Dataset) and data.name == name
    assert data.X.shape == (rows, d) and data.X.dtype == np.float64
    assert data.y.shape == (rows,) and data.y.dtype.kind == "i"
    assert set(np.unique(data.y).tolist()) == {-1, 1}
    assert (data.n_positive, data.n_negative) == (pos, neg)
    assert np.all(np.isfinite(data.X))
    assert len(data.feature_names) == d == len(data.feature_types)
    assert len(set(data.feature_names)) == d
    assert set(data.feature_types) <= {"continuous", "ordinal", "nominal", "binary"}
    assert data.label_rule.startswith("+1 = ") and data.dropped and data.citation and data.license
    assert data.filename == Path(data.path).name and data.path.startswith(str(Path(SHARED).expanduser()))
    # No constant column: with an intercept every design has full column rank.
    design = np.column_stack([np.ones(rows), data.X])
    assert np.linalg.matrix_rank(design) == d + 1


@needs_shared
def test_specific_rules():
    spam = load("SPAM")  # names are case-insensitive
    assert spam.feature_names[-1] == "capital_run_length_total"
    iono = load(" Ionosphere ")
    assert "attribute2" not in iono.feature_names and iono.feature_names[:2] == ("attribute1", "attribute3")
    heart = load("heart")
    assert heart.feature_types.count("continuous") == 6 and heart.feature_names[0] == "age"
    abalone = load("abalone")
    assert abalone.feature_names[:2] == ("sex_M", "sex_F")
    sexes = abalone.X[:, :2]
    assert set(sexes.sum(axis=1).tolist()) == {0.0, 1.0}  # I (infant) is the all-zero reference
    assert (int(sexes[:, 0].sum()), int(sexes[:, 1].sum()), int((sexes.sum(axis=1) == 0).sum())) == (1528, 1307, 1342)
    liver = load("liver")
    assert liver.feature_names == ("mcv", "alkphos", "sgpt", "sgot", "gammagt")
    mammo = load("mammogram")
    assert mammo.n_dropped == 131 and "bi_rads" not in mammo.feature_names
    assert "BI-RADS" in mammo.dropped
    magic = load("magic")
    assert "g (gamma" in magic.label_rule.split(";")[0]


@needs_shared
def test_diabetes_missing_rule():
    keep = load("diabetes")
    assert keep.n_dropped == 0 and np.sum(keep.X[:, 4] == 0) == 374  # insulin zeros kept
    drop = load("diabetes", missing="drop")
    assert drop.X.shape == (392, 8) and (drop.n_positive, drop.n_negative) == (130, 262)
    assert drop.n_dropped == 376 and not np.any(drop.X[:, 1:6] == 0)
    assert np.all(load("liver", missing="drop").X == load("liver").X)  # no effect elsewhere
    with pytest.raises(ValueError, match="'keep' or 'drop'"):
        load("diabetes", missing="impute")


@needs_shared
def test_available_lists_every_shared_file():
    assert available() == DATASETS
    assert available(Path(SHARED) / "no-such-dir") == ()


@needs_shared
def test_edited_local_file_is_refused_and_left_alone(tmp_path):
    original = (Path(SHARED) / "spambase.data").read_bytes()
    lf = original.replace(b"\r\n", b"\n")  # the common LF-only copy: same numbers, other checksum
    target = tmp_path / "spambase.data"
    target.write_bytes(lf)
    with pytest.raises(ChecksumError, match="verify=False") as info:
        load("spam", tmp_path, base_url="http://127.0.0.1:9")  # never tries to download over it
    assert isinstance(info.value, OSError)
    assert target.read_bytes() == lf and os.listdir(tmp_path) == ["spambase.data"]
    edited = load("spam", tmp_path, verify=False)
    np.testing.assert_array_equal(edited.X, load("spam").X)


# --------------------------------------------------------------------------- names and directories

def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match="spam, ionosphere, heart, diabetes, abalone, liver, mammogram, magic"):
        load("iris")
    with pytest.raises(ValueError, match="Unknown data set"):
        load(None)
    assert DATASETS == ("spam", "ionosphere", "heart", "diabetes", "abalone", "liver", "mammogram", "magic")


def test_data_home_precedence(tmp_path, monkeypatch):
    env_dir, arg_dir = tmp_path / "env", tmp_path / "arg"
    monkeypatch.setenv("CUDBOUND_DATA", str(env_dir))
    assert get_data_home() == env_dir
    assert get_data_home(arg_dir) == arg_dir  # the argument beats the variable
    monkeypatch.setenv("CUDBOUND_DATA", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert get_data_home() == tmp_path / "xdg" / "cudbound" / "uci"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_data_home() == tmp_path / "home" / ".cache" / "cudbound" / "uci"


def test_missing_file_without_download_names_everything(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDBOUND_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError) as info:
        load("liver", download=False)
    msg = str(info.value)
    assert "bupa.data" in msg and str(tmp_path) in msg and "CUDBOUND_DATA" in msg
    assert "liver-disorders/bupa.data" in msg
    assert os.listdir(tmp_path) == []


@needs_shared
def test_argument_beats_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDBOUND_DATA", str(tmp_path))  # empty directory
    assert load("heart", SHARED, download=False).X.shape == (270, 13)
    monkeypatch.setenv("CUDBOUND_DATA", SHARED)
    with pytest.raises(FileNotFoundError):
        load("heart", tmp_path, download=False)


# --------------------------------------------------------------------------- downloads (local server)

class _Handler(http.server.BaseHTTPRequestHandler):
    routes = {}  # path -> (status, body, declared Content-Length or None)

    def do_GET(self):
        status, body, declared = self.routes.get(self.path, (404, b"not found", None))
        self.send_response(status)
        self.send_header("Content-Length", str(len(body) if declared is None else declared))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = True  # a short body then the connection closes

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    routes = {}
    handler = type("Handler", (_Handler,), {"routes": routes})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield base, routes
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


BUPA_LIKE = b"85,92,45,27,31,0.0,1\n85,64,59,32,23,0.0,2\n"  # not the real file: wrong checksum


def test_download_good_file(tmp_path, server):
    shared = Path(SHARED or "/nonexistent") / "bupa.data"
    if not shared.is_file():
        pytest.skip("needs the real bupa.data from CUDBOUND_DATA")
    base, routes = server
    routes["/mirror/liver-disorders/bupa.data"] = (200, shared.read_bytes(), None)
    home = tmp_path / "new" / "dir"  # created on demand
    data = load("liver", home, base_url=base + "/mirror/")
    assert (data.X.shape, data.n_positive) == ((345, 5), 176)
    assert os.listdir(home) == ["bupa.data"]
    assert hashlib.sha256((home / "bupa.data").read_bytes()).hexdigest() == uci.SHA256["liver"]
    routes.clear()  # present now: loads again without the server
    assert load("liver", home).X.shape == (345, 5)


def test_download_from_environment_url_and_zip_fallback(tmp_path, server, monkeypatch):
    shared = Path(SHARED or "/nonexistent") / "heart.dat"
    if not shared.is_file():
        pytest.skip("needs the real heart.dat from CUDBOUND_DATA")
    base, routes = server
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("heart.doc", b"documentation")
        archive.writestr("heart.dat", shared.read_bytes())
    routes["/static/heart.zip"] = (200, buffer.getvalue(), None)
    # The first address is missing (404), the zip archive second: the member is extracted and verified.
    monkeypatch.setitem(uci.URLS, "heart", (f"{base}/old/heart.dat", f"{base}/static/heart.zip"))
    assert load("heart", tmp_path / "a").X.shape == (270, 13)
    assert os.listdir(tmp_path / "a") == ["heart.dat"]
    # CUDBOUND_DATA_URL replaces the addresses; the base_url argument replaces the variable.
    routes["/env/statlog/heart/heart.dat"] = (200, shared.read_bytes(), None)
    monkeypatch.setenv("CUDBOUND_DATA_URL", f"{base}/env")
    assert load("heart", tmp_path / "b").n_samples == 270
    with pytest.raises(DownloadError, match="/arg/statlog/heart/heart.dat"):
        load("heart", tmp_path / "c", base_url=f"{base}/arg")
    assert not (tmp_path / "c").exists()


def test_download_wrong_checksum_leaves_nothing(tmp_path, server):
    base, routes = server
    routes["/liver-disorders/bupa.data"] = (200, BUPA_LIKE, None)
    with pytest.raises(ChecksumError) as info:
        load("liver", tmp_path, base_url=base)
    msg = str(info.value)
    assert uci.SHA256["liver"] in msg and hashlib.sha256(BUPA_LIKE).hexdigest() in msg and "bupa.data" in msg
    assert os.listdir(tmp_path) == []  # neither the file nor a temporary file
    with pytest.raises(ChecksumError):  # directories created for the download are removed again
        load("liver", tmp_path / "new" / "dir", base_url=base)
    assert os.listdir(tmp_path) == []


def test_download_interrupted_leaves_nothing(tmp_path, server):
    base, routes = server
    routes["/liver-disorders/bupa.data"] = (200, BUPA_LIKE, len(BUPA_LIKE) + 5000)
    with pytest.raises(DownloadError, match="interrupted|IncompleteRead") as info:
        load("liver", tmp_path, base_url=base)
    assert "bupa.data" in str(info.value)
    assert os.listdir(tmp_path) == []


def test_download_404_and_offline_messages(tmp_path, server, monkeypatch):
    base, routes = server
    with pytest.raises(DownloadError) as info:
        load("liver", tmp_path, base_url=base)
    msg = str(info.value)
    assert "404" in msg and f"{base}/liver-disorders/bupa.data" in msg
    assert "bupa.data" in msg and str(tmp_path) in msg and "CUDBOUND_DATA" in msg
    assert os.listdir(tmp_path) == []

    with socket.socket() as s:  # a port with nothing listening: connection refused
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("CUDBOUND_DATA", str(tmp_path))
    monkeypatch.setitem(uci.URLS, "diabetes", (f"{dead}/pima-indians-diabetes.data",))
    with pytest.raises(DownloadError) as info:
        load("diabetes", timeout=5)
    msg = str(info.value)
    assert "cannot connect" in msg and f"{dead}/pima-indians-diabetes.data" in msg
    assert "pima-indians-diabetes.data" in msg and str(tmp_path) in msg and "CUDBOUND_DATA" in msg
    assert "no longer listed by UCI" in msg
    assert os.listdir(tmp_path) == []


def test_download_timeout(tmp_path):
    with socket.socket() as listener:  # accepts the connection, never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(DownloadError, match="timed out"):
            load("liver", tmp_path, base_url=url, timeout=0.3)
    assert os.listdir(tmp_path) == []


def test_default_addresses():
    for name in DATASETS:
        urls = uci.URLS[name]
        assert urls[0] == f"{uci.UCI_BASE_URL}/{uci.RELATIVE_PATHS[name]}"
        assert urls[0].endswith("/" + uci._SPECS[name].filename)
        assert all(u.startswith("https://archive.ics.uci.edu/") for u in urls)
    assert len(uci.URLS["diabetes"]) == 1  # not on the current UCI site
    assert uci.URLS["spam"][1] == "https://archive.ics.uci.edu/static/public/94/spambase.zip"
