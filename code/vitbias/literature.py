"""Published numbers the book quotes, each with its paper and table.

The book never types a published number into its prose: it glues it from
here, so the source of every quoted figure is one lookup away. ``key`` is the
paper's entry in ``book/references.bib``; ``where`` names the table, figure or
section the number comes from.

Each chapter's numbers have their own section below.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Published:
    """One published number: its value, unit, what it measures and where it is printed."""

    value: float
    unit: str
    what: str
    key: str
    where: str


# ---------------------------------------------------------------------------
# Introduction and the bias toy
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Patches as tokens
# ---------------------------------------------------------------------------

VIT_BASE_PARAMETERS = Published(
    86e6, "parameters", "ViT-Base, as listed with the model variants (rounded to millions)",
    "dosovitskiy2021vit", "Table 1")
DEIT_B_TOP1 = Published(
    81.8, "% top-1", "DeiT-B trained on ImageNet-1k alone, ImageNet-1k validation at 224 px",
    "touvron2021deit", "Table 5")
DEIT_B_DISTILLED_TOP1 = Published(
    83.4, "% top-1", "DeiT-B with the distillation token and a RegNetY-16GF teacher, same data",
    "touvron2021deit", "Table 5")
SWIN_L_TOP1 = Published(
    87.3, "% top-1", "Swin-L pretrained on ImageNet-22K, ImageNet-1K validation",
    "liu2021swin", "abstract")
SWIN_L_COCO_BOX_AP = Published(
    58.7, "box AP", "Swin-L backbone, COCO test-dev object detection",
    "liu2021swin", "abstract")
# The lecture lab this chapter's experiments follow (CIFAR-10 images).
LAB_JIGSAW_WITHOUT_POSITIONS = Published(
    1e-7, "logit change", "largest logit change under a patch jigsaw, untrained TinyViT "
    "without positions", "insper2026vit", "lab, 'Why positions are needed'")
LAB_JIGSAW_WITH_POSITIONS = Published(
    9e-3, "logit change", "the same with a learned position table (std 0.02)",
    "insper2026vit", "lab, 'Why positions are needed'")
LAB_TWO_WAYS = Published(
    1e-6, "difference", "Conv2d and Linear-on-flattened-patches embeddings, largest difference",
    "insper2026vit", "lab, 'The patch embedding is a convolution'")
LAB_PINV_ERROR_TI16 = Published(
    0.37, "relative error", "patches rebuilt from pretrained ViT-Ti/16 tokens through the "
    "pseudoinverse of the embedding", "insper2026vit", "lab, 'Patch size is the whole design decision'")



# ---------------------------------------------------------------------------
# Symmetry
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# The data-scale crossover
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Attention as convolution
# ---------------------------------------------------------------------------
