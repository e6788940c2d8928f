"""The geometry every chapter shares: shifts, patches, tokens on a grid, offsets, convolution.

Layouts. An image is ``(C, H, W)`` and a batch ``(B, C, H, W)`` (PyTorch's
layout); a signal is ``(C, L)``. Tokens are rows, ``(..., N, d)``, with the
cell ``(r, c)`` of an ``H_p x W_p`` grid in row ``r W_p + c`` (raster order).
A patch is flattened channel by channel, and row by row within a channel
(index ``c P_h P_w + i P_w + j``): the order of ``Conv2d.weight.reshape(d, -1)``.

Shifts. ``T_delta X [r, c] = X[(r - delta_r) mod H, (c - delta_c) mod W]``:
the content moves by ``+delta``, as with ``np.roll`` and ``torch.roll``.

Convolutions are circular cross-correlations with a centred odd kernel, as
deep learning libraries compute them:
``Conv(X)[o, p] = b_o + sum_{c, Delta} W[o, c, a + Delta] X[c, p + Delta]``
with half-width ``a = k // 2`` and indices taken modulo the image size.

Functions that only move numbers (shifts, patches, token layouts) take NumPy
arrays or torch tensors and return the same kind; they are exact.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch
import torch.nn.functional as F

# ---------------------------------------------------------------------------
# Checks shared by the idea modules
# ---------------------------------------------------------------------------


def positive_int(name: str, value) -> int:
    """``value`` as a Python int, else ``ValueError`` naming ``name``."""
    if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def as_pair(value, name: str) -> tuple[int, int]:
    """``value`` as a pair of Python ints.

    One integer ``v`` means ``(0, v)`` for a shift (``name == "shift"``, a
    horizontal shift) and ``(v, v)`` for anything else (a square patch, grid
    or stride).
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (0, int(value)) if name == "shift" else (int(value), int(value))
    try:
        pair = tuple(value)
    except TypeError:
        pair = ()
    if len(pair) != 2 or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in pair):
        raise ValueError(f"the {name} must be an integer or a pair of integers, got {value!r}")
    return int(pair[0]), int(pair[1])


def dividing_pair(value, name: str, H: int, W: int) -> tuple[int, int]:
    """``value`` (a stride or a patch size) as a positive pair that divides ``(H, W)``."""
    h, w = as_pair(value, name)
    if h < 1 or w < 1:
        raise ValueError(f"the {name} must be positive, got {value!r}")
    if H % h or W % w:
        raise ValueError(f"the {name} {(h, w)} must divide the image size {(H, W)}")
    return h, w


def _grid_shape(shape) -> tuple[int, ...]:
    """A grid's shape as a tuple of one or two positive ints; one int ``g`` is ``(g, g)``."""
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape, shape)
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"a grid has one or two sides, got {shape}")
    return tuple(positive_int("a grid side", n) for n in shape)


# ---------------------------------------------------------------------------
# Shifts
# ---------------------------------------------------------------------------


def shift(x, delta):
    """The circular shift ``T_delta`` of the last two axes of ``x`` (NumPy or torch).

    ``x``: ``(..., H, W)``, shape kept. ``delta`` is ``(rows, columns)``, or
    one integer for a horizontal shift. ``shift(shift(x, a), b) == shift(x, a + b)``:
    circular shifts form a group.
    """
    dr, dc = as_pair(delta, "shift")
    if torch.is_tensor(x):
        return torch.roll(x, shifts=(dr, dc), dims=(-2, -1))
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"a shift moves the last two axes (..., H, W), got shape {x.shape}")
    return np.roll(x, (dr, dc), axis=(-2, -1))


# ---------------------------------------------------------------------------
# Patches
# ---------------------------------------------------------------------------


def _image_shape(x) -> tuple[int, int, int]:
    if len(x.shape) < 3:
        raise ValueError(f"an image must be (..., C, H, W), got shape {tuple(x.shape)}")
    return tuple(int(n) for n in x.shape[-3:])


def image_array(x) -> np.ndarray:
    """``x`` as a float64 NumPy image or batch, ``(..., C, H, W)``."""
    x = np.asarray(x, dtype=float)
    _image_shape(x)
    return x


def bias_vector(bias, size: int) -> np.ndarray:
    """``bias`` as a float64 vector of shape ``(size,)``."""
    bias = np.asarray(bias, dtype=float)
    if bias.shape != (size,):
        raise ValueError(f"the bias must have shape ({size},), got {bias.shape}")
    return bias


def _permute(x, order):
    return x.permute(order) if torch.is_tensor(x) else x.transpose(order)


