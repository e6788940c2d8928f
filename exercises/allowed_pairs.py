"""Exercise: how many pairs a local attention window opens (the book's ``vitbias.masks``).

Check your version: ``python -m exercises.grade FILE.py allowed_pairs``.
"""


def allowed_pairs(H_p, W_p, radius, n_prefix=1):
    """The number of (query, key) pairs that local attention of ``radius`` allows on an ``H_p x W_p`` grid.

    The mask is the one of exercise ``grid_local_mask``: patch ``(r, c)`` may
    attend to patch ``(r', c')`` iff ``max(|r - r'|, |c - c'|) <= radius``
    (each patch to itself included), and the ``n_prefix`` prefix tokens see
    and are seen by every token, themselves included. Return the count as an
    integer, without building the ``(N, N)`` mask: count along each axis and
    combine (the window is a product of two one-dimensional windows).
    """
    raise NotImplementedError
