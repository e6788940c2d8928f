"""The price of a token: parameters and multiply-adds of a ViT, from its configuration.

Per encoder block, with ``N`` tokens of width ``d`` and an MLP ``d -> r d -> d``
(``r = 4`` in every standard ViT), the multiply-adds are

    (4 + 2 r) N d^2  +  2 N^2 d        (= 12 N d^2 + 2 N^2 d for r = 4)

- ``4 N d^2``: the Q, K, V and output projections;
- ``2 r N d^2``: the MLP's two matrices;
- ``2 N^2 d``: the scores ``Q K^T`` and the weighted sum of the values, ``N^2 d`` each.

Softmax, GELU, LayerNorm and the additions are left out: the softmax takes a
few operations per score (the products take ``d_h`` multiply-adds per score),
and the rest are linear in ``N``. :func:`forward_macs` adds the
patch embedding and the head and counts exactly what ``torch``'s FLOP counter
counts (one multiply-add = two FLOPs).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .geometry import positive_int
from .vit import ViTConfig

GIGA = 1e9


def _check_config(config):
    if not isinstance(config, ViTConfig):
        raise ValueError(f"expected a ViTConfig, got {type(config).__name__}")
    return config


# ---------------------------------------------------------------------------
# Parameters.
# ---------------------------------------------------------------------------


def block_parameters(d: int, mlp_hidden: int | None = None) -> dict[str, int]:
    """One block's parameters: attention ``4d^2 + 4d``, MLP ``2 d h + h + d``, two LayerNorms ``4d``."""
    d = positive_int("d", d)
    h = 4 * d if mlp_hidden is None else positive_int("mlp_hidden", mlp_hidden)
    split = {"attention": 4 * d * d + 4 * d, "mlp": 2 * d * h + h + d, "layernorms": 4 * d}
    split["total"] = sum(split.values())
    return split


def parameter_counts(config: ViTConfig) -> dict[str, int]:
    """Every parameter of the model, by part, and the total."""
    c = _check_config(config)
    d = c.embed_dim
    parts = {
        "patch embedding": c.patch_dim * d + d,
        "[CLS] token": d if c.class_token else 0,
        "register tokens": c.reg_tokens * d,
        "position table": c.num_tokens * d if c.pos_embed else 0,
        "encoder blocks": c.depth * block_parameters(d, c.mlp_hidden)["total"],
        "final LayerNorm": 2 * d,
        "head": d * c.num_classes + c.num_classes,
    }
    parts["total"] = sum(parts.values())
    return parts


def shape_table(config: ViTConfig) -> list[tuple[str, tuple[int, ...], int]]:
    """The tensor of one image after each step of the forward pass, with the step's parameters.

    Rows ``(step, shape, parameters)``; the steps are those of :meth:`vitbias.vit.ViT.trace`.
    """
    c = _check_config(config)
    p = parameter_counts(c)
    T, d = c.num_tokens, c.embed_dim
    return [
        ("input", (c.in_chans, c.img_size, c.img_size), 0),
        ("patches, flattened", (c.num_patches, c.patch_dim), 0),
        ("patch embedding", (c.num_patches, d), p["patch embedding"]),
        ("prefix tokens and positions", (T, d),
         p["[CLS] token"] + p["register tokens"] + p["position table"]),
        (f"{c.depth} encoder blocks", (T, d), p["encoder blocks"]),
        ("pool and final LayerNorm", (d,), p["final LayerNorm"]),
        ("linear head", (c.num_classes,), p["head"]),
    ]


# ---------------------------------------------------------------------------
# Multiply-adds.
# ---------------------------------------------------------------------------


def block_macs(tokens: int, d: int, mlp_ratio: float = 4.0) -> tuple[int, int]:
    """One block's multiply-adds, ``(dense, attention) = ((4 + 2r) N d^2, 2 N^2 d)``."""
    N, d = positive_int("tokens", tokens), positive_int("d", d)
    hidden = int(d * mlp_ratio)
    if hidden < 1:
        raise ValueError(f"mlp_ratio must give a hidden width of at least 1, got {mlp_ratio!r}")
    return 4 * N * d * d + 2 * N * d * hidden, 2 * N * N * d


def attention_crossover_tokens(d: int, mlp_ratio: float = 4.0) -> float:
    """The token count where ``2 N^2 d`` overtakes ``(4 + 2r) N d^2``: ``N = (2 + r) d`` (6d for r = 4)."""
    d = positive_int("d", d)
    if not mlp_ratio > 0:
        raise ValueError(f"mlp_ratio must be positive, got {mlp_ratio!r}")
    return (2 + mlp_ratio) * d


