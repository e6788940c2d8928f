"""The robustness chapter's published numbers: present, well formed, and cited.

Every constant of the "Robustness and shape bias" section of
``vitbias.literature`` is a ``Published`` with a unit, a ``where`` and a key
that ``book/references.bib`` holds; numbers taken from a repository rather
than a paper say so in ``where``. A few checks tie the numbers to each other
the way their sources do (80 images in each of 16 categories; the ConViT
table's gap column is the ratio of its two accuracy columns).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pybtex.database import parse_file

from vitbias import literature as lit
from vitbias.literature import Published

BIB = Path(__file__).resolve().parent.parent / "book" / "references.bib"
KEYS = set(parse_file(str(BIB)).entries)


def leaves(value):
    """Every Published inside a constant (a Published, or dicts and tuples of them)."""
    if isinstance(value, Published):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from leaves(inner)
    elif isinstance(value, tuple):
        for inner in value:
            yield from leaves(inner)


CONSTANTS = {
    name: list(leaves(getattr(lit, name)))
    for name in (
        "GEIRHOS_CUE_CONFLICT_IMAGES", "GEIRHOS_CATEGORIES", "GEIRHOS_SHAPE_BIAS", "GEIRHOS_SHAPE_BIAS_REPO",
        "VIT22B_SHAPE_BIAS", "HUMAN_SHAPE_BIAS", "NASEER_PATCH_SIDE", "NASEER_PATCHES", "NASEER_OCCLUSION",
        "NASEER_OCCLUSION_80", "NASEER_OCCLUSION_80_REMOVED", "NASEER_OFFSET", "BAI_MATCHED", "BAI_OOD",
        "BAI_ADVERSARIAL", "BAI_PGD_STEPS", "BAI_TPA_GAP", "DEIT_EPOCHS", "DEIT_RANDOM_ERASING",
        "LAB_DISTANCE_FIRST", "LAB_DISTANCE_LAST", "LAB_POSITION_FAR_CELLS",
        "CONVIT_SAMPLE_EFFICIENCY", "CONVIT_SAMPLE_EFFICIENCY_GAP",
    )
}


@pytest.mark.parametrize("name", sorted(CONSTANTS))
def test_each_constant_is_published_numbers_with_a_unit_a_source_and_a_bib_key(name):
    numbers = CONSTANTS[name]
    assert numbers, f"{name} holds no Published number"
    for number in numbers:
        assert isinstance(number.value, (int, float)) and number.value >= 0, (name, number)
        assert number.unit and number.what and number.where, (name, number)
        assert number.key in KEYS, f"{name}: key {number.key!r} is not in {BIB.name}"


def test_numbers_from_a_repository_say_so_and_cite_the_repository():
    for name, numbers in CONSTANTS.items():
        for number in numbers:
            from_repo = number.key.endswith("repo")
            assert from_repo == number.where.startswith("repository "), (name, number.key, number.where)


def test_the_shape_bias_numbers_the_chapter_quotes():
    assert lit.GEIRHOS_CUE_CONFLICT_IMAGES.value == 80 * lit.GEIRHOS_CATEGORIES.value == 1280
    assert (lit.GEIRHOS_SHAPE_BIAS["ImageNet"].value, lit.GEIRHOS_SHAPE_BIAS["Stylized-ImageNet"].value) == (22, 81)
    for data, paper in lit.GEIRHOS_SHAPE_BIAS.items():
        assert abs(lit.GEIRHOS_SHAPE_BIAS_REPO[data].value - paper.value) < 1
    assert lit.GEIRHOS_SHAPE_BIAS["ImageNet"].value < lit.VIT22B_SHAPE_BIAS.value == 87
    assert lit.VIT22B_SHAPE_BIAS.value < lit.HUMAN_SHAPE_BIAS.value


def test_the_occlusion_and_matched_comparison_numbers():
    assert {k: v.value for k, v in lit.NASEER_OCCLUSION.items()} == {
        ("DeiT-S", 0.5): 70, ("ResNet-50", 0.5): 0.1, ("DeiT-B", 0.9): 37}
    assert lit.NASEER_PATCHES.value * lit.NASEER_PATCH_SIDE.value ** 2 == 224 ** 2
    deit, resnet = lit.BAI_MATCHED["DeiT-S"], lit.BAI_MATCHED["ResNet-50"]
    assert (deit["parameters"].value, deit["top1"].value) == (22e6, 76.8)
    assert (resnet["parameters"].value, resnet["top1"].value) == (25e6, 76.9)
    # The repository's table agrees with the paper's matched accuracies.
    assert lit.BAI_OOD["DeiT-S"]["ImageNet"].value == deit["top1"].value
    assert lit.BAI_OOD["ResNet-50"]["ImageNet"].value == resnet["top1"].value
    # Out of distribution DeiT-S stays ahead of every ResNet-50 recipe (mCE: lower is better).
    for model, row in lit.BAI_OOD.items():
        if model != "DeiT-S":
            assert row["ImageNet-A"].value < lit.BAI_OOD["DeiT-S"]["ImageNet-A"].value
            assert row["ImageNet-C"].value > lit.BAI_OOD["DeiT-S"]["ImageNet-C"].value


def test_the_convit_gap_column_is_the_ratio_of_its_accuracy_columns():
    assert sorted(lit.CONVIT_SAMPLE_EFFICIENCY) == sorted(lit.CONVIT_SAMPLE_EFFICIENCY_GAP) == [
        0.05, 0.1, 0.3, 0.5, 1.0]
    for fraction, pair in lit.CONVIT_SAMPLE_EFFICIENCY.items():
        ratio = 100 * (pair["ConViT-S"].value / pair["DeiT-S"].value - 1)
        assert abs(ratio - lit.CONVIT_SAMPLE_EFFICIENCY_GAP[fraction].value) <= 1, (fraction, ratio)
