"""The robustness chapter's evidence (``vitbias.chapters.robustness``), on made-up trained numbers."""

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

from vitbias import data, profile
from vitbias.chapters import robustness as chapter
from vitbias.chapters.robustness import GRID, OFF, kept_table, measure, partly, shares_kept
from vitbias.evidence import Evidence
from vitbias.robustness import SIX_TRIALS

BOOK = Path(__file__).resolve().parents[1] / "book" / "robustness.md"
SEEDS = (0, 1, 2)
FRACTIONS = (0.0, 0.25, 0.5, 0.75, 0.9)
EPSILONS = (1, 2, 4)
VARIANTS = tuple(chapter.VARIANT_SLUG)
# The section functions measure composes, in the page's order.
SECTIONS = ("six_trials", "shape_bias_by_data", "half_blanked", "one_switch_at_a_time", "training_fit",
            "weak_attack", "matched_accuracy", "published")


def budget():
    return dataclasses.replace(profile.budget("quick"), seeds=SEEDS)


def seeds_of(mean, key=0):
    """Three seeds around ``mean``, spread by a few thousandths (their pattern set by ``key``)."""
    return mean + 0.002 * np.random.default_rng(key).standard_normal(len(SEEDS))


def images(n, classes=5):
    return data.ImageSet(np.zeros((n, 3, 8, 8), np.uint8), np.zeros(n, np.int64),
                         tuple(f"c{i}" for i in range(classes)), (0.5,) * 3, (0.25,) * 3)


def inputs(*, random_vit=0.8, erasing_on_noise=0.6, clean_cnn=0.99, vit_kept=0.7):
    """The chapter's inputs: the data moves the shape bias further than the architecture, the ViT is
    below its ceiling but ahead of the CNN partly blanked, erasing helps the CNN on noise, and the
    plain ViT keeps ``vit_kept`` of its margin where its matched CNN keeps 0.5."""
    done = {}
    for s in SEEDS:
        for model in ("CNN", "ViT"):
            for condition in (*chapter.CONDITIONS, "erasing"):
                done[model, condition, s] = SimpleNamespace(accuracy=0.95 if model == "CNN" else 0.8,
                                                            train_accuracy=0.995)
    shape = {"plain fill": 0.5, "predictive texture": 0.2, "random texture": 0.8}
    bias = {(m, c): seeds_of(random_vit if (m, c) == ("ViT", "random texture") else
                             shape[c] + (0.02 if m == "ViT" else 0.0), key=k)
            for k, (m, c) in enumerate((m, c) for m in ("CNN", "ViT") for c in chapter.CONDITIONS)}
    curves = {}
    for k, name in enumerate(chapter.RUN_OF):
        for j, variant in enumerate(VARIANTS):
            top = clean_cnn if name.startswith("CNN") else 0.8
            level = erasing_on_noise if (name, variant) == ("CNN, erasing", "on the grid, noise") else 0.4
            curve = np.array([top, 0.5, level, 0.3, 0.2]) + 0.01 * j + (0.0 if name.startswith("CNN") else 0.1)
            curve[0] = top
            curves[name, variant] = np.stack([curve + d for d in seeds_of(0.0, key=10 * k + j)])
    attack = {"accuracy": {name: seeds_of(0.3, key=40 + k) for k, name in enumerate(chapter.RUN_OF)},
              "steps": 3, "epsilon": 2 / 255, "images": images(300)}
    cnn = "CNN, 800 images"  # the matched CNN is the crossover chapter's, at one of its sizes
    runs = {name: [SimpleNamespace(accuracy=a) for a in seeds_of(0.8, key=50 + k)]
            for k, name in enumerate(("ViT", "ViT, conv stem", cnn))}
    kept = {}
    for k, name in enumerate(runs):
        for column in (GRID, OFF, *EPSILONS):
            kept[name, column] = seeds_of(vit_kept if name == "ViT" else 0.5, key=60 + k)
    matched = {"runs": runs, "partner": {"ViT": cnn, "ViT, conv stem": cnn},
               "size": {"ViT": 800, "ViT, conv stem": 800}, "kept": kept, "epsilons": EPSILONS, "steps": 10}
    return {"budget": budget(), "done": done, "conflict": images(1000), "bias": bias,
            "occlusion": {"curves": curves, "fractions": FRACTIONS, "images": images(500)},
            "attack": attack, "matched": matched}


