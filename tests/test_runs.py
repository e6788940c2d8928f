"""The run cache: a hit returns the stored model, any change trains anew."""

import numpy as np
import pytest

from vitbias import profile, runs, train

CONFIG = {"data": {"name": "shapes", "train": 64, "test": 32, "seed": 0},
          "model": {"kind": "cnn", "channels": [4, 8], "depth": [1, 1]},
          "train": {"steps": 4, "batch_size": 16, "seed": 0}}


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
    from tests.booktools import package_dependencies

    assert set(package_dependencies(runs.KEY_MODULES)) == set(runs.KEY_MODULES)


def test_editing_a_figure_or_analysis_module_keeps_every_key_and_editing_the_trainer_changes_them(monkeypatch):
    real = runs.Path.read_bytes
    edited = {"toy.py", "literature.py", "attention_conv.py", "book.py", "style.py", "crossover.py"}

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


@pytest.mark.parametrize("config, match", [
    ({"data": {}, "model": {}}, "exactly the keys"),
    ({**CONFIG, "model": {"kind": "rnn"}}, "model kind"),
    ({**CONFIG, "train": {"steps": 0, "batch_size": 1}}, "steps"),
    ({**CONFIG, "data": {**CONFIG["data"], "seed": object()}}, "JSON"),
])
def test_bad_run_configurations_are_rejected(config, match):
    with pytest.raises(ValueError, match=match):
        runs.run_key(config)
    with pytest.raises(ValueError):
        runs.experiment(profile.budget("quick"), "mlp", 10)
