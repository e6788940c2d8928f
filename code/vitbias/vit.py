"""A small Vision Transformer, written to be read, and its bridge to timm's.

The pipeline of Dosovitskiy et al. (2021), Eqs. 1-4:

    image (B, C, H, W)
      -> patch embedding: Conv2d(C, d, P, stride=P), flattened   (B, N, d),  N = HW / P^2
      -> [CLS] and register tokens in front, positions added      (B, T, d),  T = N + prefix
      -> L pre-norm blocks: x + MSA(LN(x)), then x + MLP(LN(x))   (B, T, d)
      -> pool: the [CLS] row, or the mean of the patch tokens     (B, d)
      -> LayerNorm, linear head                                   (B, classes)

Parameter names, construction order and initialisation follow
``timm.models.vision_transformer.VisionTransformer``: after the same seed,
``ViT(config)`` and ``VisionTransformer(**timm_kwargs(config))`` hold the same
tensors and compute the same logits (attention through
``F.scaled_dot_product_attention``, as timm's). :func:`from_timm` copies a
timm model's weights into ours. Unlike timm's fused path, ours returns the
attention maps on request and takes an additive bias or boolean mask per layer.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .geometry import grid_to_tokens, patchify

POOLS = ("cls", "mean")
LAYER_NORM_EPS = 1e-6  # timm's and the original JAX code's


@dataclass(frozen=True)
class ViTConfig:
    """The numbers that fix a ViT: image, patch, width, depth, heads, MLP ratio, head.

    ``pool`` is ``"cls"`` (read the [CLS] row, the 2021 ViT) or ``"mean"``
    (average the patch tokens). ``reg_tokens`` adds that many register tokens
    (Darcet et al. 2024); ``pos_embed=False`` drops the position table;
    ``num_classes=0`` drops the head (the model returns its pooled features).
    """

    img_size: int = 224
    patch_size: int = 16
    in_chans: int = 3
    num_classes: int = 1000
    embed_dim: int = 768
    depth: int = 12
    num_heads: int = 12
    mlp_ratio: float = 4.0
    pool: str = "cls"
    class_token: bool = True
    reg_tokens: int = 0
    pos_embed: bool = True

    def __post_init__(self):
        for name in ("img_size", "patch_size", "in_chans", "embed_dim", "depth", "num_heads"):
            value = getattr(self, name)
            if not (isinstance(value, int) and value >= 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not (isinstance(self.num_classes, int) and self.num_classes >= 0):
            raise ValueError(f"num_classes must be a non-negative integer (0: no head), "
                             f"got {self.num_classes!r}")
        if not (isinstance(self.reg_tokens, int) and self.reg_tokens >= 0):
            raise ValueError(f"reg_tokens must be a non-negative integer, got {self.reg_tokens!r}")
        if self.img_size % self.patch_size:
            raise ValueError(f"the patch side {self.patch_size} must divide the image side "
                             f"{self.img_size}")
        if self.embed_dim % self.num_heads:
            raise ValueError(f"embed_dim {self.embed_dim} must be a multiple of num_heads "
                             f"{self.num_heads}")
        if not self.mlp_ratio > 0 or int(self.embed_dim * self.mlp_ratio) < 1:
            raise ValueError(f"mlp_ratio must give a hidden width of at least 1, got {self.mlp_ratio!r}")
        if self.pool not in POOLS:
            raise ValueError(f"pool must be one of {POOLS}, got {self.pool!r}")
        if self.pool == "cls" and not self.class_token:
            raise ValueError("pool='cls' reads the [CLS] row: it needs class_token=True")

    @property
    def grid_size(self) -> int:
        """Patches per side, ``H / P``."""
        return self.img_size // self.patch_size

    @property
    def num_patches(self) -> int:
        """``N = HW / P^2``."""
        return self.grid_size**2

    @property
    def patch_dim(self) -> int:
        """Numbers in one flattened patch, ``P^2 C``."""
        return self.patch_size**2 * self.in_chans

    @property
    def num_prefix_tokens(self) -> int:
        """[CLS] (if any) plus the registers."""
        return int(self.class_token) + self.reg_tokens

    @property
    def num_tokens(self) -> int:
        """The sequence length inside the encoder, ``N + prefix``."""
        return self.num_patches + self.num_prefix_tokens

    @property
    def head_dim(self) -> int:
        return self.embed_dim // self.num_heads

    @property
    def mlp_hidden(self) -> int:
        """The MLP's hidden width, ``int(d * mlp_ratio)`` as timm rounds it."""
        return int(self.embed_dim * self.mlp_ratio)

    def replace(self, **changes) -> ViTConfig:
        fields = {**self.__dict__, **changes}
        return ViTConfig(**fields)


