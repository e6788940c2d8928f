"""The crossover in the papers: the published numbers the chapter quotes (the ViT paper's Tables 2, 5
and 6, BiT, DeiT, CoAtNet, NFNets, Steiner et al.) and the readings of them its prose makes."""

from __future__ import annotations

import numpy as np

from .. import crossover
from .. import literature as lit
from ..evidence import Evidence

SET = {"ImageNet-1k": "in1k", "ImageNet-21k": "in21k", "JFT-300M": "jft"}
# The rows of Table 6 the prose names.
TABLE6_NAMED = (("ViT-B/16", 7), ("ViT-L/32", 7), ("ViT-L/16", 14), ("ResNet50x1", 7), ("ResNet101x1", 7),
                ("ResNet200x3", 14), ("R50x1+ViT-B/32", 7), ("R50x1+ViT-L/16", 14))


def measure() -> Evidence:
    """The chapter's evidence: every number is published, or a ratio or difference of published ones."""
    found = Evidence("crossover-papers")
    column = _table5(found)
    _table2(found, column["JFT-300M"])
    for published in lit.JFT_SUBSETS:
        found.number(f"papers_jft_subset_{published.value / 1e6:.0f}m", published.value / 1e6)
    _table6(found)
    _beyond(found)
    return found


def _table5(found: Evidence) -> dict:
    """The ViT paper's Table 5 beside BiT and DeiT's convolutional networks; returns pretraining set ->
    model -> top-1 (%)."""
    t5, bit, images = lit.VIT_TABLE5, lit.BIT_R152X4, lit.PRETRAINING_IMAGES
    found.number("papers_t5_resolution", lit.VIT_TABLE5_RESOLUTION.value)
    models = {model for model, _ in t5}
    found.claim("Table 5 has five ViTs, four on all three sets and ViT-H/14 on the two larger ones",
                len(models) == 5 and {p for m, p in t5 if m == "ViT-H/14"} == set(lit.PRETRAINING_SETS[1:])
                and all({p for m, p in t5 if m == model} == set(lit.PRETRAINING_SETS)
                        for model in models - {"ViT-H/14"}))
    for (model, pretraining), published in t5.items():  # ViT-B/16 on ImageNet-1k -> papers_t5_b16_in1k
        found.number(f"papers_t5_{model.lower().removeprefix('vit-').replace('/', '')}_{SET[pretraining]}",
                     published.value)
    for pretraining, tag in SET.items():
        found.number(f"papers_bit_{tag}", bit[pretraining].value)
        found.number(f"papers_images_{tag}_m", images[pretraining].value / 1e6)
    column = {p: {model: value.value for (model, q), value in t5.items() if q == p} for p in SET}
    in1k, in21k, jft = column["ImageNet-1k"], column["ImageNet-21k"], column["JFT-300M"]
    found.number("papers_t5_gain_l16_jft", jft["ViT-L/16"] - jft["ViT-B/16"])
    gap_in21k = bit["ImageNet-21k"].value - max(in21k.values())
    found.number("papers_bit_gap_in21k", abs(gap_in21k))
    convnets = lit.DEIT_TABLE5_CONVNETS
    for model, row in convnets.items():
        tag = model.lower().split("-")[0]  # regnety, efficientnet
        found.number(f"papers_deit_t5_{tag}", row["top1"].value)
        found.number(f"papers_deit_t5_{tag}_px", row["resolution"].value)
    found.claim("on ImageNet-1k each Large ViT is below the Base ViT of its patch, the ResNet more than "
                "three points above every ViT, and DeiT's two CNNs above the ResNet",
                in1k["ViT-L/16"] < in1k["ViT-B/16"] and in1k["ViT-L/32"] < in1k["ViT-B/32"]
                and bit["ImageNet-1k"].value - max(in1k.values()) > 3
                and all(row["top1"].value > bit["ImageNet-1k"].value for row in convnets.values()))
    found.claim("on ImageNet-21k ViT-L/16 and ViT-H/14 are level, about a point ahead of ViT-B/16, and "
                "the ResNet within half a point of the best",
                abs(in21k["ViT-L/16"] - in21k["ViT-H/14"]) < 0.1
                and 0.5 < in21k["ViT-L/16"] - in21k["ViT-B/16"] < 1.5 and abs(gap_in21k) < 0.5)
    found.claim("on JFT-300M size pays, and ViT-H/14 is the only ViT above the ResNet",
                jft["ViT-H/14"] > jft["ViT-L/16"] > jft["ViT-L/32"] > jft["ViT-B/16"]
                and [m for m, v in jft.items() if v > bit["JFT-300M"].value] == ["ViT-H/14"])
    return column


