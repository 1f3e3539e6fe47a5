"""Record SVM-light V6.02's printed xi-alpha estimates on generated problems, as a test fixture.

SVM-light is not redistributable with this project and CI has no binary, so its output is
recorded once: build ``svm_learn`` from the V6.02 sources (for example the public repository
aplz/svmLightJni-6.02, folder lib/svmlight-6.02: ``gcc -O2 -fcommon -o svm_learn
svm_learn_main.c svm_learn.c svm_common.c svm_hideo.c -lm``), then

    python experiments/svmlight_reference.py --svm-learn PATH/svm_learn \
        --out tests/fixtures/svmlight_xialpha.json

For each problem (``problem(seed)`` below, also used by ``tests/test_svm_svmlight.py``) it runs
``svm_learn -c C -e 1e-6`` with the kernel's options, parses the three "XiAlpha-estimate"
lines (percent, two decimals, rho = 1 by default) and stores them with the problem's
parameters and the SVM-light command line.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

KERNEL_OPTIONS = {"linear": ["-t", "0"], "rbf": ["-t", "2", "-g", "0.5"],
                  "poly": ["-t", "1", "-d", "2", "-s", "0.5", "-r", "1"]}
"""SVM-light's options for the kernels of cudbound.svm with gamma = 0.5, degree 2, coef0 1."""


def problem(seed):
    """Features off the origin (SVM-light's radius depends on where it is), two classes, a kernel and C."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(30, 120)), int(rng.integers(2, 6))
    X = rng.normal(size=(n, d)) + rng.normal(size=d)
    y = np.where(X[:, 0] - X[:, 0].mean() + 0.7 * rng.normal(size=n) > 0, 1, -1)
    return X, y, ["linear", "rbf", "poly"][seed % 3], float(10 ** rng.uniform(-1, 1))


def run_svmlight(binary, X, y, kernel, C):
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "train.dat"
        data.write_text("".join(f"{int(t):+d} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(x)) + "\n"
                                for x, t in zip(X, y)))
        cmd = [str(binary), "-c", repr(C), "-e", "1e-6", *KERNEL_OPTIONS[kernel], str(data), str(Path(tmp) / "m")]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    grab = {k: float(re.search(pat, out).group(1)) for k, pat in
            (("error", r"error<=([\d.]+)%"), ("recall", r"recall=>([\d.]+)%"), ("precision", r"precision=>([\d.]+)%"))}
    return grab, " ".join(["svm_learn"] + cmd[1:-2])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--svm-learn", required=True, help="path of SVM-light V6.02's svm_learn")
    ap.add_argument("--problems", type=int, default=40)
    ap.add_argument("--out", default="tests/fixtures/svmlight_xialpha.json")
    args = ap.parse_args(argv)
    records = []
    for seed in range(args.problems):
        X, y, kernel, C = problem(seed)
        printed, cmd = run_svmlight(args.svm_learn, X, y, kernel, C)
        records.append(dict(seed=seed, kernel=kernel, C=C, n=len(y), command=cmd, **printed))
    Path(args.out).write_text(json.dumps({"svmlight": "V6.02", "percent_two_decimals": True,
                                          "problems": records}, indent=1) + "\n")
    print(f"wrote {len(records)} problems to {args.out}")


if __name__ == "__main__":
    main()