# The standard sizes (Dosovitskiy et al. 2021, Table 1; Ti and S from Touvron et al. 2021).
VIT_TI_16 = ViTConfig(embed_dim=192, depth=12, num_heads=3)
VIT_S_16 = ViTConfig(embed_dim=384, depth=12, num_heads=6)
VIT_B_16 = ViTConfig(embed_dim=768, depth=12, num_heads=12)
VIT_L_16 = ViTConfig(embed_dim=1024, depth=24, num_heads=16)
VIT_B_32 = VIT_B_16.replace(patch_size=32)
VIT_B_8 = VIT_B_16.replace(patch_size=8)
# A ViT for 32 x 32 images (CIFAR-sized): 8 x 8 patches of 4 x 4 pixels. It is what the
# patches chapter and the tests check against timm; no experiment trains it.
TINY_VIT = ViTConfig(img_size=32, patch_size=4, num_classes=10, embed_dim=128, depth=4,
                     num_heads=4, mlp_ratio=2.0)
# The TinyViTs the experiments train (``vitbias.profile.BUDGETS[...].vit`` is made from these):
# quick profile, 4 x 4 patches of 8 pixels, the patch tokens averaged ([CLS] kept, as timm's
# ``global_pool="avg"`` keeps it); full profile (CIFAR-10), 8 x 8 patches of 4 pixels, [CLS] read.
TINY_VIT_QUICK = ViTConfig(img_size=32, patch_size=8, num_classes=10, embed_dim=64, depth=4,
                           num_heads=4, mlp_ratio=4.0, pool="mean")
TINY_VIT_FULL = ViTConfig(img_size=32, patch_size=4, num_classes=10, embed_dim=96, depth=5,
                          num_heads=3, mlp_ratio=4.0, pool="cls")

STANDARD = {"ViT-Ti/16": VIT_TI_16, "ViT-S/16": VIT_S_16, "ViT-B/16": VIT_B_16,
            "ViT-L/16": VIT_L_16, "ViT-B/32": VIT_B_32}
TIMM_NAMES = {"ViT-Ti/16": "vit_tiny_patch16_224", "ViT-S/16": "vit_small_patch16_224",
              "ViT-B/16": "vit_base_patch16_224", "ViT-L/16": "vit_large_patch16_224",
              "ViT-B/32": "vit_base_patch32_224"}


# ---------------------------------------------------------------------------
# The model.
# ---------------------------------------------------------------------------


def attention_bias(bias: torch.Tensor | None, num_heads: int, num_tokens: int,
                   batch: int | None = None) -> torch.Tensor | None:
    """Check an attention bias or mask against ``(B, H, T, T)`` and return it unchanged.

    A float tensor is added to the scores ``Q K^T / sqrt(d_h)`` before the
    softmax; a boolean tensor is ``True`` where attention is allowed (a
    ``False`` entry is a score of ``-inf``). Shapes ``(T, T)``, ``(H, T, T)``
    and ``(B, H, T, T)`` broadcast; any axis but the last two may be 1.
    A query row with nothing allowed has no softmax: its output is NaN.
    """
    if bias is None:
        return None
    if not torch.is_tensor(bias):
        raise ValueError(f"an attention bias must be a tensor, got {type(bias).__name__}")
    if not (bias.dtype == torch.bool or bias.is_floating_point()):
        raise ValueError(f"an attention bias must be boolean (a mask) or floating (added to the "
                         f"scores), got dtype {bias.dtype}")
    expected = (batch, num_heads, num_tokens, num_tokens)[4 - bias.ndim:] if 2 <= bias.ndim <= 4 else ()
    fits = bool(expected) and all(got == want or (got == 1 and i < bias.ndim - 2) or want is None
                                  for i, (got, want) in enumerate(zip(bias.shape, expected)))
    if not fits:
        raise ValueError(f"an attention bias must be (T, T), (H, T, T) or (B, H, T, T) with "
                         f"T = {num_tokens}, H = {num_heads}"
                         f"{'' if batch is None else f', B = {batch}'} (or 1 on the leading axes), "
                         f"got shape {tuple(bias.shape)}")
    return bias


