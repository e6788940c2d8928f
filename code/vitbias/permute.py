"""Breaking the convolution's assumption on purpose: one fixed shuffle of the patch grid.

Cut every image into ``P x P`` patches and move them with one fixed
permutation, the same for training and test images. Each patch stays intact,
but pixels that were neighbours across a patch border no longer are, so a
convolution's locality becomes false across patch borders. A ViT whose
patches are these patches sees the same tokens, each at another place in its
sequence: with its position table permuted alike it computes the same
function, and trained on the shuffled images it follows the same trajectory
as on the original ones (up to float rounding; :mod:`vitbias.twins` runs it).

A *partial* permutation moves only a fraction of the patches: a dial on how
wrong the convolution's assumption is, the image-scale analogue of the toy's
drift ``beta``.
"""

from __future__ import annotations

import numpy as np
import torch

from .geometry import as_pair, patchify, positive_int, unpatchify


def patch_permutation(grid, fraction: float = 1.0, seed: int = 0) -> np.ndarray:
    """A permutation ``order`` (N,) of the ``H_p x W_p`` patch grid that moves ``round(fraction N)`` patches.

    Position ``i`` of a shuffled image holds patch ``order[i]`` of the
    original (raster order). The moved patches are drawn at random from
    ``seed`` and shifted cyclically among themselves, so each of them really
    moves; the others stay. ``fraction = 0`` is the identity.
    """
    Hp, Wp = as_pair(grid, "grid")
    positive_int("grid rows", Hp), positive_int("grid columns", Wp)
    fraction = float(fraction)
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must lie in [0, 1], got {fraction}")
    N = Hp * Wp
    moved = round(fraction * N)
    if moved == 1:
        raise ValueError(f"fraction {fraction} of {N} patches moves one patch, which cannot move alone")
    order = np.arange(N)
    chosen = np.random.default_rng(seed).choice(N, size=moved, replace=False)
    order[chosen] = np.roll(chosen, 1)
    return order


def _check_order(order, N: int) -> np.ndarray:
    order = np.asarray(order)
    if order.shape != (N,) or not np.array_equal(np.sort(order), np.arange(N)):
        raise ValueError(f"expected a permutation of the {N} patches, got an array of shape {order.shape}")
    return order


def permute_patches(images, order, patch):
    """Images with their patches moved: ``(..., C, H, W)`` -> the same shape.

    Patch ``i`` (raster order) of the result is patch ``order[i]`` of the
    input. NumPy in, NumPy out; torch in, torch out.
    """
    rows = patchify(images, patch)                       # (..., N, C P P)
    order = _check_order(order, rows.shape[-2])
    index = torch.as_tensor(order) if torch.is_tensor(rows) else order
    return unpatchify(rows[..., index, :], patch, tuple(images.shape[-3:]))


def permute_positions(pos_embed: torch.Tensor, order, n_prefix: int) -> torch.Tensor:
    """The position table a ViT needs on shuffled images: ``(1, n_prefix + N, d)``, same shape.

    Prefix rows ([CLS], registers) stay; patch row ``i`` becomes the old row
    ``order[i]``, so every patch keeps the position vector it had.
    """
    if pos_embed.ndim != 3 or pos_embed.shape[1] <= n_prefix or n_prefix < 0:
        raise ValueError(f"expected a table (1, n_prefix + N, d) with n_prefix = {n_prefix}, "
                         f"got {tuple(pos_embed.shape)}")
    order = _check_order(order, pos_embed.shape[1] - n_prefix)
    index = torch.cat([torch.arange(n_prefix), n_prefix + torch.as_tensor(order)])
    return pos_embed[:, index]
