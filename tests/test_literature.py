"""The crossover and patches chapters' newer published numbers: well formed, cited, and consistent.

Each is a ``Published`` with a unit, a ``where`` and a key of
``book/references.bib``; a few checks tie them to each other the way the
sources do (Table 2's recipe lifts the ViTs above Table 5's, "about a quarter"
of BiT-L's compute, the lesson's GFLOPs as multiply-adds).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pybtex.database import parse_file

from tests.test_literature_robustness import leaves
from vitbias import cost, vit
from vitbias import literature as lit

BIB = Path(__file__).resolve().parent.parent / "book" / "references.bib"
KEYS = set(parse_file(str(BIB)).entries)
NAMES = ("VIT_L16_JFT_BEST", "VIT_H14_JFT_BEST", "VIT_TABLE2_CORE_DAYS", "DEIT_TABLE5_CONVNETS",
         "STEINER_DATA_FACTOR", "LESSON_VIT_B16_GFLOPS")


@pytest.mark.parametrize("name", NAMES)
def test_each_constant_is_published_numbers_with_a_unit_a_source_and_a_bib_key(name):
    numbers = list(leaves(getattr(lit, name)))
    assert numbers
    for number in numbers:
        assert isinstance(number.value, (int, float)) and number.value > 0, (name, number)
        assert number.unit and number.what and number.where, (name, number)
        assert number.key in KEYS, f"{name}: key {number.key!r} is not in {BIB.name}"


def test_table_2_lifts_both_vits_above_table_5_and_above_bit_l():
    t5 = lit.VIT_TABLE5
    for model, best in (("ViT-L/16", lit.VIT_L16_JFT_BEST), ("ViT-H/14", lit.VIT_H14_JFT_BEST)):
        assert best.value > t5[model, "JFT-300M"].value
        assert best.value > lit.BIT_R152X4["JFT-300M"].value
    days = lit.VIT_TABLE2_CORE_DAYS
    assert round(days["ViT-H/14"].value / days["BiT-L"].value, 1) == 0.3  # "about a quarter"


def test_the_deit_table_5_convnets_and_the_lessons_gflops():
    assert {m: r["top1"].value for m, r in lit.DEIT_TABLE5_CONVNETS.items()} == {
        "RegNetY-16GF": 82.9, "EfficientNet-B7": 84.3}
    assert round(cost.forward_macs(vit.VIT_B_16)["total"] / 1e9, 1) == lit.LESSON_VIT_B16_GFLOPS.value


def test_the_lab_without_augmentation():
    lab = lit.LAB_CROSSOVER
    assert lab["noaug_cnn"] == lab["cnn"][1] and lab["noaug_vit"] < lab["vit"][1]
    assert lab["noaug_loss_cnn"] < lab["noaug_loss_vit"]
