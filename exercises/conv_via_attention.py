"""Exercise: a convolution computed by attention heads (the book's ``vitbias.attention_conv``).

Check your version: ``python -m exercises.grade FILE.py conv_via_attention``.
"""


def conv_via_attention(X, W_conv, alpha, bias=None):
    """A circular convolution computed by ``k^d`` positional attention heads.

    ``X``: a float64 torch tensor ``(B, C, L)`` (signals) or ``(B, C, H, W)``
    (images); ``W_conv``: the kernel in PyTorch's layout, ``(C_out, C, k)`` or
    ``(C_out, C, k, k)`` with ``k`` odd and no larger than the input;
    ``bias``: ``(C_out,)`` or None; ``alpha > 0``: the sharpness. Returns a
    tensor ``(B, C_out, L)`` or ``(B, C_out, H, W)``.

    The convolution is the one deep-learning libraries compute, a
    cross-correlation with circular padding and half-width ``a = k // 2``::

        Conv(X)[o, p] = b_o + sum_{c, Delta} W_conv[o, c, a + Delta] X[c, p + Delta]

    (``Delta`` runs over the offsets ``-a .. a`` on each axis; positions wrap
    around). Compute it with attention instead: tokens are the positions
    (raster order), one head ``j`` per kernel offset ``Delta_j``. Head ``j``
    gives query ``q`` and key ``k`` the score ``-alpha |delta - Delta_j|^2``,
    where ``delta`` is the key's offset from the query on the torus, each
    coordinate wrapped into ``[-n // 2, n - n // 2)`` for an axis of ``n``
    cells (``vitbias.geometry.relative_offsets``); a softmax over the keys
    gives the head's weights. The head's output at ``q`` is its weighted sum
    of the keys' inputs times the tap matrix ``W_Delta[c, o] = W_conv[o, c, a + Delta]``;
    the output is the sum over the heads plus the bias (once). As ``alpha``
    grows, each head reads exactly the neighbour at its offset, and the
    result approaches the convolution.
    """
    raise NotImplementedError
