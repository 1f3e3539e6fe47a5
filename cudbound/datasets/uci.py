"""Real data sets from the UCI Machine Learning Repository, as binary problems.

Eight small tabular data sets, each read from the raw file that UCI
distributes (unmodified: no header row, original line endings) and turned into
a binary problem by a fixed, documented rule: :func:`load` returns a
:class:`Dataset` with float features ``X`` and labels ``y`` in {-1, +1}.

Label convention
    +1 is the class that the data set's documentation treats as the event of
    interest: spam, disease present, malignant, the gamma signal, radar
    structure present, heavier drinking, older abalone. Each data set's exact
    rule is stored in :attr:`Dataset.label_rule` and listed in :func:`load`.

Data directory (first that applies)
    1. the ``data_home`` argument;
    2. the environment variable ``CUDBOUND_DATA``;
    3. ``$XDG_CACHE_HOME/cudbound/uci`` if ``XDG_CACHE_HOME`` is set to an
       absolute path, else ``~/.cache/cudbound/uci``.

Integrity
    Every file has its SHA-256 embedded here (:data:`SHA256`, the values of the
    shared ``MANIFEST.tsv``). A file present on disk is checked on every load
    (``verify=True``, a few milliseconds). A mismatch raises
    :class:`ChecksumError` and leaves the file alone. A missing file is
    downloaded (``download=True``) with the standard library only, into a
    temporary file in the data directory; it is put in place with
    :func:`os.replace` only after its checksum matches. A failed, truncated or
    wrong download leaves no file behind.

Download addresses
    :data:`URLS` maps each data set to the addresses tried in order: the old
    per-file address under :data:`UCI_BASE_URL`
    (``https://archive.ics.uci.edu/ml/machine-learning-databases``), then the
    zip archive of the current UCI site (``static/public/<id>/<slug>.zip``; the
    checksum applies to the member with the raw file name). The Pima data are
    no longer listed by UCI, so the old address is the only one and may no
    longer be served. The ``base_url`` argument, or else the environment
    variable ``CUDBOUND_DATA_URL``, replaces all of them with one address,
    ``<base_url>/<relative path>`` (the old UCI layout, :data:`RELATIVE_PATHS`),
    for a mirror or a test server.

Sources
    The files, row counts, label counts and checksums are those of
    ``shared/data/uci/MANIFEST.tsv``; the variable descriptions are UCI's
    (``*.names`` / ``heart.doc`` and the data set pages). They are the real
    data sets of the project's comparisons, after Laber & Murphy (2008). Cite
    the UCI Machine Learning Repository and :attr:`Dataset.citation`;
    :attr:`Dataset.license` states the terms (CC BY 4.0, except Pima).
"""
from __future__ import annotations

import hashlib
import http.client
import io
import os
import socket
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

__all__ = [
    "DATASETS", "Dataset", "load", "available", "get_data_home",
    "ChecksumError", "DownloadError", "URLS", "UCI_BASE_URL", "RELATIVE_PATHS", "SHA256", "FILENAMES",
]

DATA_ENV = "CUDBOUND_DATA"
"""Environment variable naming the data directory (used when ``data_home`` is None)."""

URL_ENV = "CUDBOUND_DATA_URL"
"""Environment variable replacing the UCI download prefix (used when ``base_url`` is None)."""

UCI_BASE_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases"
"""Prefix of the old per-file UCI addresses; ``base_url`` / ``CUDBOUND_DATA_URL`` replace it."""

TIMEOUT = 30.0
"""Default socket timeout of a download, in seconds (per connection attempt and per read)."""

MAX_DOWNLOAD_BYTES = 64 * 2**20
"""Largest response (or zip member) accepted; the largest file here is 1.5 MB."""

_UCI_ZIP = "https://archive.ics.uci.edu/static/public"
_UCI_REPO = ("Kelly, M., Longjohn, R., & Nottingham, K. The UCI Machine Learning Repository, "
             "https://archive.ics.uci.edu")
_CC_BY = "CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/)"


class ChecksumError(OSError):
    """A data file's SHA-256 differs from the published one (downloaded or on disk).

    A subclass of :class:`OSError`, like :class:`DownloadError` and
    :class:`FileNotFoundError`, so ``except OSError`` covers every way of not
    getting the verified file.
    """


