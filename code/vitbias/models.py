"""The two models the experiments compare, each built from a plain configuration.

- :class:`SmallCNN`: stages of 3 x 3 convolutions (batch norm, ReLU) with 2 x 2
  max pooling between them, global average pooling and a linear head. Its
  assumptions are built in: every filter is local and shared by all positions.
- :func:`tiny_vit`: the book's one ViT (:class:`vitbias.vit.ViT`, built and
  initialised as timm's ``VisionTransformer``) at a small width and depth,
  with patches sized for 32 px images. Only its patch embedding is local.
  :func:`vit_spec` turns a :class:`vitbias.vit.ViTConfig` into its specification.

``build({"kind": "cnn", ...})`` and ``build({"kind": "vit", ...})`` make either
from a dictionary, which is how a run records its model. Pretrained weights
(full profile) come from the local cache only, see :func:`pretrained_vit_tiny`.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch
from torch import nn

# Re-exported: every run records its model's count through this name.
from .geometry import parameter_count as parameter_count
from .vit import TINY_VIT_QUICK, ViT, ViTConfig, from_timm

MODEL_KINDS = ("cnn", "vit", "route")


class SmallCNN(nn.Module):
    """Conv stages ``channels[i]`` (``depth`` convolutions each), pooled by 2 between stages.

    Input ``(B, 3, H, W)`` gives logits ``(B, num_classes)``; ``features``
    returns the pooled ``(B, channels[-1])`` vector the head reads.
    """

    # On a CPU its convolutions and pooling run about 1.6x faster on channels-last
    # tensors (AVX2 and AVX-512 kernels, float32), so the trainer lays it out so.
    prefers_channels_last = True

    def __init__(self, channels=(16, 32, 64, 144), depth=(1, 1, 1, 2), num_classes: int = 10,
                 in_chans: int = 3):
        super().__init__()
        channels, depth = tuple(channels), tuple(depth)
        if not channels or len(channels) != len(depth) or min(channels) < 1 or min(depth) < 1:
            raise ValueError(f"channels and depth must be equally long lists of positive "
                             f"integers, got {channels} and {depth}")
        layers, width = [], in_chans
        for stage, (out, repeats) in enumerate(zip(channels, depth)):
            if stage > 0:
                layers.append(nn.MaxPool2d(2))
            for _ in range(repeats):
                layers += [nn.Conv2d(width, out, 3, padding=1, bias=False),
                           nn.BatchNorm2d(out), nn.ReLU(inplace=True)]
                width = out
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, num_classes)
        self.num_features = width

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x).mean(dim=(2, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


POOLS = {"token": "cls", "avg": "mean"}  # timm's global_pool -> ViTConfig.pool
# The keys of a ViT specification besides "kind", in the order a run records them.
VIT_SPEC_KEYS = ("img_size", "patch_size", "embed_dim", "depth", "num_heads", "mlp_ratio", "global_pool")


def tiny_vit(img_size: int = TINY_VIT_QUICK.img_size, patch_size: int = TINY_VIT_QUICK.patch_size,
             embed_dim: int = TINY_VIT_QUICK.embed_dim, depth: int = TINY_VIT_QUICK.depth,
             num_heads: int = TINY_VIT_QUICK.num_heads, mlp_ratio: float = TINY_VIT_QUICK.mlp_ratio,
             num_classes: int = TINY_VIT_QUICK.num_classes, global_pool: str = "avg") -> ViT:
    """:class:`vitbias.vit.ViT` with [CLS], ``(img_size / patch_size)^2`` patch tokens and timm's
    ``global_pool`` (``"token"``: read [CLS]; ``"avg"``: average the patch tokens).

    The defaults are :data:`vitbias.vit.TINY_VIT_QUICK`. Input
    ``(B, 3, img_size, img_size)`` gives logits ``(B, num_classes)``. Built
    after the same seed, it holds the same tensors as timm's
    ``VisionTransformer`` of these arguments and computes the same logits.
    """
    if img_size % patch_size:
        raise ValueError(f"patch_size must divide img_size, got {patch_size} and {img_size}")
    if embed_dim % num_heads:
        raise ValueError(f"num_heads must divide embed_dim, got {num_heads} and {embed_dim}")
    if global_pool not in POOLS:
        raise ValueError(f"global_pool must be one of {tuple(POOLS)}, got {global_pool!r}")
    return ViT(ViTConfig(img_size=img_size, patch_size=patch_size, num_classes=num_classes,
                         embed_dim=embed_dim, depth=depth, num_heads=num_heads, mlp_ratio=mlp_ratio,
                         pool=POOLS[global_pool]))


def vit_spec(config: ViTConfig) -> dict:
    """The ``build`` specification of the ViT ``config``: ``{"kind": "vit", ...}``.

    Only what :func:`tiny_vit` takes is recorded, ``num_classes`` excepted: it
    must be the default (10), which every budget uses. A configuration the
    specification cannot state (no [CLS], registers, no positions, other
    channels or classes) raises ``ValueError``.
    """
    if not isinstance(config, ViTConfig):
        raise ValueError(f"expected a ViTConfig, got {type(config).__name__}")
    plain = dict(num_classes=TINY_VIT_QUICK.num_classes, in_chans=3, class_token=True,
                 reg_tokens=0, pos_embed=True)
    differs = {k: getattr(config, k) for k, v in plain.items() if getattr(config, k) != v}
    if differs:
        raise ValueError(f"a ViT specification states only a plain 10-class RGB ViT with [CLS] "
                         f"and positions ({plain}), got {differs}")
    pools = {pool: name for name, pool in POOLS.items()}
    fields = {**config.__dict__, "global_pool": pools[config.pool]}
    return {"kind": "vit", **{key: fields[key] for key in VIT_SPEC_KEYS}}


def build(spec: dict) -> nn.Module:
    """The model named by ``spec["kind"]`` with the remaining keys as its arguments."""
    spec = dict(spec)
    kind = spec.pop("kind", None)
    if kind == "cnn":
        return SmallCNN(**spec)
    if kind == "vit":
        return tiny_vit(**spec)
    if kind == "route":  # the ViT with a prior put back (vitbias.priors)
        from .priors import route_vit

        return route_vit(**spec)
    raise ValueError(f"unknown model kind {kind!r}: expected one of {MODEL_KINDS}")


def features(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """What the classifier head reads, ``(B, D)``: pooled maps, or the ViT's pooled and normalised tokens."""
    if isinstance(model, SmallCNN):
        return model.features(x)
    return model.forward_head(model.forward_features(x), pre_logits=True)


