"""Error against data: power-law fits of learning curves, and where two curves cross.

Over a range of training-set sizes ``N`` a learning curve's test error is
often close to a power law, ``err(N) = a N^(-b)``: a straight line of slope
``-b`` on log-log axes. :func:`power_law` fits that line by least squares on
``(log N, log err)``; the exponent ``b`` says how fast more data pays. A model
whose assumptions are wrong for the task approaches a floor instead (the bias
of the toy chapter), and its fitted exponent shrinks as the floor is reached.

An error of zero has no logarithm: points at or below the test set's
resolution (one error in the whole set) are left out of a fit and reported.

:func:`crossing` solves ``a_1 N^(-b_1) = a_2 N^(-b_2)`` for the size where two
fitted laws meet; :func:`measured_crossing` finds where two measured curves
change order, interpolating linearly in ``log N`` between the bracketing sizes.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np


class PowerLaw(NamedTuple):
    """``err(N) = scale * N ** -exponent``, fitted on the sizes in ``used``."""

    exponent: float
    scale: float
    used: tuple[int, ...]

    def __call__(self, n):
        return self.scale * np.asarray(n, dtype=float) ** -self.exponent


def _curve(sizes, values, name: str):
    sizes = np.asarray(sizes, dtype=float)
    values = np.asarray(values, dtype=float)
    if sizes.ndim != 1 or sizes.shape != values.shape or len(sizes) < 2:
        raise ValueError(f"sizes and {name} must be 1-D of equal length >= 2, got shapes "
                         f"{sizes.shape} and {values.shape}")
    if not (np.all(sizes > 0) and np.all(np.diff(sizes) > 0)):
        raise ValueError(f"sizes must be positive and increasing, got {sizes.tolist()}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite")
    return sizes, values


def power_law(sizes, errors, resolution: float = 0.0) -> PowerLaw:
    """The least-squares line through ``(log N, log err)`` over the errors above ``resolution``.

    ``errors`` are test error rates in [0, 1] at the increasing ``sizes``;
    ``resolution`` is the smallest error the test set can show (``1 / test
    size``): errors below it (zeros) are left out. ``ValueError`` when fewer
    than two points remain.
    """
    sizes, errors = _curve(sizes, errors, "errors")
    if np.any(errors < 0) or np.any(errors > 1):
        raise ValueError(f"errors must lie in [0, 1], got {errors.tolist()}")
    keep = errors >= max(resolution, np.finfo(float).tiny)
    if keep.sum() < 2:
        raise ValueError(f"a power law needs two errors at or above {resolution}, got {errors.tolist()}")
    slope, intercept = np.polyfit(np.log(sizes[keep]), np.log(errors[keep]), 1)
    return PowerLaw(float(-slope), float(math.exp(intercept)), tuple(int(n) for n in sizes[keep]))


def crossing(first: PowerLaw, second: PowerLaw) -> float:
    """The size where two fitted laws give the same error; ``inf`` if they never meet for ``N > 0``.

    ``log N* = (log a_1 - log a_2) / (b_1 - b_2)``. Equal exponents never meet
    (unless the laws are equal, which is refused as having no single crossing).
    """
    if first.exponent == second.exponent:
        if first.scale == second.scale:
            raise ValueError("the two laws are the same: they meet everywhere")
        return math.inf
    return math.exp((math.log(first.scale) - math.log(second.scale)) / (first.exponent - second.exponent))


def measured_crossing(sizes, first, second) -> float | None:
    """The first size at which ``first - second`` changes sign, interpolated in ``log N``; else ``None``.

    A zero difference at a measured size is a crossing at that size.
    """
    sizes, first = _curve(sizes, first, "first")
    _, second = _curve(sizes, second, "second")
    gap = first - second
    for i in range(len(sizes)):
        if gap[i] == 0:
            return float(sizes[i])
        if i and np.sign(gap[i]) != np.sign(gap[i - 1]):
            t = gap[i - 1] / (gap[i - 1] - gap[i])
            return float(math.exp(math.log(sizes[i - 1]) + t * (math.log(sizes[i]) - math.log(sizes[i - 1]))))
    return None


def resolved(first, second, z: float = 2.0) -> bool:
    """Whether the means of two samples (one value per seed) differ by more than ``z`` standard errors.

    The standard error of the difference is ``sqrt(s_1^2 / n_1 + s_2^2 / n_2)``
    with the samples' standard deviations ``s`` (``ddof = 1``). A scalar
    ``second`` is a known value (no error of its own). Used to choose between
    "differs" and "within the seeds' spread" in the prose.
    """
    first = np.atleast_1d(np.asarray(first, dtype=float))
    second = np.atleast_1d(np.asarray(second, dtype=float))
    if first.ndim != 1 or second.ndim != 1 or len(first) < 2 or not (len(second) == 1 or len(second) >= 2):
        raise ValueError(f"need a sample of at least two values and a sample or a single value, got "
                         f"shapes {first.shape} and {second.shape}")
    variance = first.var(ddof=1) / len(first) + (second.var(ddof=1) / len(second) if len(second) > 1 else 0.0)
    return bool(abs(first.mean() - second.mean()) > z * math.sqrt(variance))
