"""vitbias.fingerprint: short trainings of every kind of run, sharp enough to see a change of code."""

import pytest

from vitbias import fingerprint, plan, profile, runs


def test_every_kind_of_run_the_book_trains_has_a_fingerprint():
    budget = profile.budget("quick")
    kinds = fingerprint.kinds(budget)
    routes = {runs.run_key(c) for c in kinds.values()}
    every_route = {plan.LOCAL_ROUTE_NAME: (plan.LOCAL_ROUTE, None), **plan.prior_routes(budget)}
    for name, (route, augment) in every_route.items():
        assert runs.run_key(runs.experiment(budget, "vit", budget.train_sizes[-1], 0, route=route,
                                            augment=augment)) in routes, name
    assert {"cnn", "vit", "shuffled", "erasing_cnn", "erasing_vit", "pretraining", "texture_random"} <= set(kinds)


def test_a_short_run_keeps_everything_but_its_steps_and_its_number_of_images():
    budget = profile.budget("quick")
    config = runs.experiment(budget, "vit", budget.train_sizes[-1], 1, erase=0.25)
    short = fingerprint.short(config)
    assert short["model"] == config["model"]
    assert {k: v for k, v in short["data"].items() if k != "train"} == {
        k: v for k, v in config["data"].items() if k != "train"}
    assert short["data"]["train"] == fingerprint.TRAIN_SIZE
    changed = {k for k in config["train"] if short["train"][k] != config["train"][k]}
    assert changed == {"steps", "warmup"} and short["train"]["steps"] == fingerprint.STEPS["plain"]


def test_batchnorm_models_and_distilled_runs_take_the_shorter_count():
    kinds = fingerprint.kinds(profile.budget("quick"))
    for name in ("cnn", "stem", "distill", "erasing_cnn"):
        assert fingerprint.short(kinds[name])["train"]["steps"] == fingerprint.STEPS["batchnorm"], name
    assert fingerprint.short(kinds["distill"])["train"]["teacher"]["train"]["steps"] == fingerprint.STEPS["batchnorm"]
    for name in ("vit", "gated", "relative", "local1", "pretraining"):
        assert fingerprint.short(kinds[name])["train"]["steps"] == fingerprint.STEPS["plain"], name


def test_a_fingerprint_is_the_same_on_a_rerun_and_moves_with_the_learning_rate():
    config = fingerprint.short(fingerprint.kinds(profile.budget("quick"))["cnn"])
    first, again = fingerprint.fingerprint(config), fingerprint.fingerprint(config)
    assert first == again
    faster = fingerprint.fingerprint({**config, "train": {**config["train"], "lr": 1.9e-3}})
    assert fingerprint.largest_difference({"cnn": first}, {"cnn": faster}) > 10 * fingerprint.BOUND


def test_bad_fingerprints_are_refused():
    with pytest.raises(ValueError, match="two steps"):
        fingerprint.short(fingerprint.kinds(profile.budget("quick"))["cnn"], steps=1)
    with pytest.raises(ValueError, match="different"):
        fingerprint.largest_difference({"a": {"loss": 1.0}}, {"b": {"loss": 1.0}})
