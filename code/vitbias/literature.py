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

# Zhang (2019): ResNet-50 on ImageNet, trained without and with a low-pass
# filter before every subsampling (Rect-2, Tri-3 and Bin-5 are box, triangle
# and binomial filters with 2, 3 and 5 taps). Accuracy is top-1 on the
# validation set; consistency is how often two random 224x224 crops of one
# image get the same top-1 class. The paper's ResNet50 ImageNet results;
# the author's repository (adobe/antialiased-cnns, results section of the
# README as of May 2019) prints the same numbers.

_ZHANG_WHERE = "ImageNet classification results, ResNet50 rows (Baseline, Rect-2, Tri-3, Bin-5)"

ZHANG2019_RESNET50_ACCURACY = {
    name: Published(value, "% top-1", f"ResNet-50 ImageNet top-1 accuracy, {name}", "zhang2019shift", _ZHANG_WHERE)
    for name, value in (("Baseline", 76.16), ("Rect-2", 76.81), ("Tri-3", 76.83), ("Bin-5", 77.04))
}

ZHANG2019_RESNET50_CONSISTENCY = {
    name: Published(value, "%", f"ResNet-50 ImageNet shift consistency, {name}", "zhang2019shift", _ZHANG_WHERE)
    for name, value in (("Baseline", 89.20), ("Rect-2", 89.96), ("Tri-3", 90.91), ("Bin-5", 91.31))
}


# ---------------------------------------------------------------------------
# The data-scale crossover
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Attention as convolution
# ---------------------------------------------------------------------------

# The chapter quotes no figure from Cordonnier, Loukas and Jaggi's experiments
# (ICLR 2020, Section 4): their trained heads are described in words only.
