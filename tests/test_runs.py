"""The run cache: a hit returns the stored model, any change trains anew."""

from dataclasses import replace

import numpy as np
import pytest

from vitbias import profile, runs, train

CONFIG = {"data": {"name": "shapes", "train": 64, "test": 32, "seed": 0},
          "model": {"kind": "cnn", "channels": [4, 8], "depth": [1, 1]},
          "train": {"steps": 4, "batch_size": 16, "lr": 1e-3, "weight_decay": 0.05, "schedule": "cosine",
                    "augment": True, "seed": 0}}


def test_a_second_run_is_loaded_from_the_cache_with_the_same_model(tmp_path):
    first = runs.run(CONFIG, folder=tmp_path)
    second = runs.run(CONFIG, folder=tmp_path)
    assert not first.cached and second.cached and first.key == second.key
    assert second.metrics == first.metrics
    assert (tmp_path / first.key / "model.pt").is_file()
    test = runs._data.load(CONFIG["data"])[1]
    np.testing.assert_array_equal(train.predict(first.model, test, "cpu"),
                                  train.predict(second.model, test, "cpu"))
    assert second.accuracy == train.evaluate(second.model, test, "cpu")["accuracy"]


def test_a_changed_configuration_misses_the_cache(tmp_path):
    first = runs.run(CONFIG, folder=tmp_path)
    changed = {**CONFIG, "train": {**CONFIG["train"], "steps": 5}}
    second = runs.run(changed, folder=tmp_path)
    assert not second.cached and second.key != first.key
    assert len(second.metrics["losses"]) == 5


def test_the_key_follows_the_source_but_not_the_key_order(monkeypatch):
    reordered = {"train": CONFIG["train"], "model": CONFIG["model"], "data": CONFIG["data"]}
    assert runs.run_key(reordered) == runs.run_key(CONFIG)
    before = runs.run_key(CONFIG)
    monkeypatch.setattr(runs, "source_digest", lambda: "edited")
    assert runs.run_key(CONFIG) != before


def test_the_key_lists_every_vitbias_module_a_trained_model_imports():
    from tools.booktools import package_dependencies

    assert set(package_dependencies(runs.KEY_MODULES)) == set(runs.KEY_MODULES)


def test_editing_a_figure_or_analysis_module_keeps_every_key_and_editing_the_trainer_changes_them(monkeypatch):
    real = runs.Path.read_bytes
    edited = {"toy.py", "literature.py", "locality.py", "book.py", "style.py", "crossover.py"}

    def read(path, edit=edited):
        return real(path) + (b"\n# edited\n" if path.name in edit else b"")

    before = runs.run_key(CONFIG)
    monkeypatch.setattr(runs.Path, "read_bytes", read)
    assert runs.run_key(CONFIG) == before
    monkeypatch.setattr(runs.Path, "read_bytes", lambda path: read(path, {"train.py"}))
    assert runs.run_key(CONFIG) != before


def test_runs_are_kept_outside_the_build_folder(monkeypatch):
    monkeypatch.delenv(runs.RUNS_VARIABLE, raising=False)
    assert "_build" not in runs.runs_folder().parts
    monkeypatch.setenv(runs.RUNS_VARIABLE, "/tmp/somewhere")
    assert runs.runs_folder() == runs.Path("/tmp/somewhere")


def test_every_budget_describes_valid_runs():
    for name in profile.BUDGETS:
        budget = profile.budget(name)
        for model in ("cnn", "vit"):
            config = runs.experiment(budget, model, budget.train_sizes[0], augment=False)
            assert runs.check_config(config)["train"]["augment"] is False
            assert config["data"]["test"] == budget.test_size
    assert runs.pretraining(profile.budget("quick"))["data"]["classes"] == "other"


def test_every_budget_has_the_curves_the_crossover_chapter_needs():
    for name in profile.BUDGETS:
        budget = profile.budget(name)
        assert len(budget.train_sizes) >= 5 and budget.train_sizes[-1] >= 40 * budget.train_sizes[0]
        assert len(budget.seeds) >= 3
    assert profile.budget("gpu").train_sizes[-1] >= 200_000
    assert profile.budget("gpu").dataset == profile.budget("quick").dataset