def _table2(found: Evidence, jft: dict) -> None:
    """The ViT paper's Table 2, its best numbers and pretraining compute, against Table 5 on JFT-300M
    (``jft``: model -> top-1)."""
    t2 = {"ViT-L/16": lit.VIT_L16_JFT_BEST.value, "ViT-H/14": lit.VIT_H14_JFT_BEST.value}
    days = {model: published.value for model, published in lit.VIT_TABLE2_CORE_DAYS.items()}
    resnet = lit.BIT_R152X4["JFT-300M"].value
    found.number("papers_t2_l16", t2["ViT-L/16"])
    found.number("papers_t2_gain_l16", t2["ViT-L/16"] - jft["ViT-L/16"])
    found.number("papers_polyak_decay", lit.VIT_POLYAK_DECAY.value)
    found.number("papers_t2_gain_h14", t2["ViT-H/14"] - jft["ViT-H/14"])
    found.number("papers_t2_days_h14_k", days["ViT-H/14"] / 1e3)
    found.number("papers_t2_days_bit_k", days["BiT-L"] / 1e3)
    found.number("papers_t2_days_ratio", days["ViT-H/14"] / days["BiT-L"])
    found.claim("Table 2's recipe lifts both ViTs above BiT-L, carrying ViT-L/16 from below it",
                all(v > resnet for v in t2.values()) and jft["ViT-L/16"] < resnet < t2["ViT-L/16"]
                and all(t2[m] > jft[m] for m in t2))
    found.claim("ViT-H/14 took about a quarter of BiT-L's pretraining compute",
                0.2 < days["ViT-H/14"] / days["BiT-L"] < 0.3)


def table6_matches(t6: dict) -> tuple[list, dict]:
    """``(front, matches)`` of the ViT paper's Table 6 (``lit.VIT_TABLE6``): the ViTs of its frontier,
    cheapest first, and ResNet -> ``(exaFLOPs, top-1, crossover.Match)``, the compute a frontier ViT
    needs to match it."""
    vits = [key for key, row in t6.items() if row["family"] == "ViT"]
    vit_compute = [t6[key]["exaflops"].value for key in vits]
    vit_accuracy = [t6[key]["accuracy"].value for key in vits]
    front = [vits[i] for i in crossover.frontier(vit_compute, vit_accuracy)]
    matches = {key: (row["exaflops"].value, row["accuracy"].value,
                     crossover.compute_to_match(row["accuracy"].value, vit_compute, vit_accuracy))
               for key, row in t6.items() if row["family"] == "ResNet"}
    return front, matches


def exactly_matched(matches: dict) -> dict:
    """The ResNets inside the frontier's range: ResNet -> ``(exaFLOPs, top-1, ViT exaFLOPs to match)``."""
    return {key: (resnet, accuracy, m.compute) for key, (resnet, accuracy, m) in matches.items() if m.exact}