def additive(bias: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A bias or boolean mask as the float tensor added to the scores (``-inf`` where masked)."""
    if bias.dtype == torch.bool:
        return torch.zeros(bias.shape, dtype=dtype, device=bias.device).masked_fill_(~bias, float("-inf"))
    return bias.to(dtype)


class PatchEmbed(nn.Module):
    """``Conv2d(C, d, P, stride=P)``, then flattened: (B, C, H, W) -> (B, N, d), raster order."""

    def __init__(self, patch_size: int, in_chans: int, embed_dim: int):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return grid_to_tokens(self.proj(x))


class Attention(nn.Module):
    """Multi-head self-attention, ``softmax(Q K^T / sqrt(d_h) + bias) V``, heads concatenated, then ``W_O``.

    Without maps it calls ``F.scaled_dot_product_attention`` as timm's
    ``Attention`` does, so the two agree bit for bit; with maps it forms the
    weights (B, H, T, T) explicitly, in timm's unfused order.
    """

    def __init__(self, dim: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim**-0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, attn_bias: torch.Tensor | None = None,
                return_attention: bool = False):
        """``x``: (B, T, d) -> output (B, T, d) and the weights (B, H, T, T), or ``None`` without maps.

        ``attn_bias``: see :func:`attention_bias`.
        """
        B, T, d = x.shape
        attn_bias = attention_bias(attn_bias, self.num_heads, T, B)
        q, k, v = self.qkv(x).reshape(B, T, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
        if return_attention:
            scores = (q * self.scale) @ k.transpose(-2, -1)       # (B, H, T, T)
            if attn_bias is not None:
                scores = scores + additive(attn_bias, scores.dtype)
            weights = scores.softmax(dim=-1)
            out = weights @ v
        else:
            mask = attn_bias if attn_bias is None or attn_bias.dtype == torch.bool else attn_bias.to(q.dtype)
            out, weights = F.scaled_dot_product_attention(q, k, v, attn_mask=mask), None
        out = out.transpose(1, 2).reshape(B, T, d)                # heads side by side
        return self.proj(out), weights


class MLP(nn.Module):
    """The token-wise MLP ``d -> hidden -> d`` with GELU."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    """One pre-norm encoder block: ``x + MSA(LN(x))``, then ``x + MLP(LN(x))`` (Eqs. 2-3)."""

    def __init__(self, dim: int, num_heads: int, hidden: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=LAYER_NORM_EPS)
        self.attn = Attention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim, eps=LAYER_NORM_EPS)
        self.mlp = MLP(dim, hidden)

    def forward(self, x: torch.Tensor, attn_bias: torch.Tensor | None = None,
                return_attention: bool = False):
        """(B, T, d) -> (B, T, d) and the block's attention weights (B, H, T, T) or ``None``."""
        attended, weights = self.attn(self.norm1(x), attn_bias, return_attention)
        x = x + attended
        x = x + self.mlp(self.norm2(x))
        return x, weights


class ViT(nn.Module):
    """The Vision Transformer of :class:`ViTConfig`, built and initialised as timm builds it.

    ``forward(images)`` returns the logits (B, classes), or the pooled
    features (B, d) when ``num_classes == 0``;
    ``forward(images, return_attention=True)`` also returns every block's
    attention weights, stacked as (B, L, H, T, T). ``attn_bias`` (one tensor
    for every block, or a list of one per block, ``None`` entries allowed) is
    added to the attention scores, or masks them when boolean
    (:func:`attention_bias`).

    Modules are created in timm's order and initialised by timm's rules, so
    after the same ``torch.manual_seed`` this model and
    ``VisionTransformer(**timm_kwargs(config))`` hold the same tensors. As in
    timm, the final LayerNorm is ``norm`` (on every token, before pooling)
    when the [CLS] row is read, and ``fc_norm`` (after pooling) when the
    patch tokens are averaged; the other one is the identity.
    """

    def __init__(self, config: ViTConfig):
        super().__init__()
        if not isinstance(config, ViTConfig):
            raise ValueError(f"expected a ViTConfig, got {type(config).__name__}")
        self.config = c = config
        d = c.embed_dim
        self.patch_embed = PatchEmbed(c.patch_size, c.in_chans, d)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d)) if c.class_token else None
        self.reg_token = nn.Parameter(torch.zeros(1, c.reg_tokens, d)) if c.reg_tokens else None
        self.pos_embed = nn.Parameter(torch.zeros(1, c.num_tokens, d)) if c.pos_embed else None
        self.blocks = nn.ModuleList(Block(d, c.num_heads, c.mlp_hidden) for _ in range(c.depth))
        mean = c.pool == "mean"
        self.norm = nn.Identity() if mean else nn.LayerNorm(d, eps=LAYER_NORM_EPS)
        self.fc_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPS) if mean else nn.Identity()
        self.head = nn.Linear(d, c.num_classes) if c.num_classes else nn.Identity()
        self.reset_parameters()

    @torch.no_grad()
    def no_weight_decay(self) -> set[str]:
        """The parameters AdamW leaves undecayed besides biases and norms: positions and prefix tokens (timm's)."""
        return {"pos_embed", "cls_token", "reg_token"}

    def reset_parameters(self):
        """timm's default initialisation, in timm's order: positions N(0, 0.02) truncated at +-2,
        [CLS] and registers N(0, 1e-6), then every linear weight N(0, 0.02) truncated and its
        bias 0, in module order; the patch embedding keeps PyTorch's default for Conv2d.
        The truncated normal is timm's (inverse CDF), which draws other numbers than
        ``nn.init.trunc_normal_`` (rejection sampling in recent PyTorch)."""
        from timm.layers import trunc_normal_

        if self.pos_embed is not None:
            trunc_normal_(self.pos_embed, std=0.02, a=-2.0, b=2.0)
        for token in (self.cls_token, self.reg_token):
            if token is not None:
                nn.init.normal_(token, std=1e-6)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                trunc_normal_(module.weight, std=0.02, a=-2.0, b=2.0)
                nn.init.zeros_(module.bias)

    def check_images(self, images: torch.Tensor) -> None:
        c = self.config
        expected = (c.in_chans, c.img_size, c.img_size)
        if images.ndim != 4 or tuple(images.shape[1:]) != expected:
            raise ValueError(f"expected images of shape (B, {', '.join(map(str, expected))}), "
                             f"got {tuple(images.shape)}")

    def patch_tokens(self, images: torch.Tensor) -> torch.Tensor:
        """The patch embedding: (B, C, H, W) -> (B, N, d), patches in raster order."""
        self.check_images(images)
        return self.patch_embed(images)

    def add_prefix_and_positions(self, tokens: torch.Tensor) -> torch.Tensor:
        """(B, N, d) -> (B, T, d): [CLS] and registers in front, then the position table added."""
        B = tokens.shape[0]
        prefix = [t.expand(B, -1, -1) for t in (self.cls_token, self.reg_token) if t is not None]
        if self.pos_embed is None:
            return torch.cat(prefix + [tokens], dim=1)
        # timm's steps exactly: without a prefix the sum keeps the strides of the
        # transposed patch tokens, and later kernels round by the memory layout.
        x = torch.cat(prefix + [tokens], dim=1) if prefix else tokens
        return x + self.pos_embed

    def layer_biases(self, attn_bias) -> list:
        """One bias (or ``None``) per block from ``None``, one tensor, or a list of ``depth``."""
        depth = len(self.blocks)
        if attn_bias is None or torch.is_tensor(attn_bias):
            return [attn_bias] * depth
        biases = list(attn_bias)
        if len(biases) != depth:
            raise ValueError(f"expected one attention bias per block ({depth}), got {len(biases)}")
        return biases

    def encode(self, images: torch.Tensor, attn_bias=None, return_attention: bool = True):
        """The encoder's output tokens (B, T, d), before the final norm, and the attention
        weights (B, L, H, T, T) (``None`` when ``return_attention`` is false)."""
        x = self.add_prefix_and_positions(self.patch_tokens(images))
        maps = []
        for block, bias in zip(self.blocks, self.layer_biases(attn_bias)):
            x, weights = block(x, bias, return_attention)
            maps.append(weights)
        return x, (torch.stack(maps, dim=1) if return_attention else None)

    def forward_features(self, images: torch.Tensor, attn_bias=None) -> torch.Tensor:
        """timm's ``forward_features``: the tokens (B, T, d) after ``norm``."""
        return self.norm(self.encode(images, attn_bias, return_attention=False)[0])

    def pool(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d) -> (B, d): the [CLS] row, or the mean of the patch tokens (prefix left out)."""
        if self.config.pool == "cls":
            return x[:, 0]
        return x[:, self.config.num_prefix_tokens:].mean(dim=1)

    def forward_head(self, x: torch.Tensor, pre_logits: bool = False) -> torch.Tensor:
        """timm's ``forward_head``: tokens (B, T, d) -> pooled, ``fc_norm`` (B, d) -> head."""
        x = self.fc_norm(self.pool(x))
        return x if pre_logits else self.head(x)

    def forward(self, images: torch.Tensor, return_attention: bool = False, attn_bias=None):
        x, maps = self.encode(images, attn_bias, return_attention)
        logits = self.forward_head(self.norm(x))
        return (logits, maps) if return_attention else logits

    def trace(self, images: torch.Tensor) -> list[tuple[str, tuple[int, ...]]]:
        """The shape of one image's tensor after each step, batch dimension dropped."""
        steps = [("input", images)]
        steps.append(("patches, flattened", patchify(images, self.config.patch_size)))
        tokens = self.patch_tokens(images)
        steps.append(("patch embedding", tokens))
        x = self.add_prefix_and_positions(tokens)
        steps.append(("prefix tokens and positions", x))
        for block in self.blocks:
            x, _ = block(x)
        steps.append((f"{len(self.blocks)} encoder blocks", x))
        pooled = self.forward_head(self.norm(x), pre_logits=True)
        steps.append(("pool and final LayerNorm", pooled))
        steps.append(("linear head", self.head(pooled)))
        return [(name, tuple(t.shape[1:])) for name, t in steps]