def test_the_step_budget_grows_with_the_set_between_its_floor_and_its_cap():
    budget = profile.budget("quick")
    steps = [budget.steps(n) for n in range(1, 20_000, 37)]
    assert steps == sorted(steps)
    assert min(steps) == budget.min_steps and max(steps) == budget.max_steps
    n = 1000  # inside the band: epochs passes over the set
    assert budget.min_steps < budget.steps(n) < budget.max_steps
    assert budget.steps(n) == round(budget.epochs * n / budget.train["batch_size"])


def test_the_cnn_fits_under_the_shared_rule_and_the_vit_under_twice_the_passes_up_to_where_its_passes_grow():
    budget = profile.budget("quick")
    for n in (1, 50, 125, 300, 800, 2000, 5000):
        assert budget.steps(n, "cnn") == budget.steps(n)
    vit = budget.fitted["vit"]
    for n in budget.train_sizes:
        if n <= vit["grow_from"]:
            passes = round(vit["epochs"] * n / budget.train["batch_size"])
            assert budget.steps(n, "vit") == max(budget.min_steps, passes)
    assert budget.steps(budget.train_sizes[-1], "vit") == vit["max_steps"]  # the cap binds on the largest set


def test_beyond_grow_from_the_passes_grow_as_a_power_of_the_set_and_not_before():
    budget = replace(profile.budget("quick"), min_steps=1, max_steps=10**9, epochs=64, grow_from=100, growth=2.0)
    assert budget.steps(50) == 50 and budget.steps(100) == 100  # one pass per image: epochs = batch size
    assert budget.steps(200) == 200 * 4 and budget.steps(300) == 300 * 9
    flat = replace(budget, grow_from=0)
    assert [flat.steps(n) for n in (50, 200, 300)] == [50, 200, 300]


@pytest.mark.parametrize("rule", [{"grow_from": -1}, {"grow_from": 800.5}, {"growth": -1.0},
                                  {"growth": float("nan")}, {"grow_from": True}])
def test_a_growth_that_is_not_a_whole_size_and_a_non_negative_power_is_refused(rule):
    with pytest.raises(ValueError, match="grow_from"):
        replace(profile.budget("quick"), **rule)
    with pytest.raises(ValueError, match="grow_from"):
        replace(profile.budget("quick"), fitted={"vit": rule})


@pytest.mark.parametrize("fitted, match", [
    ({"mlp": {"epochs": 10}}, "fitted maps"),
    ({"vit": {"lr": 1e-3}}, "fitted maps"),
    ({"vit": {"min_steps": 900, "max_steps": 800}}, "fitting rule"),
    ({"vit": {"epochs": 0}}, "fitting rule"),
])
def test_a_fitting_rule_for_an_unknown_model_or_outside_the_step_rule_is_refused(fitted, match):
    with pytest.raises(ValueError, match=match):
        replace(profile.budget("quick"), fitted=fitted)


def test_a_step_rule_for_an_unknown_model_and_a_fit_that_is_not_a_bool_are_refused():
    budget = profile.budget("quick")
    with pytest.raises(ValueError, match="model must be one of"):
        budget.steps(100, "mlp")
    with pytest.raises(ValueError, match="fit must be True or False"):
        runs.experiment(budget, "vit", 100, 0, fit="yes")


@pytest.mark.parametrize("change, match", [
    (dict(train_sizes=(100, 100, 200)), "increasing"),
    (dict(seeds=(0, 0, 1)), "distinct"),
    (dict(min_steps=5000), "min_steps"),
    (dict(recipe_size=123), "recipe_size"),
    (dict(probe_labels=7), "probe_labels"),
    (dict(route_sizes=(300, 301)), "route_sizes"),
    (dict(route_sizes=(800, 300)), "route_sizes"),
    (dict(route_sizes=()), "route_sizes"),
    (dict(train={**profile.RECIPE, "steps": 10}), "steps"),
])
def test_bad_budgets_are_refused(change, match):
    from dataclasses import replace

    with pytest.raises(ValueError, match=match):
        replace(profile.budget("quick"), **change)


def test_each_seed_draws_its_own_training_set_and_every_seed_shares_the_test_set():
    budget = profile.budget("quick")
    sets = [runs._data.load(runs.experiment(budget, "cnn", 100, seed)["data"]) for seed in (0, 1)]
    assert not np.array_equal(sets[0][0].images, sets[1][0].images)
    np.testing.assert_array_equal(sets[0][1].images, sets[1][1].images)