class DownloadError(OSError):
    """A missing data file could not be downloaded (offline, HTTP error, interrupted transfer)."""


# --------------------------------------------------------------------------- the data sets

@dataclass(frozen=True, eq=False)
class Dataset:
    """One real data set as a binary classification problem.

    Attributes
    ----------
    name : str
        Short name, one of :data:`DATASETS`.
    X : ndarray of shape (n, d), float64
        Features after the documented drops and encodings; all finite.
    y : ndarray of shape (n,), int64
        Labels in {-1, +1}.
    feature_names : tuple of str
        Column names of ``X``.
    feature_types : tuple of str
        For each column of ``X``: ``"continuous"``, ``"ordinal"``,
        ``"nominal"`` or ``"binary"``, as UCI documents the variable
        (integer-valued counts, ages and measurements count as continuous).
        Nominal columns are kept as their numeric codes, except abalone's
        Sex, which is stored as letters and is one-hot encoded.
    label_rule : str
        Which raw value is mapped to +1 and which to -1.
    n_dropped : int
        Number of rows of the raw file left out.
    dropped : str
        Which rows and columns were left out, and why.
    filename : str
        Raw UCI file name.
    path : str
        The file that was read.
    citation : str
        Citation of the data set (with DOI where UCI gives one).
    license : str
        Terms of use.
    url : str
        The data set's UCI page.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple
    feature_types: tuple
    label_rule: str
    n_dropped: int
    dropped: str
    filename: str
    path: str
    citation: str
    license: str
    url: str

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_positive(self) -> int:
        return int(np.sum(self.y == 1))

    @property
    def n_negative(self) -> int:
        return int(np.sum(self.y == -1))

    def __repr__(self) -> str:
        return (f"Dataset({self.name!r}, n={self.n_samples}, d={self.n_features}, "
                f"+1: {self.n_positive}, -1: {self.n_negative})")


@dataclass(frozen=True)
class _Spec:
    name: str
    filename: str
    sha256: str
    relative_path: str           # under UCI_BASE_URL
    zip_url: str | None          # current UCI site; None if not distributed there
    delimiter: str | None        # None: any whitespace
    n_columns: int
    build: Callable              # (cells: ndarray of str, missing) -> (X, y, names, types, n_dropped, dropped)
    label_rule: str
    citation: str
    license: str
    url: str


def _floats(cells, name):
    try:
        return cells.astype(np.float64)
    except ValueError as exc:
        raise ValueError(f"{name}: a feature value is not a number ({exc}).") from None


def _labels(column, positive, negative, name):
    bad = ~np.isin(column, [positive, negative])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}: row {i + 1} has label {column[i]!r}; expected {positive!r} or {negative!r}.")
    return np.where(column == positive, 1, -1).astype(np.int64)


def _no_drop():
    return 0, "nothing: all rows and columns of the raw file are used"


SPAM_FEATURES = tuple(
    [f"word_freq_{w}" for w in (
        "make", "address", "all", "3d", "our", "over", "remove", "internet", "order", "mail", "receive",
        "will", "people", "report", "addresses", "free", "business", "email", "you", "credit", "your",
        "font", "000", "money", "hp", "hpl", "george", "650", "lab", "labs", "telnet", "857", "data",
        "415", "85", "technology", "1999", "parts", "pm", "direct", "cs", "meeting", "original",
        "project", "re", "edu", "table", "conference")]
    + [f"char_freq_{c}" for c in ";([!$#"]
    + ["capital_run_length_average", "capital_run_length_longest", "capital_run_length_total"])


def _build_spam(cells, missing):
    X = _floats(cells[:, :57], "spambase.data")
    y = _labels(cells[:, 57], "1", "0", "spambase.data")
    return (X, y, SPAM_FEATURES, ("continuous",) * 57) + _no_drop()


def _build_ionosphere(cells, missing):
    keep = [j for j in range(34) if j != 1]
    X = _floats(cells[:, keep], "ionosphere.data")
    y = _labels(cells[:, 34], "g", "b", "ionosphere.data")
    names = tuple(f"attribute{j + 1}" for j in keep)
    return (X, y, names, ("continuous",) * 33, 0,
            "no rows; column 2 (attribute2) dropped: it is 0 in every row, so next to an intercept "
            "it makes the design rank-deficient")


HEART_FEATURES = (
    ("age", "continuous"), ("sex", "binary"), ("chest_pain_type", "nominal"),
    ("resting_blood_pressure", "continuous"), ("serum_cholesterol", "continuous"),
    ("fasting_blood_sugar_gt_120", "binary"), ("resting_ecg", "nominal"), ("max_heart_rate", "continuous"),
    ("exercise_induced_angina", "binary"), ("oldpeak", "continuous"), ("st_slope", "ordinal"),
    ("n_major_vessels", "continuous"), ("thal", "nominal"),
)


def _build_heart(cells, missing):
    X = _floats(cells[:, :13], "heart.dat")
    y = _labels(cells[:, 13], "2", "1", "heart.dat")
    names, types = zip(*HEART_FEATURES)
    return (X, y, names, types) + _no_drop()


PIMA_FEATURES = ("pregnancies", "glucose", "blood_pressure", "skin_thickness", "insulin", "bmi",
                 "diabetes_pedigree", "age")
PIMA_ZERO_MEANS_MISSING = ("glucose", "blood_pressure", "skin_thickness", "insulin", "bmi")


def _build_diabetes(cells, missing):
    X = _floats(cells[:, :8], "pima-indians-diabetes.data")
    y = _labels(cells[:, 8], "1", "0", "pima-indians-diabetes.data")
    cols = [PIMA_FEATURES.index(c) for c in PIMA_ZERO_MEANS_MISSING]
    zeros = X[:, cols] == 0
    counts = ", ".join(f"{c} {int(k)}" for c, k in zip(PIMA_ZERO_MEANS_MISSING, zeros.sum(axis=0)))
    if missing == "drop":
        bad = zeros.any(axis=1)
        X, y = X[~bad], y[~bad]
        n_dropped = int(bad.sum())
        dropped = (f"{n_dropped} rows with a zero (= missing) in glucose, blood_pressure, skin_thickness, "
                   f"insulin or bmi (zeros: {counts}); missing='drop'")
    else:
        n_dropped = 0
        dropped = (f"nothing; zeros that stand for missing values are kept as in the file "
                   f"(zeros: {counts}); missing='keep'")
    return X, y, PIMA_FEATURES, ("continuous",) * 8, n_dropped, dropped


def _build_abalone(cells, missing):
    sex = cells[:, 0]
    bad = ~np.isin(sex, ["M", "F", "I"])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"abalone.data: row {i + 1} has Sex {sex[i]!r}; expected M, F or I.")
    rings = _floats(cells[:, 8], "abalone.data")
    X = np.column_stack([(sex == "M").astype(np.float64), (sex == "F").astype(np.float64),
                         _floats(cells[:, 1:8], "abalone.data")])
    y = np.where(rings >= 10, 1, -1).astype(np.int64)
    names = ("sex_M", "sex_F", "length", "diameter", "height", "whole_weight", "shucked_weight",
             "viscera_weight", "shell_weight")
    return (X, y, names, ("binary",) * 2 + ("continuous",) * 7, 0,
            "no rows; column 9 (rings) dropped: it defines the label; Sex (M/F/I) replaced by "
            "indicators sex_M and sex_F (I, infant, is the reference level)")


def _build_liver(cells, missing):
    X = _floats(cells[:, :5], "bupa.data")
    drinks = _floats(cells[:, 5], "bupa.data")
    y = np.where(drinks >= 3, 1, -1).astype(np.int64)
    return (X, y, ("mcv", "alkphos", "sgpt", "sgot", "gammagt"), ("continuous",) * 5, 0,
            "no rows; column 6 (drinks) dropped: it defines the label; column 7 (selector) dropped: "
            "a train/test split field made by the BUPA researchers, not a diagnosis (UCI warns "
            "against its use as a label)")


MAMMO_COLUMNS = ("bi_rads", "age", "shape", "margin", "density")


def _build_mammogram(cells, missing):
    absent = cells[:, :6] == "?"
    bad = absent.any(axis=1)
    per_column = ", ".join(f"{c} {int(k)}" for c, k in zip(MAMMO_COLUMNS + ("severity",), absent.sum(axis=0))
                           if k)
    kept = cells[~bad]
    X = _floats(kept[:, 1:5], "mammographic_masses.data")
    y = _labels(kept[:, 5], "1", "0", "mammographic_masses.data")
    n_dropped = int(bad.sum())
    return (X, y, MAMMO_COLUMNS[1:], ("continuous", "nominal", "nominal", "ordinal"), n_dropped,
            f"{n_dropped} rows with a missing value ('?') in any column (missing cells: {per_column}); "
            f"column 1 (BI-RADS) dropped: it is the radiologist's assessment, non-predictive by the UCI "
            f"description")


MAGIC_FEATURES = ("fLength", "fWidth", "fSize", "fConc", "fConc1", "fAsym", "fM3Long", "fM3Trans",
                  "fAlpha", "fDist")


def _build_magic(cells, missing):
    X = _floats(cells[:, :10], "magic04.data")
    y = _labels(cells[:, 10], "g", "h", "magic04.data")
    return (X, y, MAGIC_FEATURES, ("continuous",) * 10) + _no_drop()


_SPECS = {s.name: s for s in [
    _Spec("spam", "spambase.data",
          "b1ef93de71f97714d3d7d4f58fc9f718da7bbc8ac8a150eff2778616a8097b12",
          "spambase/spambase.data", f"{_UCI_ZIP}/94/spambase.zip", ",", 58, _build_spam,
          "+1 = spam (last column 1); -1 = not spam (0)",
          "Hopkins, M., Reeber, E., Forman, G., & Suermondt, J. (1999). Spambase [Dataset]. "
          "UCI Machine Learning Repository. https://doi.org/10.24432/C53G6X",
          _CC_BY, "https://archive.ics.uci.edu/dataset/94/spambase"),
    _Spec("ionosphere", "ionosphere.data",
          "46d52186b84e20be52918adb93e8fb9926b34795ff7504c24350ae0616a04bbd",
          "ionosphere/ionosphere.data", f"{_UCI_ZIP}/52/ionosphere.zip", ",", 35, _build_ionosphere,
          "+1 = g (good: the radar return shows structure in the ionosphere); -1 = b (bad)",
          "Sigillito, V., Wing, S., Hutton, L., & Baker, K. (1989). Ionosphere [Dataset]. "
          "UCI Machine Learning Repository. https://doi.org/10.24432/C5W01B",
          _CC_BY, "https://archive.ics.uci.edu/dataset/52/ionosphere"),
    _Spec("heart", "heart.dat",
          "f5f3b4204c285bafadd85cb735f38b47689f2be7047feb172dcbeab648110bf9",
          "statlog/heart/heart.dat", f"{_UCI_ZIP}/145/statlog+heart.zip", None, 14, _build_heart,
          "+1 = presence of heart disease (last column 2); -1 = absence (1)",
          "Statlog (Heart) [Dataset]. UCI Machine Learning Repository. https://doi.org/10.24432/C57303",
          _CC_BY, "https://archive.ics.uci.edu/dataset/145/statlog+heart"),
    _Spec("diabetes", "pima-indians-diabetes.data",
          "06f5b7c2cd7bca686fda4f92eab5f61e7ff6426a9acefa2e3dda04fc54293cf5",
          "pima-indians-diabetes/pima-indians-diabetes.data", None, ",", 9, _build_diabetes,
          "+1 = tested positive for diabetes (last column 1); -1 = negative (0)",
          "Smith, J.W., Everhart, J.E., Dickson, W.C., Knowler, W.C., & Johannes, R.S. (1988). Using the "
          "ADAP learning algorithm to forecast the onset of diabetes mellitus. Proc. Symposium on Computer "
          "Applications and Medical Care, 261-265. IEEE Computer Society Press. (Owner: NIDDK; donor: "
          "V. Sigillito, JHU APL; formerly distributed by the UCI Machine Learning Repository)",
          "NOT VERIFIED: no longer distributed by UCI and no CC BY 4.0 grant was found; confirm the terms "
          "before redistributing the file or publishing results from it",
          "https://archive.ics.uci.edu/ml/datasets/pima+indians+diabetes (old address; not listed on the "
          "current UCI site)"),
    _Spec("abalone", "abalone.data",
          "de37cdcdcaaa50c309d514f248f7c2302a5f1f88c168905eba23fe2fbc78449f",
          "abalone/abalone.data", f"{_UCI_ZIP}/1/abalone.zip", ",", 9, _build_abalone,
          "+1 = rings >= 10 (older); -1 = rings <= 9",
          "Nash, W., Sellers, T., Talbot, S., Cawthorn, A., & Ford, W. (1994). Abalone [Dataset]. "
          "UCI Machine Learning Repository. https://doi.org/10.24432/C55C7W",
          _CC_BY, "https://archive.ics.uci.edu/dataset/1/abalone"),
    _Spec("liver", "bupa.data",
          "a166a3e7a6f4dc41aaaedc59a107e57d8adcaeb8821f0873d756982f1ea74c92",
          "liver-disorders/bupa.data", f"{_UCI_ZIP}/60/liver+disorders.zip", ",", 7, _build_liver,
          "+1 = drinks >= 3 (column 6, half-pint equivalents of alcohol per day); -1 = drinks < 3. "
          "Column 7 (selector) is not used: it is a train/test split field, not a diagnosis",
          "Liver Disorders [Dataset]. (1990). UCI Machine Learning Repository. "
          "https://doi.org/10.24432/C54G67 (donor R. S. Forsyth, BUPA Medical Research Ltd.; see "
          "McDermott, J. & Forsyth, R. S. (2016), Diagnosing a disorder in a classification benchmark, "
          "Pattern Recognition Letters 73, 41-43)",
          _CC_BY, "https://archive.ics.uci.edu/dataset/60/liver+disorders"),
    _Spec("mammogram", "mammographic_masses.data",
          "072051c896fb14f8f25c64eed30ba1333290af41e6c9ffad4e1ca573daa865a8",
          "mammographic-masses/mammographic_masses.data", f"{_UCI_ZIP}/161/mammographic+mass.zip", ",", 6,
          _build_mammogram,
          "+1 = malignant (severity 1); -1 = benign (0)",
          "Elter, M. (2007). Mammographic Mass [Dataset]. UCI Machine Learning Repository. "
          "https://doi.org/10.24432/C53K6Z (Elter, M., Schulz-Wendtland, R., & Wittenberg, T. (2007), "
          "Medical Physics 34(11), 4164-4172)",
          _CC_BY, "https://archive.ics.uci.edu/dataset/161/mammographic+mass"),
    _Spec("magic", "magic04.data",
          "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a",
          "magic/magic04.data", f"{_UCI_ZIP}/159/magic+gamma+telescope.zip", ",", 11, _build_magic,
          "+1 = g (gamma, the signal); -1 = h (hadron, the background)",
          "Bock, R. (2004). MAGIC Gamma Telescope [Dataset]. UCI Machine Learning Repository. "
          "https://doi.org/10.24432/C52C8B",
          _CC_BY, "https://archive.ics.uci.edu/dataset/159/magic+gamma+telescope"),
]}

DATASETS = tuple(_SPECS)
"""Names accepted by :func:`load`, in a fixed order."""

SHA256 = {name: s.sha256 for name, s in _SPECS.items()}
"""Published SHA-256 of each raw file (``shared/data/uci/MANIFEST.tsv``)."""

FILENAMES = {name: s.filename for name, s in _SPECS.items()}
"""Each data set's raw file name in the data directory."""

