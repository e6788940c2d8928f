"""Each chapter's planned runs (``vitbias.chapters.chapter_runs``), the pieces of ``vitbias.plan`` they share,
and the training time the run cache recorded for them."""

import json

import numpy as np
import pytest

from vitbias import chapters, fingerprint, permute, plan, profile, runs


@pytest.mark.parametrize("name", ["quick", "gpu", "full"])
def test_every_chapters_runs_are_valid_configurations(name):
    budget = profile.budget(name)
    for chapter in chapters.PLANNED:
        for config in chapters.chapter_runs(chapter, budget).values():
            runs.check_config(config)


def test_a_run_two_chapters_share_is_one_cache_entry():
    budget = profile.budget("quick")
    n, s = budget.train_sizes[-1], budget.seeds[0]
    crossover, priors, lab, robustness = (chapters.chapter_runs(name, budget)
                                          for name in ("crossover", "priors", "lab", "robustness"))
    assert runs.run_key(crossover["vit", n, s, "plain"]) == runs.run_key(lab["vit", n, s])
    assert runs.run_key(crossover["vit", s]) == runs.run_key(lab["vit", "recipe", s])
    r = plan.robustness_size(budget)
    assert runs.run_key(crossover["vit", r, s, "plain"]) == runs.run_key(robustness["ViT", "plain fill", s])
    for r in budget.route_sizes:  # the priors chapter's plain models are the crossover chapter's
        assert runs.run_key(crossover["cnn", r, s, "plain"]) == runs.run_key(priors["CNN", r, s, 0.0])
        assert runs.run_key(crossover["vit", r, s, "plain"]) == runs.run_key(priors["ViT", r, s, 0.0])
    r = budget.route_sizes[-1]
    assert runs.run_key(crossover["cnn", r, s, "patches shuffled"]) == runs.run_key(priors["CNN", r, s, 1.0])
    for name in plan.prior_routes(budget):  # the lab's board is the priors chapter's larger size
        assert runs.run_key(lab[name, s]) == runs.run_key(priors[name, r, s, 0.0])
    assert runs.run_key(lab["plain ViT", s]) == runs.run_key(priors["ViT", r, s, 0.0])
    assert runs.run_key(robustness["ViT, conv stem", s]) == runs.run_key(priors["conv stem", r, s, 0.0])
    locality = chapters.chapter_runs("locality", budget)
    for key, config in locality.items():
        if key[0] != "stem":
            n_grid, s_grid, shuffled = key
            assert runs.run_key(config) == runs.run_key(priors["ViT, finer grid", n_grid, s_grid, shuffled])


@pytest.mark.parametrize("name", ["quick", "gpu", "full"])
def test_the_locality_grid_has_six_patches_a_side_or_more_and_a_radius_one_window_opens_at_most_a_quarter(name):
    from vitbias import masks

    budget = profile.budget(name)
    grid, patch = plan.locality_grid(budget)
    assert grid >= plan.MIN_LOCALITY_GRID and grid * patch == budget.vit["img_size"]
    assert masks.allowed_pairs(grid, grid, 1, 1) <= (grid * grid + 1) ** 2 / 4
    for config in chapters.chapter_runs("locality", budget).values():
        assert config["model"]["patch_size"] == patch


def test_the_gpu_profile_takes_a_larger_locality_grid_than_the_quick_one():
    assert plan.locality_grid(profile.budget("gpu"))[0] > plan.locality_grid(profile.budget("quick"))[0]


def test_a_run_on_the_locality_grid_changes_only_the_vits_patch_and_the_keywords_of_the_locality_vit():
    budget = profile.budget("quick")
    changes = plan.locality_vit(budget)
    for options in ({}, {"permute": 1.0}, {"route": {"stem": True}}, {"route": plan.LOCAL_ROUTE}):
        config = plan.on_locality_grid(budget, 800, 1, **options)
        testbed = runs.experiment(budget, "vit", 800, 1, patch=changes["patch_size"], fit=True, **options)
        assert config["data"] == testbed["data"] and config["train"] == testbed["train"]
        assert config["model"] == {**testbed["model"], **changes}
        assert config["model"]["embed_dim"] == budget.vit["embed_dim"]


def test_a_budget_that_is_no_profile_halves_its_patch_until_its_grid_is_large_enough():
    from dataclasses import replace

    budget = profile.budget("quick")
    other = replace(budget, seeds=(7,))
    assert plan.locality_vit(other) == {"patch_size": 4}
    fine = replace(budget, vit={**budget.vit, "patch_size": 2}, seeds=(7,))
    assert plan.locality_vit(fine) == {}
    odd = replace(budget, vit={**budget.vit, "img_size": 15, "patch_size": 5}, seeds=(7,))
    with pytest.raises(ValueError, match="no patch size"):
        plan.locality_vit(odd)


