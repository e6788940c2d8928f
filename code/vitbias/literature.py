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


# ---------------------------------------------------------------------------
# Attention as convolution
# ---------------------------------------------------------------------------

# The chapter quotes no figure from Cordonnier, Loukas and Jaggi's experiments
# (ICLR 2020, Section 4): their trained heads are described in words only.