def test_a_shuffle_applied_to_the_batches_trains_as_training_on_shuffled_images(tmp_path):
    """Without augmentation, shuffling each batch is shuffling the set beforehand, bit for bit."""
    from dataclasses import replace

    from vitbias import models, permute

    images = runs._data.shapes(64, seed=0)
    order = permute.patch_permutation((4, 4), 1.0, seed=0)
    recipe = train.TrainConfig(steps=6, batch_size=16, lr=1e-3, weight_decay=0.05, schedule="cosine", augment=False)
    shuffled = replace(images, images=permute.permute_patches(images.images, order, 8))
    losses = []
    for data, shuffle in ((images, (order, 8)), (shuffled, None)):
        model = runs.seeded_model({"kind": "cnn", "channels": [4, 8], "depth": [1, 1]}, 0)
        losses.append(train.train(model, data, recipe, device="cpu", shuffle=shuffle).losses)
        assert models.parameter_count(model) > 0
    np.testing.assert_array_equal(losses[0], losses[1])


def test_a_shuffled_run_is_scored_on_shuffled_images_and_records_its_training_accuracy(tmp_path):
    shuffled = {**CONFIG, "data": {**CONFIG["data"], "permute": {"fraction": 1.0, "seed": 0, "patch": 8}}}
    plain, moved = runs.run(CONFIG, folder=tmp_path), runs.run(shuffled, folder=tmp_path)
    assert plain.key != moved.key
    assert 0.0 <= moved.train_accuracy <= 1.0 and 0.0 <= plain.train_accuracy <= 1.0
    with pytest.raises(ValueError, match="divide"):
        runs.run({**CONFIG, "data": {**CONFIG["data"], "permute": {"fraction": 1.0, "seed": 0, "patch": 5}}},
                 folder=tmp_path)
    with pytest.raises(ValueError, match="keys"):
        runs.run({**CONFIG, "data": {**CONFIG["data"], "permute": {"fraction": 1.0}}}, folder=tmp_path)


def test_runs_trained_side_by_side_are_stored_once_and_returned_in_order(tmp_path):
    configs = [{**CONFIG, "train": {**CONFIG["train"], "seed": seed}} for seed in (0, 1, 0)]
    got = runs.run_many(configs, folder=tmp_path, workers=2)
    assert [r.config["train"]["seed"] for r in got] == [0, 1, 0]
    assert all(r.cached for r in got)  # trained by the workers, then read back
    assert got[0].metrics == got[2].metrics and len(list(tmp_path.iterdir())) == 2
    with pytest.raises(ValueError, match="workers"):
        runs.run_many(configs, folder=tmp_path, workers=0)


@pytest.mark.parametrize("config, match", [
    ({"data": {}, "model": {}}, "exactly the keys"),
    ({**CONFIG, "model": {"kind": "rnn"}}, "model kind"),
    ({**CONFIG, "train": {**CONFIG["train"], "steps": 0}}, "steps"),
    ({**CONFIG, "train": {"steps": 4, "batch_size": 16}}, "exactly the fields"),
    ({**CONFIG, "train": {**CONFIG["train"], "momentum": 0.9}}, "exactly the fields"),
    ({**CONFIG, "data": {**CONFIG["data"], "seed": object()}}, "JSON"),
])
def test_bad_run_configurations_are_rejected(config, match):
    with pytest.raises(ValueError, match=match):
        runs.run_key(config)
    with pytest.raises(ValueError):
        runs.experiment(profile.budget("quick"), "mlp", 10)


def test_a_texture_or_erasing_override_changes_only_what_it_names():
    budget = profile.budget("quick")
    plain = runs.experiment(budget, "vit", 300, 1)
    textured = runs.experiment(budget, "vit", 300, 1, texture="predictive")
    erased = runs.experiment(budget, "vit", 300, 1, erase=0.25)
    assert textured["data"] == {**plain["data"], "texture": "predictive"}
    assert textured["model"] == plain["model"] and textured["train"] == plain["train"]
    assert erased["train"] == {**plain["train"], "erase": 0.25} and erased["data"] == plain["data"]
    # the budget's own fill and no erasing write the same configuration as before
    assert runs.experiment(budget, "vit", 300, 1, texture=budget.dataset["texture"], erase=0.0) == plain
    for bad in (dict(texture="stripes"), dict(erase=2.0)):
        with pytest.raises(ValueError):
            runs.check_config(runs.experiment(budget, "cnn", 300, **bad))
    with pytest.raises(ValueError, match="generated"):
        runs.experiment(profile.budget("full"), "cnn", 1000, texture="random")


