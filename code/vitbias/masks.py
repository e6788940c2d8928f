"""Where attention may look: the convolution's neighbourhood as an attention mask.

A mask is a boolean ``(N, N)`` array over the tokens ``N = n_prefix + H_p W_p``
(prefix tokens first, then the patches in raster order), ``True`` where a
query (row) may attend to a key (column). Hard locality (local attention, the
windows of Swin and ViTDet) allows a patch to see only the patches of its
``(2 radius + 1)^2`` neighbourhood; the prefix tokens ([CLS], registers) see
and are seen by every token, so the class token can still gather the image.
"""

from __future__ import annotations

import numbers

import numpy as np

from vitbias import geometry


def _integer(name: str, value, minimum: int) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")
    return int(value)


def grid_local_mask(H_p: int, W_p: int, radius: int, n_prefix: int = 1) -> np.ndarray:
    """The ``(N, N)`` boolean mask of local attention on an ``H_p x W_p`` grid.

    Patch ``(r, c)`` may attend to patch ``(r', c')`` iff
    ``max(|r - r'|, |c - c'|) <= radius`` (Chebyshev distance: a square window,
    the neighbourhood of a ``(2 radius + 1)``-wide convolution); prefix rows and
    columns are all ``True``. ``N = n_prefix + H_p W_p``.
    """
    H_p, W_p = _integer("H_p", H_p, 1), _integer("W_p", W_p, 1)
    radius, n_prefix = _integer("radius", radius, 0), _integer("n_prefix", n_prefix, 0)
    rc = geometry.grid_coordinates((H_p, W_p))  # (H_p W_p, 2)
    chebyshev = np.abs(rc[:, None, :] - rc[None, :, :]).max(axis=-1)  # (M, M)
    N = n_prefix + H_p * W_p
    mask = np.ones((N, N), dtype=bool)
    mask[n_prefix:, n_prefix:] = chebyshev <= radius
    return mask


def allowed_pairs(H_p: int, W_p: int, radius: int, n_prefix: int = 1) -> int:
    """The number of ``True`` entries of :func:`grid_local_mask`, in closed form.

    Along one axis of length ``n`` the pairs within distance ``r`` number
    ``n + 2 sum_{d=1}^{min(r, n-1)} (n - d)``; the window is the product of the
    two axes; the prefix adds ``n_prefix (2N - n_prefix)``.
    """
    H_p, W_p = _integer("H_p", H_p, 1), _integer("W_p", W_p, 1)
    radius, n_prefix = _integer("radius", radius, 0), _integer("n_prefix", n_prefix, 0)

    def along(n: int) -> int:
        d = min(radius, n - 1)
        return n + 2 * (d * n - d * (d + 1) // 2)

    N = n_prefix + H_p * W_p
    return along(H_p) * along(W_p) + n_prefix * (2 * N - n_prefix)


def local_attention_macs(H_p: int, W_p: int, radius: int, d: int, n_prefix: int = 1) -> int:
    """Multiply-adds of scores and weighted values under :func:`grid_local_mask`: ``2 pairs d``.

    For a fixed radius the pairs grow linearly with the patches (about
    ``(2 radius + 1)^2`` per patch), against ``N^2`` for dense attention
    (:func:`vitbias.cost.global_attention_macs`). This counts what a kernel
    that skips masked pairs computes; a dense kernel with a mask computes
    every pair and discards some.
    """
    d = _integer("d", d, 1)
    return 2 * allowed_pairs(H_p, W_p, radius, n_prefix) * d
