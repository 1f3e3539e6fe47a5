"""Run one benchmark case in this process and print JSON lines (called by ``benchmarks/run.py``).

    python benchmarks/case.py '{"name": "sq50", "data": "/tmp/x.npz", "loss": "squared", "basis": "linear",
                                "resamples": 500, "rng": 0, "core": 0}'

The case is one JSON object (argv[1]):

``data``       an ``.npz`` file with arrays ``X`` and ``y`` (written by run.py, so that every
               version of the package sees exactly the same data);
``loss``       a loss spec string (``"squared"``, ``"hinge"``, ...) or ``"user:squared_hinge"``
               (the user-defined loss below, given only pointwise and as a cvxpy expression);
``basis``      a basis spec (``"linear"``, ``"poly:2"``);
``resamples``  B; ``rng``: the seed of the bootstrap; ``core``: the CPU this process is pinned to;
``warmup``     optional, default true;
``estimator``  optional: a scikit-learn classifier as a Python expression over ``sklearn.svm`` and
               ``sklearn.linear_model`` (e.g. ``"LogisticRegression()"``), passed as ``estimator=``
               (``procedure=`` where the signature has it) instead of ``loss`` and ``basis``;
``time_limit`` optional: passed as ``time_limit=`` (the whole interval's budget since issue 28);
``n_jobs``     optional, default 1.

Works with any version of ``cudbound`` that has ``cud_interval`` (bcb6719 or later): it passes
only keyword arguments bcb6719 accepts, plus ``progress=False`` when the signature has it, and
``basis``, ``loss``, ``estimator`` as one ``procedure`` when the signature takes the model so.

Output, one JSON object per line on stdout:

1. ``{"event": "warm", ...}`` when the warm-up is done (imports, numba compilation or cache
   load, cvxpy: a tiny ``cud_interval`` with the same loss on n = 20, B = 20; NOT timed).
   ``run.py`` starts the case's time cap at this line.
2. ``{"event": "result", ...}``: ``seconds`` = wall time (``time.perf_counter``) of the one
   whole ``cud_interval`` call, ``cpu_seconds`` = this process's CPU time during it
   (``time.process_time``; much less than ``seconds`` means the core was shared), the interval, half-width, training error, per-replicate nodes
   (``res.stats.nodes``, the full list and median / 99th percentile / max), status counts,
   ``peak_mib`` = peak RSS of this process during the timed call (VmHWM after resetting it
   through /proc/self/clear_refs when the warm-up is done; it includes the memory the process
   already held: interpreter, numpy, cvxpy, numba; None if the reset is not possible),
   ``process_peak_mib`` = peak RSS over the whole process (warm-up and numba compilation included;
   the larger of ``ru_maxrss`` before the reset and after the call),
   ``cudbound_file`` (which package was imported) and an ``error`` field (None, or the
   exception when the call raised).
"""
from __future__ import annotations

import hashlib
import inspect
import json
import os
import resource
import sys
import time
import traceback

import numpy as np

# bcb6719's cud_interval keywords; later versions accept at least these.
BEFORE_KWARGS = ("basis", "loss", "confidence_level", "n_resamples", "alpha_n", "rng", "pos_label", "engine",
                 "solver", "max_nodes", "time_limit", "n_jobs", "estimator")


