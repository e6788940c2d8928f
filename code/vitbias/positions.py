"""Where a patch is: resizing a learned position table, and 2-D rotary positions.

A learned table has one row per token of the training resolution. At a new
resolution the patch rows are put back on their grid and resampled
bilinearly (Dosovitskiy et al. 2021, Sec. 3.2): each new row is a weighted
mean of four old ones. :func:`resize_position_table` does it by hand and
agrees with ``timm.layers.resample_abs_pos_embed(..., interpolation="bilinear")``.

2-D RoPE (Heo et al. 2024, the axial form) has no table: it rotates pairs of
query and key coordinates by angles proportional to the patch's row (the
first half of each head's dimensions) and column (the second half), so a
score depends on the two patches' offset only.
"""

from __future__ import annotations

import numpy as np
import torch

from .geometry import pairwise_offsets, positive_int

# ---------------------------------------------------------------------------
# Resizing a learned table.
# ---------------------------------------------------------------------------


def old_coordinates(new_size: int, old_size: int) -> np.ndarray:
    """Where each new index sits on the old grid, pixel centres aligned: ``(i + 1/2) old/new - 1/2``.

    PyTorch's ``align_corners=False``: the first and last new cells keep the
    old grid's outer edges, so the coordinates are spaced ``old/new`` apart
    and symmetric about the old grid's centre. Unclamped: near the border a
    coordinate can fall outside ``[0, old - 1]``. Returns an array of length
    ``new_size``.
    """
    new_size, old_size = positive_int("new_size", new_size), positive_int("old_size", old_size)
    return (np.arange(new_size) + 0.5) * old_size / new_size - 0.5


def bilinear_sources(new_size: int, old_size: int):
    """For each new index, the two old indices it reads and the weight of the second.

    New index ``i`` sits at old coordinate ``x`` (:func:`old_coordinates`),
    clamped to ``[0, old - 1]``; it reads ``floor(x)`` with weight ``1 - t``
    and the next index with weight ``t = x - floor(x)``. Returns
    ``(lower, upper, t)``, arrays of length ``new_size``.
    """
    x = np.clip(old_coordinates(new_size, old_size), 0.0, old_size - 1)
    lower = np.floor(x).astype(int)
    upper = np.minimum(lower + 1, old_size - 1)
    return lower, upper, x - lower


def interpolation_matrix(new_size: int, old_size: int) -> np.ndarray:
    """The (new, old) matrix of 1-D linear interpolation; its rows sum to 1."""
    lower, upper, t = bilinear_sources(new_size, old_size)
    A = np.zeros((new_size, old_size))
    rows = np.arange(new_size)
    np.add.at(A, (rows, lower), 1.0 - t)
    np.add.at(A, (rows, upper), t)
    return A


def four_weights(row: int, col: int, old_grid: int, new_grid: int):
    """The four old cells that new cell ``(row, col)`` averages, and their weights.

    Returns ``(rows, cols, weights)``: the two old rows, the two old columns and
    the 2 x 2 weights (rows by columns), the outer product of the two 1-D
    weight pairs, summing to 1.
    """
    for name, value, size in (("row", row, new_grid), ("col", col, new_grid)):
        if not (isinstance(value, (int, np.integer)) and 0 <= value < size):
            raise ValueError(f"{name} must be an integer in [0, {size}), got {value!r}")
    r0, r1, tr = (a[row] for a in bilinear_sources(new_grid, old_grid))
    c0, c1, tc = (a[col] for a in bilinear_sources(new_grid, old_grid))
    weights = np.outer([1 - tr, tr], [1 - tc, tc])
    return (int(r0), int(r1)), (int(c0), int(c1)), weights


def resize_position_table(table: torch.Tensor, old_grid: int, new_grid: int,
                          num_prefix_tokens: int = 1) -> torch.Tensor:
    """Bilinear resize of a (1, prefix + old^2, d) position table to (1, prefix + new^2, d).

    The prefix rows ([CLS], registers) are kept as they are; the patch rows,
    in raster order, are laid on their ``old x old`` grid and interpolated:
    ``new = A grid A^T`` channel by channel, ``A`` the :func:`interpolation_matrix`.
    """
    old_grid, new_grid = positive_int("old_grid", old_grid), positive_int("new_grid", new_grid)
    if not (isinstance(num_prefix_tokens, (int, np.integer)) and num_prefix_tokens >= 0):
        raise ValueError(f"num_prefix_tokens must be a non-negative integer, got {num_prefix_tokens!r}")
    expected = num_prefix_tokens + old_grid**2
    if table.ndim != 3 or table.shape[0] != 1 or table.shape[1] != expected:
        raise ValueError(f"expected a table of shape (1, {expected}, d) for {num_prefix_tokens} prefix "
                         f"rows and a {old_grid} x {old_grid} grid, got {tuple(table.shape)}")
    prefix, patches = table[:, :num_prefix_tokens], table[:, num_prefix_tokens:]
    grid = patches.reshape(old_grid, old_grid, -1)
    A = torch.as_tensor(interpolation_matrix(new_grid, old_grid), dtype=table.dtype, device=table.device)
    resized = torch.einsum("Rr,rcd,Cc->RCd", A, grid, A).reshape(1, new_grid**2, -1)
    return torch.cat([prefix, resized], dim=1)


