"""The locality chapter's evidence (``vitbias.chapters.locality``), on made-up measurements of untrained ViTs."""

import dataclasses
import re
import types
from pathlib import Path

import numpy as np
import pytest

from vitbias import chapters, data, locality, plan, profile, runs, vit
from vitbias.chapters import locality as chapter
from vitbias.evidence import Evidence

BUDGET = dataclasses.replace(profile.budget("quick"), seeds=(0, 1, 2))
SMALL, LARGE = plan.locality_sizes(BUDGET)
GRID, PATCH = plan.locality_grid(BUDGET)
UNIFORM = locality.uniform_attention_distance(GRID, GRID, PATCH)
PAGE = Path(__file__).resolve().parent.parent / "book" / "locality.md"
LAYERS, HEADS = 2, 4
WIGGLE = np.array([-0.01, 0.0, 0.01])  # how the made-up seeds spread, well within one run's sd
# three pretrained ViTs' heads, (seeds, layers, heads) in px: the last layer looks farther than the first
PRETRAINED_DISTANCE = np.array([[[20.0, 60.0, 80.0], [100.0, 110.0, 120.0]]]) + 10 * WIGGLE[:, None, None]


def made_up_runs(budget=BUDGET):
    """Each run of the chapter with an untrained model drawn from its seed and made-up accuracies."""
    trained = {}
    for key, config in chapters.chapter_runs("locality", budget).items():
        model = runs.seeded_model(config["model"], config["train"]["seed"]).eval()
        trained[key] = types.SimpleNamespace(config=config, model=model, accuracy=0.6 + 0.01 * key[1],
                                             train_accuracy=0.9 + 0.01 * key[1])
    return trained


TRAINED = made_up_runs()


def made_up_test_set(count=4):
    images = np.random.default_rng(0).integers(0, 256, size=(count, 3, 32, 32), dtype=np.uint8)
    return data.ImageSet(images, np.zeros(count, dtype=int), ("a", "b"), (0.5,) * 3, (0.25,) * 3)


TEST_SET = made_up_test_set()
MAPS = chapter.kept_maps(BUDGET, TRAINED, TEST_SET)


def distances(first, others=0.9, local_head=None):
    """(seeds, layers, heads) in px: the first layer's heads at ``first`` of uniform, the others at
    ``others``; ``local_head``, where given, puts head 0 of the last layer there."""
    fraction = np.full((len(BUDGET.seeds), LAYERS, HEADS), others) + WIGGLE[:, None, None]
    fraction[:, 0] = first + WIGGLE[:, None]
    if local_head is not None:
        fraction[:, -1, 0] = local_head + WIGGLE
    return fraction * UNIFORM


def inputs(**changes):
    """The measurements the page hands to ``measure``, made up."""
    found = {
        "conv": locality.conv_receptive_field(14, 3, 8),
        "per_size": {SMALL: distances(0.8), LARGE: distances(0.7, local_head=0.3)},
        "images": len(TEST_SET), "maps": MAPS, "stem": distances(0.85),
        "shuffled": {"shuffled grid": 0.95 + WIGGLE, "original grid": 0.8 + WIGGLE},
        "positions": {"neighbours": {SMALL: 0.3 + WIGGLE, LARGE: 0.5 + WIGGLE},
                      "far": {SMALL: 0.0 + WIGGLE, LARGE: -0.1 + WIGGLE}},
        "pretrained": {"config": vit.VIT_TI_16, "distance": PRETRAINED_DISTANCE,
                       "near": 0.5 + WIGGLE, "far": -0.1 + WIGGLE[::-1]},
        "agreement": {"last layer's attention": [0.2, 0.25, 0.3], "rollout": [0.5, 0.55, 0.6]},
    }
    return {**found, **changes}


def measured(budget=BUDGET, trained=TRAINED, **changes):
    return chapter.measure(budget, trained, TEST_SET, **inputs(**changes))


FOUND = measured()


def test_every_name_the_page_glues_into_its_prose_is_measured():
    named = set(re.findall(r"\{glue:text\}`([^`:]+)", PAGE.read_text()))
    assert named and named <= set(FOUND.names())