def test_a_region_or_patch_override_changes_only_what_it_names():
    budget = profile.budget("quick")
    plain = runs.experiment(budget, "vit", 300, 1)
    left = runs.experiment(budget, "vit", 300, 1, region="left")
    assert left["data"] == {**plain["data"], "region": "left"}
    assert left["model"] == plain["model"] and left["train"] == plain["train"]
    fine = runs.experiment(budget, "vit", 300, 1, patch=4, permute=1.0)
    assert fine["model"] == {**plain["model"], "patch_size": 4} and fine["data"]["permute"]["patch"] == 4
    # the budget's own patch writes the same configuration as before, and the CNN has none to change
    assert runs.experiment(budget, "vit", 300, 1, patch=budget.vit["patch_size"]) == plain
    distilled = runs.experiment(budget, "vit", 300, 1, region="right", route={"distill": True})
    assert distilled["train"]["teacher"]["data"]["region"] == "right"
    runs.check_config(left)
    runs.check_config(fine)


@pytest.mark.parametrize("bad, match", [
    (dict(region="top"), "region applies"),
    (dict(patch=5), "must divide"),
    (dict(patch=0), "must divide"),
])
def test_bad_region_or_patch_is_rejected(bad, match):
    with pytest.raises(ValueError, match=match):
        runs.experiment(profile.budget("quick"), "vit", 300, **bad)
    with pytest.raises(ValueError):
        runs.experiment(profile.budget("quick"), "cnn", 300, patch=4)


GIB = 1 << 30


@pytest.mark.parametrize("memory, cores, expected", [
    (None, 2, 2),              # memory unknown: one worker per core
    (64 * GIB, 2, 2),          # plenty: one per core
    (int(1.5 * GIB), 4, 1),    # room for one worker beside the kernel
    (GIB // 2, 2, 1),          # a 2 GB Binder session with the kernel loaded: train in this process
    (3 * GIB, 16, 3),          # memory, not cores, decides
])
def test_the_cpu_starts_as_many_workers_as_both_its_cores_and_its_memory_hold(monkeypatch, memory, cores, expected):
    monkeypatch.setattr(runs, "device_name", lambda: "cpu")
    monkeypatch.setattr(runs.os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    monkeypatch.setattr(runs, "available_memory", lambda: memory)
    assert runs.default_workers() == expected


def test_a_gpu_trains_one_run_at_a_time(monkeypatch):
    monkeypatch.setattr(runs, "device_name", lambda: "cuda")
    monkeypatch.setattr(runs, "available_memory", lambda: 64 * GIB)
    assert runs.default_workers() == 1


def test_a_memory_limit_in_the_variable_leaves_that_less_what_this_process_holds(monkeypatch):
    monkeypatch.setenv(runs.MEMORY_VARIABLE, str(2 * GIB))
    monkeypatch.setattr(runs, "_resident_bytes", lambda: GIB + GIB // 4)
    assert runs.available_memory() == 3 * GIB // 4
    monkeypatch.setattr(runs, "_resident_bytes", lambda: 3 * GIB)
    assert runs.available_memory() == 0


def test_this_process_resident_memory_is_read_and_positive():
    assert runs._resident_bytes() > 10 * 2**20


def test_the_memory_variable_must_be_a_byte_count(monkeypatch):
    for bad in ("2G", "-5", "0"):
        monkeypatch.setenv(runs.MEMORY_VARIABLE, bad)
        with pytest.raises(ValueError, match=runs.MEMORY_VARIABLE):
            runs.available_memory()


def test_without_the_variable_the_memory_is_what_the_system_reports(monkeypatch):
    monkeypatch.delenv(runs.MEMORY_VARIABLE, raising=False)
    monkeypatch.setattr(runs, "_cgroup_headroom", lambda: 3 * GIB)
    monkeypatch.setattr(runs, "_meminfo_available", lambda: 5 * GIB)
    assert runs.available_memory() == 3 * GIB
    monkeypatch.setattr(runs, "_cgroup_headroom", lambda: None)
    assert runs.available_memory() == 5 * GIB
    monkeypatch.setattr(runs, "_meminfo_available", lambda: None)
    assert runs.available_memory() is None