def patchify(x, patch):
    """The patch matrix ``X_p``: ``(..., C, H, W) -> (..., N_p, C P_h P_w)``, raster order.

    ``patch`` is ``P`` (square patches) or ``(P_h, P_w)``, dividing ``(H, W)``.
    Row ``r W_p + c`` holds patch ``(r, c)`` flattened in the order
    ``(channel, row, column)``. NumPy in, NumPy out; torch in, torch out.
    """
    if not torch.is_tensor(x):
        x = np.asarray(x)
    C, H, W = _image_shape(x)
    Ph, Pw = dividing_pair(patch, "patch size", H, W)
    Hp, Wp = H // Ph, W // Pw
    lead = tuple(x.shape[:-3])
    n = len(lead)
    blocks = x.reshape(lead + (C, Hp, Ph, Wp, Pw))
    # (..., C, Hp, Ph, Wp, Pw) -> (..., Hp, Wp, C, Ph, Pw): patch position first, then its pixels
    blocks = _permute(blocks, tuple(range(n)) + (n + 1, n + 3, n, n + 2, n + 4))
    return blocks.reshape(lead + (Hp * Wp, C * Ph * Pw))


def unpatchify(rows, patch, shape):
    """The inverse of :func:`patchify`: ``(..., N_p, C P_h P_w) -> (..., C, H, W)``.

    ``shape`` is the image's ``(C, H, W)``; ``patch`` is ``P`` or ``(P_h, P_w)``.
    """
    if not torch.is_tensor(rows):
        rows = np.asarray(rows)
    try:
        C, H, W = (positive_int("an image side", n) for n in shape)
    except (TypeError, ValueError):
        raise ValueError(f"shape must be the image's (C, H, W), got {shape!r}") from None
    Ph, Pw = dividing_pair(patch, "patch size", H, W)
    Hp, Wp = H // Ph, W // Pw
    if len(rows.shape) < 2 or tuple(rows.shape[-2:]) != (Hp * Wp, C * Ph * Pw):
        raise ValueError(f"expected rows of shape (..., {Hp * Wp}, {C * Ph * Pw}) for a "
                         f"{C} x {H} x {W} image, got {tuple(rows.shape)}")
    lead = tuple(rows.shape[:-2])
    n = len(lead)
    blocks = rows.reshape(lead + (Hp, Wp, C, Ph, Pw))
    # (..., Hp, Wp, C, Ph, Pw) -> (..., C, Hp, Ph, Wp, Pw)
    blocks = _permute(blocks, tuple(range(n)) + (n + 2, n, n + 3, n + 1, n + 4))
    return blocks.reshape(lead + (C, H, W))


# ---------------------------------------------------------------------------
# Tokens and grids
# ---------------------------------------------------------------------------


def grid_to_tokens(grid_map, dims: int = 2):
    """``(..., d, H_p, W_p) -> (..., N_p, d)`` in raster order (NumPy or torch).

    ``dims`` is the number of grid axes: 2 for images, 1 for signals
    ``(..., d, L) -> (..., L, d)``.
    """
    if dims not in (1, 2):
        raise ValueError(f"dims must be 1 or 2 (a signal or an image), got {dims!r}")
    shape = tuple(grid_map.shape)
    if len(shape) < dims + 1:
        raise ValueError(f"a {dims}-D grid map must be (..., d{', H_p, W_p' if dims == 2 else ', L'}), "
                         f"got shape {shape}")
    lead, d, cells = shape[:-dims - 1], shape[-dims - 1], math.prod(shape[-dims:])
    flat = grid_map.reshape(lead + (d, cells))
    return flat.transpose(-1, -2) if torch.is_tensor(flat) else np.swapaxes(flat, -1, -2)


def tokens_to_grid(tokens, grid):
    """``(..., N_p, d) -> (..., d, *grid)`` for a raster-ordered grid (NumPy or torch).

    ``grid`` is ``(H_p, W_p)``, ``(L,)`` for a signal, or one integer ``g``
    for a square ``g x g`` grid.
    """
    grid = _grid_shape(grid)
    if len(tokens.shape) < 2:
        raise ValueError(f"tokens must be (..., N_p, d), got shape {tuple(tokens.shape)}")
    N, d = tokens.shape[-2:]
    if N != math.prod(grid):
        raise ValueError(f"{N} tokens do not fill a {'x'.join(map(str, grid))} grid "
                         f"({math.prod(grid)} cells)")
    lead = tuple(tokens.shape[:-2])
    if torch.is_tensor(tokens):
        return tokens.transpose(-1, -2).reshape(lead + (d,) + grid)
    return np.swapaxes(tokens, -1, -2).reshape(lead + (d,) + grid)


# ---------------------------------------------------------------------------
# Coordinates and offsets
# ---------------------------------------------------------------------------