def test_every_claim_holds_on_runs_that_back_the_prose():
    assert len(FOUND.claims) == 8 and all(FOUND.claims.values())


def test_the_receptive_fields_are_those_of_the_vit_b16_grid():
    assert (FOUND["loc_grid"], FOUND["loc_cells"]) == (14, 196)
    assert (FOUND["loc_conv_1"], FOUND["loc_conv_3"], FOUND["loc_conv_whole_layer"]) == (9, 49, 7)
    assert FOUND["loc_uniform_mad_px"] == locality.uniform_attention_distance(14, 14, 16)


def test_distances_are_glued_as_means_over_seeds_of_fractions_of_uniform_attention():
    assert FOUND["loc_first_small"] == pytest.approx(0.8, abs=1e-12)
    assert FOUND["loc_first_large"] == pytest.approx(0.7, abs=1e-12)
    assert FOUND["loc_last_large"] == pytest.approx((0.3 + 3 * 0.9) / 4, abs=1e-12)
    assert FOUND["loc_min_head_large"] == pytest.approx(0.3, abs=1e-12)
    assert FOUND["loc_local_share_large"] == pytest.approx(1 / (LAYERS * HEADS), abs=1e-12)
    assert FOUND.entries["loc_local_share_large.tol"]["abs"] > 0
    assert (FOUND["loc_n_images"], FOUND["loc_rank_images"]) == (len(TEST_SET), len(TEST_SET))


def test_the_theorem_margin_is_a_quarter_of_the_learned_locality_rounded_down():
    learned = FOUND["loc_theorem_learned"]
    assert FOUND["loc_theorem_margin"] == np.floor(1000 * learned / 4) / 1000
    assert FOUND["loc_theorem_margin"] <= learned / 4


def test_the_first_layers_verdict_follows_which_side_of_uniform_the_seeds_lie():
    assert FOUND["loc_first_vs_uniform_text"] == "nearer than uniform attention"
    assert FOUND["loc_first_summary_text"] == "nearer than uniform attention"
    farther = measured(per_size={SMALL: distances(0.8), LARGE: distances(1.2, local_head=0.3)})
    assert farther["loc_first_vs_uniform_text"] == "farther than uniform attention"
    assert farther["loc_first_summary_text"] == "farther than uniform attention"


def test_a_chapter_without_local_filters_says_so_instead_of_testing_a_share_of_zero():
    assert FOUND["loc_share_text"] == "more than three seeds could show by chance"
    none = measured(per_size={SMALL: distances(0.8), LARGE: distances(0.7)})
    assert none["loc_share_text"] == "since no head of any seed's run is one"
    assert none["loc_share_summary_text"] == "zero in every run"
    assert none["loc_grid_before_heads_text"].startswith("So the table finds the grid before the heads use it")


def test_positions_no_more_alike_than_far_ones_read_as_no_grid_recovered():
    assert FOUND["loc_positions_reading"] == "the grid was recovered from data"
    flat = {"neighbours": {SMALL: 0.0 + WIGGLE, LARGE: 0.0 + WIGGLE}, "far": {SMALL: WIGGLE, LARGE: -WIGGLE}}
    found = measured(positions=flat)
    assert found["loc_positions_reading"] == "at this scale the grid was not recovered"
    assert found["loc_grid_before_heads_text"] == chapter.NO_GRID


def test_the_rank_level_follows_the_better_reading():
    assert FOUND["loc_rank_text"] == "more like the gradients than"
    assert FOUND["loc_rank_level_text"] == "only a partial"
    close = measured(agreement={"last layer's attention": [0.2, 0.25, 0.3], "rollout": [0.85, 0.86, 0.87]})
    assert close["loc_rank_level_text"] == "close to a faithful"
    assert close["loc_rank_summary_text"] == "the better of the two matches"


