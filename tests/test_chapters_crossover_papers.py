"""The crossover-papers chapter's evidence (``vitbias.chapters.crossover_papers``), on the published
numbers and on altered ones."""

import dataclasses

import pytest

from vitbias import crossover
from vitbias import literature as lit
from vitbias.chapters import crossover_papers as chapter


def altered(published, value):
    return dataclasses.replace(published, value=value)


def test_every_claim_holds_on_the_published_numbers():
    found = chapter.measure()
    assert len(found.claims) == 13 and all(found.claims.values())


def test_table5_is_glued_under_short_names_with_differences_of_published_numbers():
    found = chapter.measure()
    t5 = lit.VIT_TABLE5
    assert found["papers_t5_b16_in1k"] == t5["ViT-B/16", "ImageNet-1k"].value
    assert found["papers_t5_h14_jft"] == t5["ViT-H/14", "JFT-300M"].value
    assert "papers_t5_h14_in1k" not in found
    assert found["papers_t5_gain_l16_jft"] == t5["ViT-L/16", "JFT-300M"].value - t5["ViT-B/16", "JFT-300M"].value
    assert found["papers_images_jft_m"] == lit.PRETRAINING_IMAGES["JFT-300M"].value / 1e6
    assert found["papers_jft_subset_90m"] == 90


def test_the_matched_resnets_are_those_the_frontier_reaches_exactly():
    front, matches = chapter.table6_matches(lit.VIT_TABLE6)
    exact = chapter.exactly_matched(matches)
    assert front[0] == ("ViT-B/32", 7)
    assert set(matches) - set(exact) == {("ResNet50x1", 7), ("ResNet101x1", 7)}
    resnet, accuracy, compute = exact["ResNet200x3", 14]
    assert compute == crossover.compute_to_match(accuracy, *zip(*[
        (row["exaflops"].value, row["accuracy"].value) for row in lit.VIT_TABLE6.values()
        if row["family"] == "ViT"])).compute
    assert chapter.measure()["papers_t6_r200_match"] == compute


def test_a_deit_b_below_bit_s_fails_its_claim(monkeypatch):
    monkeypatch.setattr(lit, "DEIT_B_TOP1", altered(lit.DEIT_B_TOP1, 75.0))
    claims = chapter.measure().claims
    assert not claims["DeiT-B passes BiT-S and every ViT of the 2020 recipe on ImageNet-1k"]
    assert sum(not holds for holds in claims.values()) == 1


def test_a_resnet_above_vit_h14_on_jft_fails_the_claim_that_only_it_passes_the_resnet(monkeypatch):
    bit = dict(lit.BIT_R152X4)
    bit["JFT-300M"] = altered(bit["JFT-300M"], 99.0)
    monkeypatch.setattr(lit, "BIT_R152X4", bit)
    claims = chapter.measure().claims
    assert not claims["on JFT-300M size pays, and ViT-H/14 is the only ViT above the ResNet"]


def test_a_cheaper_bit_l_moves_the_compute_ratio_and_fails_the_quarter(monkeypatch):
    days = dict(lit.VIT_TABLE2_CORE_DAYS)
    days["BiT-L"] = altered(days["BiT-L"], 5e3)
    monkeypatch.setattr(lit, "VIT_TABLE2_CORE_DAYS", days)
    found = chapter.measure()
    assert found["papers_t2_days_ratio"] == days["ViT-H/14"].value / 5e3
    assert not found.claims["ViT-H/14 took about a quarter of BiT-L's pretraining compute"]


def test_a_table6_without_the_resnet_the_prose_names_is_refused(monkeypatch):
    monkeypatch.setattr(lit, "VIT_TABLE6", {k: v for k, v in lit.VIT_TABLE6.items() if k != ("ResNet200x3", 14)})
    with pytest.raises(ValueError, match=r"Table 6 lacks the rows the chapter names: \[\('ResNet200x3', 14\)\]"):
        chapter.measure()
