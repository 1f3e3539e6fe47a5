"""The solve of one node (cudbound/search/node_solve.py): by the solver the loop was compiled for."""
import os
import subprocess
import sys

import pytest
from numba import njit
from numba.core.errors import TypingError

from cudbound.search.node_solve import NodeSolveRef, _solve

COLD_SQUARED = """
import numpy as np
import cudbound
from cudbound.search import hinge_qp_node_solver, lp_node_solver, node_qp, smooth_node_solver
rng = np.random.default_rng(0)
X = rng.normal(size=(30, 2))
y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
cudbound.cud_interval(X, y, n_resamples=20, rng=0, progress=False)
print(len(node_qp._gi_ws.signatures), len(lp_node_solver._solve_node_ws.signatures),
      len(smooth_node_solver._sqp_compiled.signatures), len(hinge_qp_node_solver._hinge_qp_node.signatures))
"""


def test_the_solve_of_a_node_needs_its_kind_as_a_constant_of_the_loop():
    @njit
    def solve_with(kind):
        return _solve(0, 0, NodeSolveRef(kind, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0)

    with pytest.raises(TypingError, match="constant of the loop"):
        solve_with(0)


@pytest.mark.slow
def test_a_squared_loss_compiles_the_qp_and_no_other_node_solver(tmp_path):
    """On a cold kernel cache, a squared-loss interval compiles the loop with the QP alone: the
    hinge simplex, the SQP of the smooth losses and the hinge QP are not compiled (about a minute;
    before, every node solver was, 2.6x the time)."""
    env = dict(os.environ, CUDBOUND_CACHE_DIR=str(tmp_path), OPENBLAS_NUM_THREADS="1")
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", COLD_SQUARED], capture_output=True, text=True, env=env, timeout=900)
    assert out.returncode == 0, out.stderr
    qp, lp, sqp, hinge_qp = map(int, out.stdout.split())
    assert qp > 0 and (lp, sqp, hinge_qp) == (0, 0, 0)
