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


# ---------------------------------------------------------------------------
# Symmetry
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# The data-scale crossover
# ---------------------------------------------------------------------------

# Dosovitskiy et al. (2021), Table 5: ImageNet top-1 (%) after fine-tuning at
# 384 px, by pretraining set. ViT-H/14 was not pretrained on ImageNet-1k alone.
PRETRAINING_SETS = ("ImageNet-1k", "ImageNet-21k", "JFT-300M")
VIT_TABLE5 = {
    (model, pretraining): Published(value, "%", f"{model} pretrained on {pretraining}, "
                                    f"ImageNet top-1 after fine-tuning at 384 px",
                                    "dosovitskiy2021vit", "Table 5")
    for model, values in {
        "ViT-B/32": (73.38, 81.28, 80.73),
        "ViT-B/16": (77.91, 83.97, 84.15),
        "ViT-L/32": (71.16, 80.99, 84.37),
        "ViT-L/16": (76.53, 85.15, 87.12),
        "ViT-H/14": (None, 85.13, 88.04),
    }.items()
    for pretraining, value in zip(PRETRAINING_SETS, values)
    if value is not None
}

# The sizes of the three pretraining sets, Dosovitskiy et al. (2021), Section 4.1.
PRETRAINING_IMAGES = {
    "ImageNet-1k": Published(1.3e6, "images", "ILSVRC-2012 ImageNet, 1k classes",
                             "dosovitskiy2021vit", "Section 4.1"),
    "ImageNet-21k": Published(14e6, "images", "ImageNet-21k, 21k classes",
                              "dosovitskiy2021vit", "Section 4.1"),
    "JFT-300M": Published(303e6, "images", "JFT, 18k classes", "dosovitskiy2021vit", "Section 4.1"),
}

# The random JFT subsets of the second experiment (Section 4.3, Figure 4),
# whose few-shot accuracies were only plotted, never printed.
JFT_SUBSETS = tuple(Published(n, "images", "random JFT subset, same hyperparameters, early stopping",
                              "dosovitskiy2021vit", "Section 4.3")
                    for n in (9e6, 30e6, 90e6))

# The BiT reference: ResNet152x4 pretrained on each set and fine-tuned on
# ImageNet (BiT-S, BiT-M: Kolesnikov et al. 2020, Table 2; BiT-L: Table 1).
BIT_R152X4 = {
    "ImageNet-1k": Published(81.30, "%", "BiT-S (ResNet152x4, ILSVRC-2012), ImageNet top-1",
                             "kolesnikov2020bit", "Table 2"),
    "ImageNet-21k": Published(85.39, "%", "BiT-M (ResNet152x4, ImageNet-21k), ImageNet top-1",
                              "kolesnikov2020bit", "Table 2"),
    "JFT-300M": Published(87.54, "%", "BiT-L (ResNet152x4, JFT-300M), ImageNet top-1",
                          "kolesnikov2020bit", "Table 1"),
}

# Dosovitskiy et al. (2021), Table 6: pretraining on JFT-300M for 7 or 14
# epochs; ImageNet top-1 (%) after fine-tuning and pretraining exaFLOPs.
VIT_TABLE6 = {
    (model, epochs): {
        "family": family,
        "accuracy": Published(accuracy, "%", f"{model}, {epochs} epochs on JFT-300M, ImageNet top-1",
                              "dosovitskiy2021vit", "Table 6"),
        "exaflops": Published(exaflops, "exaFLOPs", f"{model}, {epochs} epochs, pretraining compute",
                              "dosovitskiy2021vit", "Table 6"),
    }
    for family, model, epochs, accuracy, exaflops in (
        ("ViT", "ViT-B/32", 7, 80.73, 55),
        ("ViT", "ViT-B/16", 7, 84.15, 224),
        ("ViT", "ViT-L/32", 7, 84.37, 196),
        ("ViT", "ViT-L/16", 7, 86.30, 783),
        ("ViT", "ViT-L/16", 14, 87.12, 1567),
        ("ViT", "ViT-H/14", 14, 88.08, 4262),
        ("ResNet", "ResNet50x1", 7, 77.54, 50),
        ("ResNet", "ResNet50x2", 7, 82.12, 199),
        ("ResNet", "ResNet101x1", 7, 80.67, 96),
        ("ResNet", "ResNet152x1", 7, 81.88, 141),
        ("ResNet", "ResNet152x2", 7, 84.97, 563),
        ("ResNet", "ResNet152x2", 14, 85.56, 1126),
        ("ResNet", "ResNet200x3", 14, 87.22, 3306),
        ("hybrid", "R50x1+ViT-B/32", 7, 84.90, 106),
        ("hybrid", "R50x1+ViT-B/16", 7, 85.58, 274),
        ("hybrid", "R50x1+ViT-L/32", 7, 85.68, 246),
        ("hybrid", "R50x1+ViT-L/16", 7, 86.60, 859),
        ("hybrid", "R50x1+ViT-L/16", 14, 87.12, 1668),
    )
}

# Section 4.4's own summary of Figure 5 (average over five datasets).
VIT_COMPUTE_SAVING = (
    Published(2, "x", "ViT's compute saving over ResNets at equal transfer accuracy, low end",
              "dosovitskiy2021vit", "Section 4.4"),
    Published(4, "x", "ViT's compute saving over ResNets at equal transfer accuracy, high end",
              "dosovitskiy2021vit", "Section 4.4"),
)

# Table 2: the best fine-tuned ViT (at 518 px, with Polyak averaging).
VIT_H14_JFT_BEST = Published(88.55, "%", "ViT-H/14 pretrained on JFT-300M, ImageNet top-1, "
                             "fine-tuned at 518 px", "dosovitskiy2021vit", "Table 2")

# Smith et al. (2023), abstract: NFNets pretrained on JFT-4B.
NFNET_JFT4B_TOP1 = Published(90.4, "%", "strongest NFNet pretrained on JFT-4B, ImageNet top-1 "
                             "after fine-tuning", "smith2023convnets", "Abstract")
NFNET_COMPUTE_RANGE = (
    Published(0.4e3, "TPU-v4 core hours", "smallest pretraining budget", "smith2023convnets", "Abstract"),
    Published(110e3, "TPU-v4 core hours", "largest pretraining budget", "smith2023convnets", "Abstract"),
)

# Dai et al. (2021), abstract: CoAtNet pretrained on ImageNet-21k.
COATNET_IN21K_TOP1 = Published(88.56, "%", "CoAtNet pretrained on ImageNet-21k (13M images), "
                               "ImageNet top-1", "dai2021coatnet", "Abstract")
COATNET_IN21K_IMAGES = Published(13e6, "images", "ImageNet-21k as counted by CoAtNet",
                                 "dai2021coatnet", "Abstract")
COATNET_JFT_IMAGES = Published(300e6, "images", "JFT-300M as counted by CoAtNet",
                               "dai2021coatnet", "Abstract")
COATNET_LESS_DATA = Published(23, "x", "less pretraining data than the JFT-300M ViT-H/14 it matches",
                              "dai2021coatnet", "Abstract")


# ---------------------------------------------------------------------------
# Attention as convolution
# ---------------------------------------------------------------------------
