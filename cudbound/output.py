"""The one JSON layout of the ``--json`` output of every command (schema version 1).

Every command prints one object with the same top-level keys::

    {"schema_version": 1, "command": "interval", "cudbound_version": "0.1.0",
     "data": {...}, "seed": 7, "results": [{...}, ...], "details": {...},
     "warnings": [...], "plot": null}

``results`` is a list of estimates, each with at least the common columns of every result's row
(``cudbound.results.COMMON_COLUMNS``): ``method``, ``quantity`` (what is estimated, one of
``cudbound.results.QUANTITIES``: ``"error rate"``, ``"AUC"``, ``"difference of error rates"``,
``"difference of AUCs"``, ``"recall"``, ``"coverage"``, ...), ``estimate``, ``low``, ``high`` and
``confidence_level`` (``null`` where the method gives no interval) and ``n_samples``, as
:func:`cudbound.results.result_item` builds them for every result's ``to_dict()`` and for the
commands' other entries. :data:`OUTPUT_SCHEMA` states the layout as a JSON Schema
(draft 2020-12); ``docs/json.md`` documents it, and the test suite validates every
command's output against it.

>>> record = envelope("auc", data={"source": "d.csv", "n": 30}, results=[
...     result_item("lpo_auc", "AUC", 0.81, n_samples=30)])
>>> sorted(record) == sorted(OUTPUT_SCHEMA["required"])
True
>>> record["results"][0]["low"] is None
True
"""
from __future__ import annotations

from .results import QUANTITIES, result_item   # one result's layout: every result's to_dict() is built by it

__all__ = ["SCHEMA_VERSION", "OUTPUT_SCHEMA", "envelope", "result_item"]

SCHEMA_VERSION = 1
"""Bumped whenever a key is removed or changes meaning (adding keys does not bump it)."""

_NUMBER_OR_NULL = {"type": ["number", "null"]}

OUTPUT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "cudbound command output",
    "type": "object",
    "required": ["schema_version", "command", "cudbound_version", "data", "seed", "results", "details",
                 "warnings", "plot"],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "command": {"enum": ["demo", "interval", "compare", "coverage", "auc", "xi-alpha", "store check",
                             "store export"]},
        "cudbound_version": {"type": "string"},
        "data": {
            "description": "Where the numbers come from: a file, a simulation or a study.",
            "type": "object",
            "required": ["source", "n"],
            "properties": {
                "source": {"type": "string"},
                "n": {"type": ["integer", "null"], "minimum": 1},
                "features": {"type": "array", "items": {"type": "string"}},
                "label_column": {"type": "string"},
                "label_mapping": {
                    "description": "The label values mapped to +1 and -1 (null: labels were -1/+1).",
                    "type": ["object", "null"],
                    "required": ["positive", "negative"],
                    "properties": {"positive": {}, "negative": {}},
                },
            },
        },
        "seed": {"description": "Seed of the random draws (null: the command draws nothing at random).",
                 "type": ["integer", "null"]},
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["method", "quantity", "estimate", "low", "high", "confidence_level", "n_samples"],
                "properties": {
                    "method": {"type": "string"},
                    "quantity": {"enum": list(QUANTITIES)},
                    "estimate": _NUMBER_OR_NULL,
                    "low": _NUMBER_OR_NULL,
                    "high": _NUMBER_OR_NULL,
                    "confidence_level": {"type": ["number", "null"], "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                    "n_samples": {"type": ["integer", "null"], "minimum": 1},
                },
            },
        },
        "details": {"description": "Command-specific extras (search statistics, run counts, ...).",
                    "type": "object"},
        "warnings": {"description": "Warnings raised while computing, one line each.",
                     "type": "array", "items": {"type": "string"}},
        "plot": {"description": "The image file written by --plot, else null.", "type": ["string", "null"]},
    },
}
"""JSON Schema (draft 2020-12) of every command's ``--json`` output."""


def envelope(command: str, *, data: dict, results: list, seed=None, details=None, warnings=(), plot=None) -> dict:
    """The whole ``--json`` object of one command (see :data:`OUTPUT_SCHEMA`)."""
    from . import __version__
    return {"schema_version": SCHEMA_VERSION, "command": command, "cudbound_version": __version__,
            "data": data, "seed": seed, "results": list(results), "details": dict(details or {}),
            "warnings": list(warnings), "plot": plot}