RELATIVE_PATHS = {name: s.relative_path for name, s in _SPECS.items()}
"""Each raw file's path under :data:`UCI_BASE_URL` (and under ``base_url`` / ``CUDBOUND_DATA_URL``)."""

URLS = {name: tuple([f"{UCI_BASE_URL}/{s.relative_path}"] + ([s.zip_url] if s.zip_url else []))
        for name, s in _SPECS.items()}
"""Addresses tried in order when a file is missing. A ``.zip`` address is an
archive holding the raw file as a member of the same name. Edit this dict to
change them (tests do); ``base_url`` / ``CUDBOUND_DATA_URL`` take precedence."""


# --------------------------------------------------------------------------- public functions

def get_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """The data directory: ``data_home``, else ``$CUDBOUND_DATA``, else the user cache.

    The default is ``$XDG_CACHE_HOME/cudbound/uci`` when ``XDG_CACHE_HOME`` is
    an absolute path, otherwise ``~/.cache/cudbound/uci``. An empty
    environment variable counts as unset. The directory is not created here.
    """
    return _data_home(data_home)[0]


def available(data_home: str | os.PathLike[str] | None = None) -> tuple:
    """Names of the data sets whose raw file is present in the data directory (not verified)."""
    home = get_data_home(data_home)
    return tuple(name for name, s in _SPECS.items() if (home / s.filename).is_file())