# ---------------------------------------------------------------------------
# 2-D rotary positions.
# ---------------------------------------------------------------------------


def rope_frequencies(head_dim: int, base: float = 100.0) -> np.ndarray:
    """The ``head_dim / 4`` angular frequencies ``base^(-k / (head_dim/4))`` shared by rows and columns."""
    head_dim = positive_int("head_dim", head_dim)
    if head_dim % 4:
        raise ValueError(f"2-D RoPE needs head_dim divisible by 4 (two axes of pairs), got {head_dim}")
    if not base > 1:
        raise ValueError(f"base must exceed 1, got {base!r}")
    quarter = head_dim // 4
    return base ** (-np.arange(quarter) / quarter)


def rope_angles(rows, cols, head_dim: int, base: float = 100.0) -> np.ndarray:
    """(T, head_dim/2) rotation angles: row times the frequencies, then column times them."""
    rows, cols = np.asarray(rows, dtype=np.float64), np.asarray(cols, dtype=np.float64)
    if rows.ndim != 1 or rows.shape != cols.shape:
        raise ValueError(f"rows and cols must be 1-D of equal length, got {rows.shape} and {cols.shape}")
    freqs = rope_frequencies(head_dim, base)
    return np.concatenate([np.outer(rows, freqs), np.outer(cols, freqs)], axis=1)


def apply_rope_2d(x: torch.Tensor, rows, cols, base: float = 100.0) -> torch.Tensor:
    """Rotate queries or keys ``x`` (..., T, head_dim) by their patches' rows and columns.

    Coordinates ``(2k, 2k+1)`` form pair ``k``; pair ``k`` turns by angle
    ``rope_angles(...)[t, k]``. The first ``head_dim/4`` pairs carry the row,
    the rest the column.
    """
    if x.ndim < 2:
        raise ValueError(f"expected (..., T, head_dim), got shape {tuple(x.shape)}")
    T, head_dim = x.shape[-2:]
    angles = rope_angles(rows, cols, head_dim, base)
    if angles.shape[0] != T:
        raise ValueError(f"{angles.shape[0]} coordinates for {T} tokens")
    angles = torch.as_tensor(angles, dtype=x.dtype, device=x.device)
    cos, sin = angles.cos(), angles.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)
    return rotated.flatten(-2)


def rope_scores(q: torch.Tensor, k: torch.Tensor, rows, cols, base: float = 100.0) -> torch.Tensor:
    """Attention scores ``<R(p_i) q_i, R(p_j) k_j>`` for every pair: (..., T, T).

    Because rotations compose, this equals ``<q_i, R(p_j - p_i) k_j>``: it
    depends on the offset between the two patches, never on where they are.
    """
    return apply_rope_2d(q, rows, cols, base) @ apply_rope_2d(k, rows, cols, base).transpose(-2, -1)


def spread_by_offset(scores, rows, cols) -> float:
    """The largest range of ``scores[i, j]`` among pairs sharing one offset ``p_j - p_i``.

    Zero (up to rounding) exactly when the scores depend on the offset alone.
    ``scores``: (T, T); ``rows``, ``cols``: the T patches' coordinates.
    """
    scores = np.asarray(scores, dtype=np.float64)
    rows, cols = np.asarray(rows), np.asarray(cols)
    T = rows.shape[0]
    if scores.shape != (T, T) or cols.shape != (T,):
        raise ValueError(f"expected (T, T) scores for T = {T} coordinates, got {scores.shape}")
    offsets = pairwise_offsets(np.stack([rows, cols], axis=1)).reshape(-1, 2)   # (T^2, 2)
    _, group = np.unique(offsets.T, axis=1, return_inverse=True)
    highest = np.full(group.max() + 1, -np.inf)
    lowest = np.full(group.max() + 1, np.inf)
    np.maximum.at(highest, group, scores.ravel())
    np.minimum.at(lowest, group, scores.ravel())
    return float((highest - lowest).max())