def grid_coordinates(shape) -> np.ndarray:
    """Integer coordinates of the cells of a ``shape`` grid in raster order: ``(N, len(shape))``.

    ``shape`` is ``(H, W)``, ``(L,)``, or one integer for a square grid; row
    ``r W + c`` of the result is ``(r, c)``.
    """
    shape = _grid_shape(shape)
    axes = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    return np.stack([axis.ravel() for axis in axes], axis=1)


def pairwise_offsets(coordinates) -> np.ndarray:
    """``offsets[q, k] = coordinates[k] - coordinates[q]`` for every pair: ``(T, T, d)``.

    ``coordinates``: ``(T, d)``, one point per token.
    """
    coordinates = np.asarray(coordinates)
    if coordinates.ndim != 2:
        raise ValueError(f"coordinates must be (T, d), got shape {coordinates.shape}")
    return coordinates[None, :, :] - coordinates[:, None, :]


def relative_offsets(shape) -> np.ndarray:
    """Offset ``delta`` of key ``k`` from query ``q`` on the torus ``shape``: ``(N, N, d)``.

    Each coordinate is wrapped into ``[-n // 2, n - n // 2)``, so a circular
    grid has no border and every query sees the same set of offsets. As
    indices, the offsets read the same cells as ``delta mod n``.
    """
    shape = _grid_shape(shape)
    n = np.array(shape)
    return (pairwise_offsets(grid_coordinates(shape)) + n // 2) % n - n // 2


def kernel_offsets(k: int, dim: int) -> np.ndarray:
    """The ``k^dim`` offsets ``Delta = (u - a, v - a)`` of a centred kernel, ``(k^dim, dim)``.

    In the order of the flattened kernel, so offset ``j`` is tap ``W[..., u, v]``
    with ``j = u k + v``.
    """
    if not (isinstance(k, (int, np.integer)) and k >= 1 and k % 2 == 1):
        raise ValueError(f"k must be a positive odd integer (a centred kernel), got {k!r}")
    if dim not in (1, 2):
        raise ValueError(f"dim must be 1 or 2, got {dim!r}")
    return grid_coordinates((k,) * dim) - k // 2


# ---------------------------------------------------------------------------
# Circular convolution
# ---------------------------------------------------------------------------


def conv2d(x, weight, bias=None, stride=1, padding="circular"):
    """Cross-correlation with a centred odd kernel, then keep every ``stride``-th output (NumPy, exact).

    ``x``: ``(..., C, H, W)``; ``weight``: ``(O, C, k_h, k_w)``, both sizes odd;
    ``bias``: ``(O,)``. Returns ``(..., O, H / s_h, W / s_w)`` with

        Conv(X)[o, r, c] = b_o + sum_{c', i, j} W[o, c', i, j] X[c', r + i - a_h, c + j - a_w],
        Conv_s(X)[o, r, c] = Conv(X)[o, s r, s c],

    where ``a = floor(k / 2)`` and indices outside the image wrap around
    (``padding="circular"``) or read zero (``padding="zeros"``). This is what
    ``torch.nn.Conv2d`` computes with ``padding=k // 2`` and the same padding
    mode; :func:`circular_conv` is that library version.
    """
    x = image_array(x)
    weight = np.asarray(weight, dtype=float)
    if weight.ndim != 4:
        raise ValueError(f"the weight must be (O, C, k_h, k_w), got shape {weight.shape}")
    O, C, kh, kw = weight.shape
    if kh % 2 == 0 or kw % 2 == 0:
        raise ValueError(f"the kernel must have odd sizes (a centred kernel), got {(kh, kw)}")
    if x.shape[-3] != C:
        raise ValueError(f"the weight expects {C} input channels, the image has {x.shape[-3]}")
    H, W = x.shape[-2:]
    sh, sw = dividing_pair(stride, "stride", H, W)
    ah, aw = kh // 2, kw // 2
    if ah > H or aw > W:
        raise ValueError(f"a {kh}x{kw} kernel does not fit a {H}x{W} image")
    modes = {"circular": "wrap", "zeros": "constant"}
    if padding not in modes:
        raise ValueError(f"padding must be 'circular' or 'zeros', got {padding!r}")
    pad = [(0, 0)] * (x.ndim - 2) + [(ah, ah), (aw, aw)]
    padded = np.pad(x, pad, mode=modes[padding])
    windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(-2, -1))
    windows = windows[..., ::sh, ::sw, :, :]  # (..., C, H/s_h, W/s_w, k_h, k_w)
    out = np.einsum("...crsij,ocij->...ors", windows, weight)
    if bias is not None:
        out = out + bias_vector(bias, O)[:, None, None]
    return out