def load(name: str, data_home: str | os.PathLike[str] | None = None, *, download: bool = True, verify: bool = True,
         missing: str = "keep", base_url: str | None = None, timeout: float = TIMEOUT) -> Dataset:
    """Load one UCI data set as a binary problem with labels in {-1, +1}.

    Rules (rows, features, +1 / -1 counts with the files of the manifest):

    ``spam`` (Spambase, ``spambase.data``): 4601 x 57, 1813 / 2788.
        +1 = spam (1). Nothing dropped. The file has CRLF line endings.
    ``ionosphere`` (``ionosphere.data``): 351 x 33, 225 / 126.
        +1 = g (good: structure in the ionosphere), -1 = b. Column 2 is 0 in
        every row and is dropped (next to an intercept it makes the design
        rank-deficient).
    ``heart`` (Statlog Heart, ``heart.dat``, space-separated): 270 x 13, 120 / 150.
        +1 = presence of heart disease (2), -1 = absence (1). Nothing dropped;
        nominal variables (chest pain, ECG, thal) keep their numeric codes.
    ``diabetes`` (Pima Indians Diabetes, ``pima-indians-diabetes.data``): 768 x 8, 268 / 500.
        +1 = tested positive (1). Zeros in glucose, blood pressure, skin
        thickness, insulin and BMI mean "missing"; ``missing="keep"`` (the
        default) keeps them as in the file, as the original studies did;
        ``missing="drop"`` drops the 376 rows with any such zero: 392 x 8,
        130 / 262.
    ``abalone`` (``abalone.data``): 4177 x 9, 2081 / 2096.
        +1 = rings >= 10, -1 = rings <= 9; rings is dropped. Sex (M/F/I) is
        one-hot encoded as ``sex_M``, ``sex_F`` with I (infant) the reference.
    ``liver`` (Liver Disorders, ``bupa.data``): 345 x 5, 176 / 169.
        +1 = drinks >= 3 (column 6), as UCI recommends; column 7 (selector) is
        a train/test split field, not a diagnosis. Both are dropped.
    ``mammogram`` (Mammographic Mass, ``mammographic_masses.data``): 830 x 4, 403 / 427.
        +1 = malignant (1). The 131 rows with any missing value (``?``) are
        dropped (the 830 complete cases usually reported), and so is
        BI-RADS, the radiologist's assessment (non-predictive per UCI). Shape
        and margin (nominal) and density (ordinal) keep their codes.
    ``magic`` (MAGIC Gamma Telescope, ``magic04.data``): 19020 x 10, 12332 / 6688.
        +1 = g (gamma, the signal), -1 = h (hadron, background). Nothing dropped.

    Parameters
    ----------
    name : str
        One of :data:`DATASETS` (case-insensitive).
    data_home : str or path-like, optional
        Data directory. Default: ``$CUDBOUND_DATA``, else
        ``~/.cache/cudbound/uci`` (see :func:`get_data_home`).
    download : bool, default True
        Fetch the raw file if it is not in the data directory. With False a
        missing file raises :class:`FileNotFoundError`.
    verify : bool, default True
        Check the SHA-256 of a file already on disk; a mismatch raises
        :class:`ChecksumError` (the file is not touched). Downloads are always
        verified.
    missing : {"keep", "drop"}, default "keep"
        Values that the documentation marks as missing but the file stores as
        numbers (Pima's zeros): kept as they are, or their rows dropped. Only
        ``diabetes`` has such values. Missing values without a number (``?``
        in ``mammogram``) always drop their row.
    base_url : str, optional
        Download from ``<base_url>/<RELATIVE_PATHS[name]>`` instead of the
        addresses in :data:`URLS`. Default: ``$CUDBOUND_DATA_URL`` if set.
    timeout : float, default 30
        Socket timeout of the download, in seconds.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        Unknown ``name`` or ``missing``; a file that cannot be parsed.
    FileNotFoundError
        The file is missing and ``download=False``.
    DownloadError
        The file is missing and every address failed (offline, HTTP error,
        transfer cut short). The message names the file, the directory, the
        environment variables and the addresses tried.
    ChecksumError
        The file on disk, or every download, has the wrong SHA-256.

    Examples
    --------
    >>> from cudbound.datasets import load
    >>> data = load("liver")                                   # doctest: +SKIP
    >>> data.X.shape, data.n_positive, data.n_negative         # doctest: +SKIP
    ((345, 5), 176, 169)
    """
    spec = _spec(name)
    if missing not in ("keep", "drop"):
        raise ValueError(f"`missing` must be 'keep' or 'drop'; got {missing!r}.")
    home, source = _data_home(data_home)
    path = home / spec.filename
    if path.is_file():
        raw = path.read_bytes()
        if verify:
            digest = hashlib.sha256(raw).hexdigest()
            if digest != spec.sha256:
                raise ChecksumError(
                    f"{path} has SHA-256 {digest}, not {spec.sha256}, the value of the unmodified UCI file "
                    f"{spec.filename!r}. It may have been edited (line endings converted, a header added) "
                    f"or be another version. It was left as it is: delete it to download the original, or "
                    f"pass verify=False to use it anyway."
                )
    elif not download:
        raise FileNotFoundError(
            f"Data set {spec.name!r}: file {spec.filename!r} is not in {home} (data directory {source}), "
            f"and download=False. Put the file there, set {DATA_ENV} to a directory that has it, or allow "
            f"the download from {_urls(spec, base_url)[0]}."
        )
    else:
        _fetch(spec, path, source, _urls(spec, base_url), timeout)
        raw = path.read_bytes()
    cells = _parse(raw, spec, path)
    X, y, names, types, n_dropped, dropped = spec.build(cells, missing)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{path}: non-finite feature values after parsing.")
    return Dataset(name=spec.name, X=np.ascontiguousarray(X, dtype=np.float64), y=y,
                   feature_names=tuple(names), feature_types=tuple(types), label_rule=spec.label_rule,
                   n_dropped=int(n_dropped), dropped=dropped, filename=spec.filename, path=str(path),
                   citation=f"{spec.citation}. Repository: {_UCI_REPO}.", license=spec.license, url=spec.url)


