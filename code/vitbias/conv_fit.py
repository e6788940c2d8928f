"""Does attention learn the convolution it can express? A one-layer fit, measured.

:mod:`vitbias.attention_conv` builds the construction by hand: one head per
kernel offset, each head aimed at its offset by the quadratic encoding. Here
the same kind of layer has to find it by gradient descent. The task is a
fixed random ``3 x 3`` circular convolution ``W*``; the data are ``N``
random images ``X`` (standard normal pixels) and their targets
``Y = conv(X, W*) + noise``. Three layers are fitted to them:

- a ``3 x 3`` circular convolution (:class:`ConvLayer`), the hypothesis class
  that contains ``W*`` and nothing far from it;
- a positional self-attention layer (:class:`PositionalAttention`) with one
  head per offset, scores ``-alpha_j |delta - c_j|^2`` over the relative
  offsets ``delta`` of the torus (the quadratic encoding with a learnable
  centre ``c_j`` and width ``alpha_j`` per head) and a value-output matrix
  ``W^(j)`` per head. It computes ``W*`` exactly when its heads sit on the
  nine offsets with infinite ``alpha``, and nearly so for large ``alpha``;
- multi-head self-attention as a ViT has it (:class:`MultiHeadAttention`): each
  head scores a key by the query's and the key's content,
  ``q^T k / sqrt(d_k)``, plus a learned relative position term, one free
  number per offset of the torus (a relative position bias), started near
  zero, so that no head starts local. It holds the construction too (content
  weights at zero, each head's table peaked at one offset), but it must find
  both that the content does not matter and where to look.

All are trained the same way (Adam, full batch, :data:`STEPS` steps on a cosine schedule) from a
random start, and scored by the relative error on fresh noise-free images, and by the relative error on
their own noisy training set (:func:`training_error`; the target's own, the noise floor, is
:func:`noise_floor`).
:func:`settled_offsets` matches each kernel offset to the nearest distinct
head centre (an optimal assignment), to say whether the heads settled on the
nine offsets.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import nn

from .geometry import circular_conv, kernel_offsets, relative_offsets

KERNEL = 3           # the target's kernel size
CHANNELS = (3, 4)    # (input, output) channels of the target convolution
GRID = 8             # images are GRID x GRID
NOISE = 0.5          # standard deviation of the target noise, against a target of about unit scale
STEPS = 600          # Adam steps of every fit
LR = 0.05            # Adam's learning rate
TEST_IMAGES = 64     # fresh images the error is measured on
SETTLED = 0.25       # a head within this many pixels of an offset has settled on it
HEAD_DIM = 4         # query and key width of each head of the multi-head layer
BIAS_INIT_SD = 0.02  # the initial relative position biases: near zero, as a ViT's position table starts


def target_kernel(seed: int = 0) -> torch.Tensor:
    """The fixed random kernel ``W*``: ``(C_out, C_in, k, k)``.

    Normal entries over ``sqrt(fan_in)``, so ``conv(X, W*)`` of standard normal images has unit variance.
    """
    generator = torch.Generator().manual_seed(int(seed))
    c_in, c_out = CHANNELS
    fan_in = c_in * KERNEL * KERNEL
    return torch.randn(c_out, c_in, KERNEL, KERNEL, generator=generator) / fan_in**0.5


def examples(n: int, kernel: torch.Tensor, seed: int, noise: float = NOISE) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` images ``(n, C_in, GRID, GRID)`` and targets ``(n, C_out, GRID, GRID)``, noise of sd ``noise``."""
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    generator = torch.Generator().manual_seed(int(seed))
    X = torch.randn(n, kernel.shape[1], GRID, GRID, generator=generator)
    Y = circular_conv(X, kernel) + noise * torch.randn(n, kernel.shape[0], GRID, GRID, generator=generator)
    return X, Y


class ConvLayer(nn.Module):
    """A ``k x k`` circular convolution without bias: ``(B, C_in, H, W) -> (B, C_out, H, W)``."""

    def __init__(self, c_in: int, c_out: int, k: int = KERNEL):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(c_out, c_in, k, k) / (c_in * k * k) ** 0.5)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return circular_conv(X, self.weight)