def test_the_pretrained_vits_depth_difference_counts_only_when_a_paired_test_over_the_seeds_resolves_it():
    assert FOUND["loc_pre_depth_text"] == "farther than" and FOUND["loc_pre_local_text"] == "at least one"
    assert FOUND["loc_pre_grid_text"].startswith("has found the grid")
    assert FOUND["loc_pre_first_px"] == pytest.approx(160 / 3)
    # the last layer farther in two seeds and nearer in the third: not resolved
    level = np.stack([np.full((2, 3), 100.0)] * 3)
    level[:, 1] += np.array([0.2, 0.2, -0.35])[:, None]
    assert measured(pretrained={**inputs()["pretrained"], "distance": level})["loc_pre_depth_text"] == "about as far as"
    flat = {**inputs()["pretrained"], "near": -0.1 + WIGGLE[::-1], "far": 0.5 + WIGGLE}
    assert measured(pretrained=flat)["loc_pre_grid_text"] == "shows no clear grid"
    with pytest.raises(ValueError, match="seeds, layers, heads"):
        measured(pretrained={**inputs()["pretrained"], "distance": PRETRAINED_DISTANCE[0]})


def test_the_width_claim_fails_when_the_testbed_has_other_heads_than_the_finer_grids_vit():
    other = dataclasses.replace(BUDGET, vit={**BUDGET.vit, "num_heads": 2})
    assert plan.locality_grid(other) == (GRID, PATCH)
    claims = measured(budget=other).claims
    assert not claims["the ViT on the finer grid keeps the testbed's width and heads"]
    assert sum(not holds for holds in claims.values()) == 1


def test_the_sections_called_one_by_one_as_the_page_calls_them_find_what_measure_finds():
    given = inputs()
    found = Evidence("locality")
    chapter.conv_fields(found, given["conv"])
    chapter.finer_grid(found, BUDGET, TRAINED, images=given["images"])
    heads, share_outcome = chapter.trained_heads(found, BUDGET, TRAINED, given["per_size"])
    chapter.cls_convention(found, BUDGET, TRAINED, given["maps"])
    init_first = chapter.baselines(found, BUDGET, TRAINED, TEST_SET, heads["first"][LARGE], given["images"])
    chapter.lab_distances(found)
    chapter.stem_heads(found, BUDGET, TRAINED, given["stem"], heads["first"][SMALL])
    chapter.shuffled_heads(found, BUDGET, given["shuffled"], heads["first"][SMALL], init_first)
    chapter.learned_positions(found, BUDGET, given["positions"], share_outcome)
    chapter.pretrained_vit(found, BUDGET, **given["pretrained"])
    chapter.pretraining_gains(found)
    chapter.attention_ranks(found, given["agreement"], images=len(TEST_SET))
    assert found.entries == FOUND.entries and found.claims == FOUND.claims


def test_the_table_rows_are_the_glued_samples():
    rows = chapter.spread_rows(BUDGET, TRAINED, inputs()["per_size"])
    assert list(rows) == ["test accuracy", "training images fitted", "first layer, fraction of uniform",
                          "last layer, fraction of uniform", "most local head, fraction of uniform",
                          "share of heads that are local filters"]
    assert np.mean(rows["first layer, fraction of uniform"][SMALL]) == pytest.approx(FOUND["loc_first_small"])
    assert np.mean(rows["test accuracy"][LARGE]) == FOUND["loc_acc_large"]


def test_distances_missing_a_size_are_refused():
    with pytest.raises(ValueError, match="per_size must hold the sizes"):
        measured(per_size={SMALL: distances(0.8)})


def test_distances_without_a_layer_axis_are_refused():
    with pytest.raises(ValueError, match="per_size at"):
        measured(per_size={SMALL: distances(0.8)[:, 0], LARGE: distances(0.7)[:, 0]})


def test_a_receptive_field_that_never_covers_the_grid_is_refused():
    with pytest.raises(ValueError, match="reaching all 196 patches"):
        measured(conv=locality.conv_receptive_field(14, 3, 4))


def test_agreement_without_the_rollout_is_refused():
    with pytest.raises(ValueError, match="agreement must hold"):
        measured(agreement={"last layer's attention": [0.2, 0.25, 0.3]})


def test_baselines_without_one_trained_distance_per_seed_are_refused():
    with pytest.raises(ValueError, match="first_large must hold one distance per seed"):
        chapter.baselines(Evidence("locality"), BUDGET, TRAINED, TEST_SET, [0.7], len(TEST_SET))