# --------------------------------------------------------------------------- helpers

def _spec(name) -> _Spec:
    key = name.strip().lower() if isinstance(name, str) else None
    if key not in _SPECS:
        raise ValueError(f"Unknown data set {name!r}; valid names are {', '.join(DATASETS)}.")
    return _SPECS[key]


def _data_home(data_home):
    if data_home is not None:
        return Path(data_home).expanduser(), "from the data_home argument"
    env = os.environ.get(DATA_ENV, "")
    if env:
        return Path(env).expanduser(), f"from the environment variable {DATA_ENV}"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    cache = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return cache / "cudbound" / "uci", f"by default; neither data_home nor {DATA_ENV} was set"


def _urls(spec: _Spec, base_url) -> tuple:
    base = base_url if base_url is not None else os.environ.get(URL_ENV, "")
    if base:
        return (f"{base.rstrip('/')}/{spec.relative_path}",)
    return tuple(URLS[spec.name])


def _parse(raw: bytes, spec: _Spec, path) -> np.ndarray:
    """Rows of the raw file as an (n, n_columns) array of str; LF or CRLF, blank lines skipped."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not an ASCII text file ({exc}).") from None
    rows = []
    for k, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split() if spec.delimiter is None else [f.strip() for f in line.split(spec.delimiter)]
        if len(fields) != spec.n_columns:
            raise ValueError(f"{path}, line {k}: {len(fields)} fields, expected {spec.n_columns}.")
        rows.append(fields)
    if not rows:
        raise ValueError(f"{path}: no data rows.")
    return np.array(rows, dtype=str)


def _fetch(spec: _Spec, path: Path, source: str, urls, timeout) -> None:
    """Download ``spec``'s file to ``path``: verified, atomic, nothing left behind on failure."""
    failures, checksum_failed = [], False
    for url in urls:
        try:
            _fetch_one(spec, path, url, timeout)
            return
        except ChecksumError as exc:
            checksum_failed = True
            failures.append(f"{url}: {exc}")
        except DownloadError as exc:
            failures.append(f"{url}: {exc}")
    tried = "\n".join(f"  - {f}" for f in failures)
    message = (
        f"Data set {spec.name!r}: file {spec.filename!r} is not in {path.parent} (data directory {source}) "
        f"and could not be downloaded. Tried:\n{tried}\n"
        f"Put the unmodified file (SHA-256 {spec.sha256}) in that directory, set {DATA_ENV} to a directory "
        f"that has it, or set {URL_ENV} (or pass base_url=) to a mirror with the layout "
        f"<base>/{spec.relative_path}."
    )
    if spec.zip_url is None:
        message += " This data set is no longer listed by UCI; its old address may not be served any more."
    raise (ChecksumError if checksum_failed else DownloadError)(message)


