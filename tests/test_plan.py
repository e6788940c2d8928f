"""vitbias.plan: the runs of every chapter, and the training time the run cache recorded for them."""

import json

import pytest

from vitbias import plan, profile, runs


@pytest.mark.parametrize("name", ["quick", "gpu", "full"])
def test_every_chapters_runs_are_valid_configurations(name):
    budget = profile.budget(name)
    for chapter in plan.CHAPTERS:
        for config in plan.chapter_runs(chapter, budget).values():
            runs.check_config(config)


def test_a_run_two_chapters_share_is_one_cache_entry():
    budget = profile.budget("quick")
    n, s = budget.train_sizes[-1], budget.seeds[0]
    crossover, priors, lab = plan.crossover(budget), plan.priors(budget), plan.lab(budget)
    assert runs.run_key(crossover["vit", n, s, 0.0]) == runs.run_key(priors["ViT", n, s, 0.0])
    assert runs.run_key(crossover["cnn", n, s, 1.0]) == runs.run_key(priors["CNN", n, s, 1.0])
    assert runs.run_key(lab["conv stem", s]) == runs.run_key(priors["conv stem", n, s, 0.0])
    assert runs.run_key(plan.locality(budget)["stem", s]) == runs.run_key(priors["conv stem", n, s, 0.0])


def test_the_training_time_sums_the_recorded_seconds_of_distinct_runs_and_counts_the_missing(tmp_path):
    budget = profile.budget("quick")
    configs = list(plan.priors(budget).values())[:3]
    distilled = plan.priors(budget)["distilled from the CNN", budget.train_sizes[0], 0, 0.0]
    for i, config in enumerate(configs[:2]):
        entry = tmp_path / runs.run_key(config)
        entry.mkdir()
        (entry / "metrics.json").write_text(json.dumps({"seconds": 10.0 * (i + 1)}))
    assert plan.training_seconds(configs + configs[:1], tmp_path) == (30.0, 3, 1)
    # a distilled run counts its teacher too: the CNN of the same size and seed, the first run above
    assert configs[0] == distilled["train"]["teacher"]
    assert plan.training_seconds([distilled], tmp_path) == (10.0, 2, 1)


def test_an_unknown_chapter_is_refused():
    with pytest.raises(ValueError, match="no runs are planned"):
        plan.chapter_runs("bias-toy", profile.budget("quick"))