def found_with(**change):
    given = inputs(**change)
    return measure(given.pop("budget"), given.pop("done"), given.pop("conflict"), given.pop("bias"), **given)


def test_every_name_the_page_glues_is_measured_and_every_claim_holds_on_consistent_numbers():
    found = found_with()
    glued = set(re.findall(r"\{glue:text\}`([a-z0-9_]+)", BOOK.read_text()))
    assert glued and glued <= set(found.names())
    assert all(found.claims.values()), found.claims


def test_the_six_hand_made_trials_count_three_shape_two_texture_and_one_neither():
    found = found_with()
    assert (found["rob_six_shape"], found["rob_six_texture"], found["rob_six_neither"]) == (3, 2, 1)
    assert found["rob_six_trial_bias"] == 0.6


def test_the_page_calls_every_section_once_in_the_order_measure_composes_them():
    page = BOOK.read_text()
    calls = [page.count(f"chapter.{name}(evidence") for name in SECTIONS]
    assert calls == [1] * len(SECTIONS)
    assert sorted(SECTIONS, key=lambda name: page.index(f"chapter.{name}(evidence")) == list(SECTIONS)


def test_a_count_that_drops_no_trial_breaks_the_six_trials_claim():
    found = Evidence("robustness")
    chapter.six_trials(found, SIX_TRIALS, {"shape": 3, "texture": 3, "neither": 0}, 0.5)
    assert not found.claims["the fourth answer names neither cue and drops out"]


def test_setup_numbers_are_exact_and_trained_means_carry_a_band():
    found = found_with()
    assert found["rob_chance"] == 0.2 and found["rob_n_occluded"] == 500 and found["rob_n_attacked"] == 300
    assert (found["rob_partly_low"], found["rob_partly_high"]) == (25.0, 75.0)
    assert found["rob_pgd_eps_pixels"] == 2 and found["rob_match_vit_cnn_size"] == 800
    assert found["rob_bias_cnn_random"] == pytest.approx(0.8 + np.mean(seeds_of(0.0, key=2)))
    assert found.entries["rob_bias_cnn_random.tol"]["abs"] > 0


def test_the_data_decides_when_random_texture_raises_both_models_further_than_the_architecture_moves_them():
    found = found_with()
    assert found["rob_bias_verdict"] == "the data decides more than the architecture"
    assert found["rob_data_cnn"] == found["rob_data_vit"] == "rises"


def test_a_vit_that_random_texture_does_not_move_breaks_the_claim_and_changes_the_verdict():
    found = found_with(random_vit=0.22)
    assert not found.claims["when texture is noise, both models learn to look past it"]
    assert found["rob_data_vit"].startswith("moves by only")
    assert found["rob_bias_verdict"] == "the seeds cannot show that the data moves both models' shape bias"


def test_the_recipe_claim_fails_when_erasing_does_not_help_the_cnn_on_noise():
    assert found_with().claims["a recipe protects against the holes it was trained with"]
    found = found_with(erasing_on_noise=0.4)
    assert not found.claims["a recipe protects against the holes it was trained with"]


def test_the_ceiling_claim_fails_when_the_cnn_is_not_near_perfect_on_clean_images():
    found = found_with(clean_cnn=0.9)
    assert not found.claims["our ViT is below its ceiling on clean images while the CNN is near perfect"]