def _fetch_one(spec: _Spec, path: Path, url: str, timeout) -> None:
    payload = _http_get(url, timeout)
    if url.lower().split("?")[0].endswith(".zip"):
        payload = _zip_member(payload, spec.filename)
    directory = path.parent
    created = [d for d in (directory, *directory.parents) if not d.exists()]  # removed again on failure
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{spec.filename}.", suffix=".part")
    except OSError as exc:
        _remove_dirs(created)
        raise DownloadError(f"cannot write to {directory}: {exc}") from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        with open(tmp, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        if digest != spec.sha256:
            raise ChecksumError(
                f"the downloaded {spec.filename!r} ({len(payload)} bytes) has SHA-256 {digest}, "
                f"expected {spec.sha256}; it was discarded"
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        _remove_dirs(created)
        raise


def _remove_dirs(directories) -> None:
    """Remove the directories this download created (deepest first), if still empty."""
    for d in directories:
        try:
            d.rmdir()
        except OSError:
            return


def _http_get(url: str, timeout) -> bytes:
    """The complete body of a 200 response; anything else raises DownloadError."""
    request = urllib.request.Request(url, headers={"User-Agent": "cudbound (Python urllib)"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status = getattr(response, "status", 200)
            if status != 200:
                raise DownloadError(f"HTTP status {status}")
            expected = response.headers.get("Content-Length")
            expected = int(expected) if expected and expected.strip().isdigit() else None
            if expected is not None and expected > MAX_DOWNLOAD_BYTES:
                raise DownloadError(f"response of {expected} bytes exceeds the limit of {MAX_DOWNLOAD_BYTES}")
            body = io.BytesIO()
            while True:
                chunk = response.read(2**16)
                if not chunk:
                    break
                body.write(chunk)
                if body.tell() > MAX_DOWNLOAD_BYTES:
                    raise DownloadError(f"response exceeds the limit of {MAX_DOWNLOAD_BYTES} bytes")
    except DownloadError:
        raise
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"HTTP error {exc.code} ({exc.reason})") from None
    except urllib.error.URLError as exc:
        raise DownloadError(f"cannot connect ({exc.reason})") from None
    except (TimeoutError, socket.timeout):
        raise DownloadError(f"timed out after {timeout} s") from None
    except (http.client.HTTPException, OSError) as exc:
        raise DownloadError(f"transfer failed ({type(exc).__name__}: {exc})") from None
    if expected is not None and body.tell() != expected:
        raise DownloadError(f"transfer interrupted: received {body.tell()} of {expected} bytes")
    return body.getvalue()


def _zip_member(payload: bytes, filename: str) -> bytes:
    try:
        with zipfile.ZipFile(io.BytesIO(payload)) as archive:
            members = [i for i in archive.infolist() if i.filename.rsplit("/", 1)[-1] == filename]
            if not members:
                raise DownloadError(f"the zip archive has no member {filename!r}")
            if members[0].file_size > MAX_DOWNLOAD_BYTES:
                raise DownloadError(f"zip member {filename!r} exceeds the limit of {MAX_DOWNLOAD_BYTES} bytes")
            return archive.read(members[0])
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as exc:
        raise DownloadError(f"not a readable zip archive ({exc})") from None