class PositionalAttention(nn.Module):
    """Self-attention whose scores depend on position only: ``(B, C_in, H, W) -> (B, C_out, H, W)``.

    Head ``j`` scores key ``k`` for query ``q`` by ``-alpha_j |delta(q, k) - c_j|^2``
    (``delta`` on the torus, :func:`vitbias.geometry.relative_offsets`), takes a
    softmax over keys, and maps what it reads through ``W^(j)`` ``(C_in, C_out)``;
    the heads' outputs add up (:func:`vitbias.attention_conv.sum_over_heads`).
    Centres start normal around the query (sd 1 pixel), widths at ``alpha = 1``.
    """

    def __init__(self, c_in: int, c_out: int, heads: int, grid: int = GRID):
        super().__init__()
        self.centres = nn.Parameter(torch.randn(heads, 2))
        self.log_alpha = nn.Parameter(torch.zeros(heads))
        self.values = nn.Parameter(torch.randn(heads, c_in, c_out) / (c_in * heads) ** 0.5)
        self.register_buffer("offsets", torch.as_tensor(relative_offsets((grid, grid)), dtype=torch.float32))

    def attention(self) -> torch.Tensor:
        """The heads' attention ``(h, N, N)``, the same for every image."""
        distance = ((self.offsets[None] - self.centres[:, None, None]) ** 2).sum(-1)  # (h, N, N)
        return torch.softmax(-self.log_alpha.exp()[:, None, None] * distance, dim=-1)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        B, C, H, W = X.shape
        tokens = X.flatten(2).transpose(1, 2)                                   # (B, N, C_in)
        mapped = torch.einsum("bkc,hco->bhko", tokens, self.values)             # (B, h, N, C_out)
        out = (self.attention()[None] @ mapped).sum(dim=1)                      # (B, N, C_out)
        return out.transpose(1, 2).reshape(B, -1, H, W)


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention with content scores and a learned relative position bias:
    ``(B, C_in, H, W) -> (B, C_out, H, W)``.

    Head ``j`` scores key ``k`` for query ``q`` by ``x_q^T W_Q^(j) W_K^(j)^T x_k / sqrt(d_k)
    + b_j(delta(q, k))``, the bias a free number per offset ``delta`` of the torus (as Swin's
    relative position bias, with the torus's ``H W`` offsets), takes a softmax over keys and maps
    what it reads through ``W^(j)`` ``(C_in, C_out)`` (a head's value and output matrices in one);
    the heads' outputs add up. Query and key matrices start normal over ``sqrt(C_in)``, the biases
    normal with sd :data:`BIAS_INIT_SD`.
    """

    def __init__(self, c_in: int, c_out: int, heads: int, grid: int = GRID, head_dim: int = HEAD_DIM):
        super().__init__()
        self.query = nn.Parameter(torch.randn(heads, c_in, head_dim) / c_in**0.5)
        self.key = nn.Parameter(torch.randn(heads, c_in, head_dim) / c_in**0.5)
        self.values = nn.Parameter(torch.randn(heads, c_in, c_out) / (c_in * heads) ** 0.5)
        self.bias = nn.Parameter(BIAS_INIT_SD * torch.randn(heads, grid * grid))   # (h, offsets)
        offsets = relative_offsets((grid, grid)) % grid                               # (N, N, 2)
        index = torch.as_tensor(offsets[..., 0] * grid + offsets[..., 1])            # (N, N)
        self.register_buffer("index", index)
        self.head_dim = head_dim

    def position_scores(self) -> torch.Tensor:
        """The bias of every (query, key) pair ``(h, N, N)``: ``b_j(delta(q, k))``."""
        return self.bias[:, self.index]

    def attention(self, tokens: torch.Tensor) -> torch.Tensor:
        """The heads' attention ``(B, h, N, N)`` on tokens ``(B, N, C_in)``."""
        q = torch.einsum("bnc,hcd->bhnd", tokens, self.query)
        k = torch.einsum("bnc,hcd->bhnd", tokens, self.key)
        content = q @ k.transpose(-1, -2) / self.head_dim**0.5                        # (B, h, N, N)
        return torch.softmax(content + self.position_scores()[None], dim=-1)

    def position_attention(self) -> torch.Tensor:
        """What the heads attend to with the content left out, ``(h, N, N)``: the softmax of the biases."""
        return torch.softmax(self.position_scores(), dim=-1)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        B, C, H, W = X.shape
        tokens = X.flatten(2).transpose(1, 2)                                   # (B, N, C_in)
        mapped = torch.einsum("bkc,hco->bhko", tokens, self.values)             # (B, h, N, C_out)
        out = (self.attention(tokens) @ mapped).sum(dim=1)                      # (B, N, C_out)
        return out.transpose(1, 2).reshape(B, -1, H, W)


@dataclass(frozen=True)
class Fit:
    """One fit: the layer, the training-set size and seed, its relative test and training errors,
    and the heads' state.

    ``centres`` ``(h, 2)`` and ``alphas`` ``(h,)`` for the positional attention layer; for the
    multi-head layer ``centres`` holds the offset each head's biases peak on, ``peaks`` ``(h,)``
    the weight its biases alone put there, and ``content`` how far the content moves the heads'
    attention (:func:`content_share`); ``None`` where a layer has no such thing.
    """

    layer: str
    n: int
    seed: int
    error: float
    train_error: float
    centres: np.ndarray | None = None
    alphas: np.ndarray | None = None
    peaks: np.ndarray | None = None
    content: float | None = None


LAYERS = ("convolution", "attention", "multi-head")


def make_layer(name: str) -> nn.Module:
    """A fresh layer of kind ``name`` (one of :data:`LAYERS`), with as many heads as the kernel has taps."""
    c_in, c_out = CHANNELS
    if name == "convolution":
        return ConvLayer(c_in, c_out)
    if name == "attention":
        return PositionalAttention(c_in, c_out, KERNEL * KERNEL)
    if name == "multi-head":
        return MultiHeadAttention(c_in, c_out, KERNEL * KERNEL)
    raise ValueError(f"layer must be one of {LAYERS}, got {name!r}")


def relative_error(layer: nn.Module, kernel: torch.Tensor, seed: int) -> float:
    """``|layer(X) - conv(X, W*)|^2 / |conv(X, W*)|^2`` on :data:`TEST_IMAGES` fresh noise-free images."""
    X, Y = examples(TEST_IMAGES, kernel, seed=10_000 + int(seed), noise=0.0)
    with torch.no_grad():
        return float(((layer(X) - Y) ** 2).sum() / (Y**2).sum())


def training_error(layer, X: torch.Tensor, Y: torch.Tensor) -> float:
    """``|layer(X) - Y|^2 / |Y|^2`` on the training set itself, noise included; ``layer`` may be any
    function of ``X``."""
    with torch.no_grad():
        return float(((layer(X) - Y) ** 2).sum() / (Y**2).sum())


def noise_floor(n: int, seed: int, kernel: torch.Tensor | None = None) -> float:
    """The training error of the target itself on the ``n`` examples of ``seed``: what the noise
    leaves to any layer that does not memorise it (about ``NOISE^2 / (1 + NOISE^2)``)."""
    kernel = target_kernel() if kernel is None else kernel
    X, Y = examples(n, kernel, seed)
    return training_error(lambda images: circular_conv(images, kernel), X, Y)


def content_share(layer: MultiHeadAttention, kernel: torch.Tensor, seed: int) -> float:
    """How far the content moves the heads' attention: the total-variation distance between each
    head's attention and its biases' alone, ``1/2 sum_k |A(q, k) - softmax(b)(q, k)|``, averaged over
    heads, queries and :data:`TEST_IMAGES` fresh images. 0: the heads ignore the content, as the
    construction's do; 1: content alone decides where they look."""
    X, _ = examples(TEST_IMAGES, kernel, seed=10_000 + int(seed), noise=0.0)
    with torch.no_grad():
        full = layer.attention(X.flatten(2).transpose(1, 2))                    # (B, h, N, N)
        return float(0.5 * (full - layer.position_attention()[None]).abs().sum(-1).mean())


def head_peaks(layer: MultiHeadAttention) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets (h, 2), weights (h,))``: where each head's biases alone put most weight, seen from
    query 0 (the same from every query), and how much."""
    with torch.no_grad():
        seen = layer.position_attention()[:, 0]                                # (h, N)
        weights, keys = seen.max(dim=-1)
    grid = int(round(len(layer.index) ** 0.5))
    return relative_offsets((grid, grid))[0][keys.numpy()].astype(float), weights.numpy().copy()


def fit(name: str, n: int, seed: int, kernel: torch.Tensor | None = None) -> Fit:
    """Fit layer ``name`` to ``n`` noisy examples of ``kernel`` (default :func:`target_kernel`), seed ``seed``.

    ``seed`` draws the examples and the layer's initial weights. Adam on the
    mean squared error, full batch, :data:`STEPS` steps from :data:`LR` down a cosine to 0.
    """
    if not (isinstance(seed, (int, np.integer)) and seed >= 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    kernel = target_kernel() if kernel is None else kernel
    X, Y = examples(n, kernel, seed)
    torch.manual_seed(int(seed))
    layer = make_layer(name)
    optimiser = torch.optim.Adam(layer.parameters(), lr=LR)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, STEPS)
    for _ in range(STEPS):
        optimiser.zero_grad()
        loss = ((layer(X) - Y) ** 2).mean()
        loss.backward()
        optimiser.step()
        schedule.step()
    error, train = relative_error(layer, kernel, seed), training_error(layer, X, Y)
    if name == "attention":
        return Fit(name, int(n), int(seed), error, train, layer.centres.detach().numpy().copy(),
                   layer.log_alpha.detach().exp().numpy().copy())
    if name == "multi-head":
        centres, peaks = head_peaks(layer)
        return Fit(name, int(n), int(seed), error, train, centres, peaks=peaks,
                   content=content_share(layer, kernel, seed))
    return Fit(name, int(n), int(seed), error, train)


def settled_offsets(centres: np.ndarray, k: int = KERNEL, within: float = SETTLED) -> tuple[int, float]:
    """``(count, largest distance)``: kernel offsets with a head within ``within`` pixels, one head each.

    Offsets and heads are paired by the assignment that minimises the summed
    distance (``scipy.optimize.linear_sum_assignment``); ``count`` is how many
    pairs lie within ``within``, the largest distance is over all pairs.
    ``centres``: ``(h, 2)`` with ``h >= k^2``.
    """
    centres = np.asarray(centres, dtype=float)
    offsets = kernel_offsets(k, 2).astype(float)
    if centres.ndim != 2 or centres.shape[1] != 2 or len(centres) < len(offsets):
        raise ValueError(f"centres must be (h >= {len(offsets)}, 2), got {centres.shape}")
    distance = np.linalg.norm(offsets[:, None] - centres[None], axis=-1)        # (k^2, h)
    rows, cols = linear_sum_assignment(distance)
    matched = distance[rows, cols]
    return int((matched <= within).sum()), float(matched.max())


def peak_weights(centres: np.ndarray, alphas: np.ndarray, grid: int = GRID) -> np.ndarray:
    """Each head's largest attention weight on one key ``(h,)``: 1 for a lookup, less for a blurred head.

    The weights are the same from every query (position only), so one query is enough.
    """
    centres, alphas = np.asarray(centres, dtype=float), np.asarray(alphas, dtype=float)
    if centres.ndim != 2 or centres.shape[1] != 2 or alphas.shape != (len(centres),) or np.any(alphas <= 0):
        raise ValueError(f"need centres (h, 2) and positive alphas (h,), got {centres.shape} and {alphas.shape}")
    offsets = relative_offsets((grid, grid))[0].astype(float)                 # (N, 2), from query 0
    scores = -alphas[:, None] * ((offsets[None] - centres[:, None]) ** 2).sum(-1)  # (h, N)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True)).max(axis=1)


def sweep_key(sizes, seeds) -> str:
    """The name a sweep is stored under: a digest of the sizes, the seeds, the source of this module
    and of :mod:`vitbias.geometry` (all the code a fit runs) and the versions of torch and NumPy."""
    here = Path(__file__).parent
    identity = {"sizes": [int(n) for n in sizes], "seeds": [int(s) for s in seeds],
                "source": [(here / name).read_text() for name in ("conv_fit.py", "geometry.py")],
                "torch": torch.__version__, "numpy": np.__version__}
    return "conv-fit-" + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:20]


def sweep(sizes, seeds, folder: Path | str | None = None) -> list[Fit]:
    """Every layer of :data:`LAYERS` fitted at every size and seed, on one kernel.

    With ``folder`` (the run cache), a sweep is computed once and stored there under
    :func:`sweep_key`, then read back, as a trained run is: the book's second execution, on the
    other kernel set, reads the fits of the build as it reads its trained models.
    """
    sizes, seeds = tuple(sizes), tuple(seeds)
    if not sizes or not seeds or any(not (isinstance(n, (int, np.integer)) and n >= 1) for n in sizes):
        raise ValueError(f"a sweep needs positive integer sizes and at least one seed, got {sizes}, {seeds}")
    stored = None if folder is None else Path(folder) / sweep_key(sizes, seeds) / "fits.pkl"
    if stored is not None and stored.is_file():
        return pickle.loads(stored.read_bytes())
    kernel = target_kernel()
    fits = [fit(name, n, s, kernel) for name in LAYERS for n in sizes for s in seeds]
    if stored is not None:
        stored.parent.mkdir(parents=True, exist_ok=True)
        partial = stored.with_suffix(".partial")
        partial.write_bytes(pickle.dumps(fits))
        partial.replace(stored)  # whole or absent: a reader never sees half a sweep
    return fits