def test_a_vit_ahead_both_at_equal_recipe_and_at_matched_accuracy_keeps_its_gap():
    found = found_with()
    assert found["rob_matched_grid"] == "the ViT" and found["rob_match_vit_grid_text"] == "more than the CNN"
    assert found["rob_match_grid_survives"] == ("With black squares on the grid, the ViT is ahead at equal "
                                                "recipe and the ViT keeps more at matched accuracy, so the "
                                                "gap survives the matching.")


def test_a_vit_behind_at_matched_accuracy_reverses_the_gap_and_one_level_says_how_close():
    assert found_with(vit_kept=0.3)["rob_match_grid_survives"].endswith("the CNN keeps more at matched "
                                                                        "accuracy, so the gap reverses.")
    level = found_with(vit_kept=0.5)["rob_match_grid_survives"]
    assert " and neither keeps more at matched accuracy (0.00 apart, where three seeds need more than " in level
    assert level.endswith("so the gap does not survive the matching.")


def test_the_partly_blanked_fractions_are_a_quarter_to_three_quarters():
    assert partly(FRACTIONS) == [1, 2, 3]
    assert partly((0.0, 0.1, 0.9)) == []


def test_the_kept_table_has_one_row_per_model_and_a_column_per_perturbation():
    runs = {"ViT": [SimpleNamespace(accuracy=0.8), SimpleNamespace(accuracy=0.9)]}
    kept = {("ViT", c): np.array([0.5, 0.7]) for c in (GRID, OFF, *EPSILONS)}
    assert kept_table(runs, kept, EPSILONS).splitlines() == [
        "| model | test accuracy | kept, partly blanked on the grid | off the grid | kept under attack, 1/255 "
        "| kept under attack, 2/255 | kept under attack, 4/255 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        "| ViT | 0.850 | 0.60 | 0.60 | 0.60 | 0.60 | 0.60 |"]


class Unmoved(nn.Module):
    """Answers class 0 whatever it is shown (its logits depend on the pixels with weight zero)."""

    def __init__(self):
        super().__init__()
        self.logits = nn.Parameter(torch.tensor([1.0, 0.0, 0.0, 0.0, 0.0]))

    def forward(self, x):
        return self.logits + 0.0 * x.flatten(1).sum(1, keepdim=True)


def test_a_model_no_perturbation_moves_keeps_its_whole_margin_over_chance():
    runs = {"ViT": [SimpleNamespace(model=Unmoved()) for _ in SEEDS]}
    variants = {GRID: (0, "zero"), OFF: (2, "zero")}
    kept = shares_kept(runs, images(20), images(10), patch=4, variants=variants, fractions=FRACTIONS,
                       epsilons=(1, 4), steps=2, seeds=SEEDS)
    assert set(kept) == {("ViT", GRID), ("ViT", OFF), ("ViT", 1), ("ViT", 4)}
    assert all(np.array_equal(v, np.ones(len(SEEDS))) for v in kept.values())


def test_a_missing_condition_is_refused():
    given = inputs()
    del given["bias"]["ViT", "random texture"]
    with pytest.raises(ValueError, match="bias lacks"):
        measure(given.pop("budget"), given.pop("done"), given.pop("conflict"), given.pop("bias"), **given)


def test_fractions_without_one_half_are_refused():
    given = inputs()
    given["occlusion"]["fractions"] = (0.0, 0.25, 0.75, 0.9, 1.0)
    with pytest.raises(ValueError, match="one half"):
        measure(given.pop("budget"), given.pop("done"), given.pop("conflict"), given.pop("bias"), **given)


def test_an_attack_that_scores_too_few_models_is_refused():
    given = inputs()
    accuracy = dict(given["attack"]["accuracy"])
    del accuracy["ViT, erasing"]
    with pytest.raises(ValueError, match="attack accuracy lacks"):
        chapter.weak_attack(Evidence("robustness"), accuracy, {}, chapter.one_run_sds(), steps=3,
                            epsilon=2 / 255, images=images(300))
