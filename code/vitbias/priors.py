"""Putting the prior back: the ViT with one route to the convolution's assumption switched on.

:class:`RouteViT` is :class:`vitbias.vit.ViT` with any of these routes
(the keywords of :func:`route_vit`, the keys of a run's ``{"kind": "route"}``
model specification):

- ``local_radius=r`` -- *hard locality*: in every block a patch attends only
  to the patches of its ``(2r + 1)^2`` window
  (:func:`vitbias.masks.grid_local_mask`; the sliding version of the windows of
  Swin and ViTDet), and to no token that could relay the rest of the image: a
  model that pools the patches' mean drops its unread [CLS] token, and a model
  that reads [CLS] lets [CLS] see every patch but no patch see [CLS]
  (:func:`without_relay`).
- ``relative_bias=True`` -- *relative positions*: each head of each block adds
  a learned score that depends only on the offset between two patches, taken
  on the torus (``(r' - r) mod H_p, (c' - c) mod W_p``), and the absolute
  position table is dropped. Swin's table counts offsets without wrapping;
  wrapping them makes the model exactly invariant to whole-patch circular
  shifts (the symmetry chapter's theorem), which a test checks.
- ``gated=k`` -- *soft locality*: the first ``k`` blocks use ConViT's gated
  positional self-attention (:class:`GatedAttention`; d'Ascoli et al. 2021).
- ``stem=True`` -- *a convolutional stem*: stride-2 3 x 3 convolutions make the
  tokens (:class:`ConvStem`; Xiao et al. 2021, the hybrids of Dosovitskiy et al.).
- ``distill=True`` -- *a distillation token* with its own head (DeiT; Touvron
  et al. 2021): in training the model returns ``(class logits, distillation
  logits)`` and :func:`vitbias.train.train` fits the second to a teacher's
  predicted labels; in evaluation it returns their mean.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .attention_conv import offset_queries, quadratic_encoding
from .geometry import grid_coordinates, grid_to_tokens, pairwise_offsets, relative_offsets
from .masks import grid_local_mask
from .vit import Attention, ViT, ViTConfig, additive, attention_bias

ROUTES = ("local_radius", "relative_bias", "gated", "stem", "distill")
GATE_INIT = 1.0        # lambda at initialisation: sigma(1) = 0.73 of each head is positional (ConViT)
LOCALITY_STRENGTH = 1.0  # alpha of the positional heads at initialisation (ConViT's default)


def convit_targets(num_heads: int) -> np.ndarray:
    """The offsets ConViT aims its heads at: a centred ``k x k`` grid, ``k = ceil(sqrt(heads))``: ``(heads, 2)``.

    Four heads aim at ``(+-1/2, +-1/2)``; nine at the 3 x 3 kernel's offsets.
    """
    k = math.ceil(math.sqrt(num_heads))
    centre = (k - 1) / 2
    return np.array([(h // k - centre, h % k - centre) for h in range(num_heads)], dtype=float)


class GatedAttention(Attention):
    """ConViT's gated positional self-attention (GPSA): ``(1 - sigma(lambda)) content + sigma(lambda) positional``.

    Per head, the positional weights of a patch query are
    ``softmax_k(<v_h, r_delta>)`` over the patch keys, with ``r_delta = (|delta|^2,
    delta)`` the quadratic encoding of the offset ``delta`` from query to key
    (on the grid, not wrapped), and ``v_h = -alpha (1, -2 Delta_h)`` aimed at
    the offset ``Delta_h`` (the attention-as-convolution construction);
    ``v_h`` and the gate ``lambda_h`` are learned. Prefix keys get no
    positional weight, and prefix queries ([CLS], registers) attend by content
    only.
    """

    def __init__(self, dim: int, num_heads: int, grid: tuple[int, int], n_prefix: int,
                 alpha: float = LOCALITY_STRENGTH, gate: float = GATE_INIT):
        super().__init__(dim, num_heads)
        self.n_prefix = n_prefix
        encoding = quadratic_encoding(pairwise_offsets(grid_coordinates(grid)).astype(float))  # (N_p, N_p, 3)
        self.register_buffer("encoding", torch.as_tensor(encoding, dtype=torch.float32), persistent=False)
        self.pos_query = nn.Parameter(torch.as_tensor(offset_queries(convit_targets(num_heads), alpha),
                                                      dtype=torch.float32))                 # (heads, 3)
        self.gate = nn.Parameter(torch.full((num_heads,), float(gate)))

    def positional(self) -> torch.Tensor:
        """Each head's positional weights over the patches: ``(heads, N_p, N_p)``."""
        scores = torch.einsum("hc,qkc->hqk", self.pos_query, self.encoding.to(self.pos_query.dtype))
        return scores.softmax(dim=-1)

    def forward(self, x: torch.Tensor, attn_bias: torch.Tensor | None = None,
                return_attention: bool = False):
        """``x``: (B, T, d) -> (B, T, d) and the mixed weights (B, H, T, T) (``None`` without maps)."""
        B, T, d = x.shape
        p = self.n_prefix
        attn_bias = attention_bias(attn_bias, self.num_heads, T, B)
        q, k, v = self.qkv(x).reshape(B, T, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
        scores = (q * self.scale) @ k.transpose(-2, -1)                    # (B, H, T, T)
        if attn_bias is not None:
            scores = scores + additive(attn_bias, scores.dtype)
        content = scores.softmax(dim=-1)
        gate = torch.sigmoid(self.gate).view(1, -1, 1, 1).to(content.dtype)
        positional = F.pad(self.positional().to(content.dtype), (p, 0))   # (H, N_p, T): no weight on prefix keys
        patches = (1 - gate) * content[:, :, p:] + gate * positional
        weights = torch.cat([content[:, :, :p], patches], dim=2)
        out = (weights @ v).transpose(1, 2).reshape(B, T, d)
        return self.proj(out), (weights if return_attention else None)


class ConvStem(nn.Module):
    """Tokens from stride-2 3 x 3 convolutions: (B, C, H, W) -> (B, N, d), ``N = (H / P)^2``, raster order.

    ``log2(P)`` convolutions, each followed by BatchNorm and ReLU, double the
    width from ``width``; a 1 x 1 convolution maps to ``d`` (Xiao et al. 2021).
    """

    def __init__(self, patch_size: int, in_chans: int, embed_dim: int, width: int = 16):
        super().__init__()
        steps = int(round(math.log2(patch_size)))
        if patch_size < 2 or 2**steps != patch_size:
            raise ValueError(f"a convolutional stem needs a patch size that is a power of 2, got {patch_size}")
        layers, channels = [], in_chans
        for i in range(steps):
            out = width * 2**i
            layers += [nn.Conv2d(channels, out, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(out),
                       nn.ReLU(inplace=True)]
            channels = out
        layers.append(nn.Conv2d(channels, embed_dim, 1))
        self.proj = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return grid_to_tokens(self.proj(x))


def without_relay(mask: np.ndarray, n_prefix: int) -> np.ndarray:
    """``mask`` ``(N, N)`` with the patch queries barred from the prefix keys: a prefix token sees every
    patch, so a patch reading it would see, one block later, beyond its window."""
    mask = np.array(mask, dtype=bool)
    mask[n_prefix:, :n_prefix] = False
    return mask


class RouteViT(ViT):
    """:class:`vitbias.vit.ViT` with the routes named in the module docstring switched on."""

    def __init__(self, config: ViTConfig, local_radius: int | None = None, relative_bias: bool = False,
                 gated: int = 0, stem: bool = False, distill: bool = False):
        if not isinstance(config, ViTConfig):
            raise ValueError(f"expected a ViTConfig, got {type(config).__name__}")
        if not (isinstance(gated, int) and not isinstance(gated, bool) and 0 <= gated <= config.depth):
            raise ValueError(f"gated must be a number of blocks in 0..{config.depth}, got {gated!r}")
        for name, value in (("relative_bias", relative_bias), ("stem", stem), ("distill", distill)):
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be True or False, got {value!r}")
        if distill and config.reg_tokens:
            raise ValueError("the distillation token takes the register slot: reg_tokens must be 0")
        # Hard locality must leave no token that carries the image around the window: with the mean of
        # the patches pooled, [CLS] is read by nothing and is dropped; with [CLS] read, the patches may
        # not read it (it gathers the image from every patch, so reading it would undo the mask).
        config = config.replace(pos_embed=config.pos_embed and not relative_bias, reg_tokens=int(distill),
                                class_token=config.class_token and (local_radius is None or config.pool == "cls"))
        super().__init__(config)
        c, grid = self.config, (self.config.grid_size, self.config.grid_size)
        self.routes = {"local_radius": local_radius, "relative_bias": relative_bias, "gated": gated,
                       "stem": stem, "distill": distill}
        if stem:
            self.patch_embed = ConvStem(c.patch_size, c.in_chans, c.embed_dim)
        for block in self.blocks[:gated]:
            block.attn = GatedAttention(c.embed_dim, c.num_heads, grid, c.num_prefix_tokens)
        mask = None if local_radius is None else torch.as_tensor(
            without_relay(grid_local_mask(*grid, local_radius, c.num_prefix_tokens), c.num_prefix_tokens))
        self.register_buffer("local_mask", mask, persistent=False)
        if relative_bias:
            self.relative_table = nn.Parameter(torch.zeros(c.depth, c.num_heads, *grid))
            self.register_buffer("relative_index", torch.as_tensor(relative_offsets(grid)), persistent=False)
        else:
            self.relative_table = None
        self.head_dist = nn.Linear(c.embed_dim, c.num_classes) if distill else None
        self.reset_parameters()

    def no_weight_decay(self) -> set[str]:
        """The plain ViT's exemptions and the relative-position table (Swin's ``relative_position_bias_table``)."""
        return super().no_weight_decay() | {"relative_table"}

    def layer_biases(self, attn_bias) -> list:
        """Each block's bias: the relative table's scores (prefix rows and columns 0), masked to the window."""
        if attn_bias is not None:
            raise ValueError("a RouteViT makes its own attention biases; attn_bias must be None")
        c, p = self.config, self.config.num_prefix_tokens
        biases = [None] * c.depth
        if self.relative_table is not None:
            r, s = self.relative_index[..., 0], self.relative_index[..., 1]   # (N_p, N_p) each
            table = self.relative_table[:, :, r, s]                           # (L, H, N_p, N_p)
            biases = list(F.pad(table, (p, 0, p, 0)).unbind(0))               # L x (H, T, T)
        if self.local_mask is not None:
            biases = [self.local_mask if b is None else b.masked_fill(~self.local_mask, float("-inf"))
                      for b in biases]
        return biases

    def gates(self) -> np.ndarray:
        """``sigma(lambda)`` of every gated head: ``(gated blocks, heads)``, the positional share."""
        return np.stack([torch.sigmoid(block.attn.gate.detach()).double().numpy()
                         for block in self.blocks[:self.routes["gated"]]]) if self.routes["gated"] else \
            np.zeros((0, self.config.num_heads))

    def forward(self, images: torch.Tensor, return_attention: bool = False, attn_bias=None):
        x, maps = self.encode(images, attn_bias, return_attention)
        x = self.norm(x)
        logits = self.forward_head(x)
        if self.head_dist is not None:
            distilled = self.head_dist(self.fc_norm(x[:, int(self.config.class_token)]))
            logits = (logits, distilled) if self.training else (logits + distilled) / 2
        return (logits, maps) if return_attention else logits


def route_vit(img_size: int, patch_size: int, embed_dim: int, depth: int, num_heads: int,
              mlp_ratio: float = 4.0, global_pool: str = "avg", num_classes: int = 10, **routes) -> RouteViT:
    """The :class:`RouteViT` of a run's model specification (``vitbias.models.vit_spec`` keys plus routes)."""
    unknown = sorted(set(routes) - set(ROUTES))
    if unknown:
        raise ValueError(f"unknown routes {unknown}: expected some of {ROUTES}")
    pools = {"token": "cls", "avg": "mean"}
    if global_pool not in pools:
        raise ValueError(f"global_pool must be one of {tuple(pools)}, got {global_pool!r}")
    config = ViTConfig(img_size=img_size, patch_size=patch_size, num_classes=num_classes, embed_dim=embed_dim,
                       depth=depth, num_heads=num_heads, mlp_ratio=mlp_ratio, pool=pools[global_pool])
    return RouteViT(config, **routes)
