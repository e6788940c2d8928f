"""Solution: every shift that commutes with a map."""

import numpy as np

from exercises.solutions.equivariance_error import equivariance_error


def which_shifts_commute(f, x, stride=1, tol=1e-8):
    H, W = np.shape(x)[-2:]
    errors = [[equivariance_error(f, x, (dr, dc), stride) for dc in range(W)]
              for dr in range(H)]
    return np.array(errors) <= tol
