"""The gpu profile's code path, run on a CPU with its budget shrunk.

The gpu profile is the quick profile's world at scale. What can be checked
without a GPU is checked here: the profile is selected by its variable, its
budget describes the chapter's runs, and those runs train, load and probe
through the same functions as the quick profile's, with the gpu recipe
(its batch size larger than the shrunk sets).
"""

from dataclasses import replace

import numpy as np
import pytest

from vitbias import probe, profile, runs


@pytest.fixture
def small_gpu_budget(monkeypatch):
    """The gpu budget with its sizes, steps and test set shrunk (a test-only override)."""
    full = profile.BUDGETS["gpu"]
    small = replace(full, train_sizes=(20, 40, 80, 160, 800), test_size=50, min_steps=2, max_steps=3,
                    fitted={"vit": {"min_steps": 2, "max_steps": 3}},
                    recipe_size=40, probe_labels=40, route_sizes=(40, 160),
                    pretrain={**full.pretrain, "data": {**full.pretrain["data"], "train": 300, "test": 50},
                              "steps": 3})
    monkeypatch.setitem(profile.BUDGETS, "gpu", small)
    monkeypatch.setenv(profile.PROFILE_VARIABLE, "gpu")
    return small


def test_the_gpu_profile_is_selected_by_its_variable_and_keeps_the_quick_world(small_gpu_budget):
    assert profile.current_profile() == "gpu"
    budget = profile.budget()
    assert budget is small_gpu_budget
    quick = profile.budget("quick")
    assert (budget.dataset, budget.cnn, budget.vit) == (quick.dataset, quick.cnn, quick.vit)
    assert budget.train["batch_size"] > quick.train["batch_size"]


def test_the_chapters_runs_train_and_probe_under_the_gpu_budget(small_gpu_budget, tmp_path, monkeypatch):
    monkeypatch.setenv(runs.RUNS_VARIABLE, str(tmp_path))
    budget = profile.budget()
    configs = [runs.experiment(budget, m, n, s, permute=p)
               for m in ("cnn", "vit") for n in budget.train_sizes[:2] for s in budget.seeds[:2] for p in (0.0, 1.0)]
    configs += [runs.experiment(budget, "vit", budget.recipe_size, 0, permute=0.5),
                runs.experiment(budget, "cnn", budget.recipe_size, 0, augment=True),
                runs.pretraining(budget)]
    done = runs.run_many(configs, workers=1)
    assert all(r.config["train"]["batch_size"] == 512 for r in done)
    assert all(0.0 <= r.accuracy <= 1.0 and 0.0 <= r.train_accuracy <= 1.0 for r in done)
    assert [len(r.metrics["losses"]) for r in done] == [c["train"]["steps"] for c in configs]
    pretrained, random_init, feed = probe.prior_bought_elsewhere(budget)
    labelled, test = runs._data.load(configs[0]["data"])
    features = [probe.extract_features(pretrained, images, **feed) for images in (labelled, test)]
    assert features[0].shape == (len(labelled), budget.vit["embed_dim"])
    assert 0.0 <= probe.linear_probe(features[0], labelled.labels, features[1], test.labels) <= 1.0
    assert np.isfinite(done[-1].metrics["final_train_loss"])