def test_hard_locality_trains_on_the_locality_grid_ordered_at_both_sizes_and_shuffled_at_the_smaller():
    budget = profile.budget("quick")
    small, large = plan.locality_sizes(budget)
    local = {key[1:]: c for key, c in chapters.chapter_runs("priors", budget).items()
             if key[0] == plan.LOCAL_ROUTE_NAME}
    assert set(local) == {(n, s, p) for n in (small, large) for s in budget.seeds
                          for p in ((0.0, 1.0) if n == small else (0.0,))}
    grid, patch = plan.locality_grid(budget)
    assert all(c["model"]["patch_size"] == patch and c["model"]["local_radius"] == 1 for c in local.values())
    assert plan.LOCAL_ROUTE_NAME not in plan.prior_routes(budget)


@pytest.mark.parametrize("name", ["quick", "gpu", "full"])
def test_the_route_catalogue_names_every_route_and_hard_locality_once(name):
    budget = profile.budget(name)
    assert set(plan.ROUTE_SLUGS) == set(plan.prior_routes(budget)) | {plan.LOCAL_ROUTE_NAME}
    assert len(set(plan.ROUTE_SLUGS.values())) == len(plan.ROUTE_SLUGS)
    assert set(plan.ROUTE_SLUGS.values()) <= set(fingerprint.kinds(budget))


def test_every_route_of_the_testbed_trains_at_the_larger_route_size_and_the_plain_models_at_every_size():
    budget = profile.budget("quick")
    priors, n = chapters.chapter_runs("priors", budget), budget.route_sizes[-1]
    for name in plan.prior_routes(budget):
        shuffled = (0.0, 1.0) if name in plan.SHUFFLED_ROUTES else (0.0,)
        assert {key[1:] for key in priors if key[0] == name} == {(n, s, p) for s in budget.seeds for p in shuffled}
    for name in ("CNN", "ViT"):
        ordered = {key[1:3] for key in priors if key[0] == name and key[3] == 0.0}
        assert ordered == {(size, s) for size in budget.train_sizes for s in budget.seeds}
    assert {key[1:] for key in priors if key[0] == "CNN" and key[3] == 1.0} == {(n, s, 1.0) for s in budget.seeds}


def test_the_training_time_sums_the_recorded_seconds_of_distinct_runs_and_counts_the_missing(tmp_path):
    budget = profile.budget("quick")
    priors, n = chapters.chapter_runs("priors", budget), budget.route_sizes[-1]
    configs = [priors[name, n, 0, 0.0] for name in ("CNN", "ViT", "conv stem")]
    distilled = priors["distilled from the CNN", n, 0, 0.0]
    for i, config in enumerate(configs[:2]):
        entry = tmp_path / runs.run_key(config)
        entry.mkdir()
        (entry / "metrics.json").write_text(json.dumps({"seconds": 10.0 * (i + 1)}))
    assert plan.training_seconds(configs + configs[:1], tmp_path) == (30.0, 3, 1)
    # a distilled run counts its teacher too: the CNN of the same size and seed, the first run above
    assert configs[0] == distilled["train"]["teacher"]
    assert plan.training_seconds([distilled], tmp_path) == (10.0, 2, 1)


def test_the_locality_chapters_contrasts_train_at_the_smaller_size_and_robustness_at_the_larger_route_size():
    budget = profile.budget("quick")
    small, large = plan.locality_sizes(budget)
    locality = chapters.chapter_runs("locality", budget)
    assert {key[0] for key in locality if len(key) == 3 and key[2] == 1.0} == {small}
    assert {c["data"]["train"] for key, c in locality.items() if key[0] == "stem"} == {small}
    robustness = chapters.chapter_runs("robustness", budget)
    assert plan.robustness_size(budget) == budget.route_sizes[-1]
    assert {c["data"]["train"] for key, c in robustness.items() if isinstance(key[1], str)} == {budget.route_sizes[-1]}


def test_an_unknown_chapter_is_refused():
    with pytest.raises(ValueError, match="no runs are planned"):
        chapters.chapter_runs("bias-toy", profile.budget("quick"))


def _tiny(config):
    """A run's data section with its sets shrunk to a few images (the rearrangement is the same)."""
    return {**config["data"], "train": 4, "test": 6}


def test_each_world_shows_the_images_its_runs_are_tested_on():
    budget = profile.budget("quick")
    wanted = chapters.chapter_runs("crossover", budget)
    n, s = budget.train_sizes[-2], budget.seeds[0]
    for name in plan.worlds(budget):
        config = wanted["cnn", n, s, name]
        _, plain_test, _ = runs.inputs(_tiny(wanted["cnn", n, s, "plain"]))
        _, test, _ = runs.inputs(_tiny(config))
        index = plan.world_pixel_index(budget, name)
        expected = plain_test.images if index is None else permute.rearrange(plain_test.images, index)
        assert np.array_equal(test.images, expected), name