# ---------------------------------------------------------------------------
# Pretrained weights from the local cache (full profile).
# ---------------------------------------------------------------------------

PRETRAINED_VIT_TINY = "vit_tiny_patch16_224.augreg_in21k"
HUB_REPO = "timm/" + PRETRAINED_VIT_TINY
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def hub_cache() -> Path:
    """The Hugging Face hub cache folder, as ``huggingface_hub`` resolves it."""
    from huggingface_hub import constants

    return Path(os.environ.get("HF_HUB_CACHE", constants.HF_HUB_CACHE))


def pretrained_weights_file(cache: Path | str | None = None) -> Path:
    """The cached weight file of ViT-Ti/16 (ImageNet-21k), never downloaded.

    Raises ``FileNotFoundError`` naming the model, the folder searched and how
    to fill it when the weights are not in the cache.
    """
    from huggingface_hub import try_to_load_from_cache

    cache = Path(cache) if cache is not None else hub_cache()
    for name in WEIGHT_FILES:
        found = try_to_load_from_cache(HUB_REPO, name, cache_dir=cache)
        if isinstance(found, str) and Path(found).is_file():
            return Path(found)
    raise FileNotFoundError(
        f"the pretrained ViT-Ti/16 ({HUB_REPO}, ImageNet-21k) is not in the local cache "
        f"{cache}. On a machine with network access run "
        f"`python -c \"import timm; timm.create_model('{PRETRAINED_VIT_TINY}', pretrained=True)\"` "
        f"with the same HF_HUB_CACHE, or copy its cache folder here.")


def pretrained_vit_tiny(num_classes: int = 0, cache: Path | str | None = None) -> ViT:
    """ViT-Ti/16 pretrained on ImageNet-21k, loaded from the local cache only.

    timm reads the cached file (and resolves its format); the weights are then
    copied by name into :class:`vitbias.vit.ViT`, which keeps timm's
    ``pretrained_cfg`` (input mean and std). Input ``(B, 3, 224, 224)``; with
    ``num_classes=0`` the model returns the ``(B, 192)`` [CLS] features.
    """
    import timm

    weights = pretrained_weights_file(cache)
    source = timm.create_model(PRETRAINED_VIT_TINY, pretrained=True, num_classes=num_classes,
                               pretrained_cfg_overlay={"file": str(weights)})
    model = from_timm(source)
    model.pretrained_cfg = dict(source.pretrained_cfg)
    return model
