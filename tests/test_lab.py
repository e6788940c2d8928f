"""The lab's challenge: its limits, and that an entry is trained and scored like the book's models."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from torch import nn

from vitbias import data, lab, plan, profile, runs
from vitbias.train import evaluate


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Every test trains into its own empty run cache."""
    monkeypatch.setenv(runs.RUNS_VARIABLE, str(tmp_path / "runs"))


def steps_of(n: int):
    """The quick budget with every run, fitted or not, trained for ``n`` steps."""
    return replace(profile.budget("quick"), min_steps=n, max_steps=n,
                   fitted={"vit": {"min_steps": n, "max_steps": n}})


def small_entry() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10))


def test_the_challenge_size_is_the_priors_chapters_largest_route_size_of_at_most_5000_images():
    for name in profile.PROFILES:
        budget = profile.budget(name)
        assert plan.challenge_size(budget) == budget.route_sizes[-1] <= plan.MAX_IMAGES
    assert plan.challenge_size(profile.budget("full")) == 5000    # the source's 5,000 CIFAR-10 images
    with pytest.raises(ValueError, match="at most 5,000"):
        plan.challenge_size(replace(profile.budget("quick"), train_sizes=(6000, 7000), recipe_size=6000,
                                   probe_labels=6000, route_sizes=(6000, 7000)))


def test_check_model_counts_parameters_and_enforces_the_limits():
    assert lab.check_model(small_entry(), 32, 10) == 3 * 32 * 32 * 10 + 10
    big = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 196), nn.Linear(196, 10))  # 604,278 parameters
    with pytest.raises(ValueError, match="604,278 parameters; the challenge allows at most 600,000"):
        lab.check_model(big, 32, 10)
    with pytest.raises(ValueError, match=r"scores \(B, 10\); for B = 2 it returned \(2, 7\)"):
        lab.check_model(nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 7)), 32, 10)
    with pytest.raises(ValueError, match="must return a torch nn.Module, got function"):
        lab.check_model(small_entry, 32, 10)


def test_check_model_leaves_the_mode_as_it_found_it():
    model = small_entry().train()
    lab.check_model(model, 32, 10)
    assert model.training


def test_enter_refuses_more_than_5000_images_and_sizes_the_book_does_not_train():
    with pytest.raises(ValueError, match="at most 5,000 images"):
        lab.enter(small_entry, profile.budget("gpu"), train_size=10000)
    with pytest.raises(ValueError, match="got 100"):
        lab.enter(small_entry, profile.budget("quick"), train_size=100)


def test_enter_refuses_a_model_over_the_limit_before_training():
    def too_big():
        return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 200), nn.Linear(200, 10))

    with pytest.raises(ValueError, match="parameters; the challenge allows"):
        lab.enter(too_big, profile.budget("quick"), train_size=50)


def test_enter_trains_on_the_runs_images_with_its_recipe_and_scores_on_the_test_set():
    budget = steps_of(5)
    first = lab.enter(small_entry, budget, train_size=50, seed=1)
    again = lab.enter(small_entry, budget, train_size=50, seed=1)
    other = lab.enter(small_entry, budget, train_size=50, seed=2)
    train_set, test_set = data.load(runs.experiment(budget, "vit", 50, 1)["data"])
    assert (first.train_size, first.seed, first.parameters) == (50, 1, 30730)
    assert first.accuracy == evaluate(first.model, test_set)["accuracy"]
    assert first.train_accuracy == evaluate(first.model, train_set)["accuracy"]
    # The seed draws the initial weights (and the images and batches): same seed, same model.
    for a, b in zip(first.model.parameters(), again.model.parameters()):
        assert torch.equal(a, b)
    assert not all(torch.equal(a, b) for a, b in zip(first.model.parameters(), other.model.parameters()))
    # Five steps moved the weights away from their initial draw.
    torch.manual_seed(1)
    initial = small_entry()
    assert not torch.equal(initial[1].weight, first.model[1].weight)


def test_enter_trains_on_one_thread_and_gives_the_threads_back():
    budget = steps_of(2)
    seen = []

    def counting():
        model = small_entry()
        model.register_forward_pre_hook(lambda module, args: seen.append(torch.get_num_threads()))
        return model

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        lab.enter(counting, budget, train_size=50)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    # check_model's forward runs on the caller's threads; the training steps on one
    assert seen[0] == 2 and set(seen[1:3]) == {1}


class Doubled(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(3 * 32 * 32, 10)

    def forward(self, x):
        return 2 * self.head(x.flatten(1))


def test_a_second_entry_of_the_same_model_is_read_from_the_cache_and_any_change_trains_afresh(monkeypatch):
    budget = steps_of(3)
    first = lab.enter(small_entry, budget, train_size=50, seed=1)
    again = lab.enter(small_entry, budget, train_size=50, seed=1)
    assert not first.cached and again.cached
    assert (again.accuracy, again.train_accuracy, again.seconds) == (first.accuracy, first.train_accuracy,
                                                                     first.seconds)
    for a, b in zip(first.model.parameters(), again.model.parameters()):
        assert torch.equal(a, b)
    assert not lab.enter(small_entry, budget, train_size=50, seed=2).cached  # other initial weights
    assert not lab.enter(Doubled, budget, train_size=50, seed=1).cached       # other code
    longer = steps_of(4)
    assert not lab.enter(small_entry, longer, train_size=50, seed=1).cached   # other recipe


def test_an_entry_whose_code_cannot_be_read_is_trained_every_time(monkeypatch):
    budget = steps_of(2)

    def unreadable(obj):
        raise OSError("no source")

    monkeypatch.setattr(lab.inspect, "getsource", unreadable)
    assert lab.entry_key(runs.experiment(budget, "vit", 50, 0), Doubled()) is None
    assert not lab.enter(Doubled, budget, train_size=50).cached
    assert not lab.enter(Doubled, budget, train_size=50).cached


def test_an_entry_that_is_one_of_the_books_runs_is_read_from_the_run_cache_not_trained_again():
    from vitbias import models

    budget = steps_of(5)
    stem = runs.experiment(budget, "vit", 50, 0, route={"stem": True})
    book = runs.run(stem)
    entry = lab.enter(lambda: models.build({**budget.vit, "kind": "route", "stem": True}), budget, 50, seed=0)
    assert (entry.accuracy, entry.train_accuracy, entry.seconds) == (
        book.accuracy, book.train_accuracy, book.metrics["seconds"])
    assert entry.cached and all(torch.equal(a, b) for a, b in zip(entry.model.parameters(),
                                                                   book.model.parameters()))

    def nudged():
        model = models.build({**budget.vit, "kind": "route", "stem": True})
        with torch.no_grad():
            model.head.bias.add_(1e-3)
        return model

    assert lab.book_run(nudged(), budget, 50, 0) is None
    assert not lab.enter(nudged, budget, 50, seed=0).cached
