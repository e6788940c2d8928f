"""Does attention learn the convolution it can express? A one-layer fit, measured.

:mod:`vitbias.attention_conv` builds the construction by hand: one head per
kernel offset, each head aimed at its offset by the quadratic encoding. Here
the same kind of layer has to find it by gradient descent. The task is a
fixed random ``3 x 3`` circular convolution ``W*``; the data are ``N``
random images ``X`` (standard normal pixels) and their targets
``Y = conv(X, W*) + noise``. Two layers are fitted to them:

- a ``3 x 3`` circular convolution (:class:`ConvLayer`), the hypothesis class
  that contains ``W*`` and nothing far from it;
- a positional self-attention layer (:class:`PositionalAttention`) with one
  head per offset, scores ``-alpha_j |delta - c_j|^2`` over the relative
  offsets ``delta`` of the torus (the quadratic encoding with a learnable
  centre ``c_j`` and width ``alpha_j`` per head) and a value-output matrix
  ``W^(j)`` per head. It computes ``W*`` exactly when its heads sit on the
  nine offsets with infinite ``alpha``, and nearly so for large ``alpha``.

Both are trained the same way (Adam, full batch, :data:`STEPS` steps on a cosine schedule) from a
random start, and scored by the relative error on fresh noise-free images.
:func:`settled_offsets` matches each kernel offset to the nearest distinct
head centre (an optimal assignment), to say whether the heads settled on the
nine offsets.
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class Fit:
    """One fit: the layer, the training-set size and seed, its relative test error, and the heads' state.

    ``centres`` ``(h, 2)`` and ``alphas`` ``(h,)`` for the attention layer, ``None`` for the convolution.
    """

    layer: str
    n: int
    seed: int
    error: float
    centres: np.ndarray | None = None
    alphas: np.ndarray | None = None


LAYERS = ("convolution", "attention")


def make_layer(name: str) -> nn.Module:
    """A fresh layer of kind ``name`` (one of :data:`LAYERS`), with as many heads as the kernel has taps."""
    c_in, c_out = CHANNELS
    if name == "convolution":
        return ConvLayer(c_in, c_out)
    if name == "attention":
        return PositionalAttention(c_in, c_out, KERNEL * KERNEL)
    raise ValueError(f"layer must be one of {LAYERS}, got {name!r}")


def relative_error(layer: nn.Module, kernel: torch.Tensor, seed: int) -> float:
    """``|layer(X) - conv(X, W*)|^2 / |conv(X, W*)|^2`` on :data:`TEST_IMAGES` fresh noise-free images."""
    X, Y = examples(TEST_IMAGES, kernel, seed=10_000 + int(seed), noise=0.0)
    with torch.no_grad():
        return float(((layer(X) - Y) ** 2).sum() / (Y**2).sum())


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
    error = relative_error(layer, kernel, seed)
    if name == "attention":
        return Fit(name, int(n), int(seed), error, layer.centres.detach().numpy().copy(),
                   layer.log_alpha.detach().exp().numpy().copy())
    return Fit(name, int(n), int(seed), error)


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


def sweep(sizes, seeds) -> list[Fit]:
    """Every layer of :data:`LAYERS` fitted at every size and seed, on one kernel."""
    kernel = target_kernel()
    return [fit(name, n, s, kernel) for name in LAYERS for n in sizes for s in seeds]
