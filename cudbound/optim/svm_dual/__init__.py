"""The soft-margin SVM dual, solved to high accuracy: compiled SMO, active-set steps, a KKT polish.

The dual of the soft-margin SVM with a bias on kernel matrix K and labels y in {-1, +1}:

    min_alpha  1/2 alpha' Q alpha - sum(alpha),   Q = (y y') * K,
    subject to 0 <= alpha_i <= C,  y' alpha = 0.

One module per job; this package re-exports their functions:

- :mod:`~cudbound.optim.svm_dual.smo_solver`: sequential minimal optimisation from any
  feasible alpha (:func:`~cudbound.optim.svm_dual.smo_solver.smo`) and the gradient
  G = Q alpha - 1;
- :mod:`~cudbound.optim.svm_dual.active_set_solver`: a primal active-set method, one change
  of a point's status per step, which reaches the exact free set from SMO's rough solution or
  from a nearby one (:func:`~cudbound.optim.svm_dual.active_set_solver.active_set`);
- :mod:`~cudbound.optim.svm_dual.decremental`: one point taken out of an optimal solution
  along the solution path, how leave-one-out refits start
  (:func:`~cudbound.optim.svm_dual.decremental.decrement`);
- :mod:`~cudbound.optim.svm_dual.kkt`: the bias from the gradient, the KKT equations solved
  on the free set (:func:`~cudbound.optim.svm_dual.kkt.polish`), and the KKT checks;
- :mod:`~cudbound.optim.svm_dual.conic`: the interior-point fallback (CLARABEL).

Together they give multipliers exact to round-off whenever the free set is identified, which
the xi-alpha count of :mod:`cudbound.svm` (a comparison with 1) needs. (The modules are not
named after the functions ``smo`` and ``active_set``: a package attribute re-exported under a
submodule's name hides the submodule from ``import ... as`` and from Sphinx.)

Why not scikit-learn's ``SVC`` (libsvm): at the tolerance 1e-10 the count needs, it does not
terminate on a 20-point problem (polynomial kernel). So the toolkit solves the dual itself, and
its tests check it against CLARABEL at 1e-12.

The compiled kernels of one file call those of others (the active-set method the gradient of
the SMO file, the decremental path the eigen-step of the active-set file), which numba's own
staleness check does not see: :mod:`cudbound._kernel_cache` keys their cache by the content of
all these files.
"""

from .active_set_solver import active_set
from .conic import solve_conic
from .decremental import decrement, independent_free_set, kkt_inverse
from .kkt import bias_from_gradient, kkt_check, kkt_check_near, kkt_violation, polish
from .smo_solver import gradient, smo

# private steps also importable from the package (tests/optim/svm_dual/test_package.py)
from .active_set_solver import _lu_solve  # noqa: F401
from .decremental import _border, _border_vector, _remove_free  # noqa: F401

__all__ = ["smo", "active_set", "decrement", "kkt_inverse", "independent_free_set", "kkt_check_near", "gradient",
           "kkt_check", "bias_from_gradient", "polish", "kkt_violation", "solve_conic"]
