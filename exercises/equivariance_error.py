"""Exercise: how far a map is from commuting with a shift (the book's ``vitbias.symmetry``).

Check your version: ``python -m exercises.grade FILE.py equivariance_error``.
"""


def equivariance_error(f, x, shift, stride=1):
    """The equivariance error of ``f`` at the circular shift ``shift``, relative to ``max|f(x)|``.

    ``x`` is an image ``(C, H, W)`` or a batch ``(B, C, H, W)`` (NumPy, float64);
    ``f`` maps it to a feature map with the same leading axes and the grid
    divided by the stride, ``(..., C', H / s, W / s)``. ``stride`` is an
    integer ``s`` dividing ``H`` and ``W``. ``shift`` is ``(rows, columns)``,
    or one integer ``delta`` meaning the horizontal shift ``(0, delta)``; each
    component is smaller than the image side in absolute value, and may be
    negative.

    The shift moves the content by ``+delta``, circularly, as ``np.roll`` does::

        T_delta x [..., r, c] = x[..., (r - delta_r) mod H, (c - delta_c) mod W]

    If ``s`` divides both components of ``delta``, return

        max|f(T_delta x) - T_{delta / s} f(x)| / max|f(x)|

    (maxima over every entry). Otherwise no output shift is singled out:
    return the smallest such error over every shift ``delta'`` of the output
    grid,

        min_{delta'} max|f(T_delta x) - T_{delta'} f(x)| / max|f(x)|,

    so that a non-zero value means that no output shift works. Returns a
    Python float.

    The book's version also accepts torch modules and tensors; here ``f`` is a
    function of NumPy arrays.
    """
    raise NotImplementedError
