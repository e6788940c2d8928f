"""A whole ViT on a 4 x 4 image, small enough to check by hand (NumPy).

One grey channel, patch side ``P = 2``: four patches of four pixels, each
listed as (top-left, top-right, bottom-left, bottom-right). Tokens have
``d = 3`` numbers, made by the fixed embedding ``E`` (3 x 4) whose rows read

- the patch's mean brightness, ``(1, 1, 1, 1) / 4``;
- its left column minus its right column, ``(1, -1, 1, -1) / 2`` (a vertical edge);
- its top row minus its bottom row, ``(1, 1, -1, -1) / 2`` (a horizontal edge).

The fourth direction of a patch, the checkerboard ``(1, -1, -1, 1)``, is
orthogonal to all three rows: no token can see it.

The model: a [CLS] token ``(1, 0, 0)`` in front, positions added, one
attention head with ``W_Q = W_K = W_V = I`` in which [CLS] attends to all
five tokens, the residual ``z = x_cls + sum_j a_j x_j``, and a head whose two
logits are ``z``'s vertical-edge and horizontal-edge coordinates. No
LayerNorm and no MLP, so every number can be followed with a pencil.
"""

from __future__ import annotations

import numpy as np

from .geometry import patchify, unpatchify

SIDE, PATCH, WIDTH = 4, 2, 3
CLASSES = ("vertical", "horizontal")
EMBEDDING = np.array([[0.25, 0.25, 0.25, 0.25],
                      [0.5, -0.5, 0.5, -0.5],
                      [0.5, 0.5, -0.5, -0.5]])
CLS = np.array([1.0, 0.0, 0.0])
# Row 0 for [CLS], then patch k (raster order) adds k/4 to the brightness coordinate.
POSITIONS = np.array([[0.0, 0.0, 0.0]] + [[k / 4, 0.0, 0.0] for k in range(4)])
HEAD = np.array([[0.0, 1.0, 0.0],
                 [0.0, 0.0, 1.0]])


def _check_image(image) -> np.ndarray:
    image = np.asarray(image, dtype=np.float64)
    if image.shape != (SIDE, SIDE):
        raise ValueError(f"expected a {SIDE} x {SIDE} image, got shape {image.shape}")
    return image


def patch_rows(image) -> np.ndarray:
    """(4, 4) image -> (4, 4): one row per patch in raster order, pixels row by row."""
    return patchify(_check_image(image)[None], PATCH)


def from_patch_rows(rows) -> np.ndarray:
    """The inverse of :func:`patch_rows`."""
    rows = np.asarray(rows, dtype=np.float64)
    if rows.shape != (4, PATCH * PATCH):
        raise ValueError(f"expected (4, 4) patch rows, got shape {rows.shape}")
    return unpatchify(rows, PATCH, (1, SIDE, SIDE))[0]


def vertical_bar(column: int = 2) -> np.ndarray:
    """A bright column on a black image."""
    if column not in range(SIDE):
        raise ValueError(f"column must be in 0..{SIDE - 1}, got {column!r}")
    image = np.zeros((SIDE, SIDE))
    image[:, column] = 1.0
    return image


def checkerboard() -> np.ndarray:
    """Pixels alternating 1 and 0, starting with 1 at the top left."""
    r, c = np.indices((SIDE, SIDE))
    return ((r + c) % 2 == 0).astype(float)


def swap_columns_of_patches(image) -> np.ndarray:
    """The jigsaw that exchanges the left and right columns of patches."""
    rows = patch_rows(image)
    return from_patch_rows(rows[[1, 0, 3, 2]])


def lost_per_patch(image) -> np.ndarray:
    """For each patch, the length of the part the embedding cannot see, ``||p - E^+ E p||``."""
    rows = patch_rows(image)
    kept = rows @ EMBEDDING.T @ np.linalg.pinv(EMBEDDING).T
    return np.linalg.norm(rows - kept, axis=1)


def forward(image, positions: bool = True) -> dict[str, np.ndarray]:
    """Every intermediate of the tiny ViT, by name.

    ``patches`` (4, 4), ``tokens`` (4, 3), ``inputs`` (5, 3) = [CLS] and the
    tokens plus positions, ``scores`` (5,) = ``<x_cls, x_j> / sqrt(3)``,
    ``weights`` (5,) their softmax, ``z`` (3,), ``logits`` (2,), ``probs`` (2,).
    """
    patches = patch_rows(image)
    tokens = patches @ EMBEDDING.T
    inputs = np.vstack([CLS, tokens])
    if positions:
        inputs = inputs + POSITIONS
    scores = inputs @ inputs[0] / np.sqrt(WIDTH)
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    z = inputs[0] + weights @ inputs
    logits = HEAD @ z
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    return dict(patches=patches, tokens=tokens, inputs=inputs, scores=scores, weights=weights,
                z=z, logits=logits, probs=probs)