def emit(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def peak_mib() -> float:
    """Peak resident set size of this process in MiB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def reset_peak() -> bool:
    """Reset this process's peak RSS (VmHWM) so that it measures what follows (Linux >= 4.0, clear_refs 5)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def hwm_mib() -> float | None:
    """VmHWM of /proc/self/status in MiB: the peak RSS since start or since the last :func:`reset_peak`."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return None


def make_user_loss():
    """A user-defined loss given only as ``pointwise`` and ``cvxpy_pointwise`` (the generic cvxpy path).

    Squared hinge l(y, t) = max(0, 1 - y t)^2: convex, not strictly convex (flat for y t >= 1),
    no ``derivatives``, not quadratic, so no built-in fast path applies to it by construction.
    """
    import cvxpy as cp
    from cudbound.losses import Loss

    class SquaredHingeUser(Loss):
        """l(y, t) = max(0, 1 - y t)^2, as a user would write it (docs/losses.md, the pointwise pair)."""

        name = "user_squared_hinge"

        def pointwise(self, y, t):
            return np.maximum(0.0, 1.0 - np.asarray(y, dtype=float) * t) ** 2

        def cvxpy_pointwise(self, y, t):
            return cp.square(cp.pos(1.0 - cp.multiply(np.asarray(y, dtype=float), t)))

    return SquaredHingeUser()


def resolve_loss(spec):
    if isinstance(spec, str) and spec.startswith("user:"):
        if spec != "user:squared_hinge":
            raise ValueError(f"unknown user loss {spec!r}")
        return make_user_loss()
    return spec


def call_kwargs(cud_interval, **kw) -> dict:
    """The keyword arguments to pass: bcb6719's set, plus ``progress=False`` if the signature has it;
    ``basis``, ``loss`` and ``estimator`` as one ``procedure`` where the signature takes the model so
    (a dict of the procedure's fields, or the estimator itself)."""
    params = inspect.signature(cud_interval).parameters
    out = {k: v for k, v in kw.items() if k in BEFORE_KWARGS}
    if "procedure" in params:
        model = {k: out.pop(k) for k in ("basis", "loss", "estimator") if k in out}
        out["procedure"] = model.get("estimator", model)
    unknown = [k for k in out if k not in params]
    if unknown:
        raise TypeError(f"this cud_interval does not accept {unknown}")
    if "progress" in params:
        out["progress"] = False
    return out


def shown(value):
    """A keyword argument as the result line shows it: a JSON scalar as it is, anything else by its type."""
    return value if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__


def nodes_summary(nodes) -> dict:
    """Median, 99th percentile (numpy's linear interpolation) and max of the nodes per replicate."""
    a = np.asarray(nodes, dtype=float)
    if a.size == 0:
        return {"median": None, "p99": None, "max": None, "mean": None, "total": 0}
    return {"median": float(np.median(a)), "p99": float(np.percentile(a, 99)), "max": float(a.max()),
            "mean": float(a.mean()), "total": float(a.sum())}


def warm_up(cudbound, loss, n_features: int) -> tuple[float, str]:
    """Compile / load numba kernels and import cvxpy with a tiny call of the same loss (not timed).

    LinearGaussian-like data drawn with numpy only (n = 20, B = 20, 30% label noise); a draw the
    loss cannot fit (e.g. separable data for the logistic loss) is replaced by the next seed,
    and if every draw fails the squared loss warms up the shared code instead.
    """
    t0 = time.perf_counter()
    d = max(1, min(n_features, 4))
    last = "no attempt"
    for seed in range(99, 104):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((20, d))
        y = np.where(X.sum(axis=1) >= 0, 1, -1) * np.where(rng.random(20) < 0.3, -1, 1)
        try:
            kw = call_kwargs(cudbound.cud_interval, loss=loss, n_resamples=20, rng=0, n_jobs=1)
            cudbound.cud_interval(X, y, **kw)
            return time.perf_counter() - t0, "ok"
        except Exception as exc:  # noqa: BLE001 - a warm-up failure only changes what gets compiled
            last = f"{type(exc).__name__}: {exc}"
    kw = call_kwargs(cudbound.cud_interval, loss="squared", n_resamples=20, rng=0, n_jobs=1)
    cudbound.cud_interval(X, y, **kw)
    return time.perf_counter() - t0, f"with the squared loss ({last})"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    case = json.loads(argv[0])
    core = case.get("core")
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(core)})
    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None

    import cudbound

    data = np.load(case["data"])
    X, y = data["X"], data["y"]
    digest = hashlib.sha256(np.ascontiguousarray(X, dtype=float).tobytes()
                            + np.ascontiguousarray(y, dtype=np.int64).tobytes()).hexdigest()[:16]
    loss = resolve_loss(case["loss"])
    info = {"cudbound_file": cudbound.__file__, "cudbound_version": getattr(cudbound, "__version__", None),
            "python": sys.executable, "affinity": affinity, "data_sha256_16": digest,
            "n": int(X.shape[0]), "d": int(X.shape[1])}

    warm_seconds, warm_note = (0.0, "skipped")
    if case.get("warmup", True):
        warm_seconds, warm_note = warm_up(cudbound, loss, X.shape[1])
    emit({"event": "warm", "seconds": warm_seconds, "note": warm_note, **info})

    model = {"basis": case.get("basis", "linear"), "loss": loss}
    if case.get("estimator"):
        import sklearn.linear_model
        import sklearn.svm
        names = {**vars(sklearn.svm), **vars(sklearn.linear_model)}
        model = {"estimator": eval(case["estimator"], {"__builtins__": {}}, names)}  # noqa: S307 - our own case table
    if case.get("time_limit") is not None:
        model["time_limit"] = float(case["time_limit"])
    kw = call_kwargs(cudbound.cud_interval, **model, n_resamples=int(case["resamples"]), rng=int(case["rng"]),
                     n_jobs=int(case.get("n_jobs", 1)))
    shown_kw = {k: ({f: shown(x) for f, x in v.items()} if isinstance(v, dict) else shown(v)) for k, v in kw.items()}
    out = {"event": "result", **info, "kwargs": shown_kw, "warmup_seconds": warm_seconds, "error": None,
           "warmup_peak_mib": peak_mib()}
    can_reset = reset_peak()
    c0, t0 = time.process_time(), time.perf_counter()
    try:
        res = cudbound.cud_interval(X, y, **kw)
    except Exception as exc:  # noqa: BLE001 - reported, not hidden: the table shows the error
        out.update(seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0, error=f"{type(exc).__name__}: {exc}",
                   traceback=traceback.format_exc()[-2000:], process_peak_mib=max(out["warmup_peak_mib"], peak_mib(), hwm_mib() or 0.0),
                   peak_mib=hwm_mib() if can_reset else None)
        emit(out)
        return 0
    seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    stats = res.stats
    nodes = np.asarray(stats.nodes).astype(int).tolist()
    status = np.asarray(stats.status, dtype=object)
    labels, counts = np.unique(status.astype(str), return_counts=True) if status.size else ([], [])
    extra = {}
    for name in ("conservative", "n_fallbacks", "fallbacks", "exact_distribution", "upper_gap"):
        value = getattr(res, name, None)
        if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
            extra[name] = value.item() if hasattr(value, "item") else value
    solves = np.asarray(getattr(stats, "solves", []), dtype=float)
    extra["solves_total"] = float(solves.sum()) if solves.size else None
    extra["loss_name"] = res.details.get("loss")
    out.update(seconds=seconds, cpu_seconds=cpu_seconds, interval=[float(res.low), float(res.high)], half_width=float(res.half_width),
               train_error=float(res.train_error), nodes=nodes, nodes_summary=nodes_summary(nodes),
               status_counts={str(k): int(c) for k, c in zip(labels, counts)}, process_peak_mib=max(out["warmup_peak_mib"], peak_mib(), hwm_mib() or 0.0),
               peak_mib=hwm_mib() if can_reset else None, **extra)
    emit(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
