"""A squared-loss replicate set up for :func:`cudbound.search.branch_and_bound`, for tests that
drive the search with their own node solver."""
import numpy as np

from cudbound.engine import ReplicateEngine
from cudbound.losses import SquaredLoss
from cudbound.search import ReplicateProblem


def squared_replicate(design, y, counts):
    """(problem, root, quad, beta_hat) of the squared loss at one count vector."""
    loss = SquaredLoss()
    beta_hat = np.linalg.lstsq(design, y, rcond=None)[0]
    _, root, quad = ReplicateEngine(design, y, loss, engine="python").prepare(counts)
    problem = ReplicateProblem(design, y, np.asarray(counts, dtype=float), beta_hat, loss, len(y), quad=quad,
                               beta_u=root.beta, L_u=root.value)
    return problem, root, quad, beta_hat
