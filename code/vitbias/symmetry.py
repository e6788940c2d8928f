"""Which shifts a convolution and a ViT respect.

Circular shifts, convolutions with a stride, the patch embedding and the
token permutation that a whole-patch shift induces, and the equivariance
error that measures how far a map is from commuting with a shift.

Layout. The mathematics writes an image channels last, ``X`` in
``R^{H x W x C}``. The code uses PyTorch's layout: one image is ``(C, H, W)``,
a batch is ``(B, C, H, W)``, and shifts, strides and patches act on the last
two axes (rows ``r``, columns ``c``). Token matrices are ``(..., N_p, d)``
with patch ``(r, c)`` of the ``H_p x W_p`` patch grid in row ``r W_p + c``
(raster order).

Shifts. ``T_delta X [r, c] = X[(r - delta_r) mod H, (c - delta_c) mod W]``:
the content moves by ``+delta``, as with ``np.roll`` and ``torch.roll``. A
shift is a pair ``(delta_r, delta_c)`` or a single integer, which means a
horizontal shift ``(0, delta)``.

The equivariance error of a map ``f`` with stride ``s`` at a shift ``delta``:

    eps = max|f(T_delta x) - T_{delta/s} f(x)| / max|f(x)|          if s divides delta,
    eps = min_{delta'} max|f(T_delta x) - T_{delta'} f(x)| / max|f(x)|   otherwise,

where ``delta'`` runs over every shift of the output grid, so a non-zero
value in the second case means that no output shift matches.
"""

from __future__ import annotations

import contextlib
import copy
import numbers
from math import comb

import numpy as np
import torch
from torch import nn

from .geometry import (
    as_pair,
    bias_vector,
    conv2d,
    dividing_pair,
    grid_coordinates,
    grid_to_tokens,
    image_array,
    pairwise_offsets,
    patchify,
    relative_offsets,
    shift,
    tokens_to_grid,
)
from .vit import Block, ViT, ViTConfig

_shift = shift  # for functions whose argument is called ``shift``


# ---------------------------------------------------------------------------
# Convolution, subsampling and blur (NumPy, exact)
# ---------------------------------------------------------------------------


def init_conv(rng, out_channels, in_channels, kernel):
    """Random ``(weight, bias)`` for :func:`conv2d`, drawn as ``torch.nn.Conv2d`` draws them.

    Both uniform on ``[-1/sqrt(fan_in), 1/sqrt(fan_in)]`` with
    ``fan_in = in_channels * kernel^2``; ``weight``: ``(O, C, k, k)``, ``bias``: ``(O,)``.
    """
    if min(out_channels, in_channels, kernel) < 1:
        raise ValueError(f"channels and kernel must be positive, got {(out_channels, in_channels, kernel)}")
    bound = 1.0 / np.sqrt(in_channels * kernel * kernel)
    weight = rng.uniform(-bound, bound, (out_channels, in_channels, kernel, kernel))
    return weight, rng.uniform(-bound, bound, out_channels)


def subsample(x, stride):
    """Keep every ``stride``-th row and column: ``(..., H, W) -> (..., H / s, W / s)``."""
    x = np.asarray(x)
    sh, sw = dividing_pair(stride, "stride", *x.shape[-2:])
    return x[..., ::sh, ::sw]


def binomial_blur(x, taps=3):
    """Circular low-pass filter of every channel with a binomial kernel.

    ``taps`` odd; the kernel is the outer product of row ``taps - 1`` of
    Pascal's triangle with itself, normalised to sum one: ``(1, 2, 1) / 4``
    in each direction for 3 taps, ``(1, 4, 6, 4, 1) / 16`` for 5, and no
    blur at all for 1. Blurring before subsampling
    is the anti-aliasing of Zhang (2019). ``x``: ``(..., C, H, W)``, shape kept.
    """
    if not (isinstance(taps, numbers.Integral) and taps >= 1 and taps % 2 == 1):
        raise ValueError(f"taps must be a positive odd integer, got {taps!r}")
    x = image_array(x)
    row = np.array([comb(taps - 1, i) for i in range(taps)], dtype=float)
    kernel = np.outer(row, row) / row.sum() ** 2
    C = x.shape[-3]
    weight = np.eye(C)[:, :, None, None] * kernel  # one filter per channel
    return conv2d(x, weight)


