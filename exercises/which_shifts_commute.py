"""Exercise: every shift that commutes with a map (the book's ``vitbias.symmetry``).

Check your version: ``python -m exercises.grade FILE.py which_shifts_commute``.
"""


def which_shifts_commute(f, x, stride=1, tol=1e-8):
    """Which circular shifts of ``x`` commute with ``f``, up to ``tol``.

    ``f``, ``x`` and ``stride`` as in :func:`equivariance_error` (an image
    ``(C, H, W)`` or a batch ``(B, C, H, W)``, an integer stride ``s``
    dividing ``H`` and ``W``). Returns a boolean array of shape ``(H, W)``
    whose entry ``[dr, dc]`` is True exactly when

        equivariance_error(f, x, (dr, dc), stride) <= tol

    for the shift ``(dr, dc)``, ``0 <= dr < H``, ``0 <= dc < W``. For a
    stride-``s`` convolution it is True where ``s`` divides both components;
    for a patch embedding, where the patch size does.
    """
    raise NotImplementedError