def forward_macs(config: ViTConfig) -> dict[str, int]:
    """Every multiply-add of one forward pass (batch 1), by part.

    Patch embedding ``N P^2 C d``; per block :func:`block_macs` with all ``T``
    tokens; head ``d * classes``.
    """
    c = _check_config(config)
    dense, attention = block_macs(c.num_tokens, c.embed_dim, c.mlp_ratio)
    parts = {
        "patch embedding": c.num_patches * c.patch_dim * c.embed_dim,
        "projections and MLP": c.depth * dense,
        "attention": c.depth * attention,
        "head": c.embed_dim * c.num_classes,
    }
    parts["total"] = sum(parts.values())
    return parts


@dataclass(frozen=True)
class CostRow:
    """The encoder's cost at one image size and patch size, in billions of multiply-adds."""

    image: int
    patch: int
    tokens: int
    dense: float
    attention: float

    @property
    def total(self) -> float:
        return self.dense + self.attention

    @property
    def attention_share(self) -> float:
        return self.attention / self.total


def cost_table(d: int, depth: int, settings, mlp_ratio: float = 4.0) -> list[CostRow]:
    """``12 N d^2 + 2 N^2 d`` summed over ``depth`` blocks, for each ``(image, patch)`` in ``settings``.

    ``N`` counts the patches only, as the cost model is usually stated: the one
    [CLS] row, the embedding and the head change the totals by about one percent.
    """
    depth = positive_int("depth", depth)
    rows = []
    for image, patch in settings:
        image, patch = positive_int("image", image), positive_int("patch", patch)
        if image % patch:
            raise ValueError(f"the patch side {patch} must divide the image side {image}")
        N = (image // patch) ** 2
        dense, attention = block_macs(N, d, mlp_ratio)
        rows.append(CostRow(image, patch, N, depth * dense / GIGA, depth * attention / GIGA))
    return rows


def global_attention_macs(tokens: int, d: int) -> int:
    """Scores and weighted values when every token attends to every token: ``2 N^2 d``."""
    N, d = positive_int("tokens", tokens), positive_int("d", d)
    return 2 * N * N * d


def projection_macs(tokens: int, d: int) -> int:
    """The query, key, value and output projections of ``N`` tokens of width ``d``: ``4 N d^2``.

    The term that global and windowed attention share (Swin's ``4 h w C^2``,
    Liu et al. 2021, Eqs. 1-2).
    """
    N, d = positive_int("tokens", tokens), positive_int("d", d)
    return 4 * N * d * d


def window_attention_macs(grid: int, window: int, d: int) -> int:
    """The same inside non-overlapping ``M x M`` windows of a ``grid x grid`` map: ``2 M^2 N d``.

    Swin's ``Omega(W-MSA)`` less its projection term (Liu et al. 2021, Eq. 2):
    each of the ``N`` tokens scores ``M^2`` keys instead of ``N``, so the cost
    is linear in ``N``.
    """
    grid, window, d = positive_int("grid", grid), positive_int("window", window), positive_int("d", d)
    if grid % window:
        raise ValueError(f"the window side {window} must divide the grid side {grid}")
    return 2 * window * window * grid * grid * d


# ---------------------------------------------------------------------------
# Measured: counted by torch, and timed.
# ---------------------------------------------------------------------------


def torch_counted_macs(model, images) -> int:
    """Multiply-adds of ``model(images)`` as ``torch.utils.flop_counter`` counts them (FLOPs / 2).

    Works on the ``meta`` device, so a large model can be counted without
    memory or time.
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(images)
    flops = counter.get_total_flops()
    if flops % 2:
        raise ValueError(f"an odd FLOP count ({flops}) is not a whole number of multiply-adds")
    return flops // 2


def time_forward(model, images, repeats: int = 3, warmup: int = 1) -> np.ndarray:
    """Seconds of each of ``repeats`` forward passes, after ``warmup`` untimed ones."""
    import torch

    repeats, warmup = positive_int("repeats", repeats), int(warmup)
    if warmup < 0:
        raise ValueError(f"warmup must be >= 0, got {warmup}")
    seconds = []
    with torch.inference_mode():
        for i in range(warmup + repeats):
            start = time.perf_counter()
            model(images)
            if i >= warmup:
                seconds.append(time.perf_counter() - start)
    return np.array(seconds)