# ---------------------------------------------------------------------------
# Patch embedding and tokens
# ---------------------------------------------------------------------------


def patch_tokens(x, weight, bias=None):
    """The patch tokens ``PE(X) = X_p W_E + 1 b_E^T``: ``(..., N_p, d)``.

    ``weight``: ``(d, C, P_h, P_w)`` in ``Conv2d`` layout (square patches in
    a ViT), so ``W_E`` is ``weight.reshape(d, -1).T``; ``bias``: ``(d,)``.
    """
    weight = np.asarray(weight, dtype=float)
    if weight.ndim != 4:
        raise ValueError(f"the patch weight must be (d, C, P_h, P_w), got shape {weight.shape}")
    d, C, Ph, Pw = weight.shape
    x = image_array(x)
    if x.shape[-3] != C:
        raise ValueError(f"the weight expects {C} input channels, the image has {x.shape[-3]}")
    tokens = patchify(x, (Ph, Pw)) @ weight.reshape(d, -1).T
    if bias is not None:
        tokens = tokens + bias_vector(bias, d)
    return tokens


def patch_embed(x, weight, bias=None):
    """The patch embedding as a feature map ``(..., d, H / P_h, W / P_w)``.

    A convolution whose kernel size and stride both equal the patch size;
    the same numbers as :func:`patch_tokens`, laid out like the output of
    ``Conv2d(C, d, kernel_size=P, stride=P)``.
    """
    x = image_array(x)
    Ph, Pw = np.shape(weight)[-2:]
    tokens = patch_tokens(x, weight, bias)
    return tokens_to_grid(tokens, (x.shape[-2] // Ph, x.shape[-1] // Pw))


def token_permutation(grid, delta, patch):
    """The permutation that a whole-patch shift ``delta`` (pixels) induces on the tokens.

    Returns ``perm`` of shape ``(N_p,)`` with ``PE(T_delta X) = PE(X)[perm]``:
    slot ``(r, c)`` receives the token of patch
    ``((r - delta_r / P) mod H_p, (c - delta_c / P) mod W_p)``. Equivalently
    the permutation matrix ``Pi_delta`` (:func:`permutation_matrix`) sends grid
    cell ``(r, c)`` to ``((r + delta_r / P) mod H_p, (c + delta_c / P) mod W_p)``.
    """
    Hp, Wp = as_pair(grid, "grid")
    if Hp < 1 or Wp < 1:
        raise ValueError(f"the grid must have positive sides, got {(Hp, Wp)}")
    dr, dc = as_pair(delta, "shift")
    if not (isinstance(patch, numbers.Integral) and patch >= 1):
        raise ValueError(f"the patch size must be a positive integer, got {patch!r}")
    if dr % patch or dc % patch:
        raise ValueError(f"a shift of {(dr, dc)} pixels is not a whole number of {patch}-pixel patches")
    # Shifting the grid of token indices by whole patches: cell (r, c) receives the index
    # of cell ((r - dr / P) mod H_p, (c - dc / P) mod W_p).
    return shift(np.arange(Hp * Wp).reshape(Hp, Wp), (dr // patch, dc // patch)).reshape(-1)


def permutation_matrix(perm):
    """The ``(N, N)`` matrix ``Pi`` with ``Pi @ X == X[perm]``."""
    perm = np.asarray(perm)
    N = perm.size
    if perm.ndim != 1 or not np.array_equal(np.sort(perm), np.arange(N)):
        raise ValueError(f"perm must be a permutation of 0..N-1, got {perm.tolist()}")
    Pi = np.zeros((N, N))
    Pi[np.arange(N), perm] = 1.0
    return Pi


def relative_position_bias(grid, table):
    """An attention bias that depends only on the circular offset between patches.

    ``table``: ``(H_p, W_p)``. Returns ``B`` of shape ``(N_p, N_p)`` with
    ``B[n, m] = table[(r_m - r_n) mod H_p, (c_m - c_n) mod W_p]`` for tokens
    ``n = (r_n, c_n)`` and ``m = (r_m, c_m)``. Every whole-patch shift
    permutation ``Pi`` satisfies ``Pi B Pi^T = B``.
    """
    Hp, Wp = as_pair(grid, "grid")
    table = np.asarray(table, dtype=float)
    if table.shape != (Hp, Wp):
        raise ValueError(f"the table must have the grid's shape {(Hp, Wp)}, got {table.shape}")
    offsets = relative_offsets((Hp, Wp))  # (N_p, N_p, 2), negative offsets index from the end
    return table[offsets[..., 0], offsets[..., 1]]


def plain_position_bias(grid, table):
    """An attention bias on plain offsets between patches, with no wrap-around (as Swin's).

    ``table``: ``(2 H_p - 1, 2 W_p - 1)``, one entry per offset. Returns ``B`` of
    shape ``(N_p, N_p)`` with ``B[n, m] = table[r_m - r_n + H_p - 1, c_m - c_n + W_p - 1]``.
    A whole-patch circular shift keeps ``B[n, m]`` for the pairs of patches it
    does not carry round the border (:func:`wrapped_tokens`), not for the others.
    """
    Hp, Wp = as_pair(grid, "grid")
    table = np.asarray(table, dtype=float)
    if table.shape != (2 * Hp - 1, 2 * Wp - 1):
        raise ValueError(f"the table must have one entry per plain offset, shape {(2 * Hp - 1, 2 * Wp - 1)}, "
                         f"got {table.shape}")
    offsets = pairwise_offsets(grid_coordinates((Hp, Wp)))  # (N_p, N_p, 2), from -(side - 1) to side - 1
    return table[offsets[..., 0] + Hp - 1, offsets[..., 1] + Wp - 1]


def wrapped_tokens(grid, delta, patch):
    """Which slots hold a token that the whole-patch shift ``delta`` carried round the border.

    Returns a boolean array ``(N_p,)``: slot ``n`` is ``True`` when its token's
    patch, moved by ``delta / P`` without wrapping, would leave the grid.
    """
    Hp, Wp = as_pair(grid, "grid")
    perm = token_permutation((Hp, Wp), delta, patch)
    cells = grid_coordinates((Hp, Wp))
    step = np.array(as_pair(delta, "shift")) // patch
    return np.any(cells != cells[perm] + step, axis=1)


def conjugate(B, perm):
    """``Pi B Pi^T`` for the permutation ``perm`` (``Pi @ X == X[perm]``): ``B[perm][:, perm]``."""
    B = np.asarray(B)
    perm = np.asarray(perm)
    if B.ndim != 2 or B.shape != (perm.size, perm.size):
        raise ValueError(f"B must be ({perm.size}, {perm.size}) for this permutation, got {B.shape}")
    return B[np.ix_(perm, perm)]


# ---------------------------------------------------------------------------
# The book's ViT as a map from images to a grid of tokens
# ---------------------------------------------------------------------------


class PatchEncoder(nn.Module):
    """A patch embedding, optional absolute positions and blocks of the book's ViT.

    ``embed`` maps ``(B, C, H, W)`` to ``(B, d, H_p, W_p)`` (a ``Conv2d`` with
    kernel = stride = ``P``); its output is flattened to tokens ``(B, N_p, d)``
    in raster order, ``positions`` (``(N_p, d)``, or ``None``) are added, and
    ``blocks`` (:class:`vitbias.vit.Block`, pre-norm) run on the tokens, with
    ``attn_bias`` (``(N_p, N_p)``, or ``None``) added to every head's attention
    scores (:func:`vitbias.vit.attention_bias`). The output tokens are laid
    back on the grid, ``(B, d, H_p, W_p)``, so that shifts act on them as on
    a feature map. This is :class:`vitbias.vit.ViT` without [CLS], final norm
    and head, on images of any size the patch divides.
    """

    def __init__(self, embed: nn.Module, blocks, positions=None, attn_bias=None):
        super().__init__()
        self.embed = embed
        self.blocks = blocks if isinstance(blocks, nn.ModuleList) else nn.ModuleList(blocks)
        if not all(isinstance(block, Block) for block in self.blocks):
            raise ValueError("blocks must be vitbias.vit.Block modules")
        self.positions = None if positions is None else nn.Parameter(torch.as_tensor(positions))
        self.register_buffer("attn_bias", None if attn_bias is None else torch.as_tensor(attn_bias))

    @classmethod
    def from_config(cls, config: ViTConfig, positions=None, attn_bias=None) -> PatchEncoder:
        """The patch embedding and blocks of ``ViT(config)``, built and initialised as the ViT builds them."""
        if not isinstance(config, ViTConfig):
            raise ValueError(f"expected a ViTConfig, got {type(config).__name__}")
        model = ViT(config.replace(class_token=False, reg_tokens=0, pos_embed=False, pool="mean",
                                   num_classes=0))
        return cls(model.patch_embed.proj, model.blocks, positions, attn_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        grid = self.embed(x)  # (B, d, H_p, W_p)
        tokens = grid_to_tokens(grid)  # (B, N_p, d)
        if self.positions is not None:
            tokens = tokens + self.positions
        bias = None if self.attn_bias is None else self.attn_bias.to(tokens.dtype)
        for block in self.blocks:
            tokens, _ = block(tokens, bias)
        return tokens_to_grid(tokens, grid.shape[-2:])


@contextlib.contextmanager
def without_attention_fastpath():
    """Run ``nn.TransformerEncoder`` on its reference path inside this block.

    In evaluation mode without gradients, PyTorch's fused encoder path reads a
    float attention mask as a boolean one and returns NaN
    (pytorch/pytorch#118628); an additive bias needs the reference path.
    """
    enabled = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        torch.backends.mha.set_fastpath_enabled(enabled)


# ---------------------------------------------------------------------------
# Equivariance error
# ---------------------------------------------------------------------------


def equivariance_error(f, x, shift, stride=1):
    """How far ``f`` is from commuting with the shift ``T_delta``, relative to ``max|f(x)|``.

    ``f`` maps an image ``(C, H, W)`` or a batch ``(B, C, H, W)`` to a feature
    map with the same leading axes and the grid divided by the stride,
    ``(..., C', H / s_h, W / s_w)``. When the stride divides ``delta``, the
    error is ``max|f(T_delta x) - T_{delta/s} f(x)| / max|f(x)|``; otherwise
    it is the smallest such error over every shift of the output grid, so a
    non-zero value means that no output shift works.

    ``f`` is a NumPy function or any callable (called on ``x`` as given, a
    NumPy array or a torch tensor, under ``torch.no_grad``), or a
    ``torch.nn.Module``, which is evaluated on a float64 copy in evaluation
    mode, so that float32 rounding does not blur an exact statement.
    ``shift`` is ``(rows, columns)`` or one integer (a horizontal shift),
    with each component smaller than the image side in absolute value.
    """
    run, x = _evaluator(f, x)
    H, W = x.shape[-2:]
    delta = _check_shift(shift, H, W)
    stride = dividing_pair(stride, "stride", H, W)
    y = _check_output(run(x), x, stride)
    return _error(run, x, y, delta, stride)


def which_shifts_commute(f, x, stride=1, tol=1e-8):
    """Which circular shifts of ``x`` commute with ``f``, up to ``tol``.

    Returns a boolean array of shape ``(H, W)``: entry ``[dr, dc]`` is True
    when ``equivariance_error(f, x, (dr, dc), stride) <= tol``. For a
    stride-``s`` convolution it is True exactly where ``s`` divides both
    components; for a patch embedding, where the patch size does. ``f`` is
    evaluated once per shift (``H W`` calls).
    """
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be finite and >= 0, got {tol!r}")
    run, x = _evaluator(f, x)
    H, W = x.shape[-2:]
    stride = dividing_pair(stride, "stride", H, W)
    y = _check_output(run(x), x, stride)
    errors = np.array([[_error(run, x, y, (dr, dc), stride) for dc in range(W)] for dr in range(H)])
    return errors <= tol


def equivariance_error_map(f, x, shift, stride=1):
    """``|f(T_delta x) - T_{delta/s} f(x)| / max|f(x)|`` per output pixel, shape ``(H', W')``.

    The maximum is taken over the leading axes and the channels, so the map
    says *where* a shift that the stride divides fails to commute (for
    example, along the border of a zero-padded convolution).
    """
    run, x = _evaluator(f, x)
    H, W = x.shape[-2:]
    dr, dc = _check_shift(shift, H, W)
    sh, sw = dividing_pair(stride, "stride", H, W)
    if dr % sh or dc % sw:
        raise ValueError(f"the stride {(sh, sw)} must divide the shift {(dr, dc)} for a map")
    y = _check_output(run(x), x, (sh, sw))
    moved = _check_output(run(_shift(x, (dr, dc))), x, (sh, sw))
    diff = np.abs(moved - _shift(y, (dr // sh, dc // sw)))
    return diff.reshape(-1, *diff.shape[-2:]).max(axis=0) / np.abs(y).max()


def _error(run, x, y, delta, stride):
    """The equivariance error at ``delta``, given ``y = f(x)`` (float64 NumPy)."""
    (dr, dc), (sh, sw) = delta, stride
    moved = _check_output(run(shift(x, delta)), x, stride)
    scale = np.abs(y).max()
    if dr % sh == 0 and dc % sw == 0:
        return float(np.abs(moved - shift(y, (dr // sh, dc // sw))).max() / scale)
    # Every output shift at once: candidates[a, b] = T_(a, b) y, shape (H', W', ..., H', W').
    Hy, Wy = y.shape[-2:]
    rows = relative_offsets((Hy,))[..., 0]  # rows[a, r] = r - a, read mod H' as an index
    cols = relative_offsets((Wy,))[..., 0]
    candidates = y[..., rows[:, None, :, None], cols[None, :, None, :]]  # (..., H', W', H', W')
    gaps = np.abs(candidates - moved[..., None, None, :, :])
    gaps = np.moveaxis(gaps, (-4, -3), (0, 1)).reshape(Hy, Wy, -1).max(axis=-1)
    return float(gaps.min() / scale)


def _evaluator(f, x):
    """``(run, x)``: ``run`` maps an input like ``x`` to ``f``'s output as float64 NumPy."""
    if len(np.shape(x)) not in (3, 4):
        raise ValueError(f"x must be an image (C, H, W) or a batch (B, C, H, W), got shape {tuple(np.shape(x))}")
    if isinstance(f, nn.Module):
        model = copy.deepcopy(f).to(torch.float64).eval()
        device = next((p.device for p in model.parameters()), torch.device("cpu"))
        x = torch.as_tensor(image_array(x) if not torch.is_tensor(x) else x,
                            dtype=torch.float64, device=device)
        call = model
    elif callable(f):
        x = x if torch.is_tensor(x) else image_array(x)
        call = f
    else:
        raise ValueError(f"f must be a function or a torch.nn.Module, got {type(f).__name__}")

    def run(inputs):
        with torch.no_grad():
            out = call(inputs)
        if torch.is_tensor(out):
            out = out.detach().to("cpu", torch.float64).numpy()
        return np.asarray(out, dtype=float)

    return run, x


def _check_output(y, x, stride):
    H, W = x.shape[-2:]
    sh, sw = stride
    if y.ndim != x.ndim or (x.ndim == 4 and y.shape[0] != x.shape[0]):
        raise ValueError(
            f"f must keep the batch: input {tuple(x.shape)} gave output {y.shape}; "
            f"expected ({'B, ' if x.ndim == 4 else ''}C', {H // sh}, {W // sw})")
    if y.shape[-2:] != (H // sh, W // sw):
        raise ValueError(
            f"f's output grid {y.shape[-2:]} is not the {H}x{W} input grid divided by "
            f"the stride {(sh, sw)}, {(H // sh, W // sw)}")
    if not np.all(np.isfinite(y)):
        raise ValueError("f returned non-finite values")
    if np.abs(y).max() == 0:
        raise ValueError("f(x) is zero everywhere: the relative error is undefined")
    return y


def _check_shift(delta, H, W):
    dr, dc = as_pair(delta, "shift")
    if not (-H < dr < H and -W < dc < W):
        raise ValueError(f"the shift {(dr, dc)} does not fit a {H}x{W} image (each |component| < side)")
    return dr, dc


# ---------------------------------------------------------------------------
# The layers the book measures
# ---------------------------------------------------------------------------


def measurement_layers(rng, image, channels=8, kernel=3, patch=8, dim=16):
    """Four layers with random weights, whose shift errors the book measures.

    Returns ``{label: (f, stride)}`` with NumPy maps of ``(C, H, W)`` images:

    - a ``kernel x kernel`` circular convolution to ``channels`` channels, stride 1;
    - the same convolution (same weights) with stride 2;
    - a patch embedding with patch side ``patch`` and ``dim`` channels;
    - that patch embedding plus an absolute position table, one vector per
      patch, with standard normal entries scaled to the spread of the patch
      tokens of ``image`` (a stand-in for a learned table).

    Weights are drawn by :func:`init_conv` from ``rng``.
    """
    image = image_array(image)
    C, H, W = image.shape[-3:]
    w, b = init_conv(rng, channels, C, kernel)
    w_patch, b_patch = init_conv(rng, dim, C, patch)
    tokens = patch_tokens(image, w_patch, b_patch)
    table = tokens_to_grid(rng.standard_normal(tokens.shape[-2:]) * tokens.std(), (H // patch, W // patch))
    return {
        "convolution, stride 1": (lambda x: conv2d(x, w, b), 1),
        "convolution, stride 2": (lambda x: conv2d(x, w, b, stride=2), 2),
        f"patch embedding, P = {patch}": (lambda x: patch_embed(x, w_patch, b_patch), patch),
        "patch embedding + positions": (lambda x: patch_embed(x, w_patch, b_patch) + table, patch),
    }


# ---------------------------------------------------------------------------
# Strides of a real network
# ---------------------------------------------------------------------------


def feature_strides(features, image_size=64, channels=3):
    """The total stride of each feature map that ``features`` returns.

    ``features`` maps a batch ``(1, C, S, S)`` to a tensor or a list of
    tensors ``(1, C_i, S / s_i, S / s_i)`` (a timm model created with
    ``features_only=True``, or ``forward_features``). Returns ``[s_i, ...]``,
    measured by running a zero image of side ``image_size`` through it.
    """
    if not (isinstance(image_size, numbers.Integral) and image_size >= 1):
        raise ValueError(f"image_size must be a positive integer, got {image_size!r}")
    with torch.no_grad():
        outputs = features(torch.zeros(1, channels, image_size, image_size))
    if torch.is_tensor(outputs):
        outputs = [outputs]
    strides = []
    for out in outputs:
        h, w = out.shape[-2:]
        if image_size % h or image_size % w or image_size // h != image_size // w:
            raise ValueError(f"a {h}x{w} map is not an exact subsampling of a {image_size}-pixel image")
        strides.append(image_size // h)
    return strides


# ---------------------------------------------------------------------------
# Trained models: what they do under shifts and on the other side of the image.
# ---------------------------------------------------------------------------

def shifted_images(images, shift):
    """``images`` (a :class:`vitbias.data.ImageSet`) with every image circularly shifted, ``T_delta X``.

    ``shift``: ``(delta_r, delta_c)`` or an integer (horizontal); labels are unchanged.
    """
    from dataclasses import replace

    delta = as_pair(shift, "shift")
    H, W = images.images.shape[-2:]
    _check_shift(delta, H, W)
    return replace(images, images=np.roll(images.images, delta, axis=(-2, -1)))


def accuracy_under_shifts(model: nn.Module, images, shifts) -> np.ndarray:
    """Top-1 accuracy of ``model`` on ``images`` circularly shifted by each of ``shifts``: ``(len(shifts),)``."""
    from .train import evaluate

    return np.array([evaluate(model, shifted_images(images, s), device="cpu")["accuracy"] for s in shifts])


def largest_logit_change(model: nn.Module, images, shift) -> float:
    """``max |f(T_delta x) - f(x)|`` over the logits of every image, in the model's own precision."""
    from .train import predict

    return float(np.abs(predict(model, shifted_images(images, shift), device="cpu")
                        - predict(model, images, device="cpu")).max())
