"""Solution: the mean attention distance of each head."""

import numpy as np


def patch_distances(H_p, W_p, P):
    """``D[q, k]``: pixels between the centres of patches ``q`` and ``k``
    (raster order), ``(N_p, N_p)``."""
    r, c = np.divmod(np.arange(H_p * W_p), W_p)
    return P * np.hypot(r[:, None] - r[None], c[:, None] - c[None])


def mean_attention_distance(A, H_p, W_p, P, n_prefix):
    A = np.asarray(A, dtype=float)
    patches = A[..., n_prefix:, n_prefix:]  # (..., heads, N_p, N_p)
    # (..., heads, N_p): each query's distance, the prefix left out and renormalised
    d = (patches * patch_distances(H_p, W_p, P)).sum(-1) / patches.sum(-1)
    per_head = d.reshape((-1,) + d.shape[-2:])  # (images, heads, N_p)
    return per_head.mean(axis=(0, 2))