def circulant(kernel, n: int) -> np.ndarray:
    """The ``(..., n, n)`` matrix of the circular filter ``kernel`` (shape ``(..., k)``, ``k`` odd).

    ``x @ circulant(w, n)`` gives ``y_t = sum_j w_j x_{t + j - a}`` with
    ``a = k // 2``: the circular convolution of a one-channel signal of
    length ``n``, as a matrix. Row ``i`` is that convolution applied to the
    unit signal ``e_i``, so it is computed by :func:`conv2d` on the rows of
    the identity (each entry is one tap times 1, exactly).
    """
    kernel = np.asarray(kernel, dtype=float)
    n = positive_int("n", n)
    if kernel.ndim < 1:
        raise ValueError(f"the kernel must be (..., k), got shape {kernel.shape}")
    k = kernel.shape[-1]
    if k % 2 != 1 or k > n:
        raise ValueError(f"kernel length must be odd and at most n={n}, got {k}")
    filters = kernel.reshape(-1, 1, 1, k)                                   # (O, 1, 1, k)
    rows = conv2d(np.eye(n)[:, None, None, :], filters)[:, :, 0, :]         # (n, O, n)
    # Laid out contiguously (C order), so that sums over the matrix run in the usual order.
    return np.ascontiguousarray(np.moveaxis(rows, 1, 0)).reshape(kernel.shape[:-1] + (n, n))


def kernel_dim(W_conv) -> int:
    """Check a torch kernel, ``(C_out, C, k)`` or ``(C_out, C, k, k)`` with ``k`` odd; return 1 or 2."""
    if not isinstance(W_conv, torch.Tensor):
        raise ValueError(f"W_conv must be a torch.Tensor, got {type(W_conv).__name__}")
    if W_conv.ndim not in (3, 4):
        raise ValueError(f"W_conv must be (C_out, C, k) or (C_out, C, k, k), got {tuple(W_conv.shape)}")
    k = W_conv.shape[-1]
    if W_conv.ndim == 4 and W_conv.shape[-2] != k:
        raise ValueError(f"the kernel must be square, got {tuple(W_conv.shape[-2:])}")
    if k % 2 != 1:
        raise ValueError(f"the kernel size must be odd (a centred kernel), got k={k}")
    return W_conv.ndim - 2


def conv_dim(X, W_conv, bias=None) -> int:
    """Check a torch convolution's input and kernel; return its dimension, 1 or 2.

    ``X``: ``(B, C, L)`` or ``(B, C, H, W)``, floating point; ``W_conv``: see
    :func:`kernel_dim`, no larger than the input; ``bias``: ``(C_out,)`` or ``None``.
    """
    dim = kernel_dim(W_conv)
    k = W_conv.shape[-1]
    if not isinstance(X, torch.Tensor) or not X.is_floating_point():
        raise ValueError(f"X must be a floating-point torch.Tensor, got {type(X).__name__}")
    layout = "(B, C, L)" if dim == 1 else "(B, C, H, W)"
    if X.ndim != dim + 2:
        raise ValueError(f"a {dim}-D kernel needs X of shape {layout}, got {tuple(X.shape)}")
    if X.shape[1] != W_conv.shape[1]:
        raise ValueError(f"X has {X.shape[1]} channels but the kernel expects {W_conv.shape[1]}")
    if any(n < k for n in X.shape[2:]):
        raise ValueError(f"the kernel (k={k}) is larger than the input {tuple(X.shape[2:])}")
    if bias is not None and tuple(bias.shape) != (W_conv.shape[0],):
        raise ValueError(f"bias must be (C_out={W_conv.shape[0]},), got {tuple(bias.shape)}")
    return dim


def circular_conv(X: torch.Tensor, W_conv: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """PyTorch's ``conv1d``/``conv2d`` with circular padding of ``a = k // 2``: the library version.

    ``X``: ``(B, C, L)`` or ``(B, C, H, W)``; ``W_conv``: ``(C_out, C, k)`` or
    ``(C_out, C, k, k)``; ``bias``: ``(C_out,)``. Returns ``(B, C_out, ...)``
    in ``X``'s dtype; the same map as :func:`conv2d` at stride 1.
    """
    dim = conv_dim(X, W_conv, bias)
    a = W_conv.shape[-1] // 2
    padded = F.pad(X, (a, a) * dim, mode="circular")
    conv = F.conv1d if dim == 1 else F.conv2d
    return conv(padded, W_conv.to(X.dtype), None if bias is None else bias.to(X.dtype))


# ---------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------


def parameter_count(model: torch.nn.Module, trainable_only: bool = True) -> int:
    """The number of scalars in ``model``'s parameters (those that train, unless told otherwise)."""
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"expected a torch.nn.Module, got {type(model).__name__}")
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
