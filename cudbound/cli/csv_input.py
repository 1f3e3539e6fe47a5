"""CSV input of the commands that read a data file: ``read_csv``, the label check, and both at once
(``read_labelled_csv``)."""
from __future__ import annotations

import csv
import math
import warnings
from pathlib import Path

import numpy as np

from .._validation import encode_labels
from .shared import CLIError

__all__ = ["read_csv", "read_labelled_csv"]


def read_csv(path, label: str, *, keep_index_column: bool = False):
    """Read a CSV file with a header row into features and raw labels.

    Every column except ``label`` is a feature and must be numeric and finite.
    Blank lines are skipped. A first column without a name in the header is the row index
    pandas' ``DataFrame.to_csv`` writes (unless ``index=False``), whatever its values (those of
    ``df.sample(...)`` are shuffled row labels): it is dropped, with a warning, unless
    ``keep_index_column``.

    Parameters
    ----------
    path : str or Path
        The file, comma-separated, UTF-8 (a byte-order mark is allowed).
    label : str
        Name of the label column in the header.
    keep_index_column : bool, default False
        Keep an unnamed first column as a feature, named ``"index"`` (``"level_0"`` if a column
        is named ``"index"`` already), the names pandas' ``reset_index`` gives it.

    Returns
    -------
    X : ndarray of shape (n, d)
        The feature columns, in file order.
    y : ndarray of shape (n,)
        The labels: integers if every label is a whole number, floats if every
        label is a finite number, else the stripped strings.
    features : list of str
        The feature column names.

    Raises
    ------
    CLIError
        The file cannot be read, has no data rows, lacks the label column, has
        a ragged row or an unnamed column other than the first, or a feature value is
        missing, non-numeric or non-finite; the message names the column and the line.

    Warns
    -----
    UserWarning
        An unnamed first column (pandas' row index) is dropped.
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            rows = [(reader.line_num, [cell.strip() for cell in row]) for row in reader if any(c.strip() for c in row)]
    except FileNotFoundError:
        raise CLIError(f"data file '{path}' not found.") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CLIError(f"cannot read data file '{path}' as CSV: {exc}") from None
    if not rows:
        raise CLIError(f"data file '{path}' is empty; expected a header row and data rows.")
    header = rows[0][1]
    width = len(header)
    header, dropped = _index_column(path, header, keep_index_column)
    if len(set(header)) != len(header):
        dup = next(name for name in header if header.count(name) > 1)
        raise CLIError(f"column name {dup!r} appears more than once in the header of '{path}'.")
    if label not in header:
        raise CLIError(f"label column {label!r} is not in the header of '{path}'; the columns are: {', '.join(header)}.")
    body = rows[1:]
    if not body:
        raise CLIError(f"data file '{path}' has a header but no data rows.")
    for line, row in body:
        if len(row) != width:
            raise CLIError(f"line {line} of '{path}' has {len(row)} fields but the header has {width}.")
    body = [(line, row[dropped:]) for line, row in body]
    features = [name for name in header if name != label]
    if not features:
        raise CLIError(f"data file '{path}' has no feature columns besides the label column {label!r}.")
    columns = {name: j for j, name in enumerate(header)}
    X = np.column_stack([_feature_column(name, [(line, row[columns[name]]) for line, row in body])
                         for name in features])
    y = _label_column(label, [(line, row[columns[label]]) for line, row in body])
    if dropped:
        warnings.warn(f"the first column of '{path}' has no name: read as the row index pandas' to_csv writes and "
                      f"dropped (--keep-index-column keeps it as a feature)", UserWarning, stacklevel=2)
    return X, y, features


def _index_column(path, header, keep: bool):
    """The header without pandas' row index, and how many columns that drops (0 or 1). An unnamed
    first column is that index, whatever it holds (``to_csv`` writes one unless ``index=False``;
    after ``sample`` or a filter it is not 0, 1, ..., n-1): dropped with a warning, or kept as a
    feature named as ``reset_index`` names it (:func:`read_csv` warns when it drops it). Any other
    unnamed column is refused."""
    others = [j for j, name in enumerate(header) if name == "" and j > 0]
    if others:
        raise CLIError(f"column {others[0] + 1} of '{path}' has no name in the header; name it to use it as a "
                       f"feature (or drop it).")
    if header[0] != "":
        return header, 0
    if keep:
        return ["level_0" if "index" in header else "index", *header[1:]], 0
    return header[1:], 1


def _feature_column(name: str, cells) -> np.ndarray:
    """Floats from ``(line, cell)`` pairs; a missing, non-numeric or non-finite cell is an error."""
    out = np.empty(len(cells))
    for i, (line, cell) in enumerate(cells):
        if not cell:
            raise CLIError(f"feature column {name!r} has a missing value at line {line}; remove or impute it first.")
        try:
            out[i] = float(cell)
        except ValueError:
            raise CLIError(
                f"feature column {name!r} is not numeric: line {line} holds {cell!r}. "
                f"Encode it as numbers or drop the column."
            ) from None
        if not math.isfinite(out[i]):
            raise CLIError(f"feature column {name!r} has a non-finite value {cell!r} at line {line}; "
                           f"remove or impute it first.")
    return out


def _label_column(name: str, cells) -> np.ndarray:
    """Labels from ``(line, cell)`` pairs: integers, floats or strings (see :func:`read_csv`)."""
    for line, cell in cells:
        if not cell:
            raise CLIError(f"label column {name!r} has a missing value at line {line}.")
    values = [cell for _, cell in cells]
    try:
        as_float = np.array([float(v) for v in values])
    except ValueError:
        return np.array(values)
    if not np.all(np.isfinite(as_float)):
        return np.array(values)
    if np.all(as_float == np.round(as_float)):
        return as_float.astype(np.int64)
    return as_float


def _check_labels(y, column: str, pos_label):
    """The labels mapped to -1/+1 and their encoding (``cudbound._validation.encode_labels``); a
    CLIError naming the column and the option if they cannot be."""
    try:
        return encode_labels(y, pos_label=pos_label, name=column)
    except ValueError as exc:
        raise CLIError(str(exc).replace("`pos_label=`", "--pos-label").replace("`pos_label`", "--pos-label")) from None


def read_labelled_csv(args):
    """``--data``, ``--label``, ``--pos-label`` and ``--keep-index-column`` of a command read and
    checked: the one path of every command that reads a CSV file. Returns ``(X, y, features, labels,
    encoding)``: the features, the raw labels, the feature names, the labels as -1/+1 and their
    encoding."""
    X, y, features = read_csv(args.data, args.label, keep_index_column=args.keep_index_column)
    labels, encoding = _check_labels(y, args.label, args.pos_label)
    return X, y, features, labels, encoding
