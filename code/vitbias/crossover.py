"""Compute to match: how much pretraining compute a ViT needs to equal a ResNet.

Table 6 of the ViT paper lists, for ResNets, ViTs and hybrids pretrained on
JFT-300M, the ImageNet accuracy after fine-tuning and the pretraining compute
in exaFLOPs. To ask what compute a ViT needs to reach a given ResNet's
accuracy:

1. keep the ViT *frontier*: the ViTs that beat every cheaper ViT
   (:func:`frontier`);
2. find the two frontier ViTs whose accuracies bracket the target, and
   interpolate linearly in log compute between them (:func:`compute_to_match`):

   ``log c = log c_1 + (a - a_1) / (a_2 - a_1) * (log c_2 - log c_1)``.

A target below the cheapest frontier ViT is already beaten by it: the answer
is then an upper bound, that ViT's compute. A target above the best frontier
ViT has no answer (the data do not say) and raises ``ValueError``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Match(NamedTuple):
    """The compute needed to match a target; ``exact`` is False for an upper bound."""

    compute: float
    exact: bool


def _points(compute, accuracy):
    compute = np.asarray(compute, dtype=float)
    accuracy = np.asarray(accuracy, dtype=float)
    if compute.ndim != 1 or compute.shape != accuracy.shape or len(compute) == 0:
        raise ValueError(f"compute and accuracy must be non-empty 1-D arrays of equal length, "
                         f"got shapes {compute.shape} and {accuracy.shape}")
    if not (np.all(np.isfinite(compute)) and np.all(compute > 0) and np.all(np.isfinite(accuracy))):
        raise ValueError("compute must be positive and finite, accuracy finite")
    return compute, accuracy


def frontier(compute, accuracy) -> np.ndarray:
    """Indices of the points that beat every cheaper point, ordered by compute.

    A point is on the frontier when its accuracy is strictly higher than that
    of every point with strictly lower compute (and, among points of equal
    compute, it is the most accurate).
    """
    compute, accuracy = _points(compute, accuracy)
    order = np.lexsort((-accuracy, compute))  # by compute, the best first among ties
    ranked = accuracy[order]
    best_before = np.concatenate([[-np.inf], np.maximum.accumulate(ranked)[:-1]])
    return order[ranked > best_before]


def compute_to_match(target: float, compute, accuracy) -> Match:
    """The compute at which the frontier of ``(compute, accuracy)`` reaches ``target``.

    Linear interpolation of log compute in accuracy between the two frontier
    points that bracket ``target``; an upper bound (``exact=False``) when the
    cheapest frontier point already reaches it.
    """
    compute, accuracy = _points(compute, accuracy)
    if not np.isfinite(target):
        raise ValueError(f"target must be finite, got {target!r}")
    front = frontier(compute, accuracy)
    c, a = compute[front], accuracy[front]
    if target <= a[0]:
        return Match(float(c[0]), exact=target == a[0])
    if target > a[-1]:
        raise ValueError(f"no point on the frontier reaches {target}: the best has {a[-1]}")
    j = int(np.searchsorted(a, target))  # a[j-1] < target <= a[j]
    t = (target - a[j - 1]) / (a[j] - a[j - 1])
    return Match(float(np.exp(np.log(c[j - 1]) + t * (np.log(c[j]) - np.log(c[j - 1])))), exact=True)
