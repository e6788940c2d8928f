"""The two models the experiments compare, each built from a plain configuration.

- :class:`SmallCNN`: stages of 3 x 3 convolutions (batch norm, ReLU) with 2 x 2
  max pooling between them, global average pooling and a linear head. Its
  assumptions are built in: every filter is local and shared by all positions.
- :func:`tiny_vit`: timm's ``VisionTransformer`` at a small width and depth,
  with patches sized for 32 px images. Only its patch embedding is local.

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

MODEL_KINDS = ("cnn", "vit")


class SmallCNN(nn.Module):
    """Conv stages ``channels[i]`` (``depth`` convolutions each), pooled by 2 between stages.

    Input ``(B, 3, H, W)`` gives logits ``(B, num_classes)``; ``features``
    returns the pooled ``(B, channels[-1])`` vector the head reads.
    """

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


def tiny_vit(img_size: int = 32, patch_size: int = 4, embed_dim: int = 64, depth: int = 4,
             num_heads: int = 4, mlp_ratio: float = 4.0, num_classes: int = 10,
             global_pool: str = "token"):
    """A timm ``VisionTransformer``: ``(img_size / patch_size)^2`` tokens plus [CLS].

    Input ``(B, 3, img_size, img_size)`` gives logits ``(B, num_classes)``.
    """
    from timm.models.vision_transformer import VisionTransformer

    if img_size % patch_size:
        raise ValueError(f"patch_size must divide img_size, got {patch_size} and {img_size}")
    if embed_dim % num_heads:
        raise ValueError(f"num_heads must divide embed_dim, got {num_heads} and {embed_dim}")
    return VisionTransformer(img_size=img_size, patch_size=patch_size, num_classes=num_classes,
                             embed_dim=embed_dim, depth=depth, num_heads=num_heads,
                             mlp_ratio=mlp_ratio, global_pool=global_pool)


def build(spec: dict) -> nn.Module:
    """The model named by ``spec["kind"]`` with the remaining keys as its arguments."""
    spec = dict(spec)
    kind = spec.pop("kind", None)
    if kind == "cnn":
        return SmallCNN(**spec)
    if kind == "vit":
        return tiny_vit(**spec)
    raise ValueError(f"unknown model kind {kind!r}: expected one of {MODEL_KINDS}")


def features(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """What the classifier head reads, ``(B, D)``: pooled maps or the ViT's [CLS] row."""
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


def pretrained_vit_tiny(num_classes: int = 0, cache: Path | str | None = None) -> nn.Module:
    """ViT-Ti/16 pretrained on ImageNet-21k, loaded from the local cache only.

    Input ``(B, 3, 224, 224)``; with ``num_classes=0`` the model returns the
    ``(B, 192)`` [CLS] features.
    """
    import timm

    weights = pretrained_weights_file(cache)
    return timm.create_model(PRETRAINED_VIT_TINY, pretrained=True, num_classes=num_classes,
                             pretrained_cfg_overlay={"file": str(weights)})
