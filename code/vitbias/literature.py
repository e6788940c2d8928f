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
