"""Solution: attention rollout."""

import numpy as np


def residual_attention(A):
    """``A_hat = A_bar / 2 + I / 2``, rows renormalised:
    ``(..., heads, N, N) -> (..., N, N)``."""
    A_bar = np.mean(A, axis=-3)
    hat = 0.5 * A_bar + 0.5 * np.eye(A_bar.shape[-1])
    return hat / hat.sum(axis=-1, keepdims=True)


def attention_rollout(A_layers, n_prefix, H_p, W_p):
    R = None
    for A in A_layers:  # first layer first; each new layer multiplies from the left
        hat = residual_attention(np.asarray(A, dtype=float))
        R = hat if R is None else hat @ R
    read = R[..., 0, n_prefix:] if n_prefix else R.mean(axis=-2)
    return read.reshape(read.shape[:-1] + (H_p, W_p))