def test_every_world_of_the_ladder_is_absorbed_by_a_vit_and_the_controls_are_not():
    budget = profile.budget("quick")
    size, patch = budget.vit["img_size"], budget.vit["patch_size"]
    ladder = plan.ladder(budget)
    assert ladder[0] == "plain" and len(ladder) >= 5
    for name in ladder[1:]:
        index = permute.scramble_index(size, patch, *plan.absorbed_orders(budget, name))
        assert np.array_equal(index, plan.world_pixel_index(budget, name)), name
    for name in plan.CONTROL_WORLDS:
        with pytest.raises(ValueError, match="not a world of the ladder"):
            plan.absorbed_orders(budget, name)
    # the rungs after the shuffle scramble blocks of 2, 4 and 8 pixels: the last the whole patch
    assert plan.world_blocks(patch) == (2, 4, 8) and plan.world_blocks(6) == (2, 6)


def test_the_vit_is_trained_in_the_most_scrambled_world_at_the_first_chosen_size_and_the_controls_at_the_second():
    budget = profile.budget("quick")
    wanted = chapters.chapter_runs("crossover", budget)
    worlds = {key[3] for key in wanted if isinstance(key, tuple) and len(key) == 4}
    assert worlds == set(plan.worlds(budget))
    vit_worlds = {(key[1], key[3]) for key in wanted if isinstance(key, tuple) and len(key) == 4
                  and key[0] == "vit" and key[3] != "plain"}
    small, large = plan.world_check_sizes(budget)
    most = plan.ladder(budget)[-1]
    assert vit_worlds == {(small, most)} | {(large, c) for c in plan.CONTROL_WORLDS}


def test_every_crossover_run_trains_its_model_under_the_rule_that_fits_it_and_each_seeds_vit_also_under_half():
    budget = profile.budget("quick")
    wanted = chapters.chapter_runs("crossover", budget)
    for key, config in wanted.items():
        if key[0] == "pretraining" or key[1] == "half steps":
            continue
        model = key[0]
        passes = plan.AUGMENTED_PASSES if config["train"]["augment"] else 1
        assert config["train"]["steps"] == passes * budget.steps(config["data"]["train"], model)
    half_seeds = [key[2] for key in wanted if key[1] == "half steps"]
    assert half_seeds == list(budget.seeds[:1])  # the first seed's run, the one the page shows
    for seed in half_seeds:
        largest = wanted["vit", budget.train_sizes[-1], seed, "plain"]
        half = wanted["vit", "half steps", seed]
        assert half["train"]["steps"] == largest["train"]["steps"] // 2
        assert half["train"]["warmup"] == half["train"]["steps"] // 10
        assert {**half, "train": None} == {**largest, "train": None}
    # the ViT's rule gives it more steps than the shared rule where the shared one caps it
    assert budget.steps(budget.train_sizes[-1], "vit") > budget.steps(budget.train_sizes[-1])


def test_a_run_of_one_step_cannot_be_halved():
    config = runs.experiment(profile.budget("quick"), "cnn", 50, 0)
    config["train"] = {**config["train"], "steps": 1, "warmup": 0}
    with pytest.raises(ValueError, match="cannot be halved"):
        plan.halved(config)


def test_an_unknown_world_is_refused():
    with pytest.raises(ValueError, match="no world"):
        plan.world_pixel_index(profile.budget("quick"), "upside down")


@pytest.mark.parametrize("chapter", ["priors", "robustness", "lab", "symmetry", "crossover", "locality"])
def test_every_model_trains_under_the_rule_by_which_it_fits_its_training_set(chapter):
    budget = profile.budget("quick")
    for key, config in chapters.chapter_runs(chapter, budget).items():
        if key[0] == "pretraining" or key[1:2] == ("half steps",):
            continue  # the pretraining and the deliberately halved run
        model = "cnn" if config["model"]["kind"] == "cnn" else "vit"
        passes = plan.AUGMENTED_PASSES if config["train"]["augment"] else 1
        assert config["train"]["steps"] == passes * budget.steps(config["data"]["train"], model), key
        assert config["train"]["warmup"] == config["train"]["steps"] // 10, key


def test_an_augmented_run_trains_its_plain_twins_steps_times_the_augmented_passes_and_nothing_else_changes():
    budget = profile.budget("quick")
    for model, n in (("cnn", 125), ("vit", 800)):
        plain, augmented = (plan.fitted(budget, model, n, 1, augment=a) for a in (False, True))
        assert augmented["train"]["steps"] == plan.AUGMENTED_PASSES * plain["train"]["steps"]
        assert augmented["train"]["warmup"] == augmented["train"]["steps"] // 10
        assert {**augmented, "train": None} == {**plain, "train": None}
        assert ({k: v for k, v in augmented["train"].items() if k not in ("steps", "warmup", "augment")}
                == {k: v for k, v in plain["train"].items() if k not in ("steps", "warmup", "augment")})
    # a plain run is runs.experiment's fitted run, unchanged
    assert plan.fitted(budget, "vit", 800, 2) == runs.experiment(budget, "vit", 800, 2, fit=True)
