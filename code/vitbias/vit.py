"""A small Vision Transformer, written to be read, and its bridge to timm's.

The pipeline of Dosovitskiy et al. (2021), Eqs. 1-4:

    image (B, C, H, W)
      -> patch embedding: Conv2d(C, d, P, stride=P), flattened   (B, N, d),  N = HW / P^2
      -> [CLS] and register tokens in front, positions added      (B, T, d),  T = N + prefix
      -> L pre-norm blocks: x + MSA(LN(x)), then x + MLP(LN(x))   (B, T, d)
      -> pool: the [CLS] row, or the mean of the patch tokens     (B, d)
      -> LayerNorm, linear head                                   (B, classes)

Parameter names follow ``timm.models.vision_transformer.VisionTransformer``,
so :func:`from_timm` copies a timm model's weights into ours and the two
compute the same logits; :func:`timm_kwargs` builds the timm model of one of
our configurations.
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
    (Darcet et al. 2024); ``pos_embed=False`` drops the position table.
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
        if not (isinstance(self.num_classes, int) and self.num_classes >= 1):
            raise ValueError(f"num_classes must be a positive integer, got {self.num_classes!r}")
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
# A ViT for 32 x 32 images (CIFAR-sized): 8 x 8 patches of 4 x 4 pixels.
TINY_VIT = ViTConfig(img_size=32, patch_size=4, num_classes=10, embed_dim=128, depth=4,
                     num_heads=4, mlp_ratio=2.0)

STANDARD = {"ViT-Ti/16": VIT_TI_16, "ViT-S/16": VIT_S_16, "ViT-B/16": VIT_B_16,
            "ViT-L/16": VIT_L_16, "ViT-B/32": VIT_B_32}
TIMM_NAMES = {"ViT-Ti/16": "vit_tiny_patch16_224", "ViT-S/16": "vit_small_patch16_224",
              "ViT-B/16": "vit_base_patch16_224", "ViT-L/16": "vit_large_patch16_224",
              "ViT-B/32": "vit_base_patch32_224"}


# ---------------------------------------------------------------------------
# The model.
# ---------------------------------------------------------------------------


class Attention(nn.Module):
    """Multi-head self-attention, ``softmax(Q K^T / sqrt(d_h)) V``, heads concatenated, then ``W_O``."""

    def __init__(self, dim: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor):
        """``x``: (B, T, d) -> output (B, T, d) and attention weights (B, H, T, T)."""
        B, T, d = x.shape
        q, k, v = self.qkv(x).reshape(B, T, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) * self.head_dim**-0.5  # (B, H, T, T)
        weights = scores.softmax(dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, d)      # heads side by side
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

    def forward(self, x: torch.Tensor):
        """(B, T, d) -> (B, T, d) and the block's attention weights (B, H, T, T)."""
        attended, weights = self.attn(self.norm1(x))
        x = x + attended
        x = x + self.mlp(self.norm2(x))
        return x, weights


class ViT(nn.Module):
    """The Vision Transformer of :class:`ViTConfig`.

    ``forward(images)`` returns the logits (B, classes);
    ``forward(images, return_attention=True)`` also returns every block's
    attention weights, stacked as (B, L, H, T, T).
    """

    def __init__(self, config: ViTConfig):
        super().__init__()
        if not isinstance(config, ViTConfig):
            raise ValueError(f"expected a ViTConfig, got {type(config).__name__}")
        self.config = c = config
        d = c.embed_dim
        self.patch_embed = nn.Conv2d(c.in_chans, d, kernel_size=c.patch_size, stride=c.patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d)) if c.class_token else None
        self.reg_token = nn.Parameter(torch.zeros(1, c.reg_tokens, d)) if c.reg_tokens else None
        self.pos_embed = nn.Parameter(torch.zeros(1, c.num_tokens, d)) if c.pos_embed else None
        self.blocks = nn.ModuleList(Block(d, c.num_heads, c.mlp_hidden) for _ in range(c.depth))
        self.norm = nn.LayerNorm(d, eps=LAYER_NORM_EPS)
        self.head = nn.Linear(d, c.num_classes)
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self):
        """timm's default initialisation: positions N(0, 0.02) truncated at +-2,
        [CLS] and registers N(0, 1e-6), linear weights N(0, 0.02) truncated, biases 0;
        the patch embedding keeps PyTorch's default for Conv2d."""
        if self.pos_embed is not None:
            nn.init.trunc_normal_(self.pos_embed, std=0.02, a=-2.0, b=2.0)
        for token in (self.cls_token, self.reg_token):
            if token is not None:
                nn.init.normal_(token, std=1e-6)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.trunc_normal_(module.weight, std=0.02, a=-2.0, b=2.0)
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
        return grid_to_tokens(self.patch_embed(images))

    def add_prefix_and_positions(self, tokens: torch.Tensor) -> torch.Tensor:
        """(B, N, d) -> (B, T, d): [CLS] and registers in front, then the position table added."""
        B = tokens.shape[0]
        prefix = [t.expand(B, -1, -1) for t in (self.cls_token, self.reg_token) if t is not None]
        x = torch.cat(prefix + [tokens], dim=1)
        if self.pos_embed is not None:
            x = x + self.pos_embed
        return x

    def encode(self, images: torch.Tensor):
        """The encoder's output tokens (B, T, d) and attention weights (B, L, H, T, T)."""
        x = self.add_prefix_and_positions(self.patch_tokens(images))
        maps = []
        for block in self.blocks:
            x, weights = block(x)
            maps.append(weights)
        return x, torch.stack(maps, dim=1)

    def pool(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d) -> (B, d): the [CLS] row, or the mean of the patch tokens (prefix left out)."""
        if self.config.pool == "cls":
            return x[:, 0]
        return x[:, self.config.num_prefix_tokens:].mean(dim=1)

    def forward(self, images: torch.Tensor, return_attention: bool = False):
        x, maps = self.encode(images)
        # LayerNorm acts on each token alone, so normalising the pooled vector is the
        # same as normalising every token and then reading the [CLS] row.
        logits = self.head(self.norm(self.pool(x)))
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
        pooled = self.norm(self.pool(x))
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

    The names match timm's except two: timm's ``patch_embed.proj`` is our
    ``patch_embed``, and timm's ``fc_norm`` (its final norm when it averages)
    is our ``norm``. Anything else in timm's state (layer scale, q/k norms, an
    attention-pooling head) has no place here and raises ``ValueError``.
    """
    with torch.device("meta"):  # no initialisation: every tensor is replaced below
        ours = ViT(config_from_timm(model))
    renamed = {}
    for name, value in model.state_dict().items():
        name = name.replace("patch_embed.proj.", "patch_embed.").replace("fc_norm.", "norm.")
        renamed[name] = value
    expected = set(ours.state_dict())
    unexpected, missing = sorted(set(renamed) - expected), sorted(expected - set(renamed))
    if unexpected or missing:
        raise ValueError(f"timm model does not fit a plain ViT: unexpected {unexpected}, "
                         f"missing {missing}")
    ours.load_state_dict({name: value.detach().clone() for name, value in renamed.items()}, assign=True)
    return ours.eval()