def _table6(found: Evidence) -> None:
    """Equal compute: the ViT paper's Table 6, the ResNets against the ViT frontier and the hybrids."""
    t6 = lit.VIT_TABLE6
    missing = [key for key in TABLE6_NAMED if key not in t6]
    if missing:
        raise ValueError(f"Table 6 lacks the rows the chapter names: {missing}")
    front, matches = table6_matches(t6)
    vits = [key for key, row in t6.items() if row["family"] == "ViT"]
    exact = exactly_matched(matches)
    ratios = {key: resnet / vit for key, (resnet, _, vit) in exact.items()}
    cheapest = t6[front[0]]
    found.number("papers_t6_frontier_size", len(front))
    found.number("papers_t6_vits", len(vits))
    found.number("papers_t6_exact_matches", len(exact))
    found.number("papers_t6_ratio_min", min(ratios.values()))
    found.number("papers_t6_ratio_max", max(ratios.values()))
    found.number("papers_t6_saving_low", lit.VIT_COMPUTE_SAVING[0].value)
    found.number("papers_t6_saving_high", lit.VIT_COMPUTE_SAVING[1].value)
    found.number("papers_t6_cheapest_vit_exaflops", cheapest["exaflops"].value)
    found.number("papers_t6_r50_exaflops", t6["ResNet50x1", 7]["exaflops"].value)
    found.number("papers_t6_r200_exaflops", t6["ResNet200x3", 14]["exaflops"].value)
    found.number("papers_t6_r200_match", matches["ResNet200x3", 14][2].compute)
    found.claim("ViT-B/16 is off the frontier, where ViT-L/32 is",
                ("ViT-B/16", 7) not in front and ("ViT-L/32", 7) in front)
    found.claim("every ResNet matched exactly costs more than the ViT that matches it",
                all(r > 1 for r in ratios.values()))
    found.claim("the two smallest ResNets are below the cheapest frontier ViT, and ResNet50x1 is cheaper "
                "than any ViT",
                set(matches) - set(exact) == {("ResNet50x1", 7), ("ResNet101x1", 7)}
                and t6["ResNet50x1", 7]["exaflops"].value < cheapest["exaflops"].value)
    # The cheapest hybrid beats every ViT of up to twice its compute, and the most expensive one equals
    # the ViT of about the same compute.
    small, large = t6["R50x1+ViT-B/32", 7], t6["R50x1+ViT-L/16", 14]
    found.claim("the hybrids sit above the ViTs at small budgets and merge with them at large ones",
                all(small["accuracy"].value > t6[k]["accuracy"].value for k in vits
                    if t6[k]["exaflops"].value <= 2 * small["exaflops"].value)
                and abs(large["accuracy"].value - t6["ViT-L/16", 14]["accuracy"].value) < 0.05)


def _beyond(found: Evidence) -> None:
    """Two results that keep the crossover from becoming a slogan (NFNets, CoAtNet), and the recipe priced
    in data (DeiT, Steiner et al.)."""
    images = {name: published.value for name, published in lit.PRETRAINING_IMAGES.items()}
    found.number("papers_nfnet_top1", lit.NFNET_JFT4B_TOP1.value)
    found.number("papers_nfnet_compute_low_k", lit.NFNET_COMPUTE_RANGE[0].value / 1e3)
    found.number("papers_nfnet_compute_high_k", lit.NFNET_COMPUTE_RANGE[1].value / 1e3)
    found.number("papers_coatnet_top1", lit.COATNET_IN21K_TOP1.value)
    found.number("papers_vit_h14_best", lit.VIT_H14_JFT_BEST.value)
    found.number("papers_coatnet_images_m", lit.COATNET_IN21K_IMAGES.value / 1e6)
    found.number("papers_coatnet_jft_m", lit.COATNET_JFT_IMAGES.value / 1e6)
    data_ratio = lit.COATNET_JFT_IMAGES.value / lit.COATNET_IN21K_IMAGES.value
    found.number("papers_coatnet_data_ratio", data_ratio)
    found.number("papers_coatnet_less_data", lit.COATNET_LESS_DATA.value)
    found.number("papers_deit_b_top1", lit.DEIT_B_TOP1.value)
    found.number("papers_steiner_factor", lit.STEINER_DATA_FACTOR.value)
    found.number("papers_steiner_jft_ratio", images["JFT-300M"] / images["ImageNet-21k"])
    found.claim("CoAtNet reaches ViT-H/14's best on the quoted times less data, the ratio of the two sets "
                "rounded", round(data_ratio) == lit.COATNET_LESS_DATA.value
                and lit.COATNET_IN21K_TOP1.value > lit.VIT_H14_JFT_BEST.value)
    found.claim("DeiT-B passes BiT-S and every ViT of the 2020 recipe on ImageNet-1k",
                lit.DEIT_B_TOP1.value > lit.BIT_R152X4["ImageNet-1k"].value
                and lit.DEIT_B_TOP1.value > max(v.value for (_, p), v in lit.VIT_TABLE5.items()
                                                if p == "ImageNet-1k"))
    # Steiner et al.'s "order of magnitude" is ImageNet-21k against ImageNet-1k: within a factor of 1.5
    # of the ratio of their images; JFT-300M against ImageNet-21k is larger again.
    in21k_ratio = images["ImageNet-21k"] / images["ImageNet-1k"]
    found.claim("Steiner et al.'s factor is about ImageNet-21k's images over ImageNet-1k's, and JFT-300M "
                "is larger again",
                abs(np.log(lit.STEINER_DATA_FACTOR.value / in21k_ratio)) < np.log(1.5)
                and images["JFT-300M"] / images["ImageNet-21k"] > lit.STEINER_DATA_FACTOR.value)