# ---------------------------------------------------------------------------
# The bridge to timm.
# ---------------------------------------------------------------------------


def timm_kwargs(config: ViTConfig) -> dict:
    """Arguments for ``timm.models.vision_transformer.VisionTransformer`` giving ``config``'s model."""
    return dict(img_size=config.img_size, patch_size=config.patch_size, in_chans=config.in_chans,
                num_classes=config.num_classes, embed_dim=config.embed_dim, depth=config.depth,
                num_heads=config.num_heads, mlp_ratio=config.mlp_ratio,
                global_pool="token" if config.pool == "cls" else "avg",
                class_token=config.class_token, reg_tokens=config.reg_tokens,
                pos_embed="learn" if config.pos_embed else "none")


def config_from_timm(model) -> ViTConfig:
    """The :class:`ViTConfig` of a timm ``VisionTransformer`` of the plain kind this module builds."""
    from timm.models.vision_transformer import VisionTransformer

    if not isinstance(model, VisionTransformer):
        raise ValueError(f"expected a timm VisionTransformer, got {type(model).__name__}")
    pools = {"token": "cls", "avg": "mean"}
    if model.global_pool not in pools:
        raise ValueError(f"only 'token' and 'avg' pooling are supported, got {model.global_pool!r}")
    if model.no_embed_class and model.num_prefix_tokens:
        raise ValueError("position tables without rows for the prefix tokens are not supported")
    (h, w), (ph, pw) = model.patch_embed.img_size, model.patch_embed.patch_size
    if h != w or ph != pw:
        raise ValueError(f"only square images and patches are supported, got {h}x{w} and {ph}x{pw}")
    first = model.blocks[0]
    return ViTConfig(img_size=h, patch_size=ph, in_chans=model.patch_embed.proj.in_channels,
                     num_classes=model.num_classes, embed_dim=model.embed_dim,
                     depth=len(model.blocks), num_heads=first.attn.num_heads,
                     mlp_ratio=first.mlp.fc1.out_features / model.embed_dim,
                     pool=pools[model.global_pool], class_token=model.cls_token is not None,
                     reg_tokens=model.num_reg_tokens, pos_embed=model.pos_embed is not None)


def from_timm(model) -> ViT:
    """Our :class:`ViT` with the weights of the timm ``VisionTransformer`` ``model``.

    The parameter names are timm's, so the state dicts load into each other
    as they are. Anything else in timm's state (layer scale, q/k norms, an
    attention-pooling head, a final norm in the other place) has no place
    here and raises ``ValueError``.
    """
    with torch.device("meta"):  # no initialisation: every tensor is replaced below
        ours = ViT(config_from_timm(model))
    state = model.state_dict()
    expected = set(ours.state_dict())
    unexpected, missing = sorted(set(state) - expected), sorted(expected - set(state))
    if unexpected or missing:
        raise ValueError(f"timm model does not fit a plain ViT: unexpected {unexpected}, "
                         f"missing {missing}")
    ours.load_state_dict({name: value.detach().clone() for name, value in state.items()}, assign=True)
    return ours.eval()
