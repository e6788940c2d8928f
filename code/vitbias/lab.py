"""The lab's challenge: a ViT for small data, trained and scored with the book's recipe.

The reader's model enters through one function that returns an
``nn.Module`` (images ``(B, 3, S, S)`` in, class scores ``(B, classes)``
out). :func:`enter` draws its initial weights after the seed, checks the
limits (at most :data:`MAX_PARAMETERS` parameters, at most
:data:`vitbias.plan.MAX_IMAGES` training images of the testbed), trains it with the
recipe and step budget every model of the book gets on that many images
(:func:`vitbias.runs.experiment`), and scores it on the budget's test set,
the one every model of the book is scored on.

A trained entry is kept in the run cache (:mod:`vitbias.runs`) under a key
that hashes the run it stands beside, the source and printed structure of
every module class in the model and its initial weights, so running the
cell again with the same model reads the stored entry instead of training it
twice; any change to the model, its code or the recipe trains afresh. An
entry that *is* one of the book's runs (the same class and the same initial
weights as the plain ViT or a route of the priors chapter, with the same
recipe) is that run: it is read from the run cache, not trained again
(:func:`book_run`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from . import data as _data
from . import runs as _runs
from .models import parameter_count
from .plan import MAX_IMAGES, challenge_size, prior_routes
from .profile import device_name
from .train import TrainConfig, evaluate, train

MAX_PARAMETERS = 600_000


def check_model(model, image_size: int, classes: int) -> int:
    """The parameter count of a challenge entry, after checking it; else ``ValueError`` saying what is wrong.

    An entry is an ``nn.Module`` with at most :data:`MAX_PARAMETERS`
    parameters that maps images ``(B, 3, image_size, image_size)`` to scores
    ``(B, classes)``.
    """
    if not isinstance(model, nn.Module):
        raise ValueError(f"the entry must return a torch nn.Module, got {type(model).__name__}")
    count = parameter_count(model)
    if count > MAX_PARAMETERS:
        raise ValueError(f"the entry has {count:,} parameters; the challenge allows at most {MAX_PARAMETERS:,}")
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = model(torch.zeros(2, 3, image_size, image_size))
    model.train(was_training)
    if not torch.is_tensor(out) or tuple(out.shape) != (2, classes):
        found = tuple(out.shape) if torch.is_tensor(out) else type(out).__name__
        raise ValueError(f"the entry must map images (B, 3, {image_size}, {image_size}) to scores "
                         f"(B, {classes}); for B = 2 it returned {found}")
    return count


@dataclass(frozen=True)
class Entry:
    """A trained challenge entry: the model, its size, what it trained on, and its scores."""

    model: nn.Module
    parameters: int
    train_size: int
    seed: int
    accuracy: float          # on the budget's test set
    train_accuracy: float    # on its own training images
    seconds: float           # wall-clock training time
    cached: bool = False     # read from the run cache, trained by an earlier call


def entry_key(config: dict, model: nn.Module) -> str | None:
    """The cache key of an entry: its run, its modules' code and structure, its initial weights.

    ``None`` when the source of one of the model's own module classes cannot
    be read (then the entry is always trained).
    """
    digest = hashlib.sha256(_runs.run_key(config).encode())
    digest.update(repr(model).encode())
    for cls in sorted({type(m) for m in model.modules()}, key=lambda c: (c.__module__, c.__qualname__)):
        digest.update(f"{cls.__module__}.{cls.__qualname__}".encode())
        if not cls.__module__.startswith("torch."):
            try:
                digest.update(inspect.getsource(cls).encode())
            except (OSError, TypeError):
                return None
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return "lab-" + digest.hexdigest()[:20]


def book_run(model: nn.Module, budget, train_size: int, seed: int, folder=None):
    """The book's run that ``model`` (freshly initialised) would repeat, or ``None``.

    A candidate is the plain ViT or a route of the priors chapter trained
    with the plain recipe (:func:`vitbias.plan.prior_routes`) on
    ``train_size`` images with ``seed``: the same model class, the same
    parameter names and exactly the same initial weights. Trained with the
    same recipe on the same batches it would be the same training, so the
    challenge reads that run from the cache (:func:`vitbias.runs.run`, in
    ``folder``, default the run cache), training it there if it is missing.
    """
    state = model.state_dict()
    candidates = [None] + [route for route, augment in prior_routes(budget).values()
                           if augment is None and route is not None and not route.get("distill")]
    for route in candidates:
        config = _runs.experiment(budget, "vit", int(train_size), seed, route=route, fit=True)
        twin = _runs.seeded_model(config["model"], seed)
        other = twin.state_dict()
        if type(twin) is type(model) and other.keys() == state.keys() and all(
                torch.equal(other[k], state[k]) for k in state):
            return _runs.run(config, folder)
    return None


def enter(make_model: Callable[[], nn.Module], budget, train_size: int | None = None, seed: int = 0,
          folder=None) -> Entry:
    """Train and score the model that ``make_model()`` returns, under the challenge's limits.

    ``train_size``: one of the budget's training sizes, at most
    :data:`vitbias.plan.MAX_IMAGES` (default: :func:`vitbias.plan.challenge_size`). The images, the
    recipe and the step budget are those of
    ``runs.experiment(budget, "vit", train_size, seed, fit=True)``, the plain
    ViT's run of that size and seed under the rule by which it fits its
    training set, so the entry is scored beside the book's models on
    equal terms; its initial weights are drawn after ``torch.manual_seed(seed)``,
    as the run cache draws theirs. On a CPU it trains on one thread, as the
    run cache trains every model (one single-threaded process per core), so a
    model that is one of the book's runs is trained as that run was. Raises
    ``ValueError`` when a limit is broken. The trained entry is stored in
    ``folder`` (default: the run cache) and read from there by a later call
    with the same model (:func:`entry_key`).
    """
    n = challenge_size(budget) if train_size is None else train_size
    if not isinstance(n, (int, np.integer)) or n > MAX_IMAGES or n not in budget.train_sizes:
        raise ValueError(f"the challenge trains on one of the budget's sizes of at most {MAX_IMAGES:,} images "
                         f"({[s for s in budget.train_sizes if s <= MAX_IMAGES]}), got {n!r}")
    config = _runs.experiment(budget, "vit", int(n), seed, fit=True)
    torch.manual_seed(seed)
    model = make_model()
    train_set, test_set = _data.load(config["data"])
    if len(train_set) > MAX_IMAGES:  # the data specification is the run's: this guards the limit itself
        raise ValueError(f"{len(train_set):,} training images; the challenge allows at most {MAX_IMAGES:,}")
    count = check_model(model, train_set.images.shape[-1], len(train_set.classes))
    key = entry_key(config, model)
    stored = (_runs.runs_folder() if folder is None else Path(folder)) / key if key else None
    if stored is not None and (stored / "entry.json").is_file() and (stored / "model.pt").is_file():
        model.load_state_dict(torch.load(stored / "model.pt", map_location="cpu", weights_only=True))
        scores = json.loads((stored / "entry.json").read_text())
        return Entry(model.cpu().eval(), count, len(train_set), seed, scores["accuracy"],
                     scores["train_accuracy"], scores["seconds"], cached=True)
    same = book_run(model, budget, n, seed, folder)
    if same is not None:
        return Entry(same.model, count, len(train_set), seed, same.accuracy, same.train_accuracy,
                     same.metrics["seconds"], cached=same.cached)
    threads = torch.get_num_threads()
    if device_name() == "cpu":  # one thread, as the run cache trains every model on a CPU
        torch.set_num_threads(1)
    try:
        history = train(model, train_set, TrainConfig(**config["train"]))
    finally:
        torch.set_num_threads(threads)
    entry = Entry(model.cpu().eval(), count, len(train_set), seed, evaluate(model, test_set)["accuracy"],
                  evaluate(model, train_set)["accuracy"], history.seconds)
    if stored is not None:
        stored.mkdir(parents=True, exist_ok=True)
        torch.save({k: v.cpu() for k, v in model.state_dict().items()}, stored / "model.pt")
        (stored / "entry.json").write_text(json.dumps(
            {"accuracy": entry.accuracy, "train_accuracy": entry.train_accuracy, "seconds": entry.seconds}))
    return entry
