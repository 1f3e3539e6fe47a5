"""A coverage store's rows without their timing, for exact comparison between runs (one run against
several, resumed, shared or split by selection)."""
import json

from cudbound.coverage import ResultStore

TIMING = {"seconds", "finished", "host"}
"""The columns that differ between runs of the same tasks."""


def stored(path):
    """Every stored row (in the store's order) without its timing columns; a result's details without
    the keys that time something."""
    with ResultStore(path) as store:
        tasks = [{k: v for k, v in r.items() if k not in TIMING} for r in store.tasks()]
        results = [{k: v for k, v in r.items() if k not in TIMING} for r in store.results()]
    for r in results:
        r["details"] = {k: v for k, v in json.loads(r["details"]).items() if "seconds" not in k}
    return tasks, results
