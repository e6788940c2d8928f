"""Exercise: local attention as a mask (the book's ``vitbias.masks``).

Check your version: ``python -m exercises.grade FILE.py grid_local_mask``.
"""


def grid_local_mask(H_p, W_p, radius, n_prefix=1):
    """The ``(N, N)`` boolean mask of local attention on an ``H_p x W_p`` patch grid.

    Tokens: the ``n_prefix`` prefix tokens ([CLS], registers) first, then the
    patches in raster order (patch ``(r, c)`` is token ``n_prefix + r W_p + c``),
    ``N = n_prefix + H_p W_p``. Entry ``[q, k]`` is True when query ``q`` may
    attend to key ``k``:

    - patch ``(r, c)`` may attend to patch ``(r', c')`` iff
      ``max(|r - r'|, |c - c'|) <= radius`` (a square window: the
      neighbourhood of a ``(2 radius + 1)``-wide convolution);
    - prefix tokens see every token and are seen by every token.

    Return a NumPy array of dtype ``bool`` (PyTorch reads a float mask as an
    additive bias, not as allowed/forbidden).
    """
    raise NotImplementedError
