"""The lab's challenge: a ViT for small data, trained and scored with the book's recipe.

The reader's model enters through one function that returns an
``nn.Module`` (images ``(B, 3, S, S)`` in, class scores ``(B, classes)``
out). :func:`enter` draws its initial weights after the seed, checks the
limits (at most :data:`MAX_PARAMETERS` parameters, at most
:data:`MAX_IMAGES` training images of the testbed), trains it with the
recipe and step budget every model of the book gets on that many images
(:func:`vitbias.runs.experiment`), and scores it on the budget's test set,
the one every model of the book is scored on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from . import data as _data
from . import runs as _runs
from .models import parameter_count
from .profile import device_name
from .train import TrainConfig, evaluate, train

MAX_PARAMETERS = 600_000
MAX_IMAGES = 5_000


def challenge_size(budget) -> int:
    """The challenge's training-set size: the budget's largest size of at most :data:`MAX_IMAGES` images.

    In the ``full`` profile that is 5,000 CIFAR-10 images; the quick profile's
    largest set is smaller, and the challenge uses all of it.
    """
    sizes = [n for n in budget.train_sizes if n <= MAX_IMAGES]
    if not sizes:
        raise ValueError(f"the budget has no training size of at most {MAX_IMAGES:,} images: {budget.train_sizes}")
    return max(sizes)


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


def enter(make_model: Callable[[], nn.Module], budget, train_size: int | None = None, seed: int = 0) -> Entry:
    """Train and score the model that ``make_model()`` returns, under the challenge's limits.

    ``train_size``: one of the budget's training sizes, at most
    :data:`MAX_IMAGES` (default: :func:`challenge_size`). The images, the
    recipe and the step budget are those of
    ``runs.experiment(budget, "vit", train_size, seed)``, the plain ViT's run
    of that size and seed, so the entry is scored beside the book's models on
    equal terms; its initial weights are drawn after ``torch.manual_seed(seed)``,
    as the run cache draws theirs. On a CPU it trains on one thread, as the
    run cache trains every model (one single-threaded process per core), so a
    model that is one of the book's runs is trained as that run was. Raises
    ``ValueError`` when a limit is broken.
    """
    n = challenge_size(budget) if train_size is None else train_size
    if not isinstance(n, (int, np.integer)) or n > MAX_IMAGES or n not in budget.train_sizes:
        raise ValueError(f"the challenge trains on one of the budget's sizes of at most {MAX_IMAGES:,} images "
                         f"({[s for s in budget.train_sizes if s <= MAX_IMAGES]}), got {n!r}")
    config = _runs.experiment(budget, "vit", int(n), seed)
    torch.manual_seed(seed)
    model = make_model()
    train_set, test_set = _data.load(config["data"])
    if len(train_set) > MAX_IMAGES:  # the data specification is the run's: this guards the limit itself
        raise ValueError(f"{len(train_set):,} training images; the challenge allows at most {MAX_IMAGES:,}")
    count = check_model(model, train_set.images.shape[-1], len(train_set.classes))
    threads = torch.get_num_threads()
    if device_name() == "cpu":  # one thread, as the run cache trains every model on a CPU
        torch.set_num_threads(1)
    try:
        history = train(model, train_set, TrainConfig(**config["train"]))
    finally:
        torch.set_num_threads(threads)
    return Entry(model.cpu().eval(), count, len(train_set), seed, evaluate(model, test_set)["accuracy"],
                 evaluate(model, train_set)["accuracy"], history.seconds)


def prior_routes(budget) -> dict[str, tuple[dict | None, bool | None]]:
    """The priors chapter's routes back to the prior: name -> (RouteViT keywords, augmentation).

    The same dictionary that chapter trains (``book/priors.md``, its ``ROUTES``),
    so that ``runs.experiment(budget, "vit", n, s, route=..., augment=...)``
    names the very runs it stored in the cache.
    """
    return {
        "local (radius 1)": ({"local_radius": 1}, None),
        "local (radius 2)": ({"local_radius": 2}, None),
        "gated positional": ({"gated": budget.vit["depth"]}, None),
        "relative bias": ({"relative_bias": True}, None),
        "conv stem": ({"stem": True}, None),
        "crop and flip": (None, True),
        "distilled from the CNN": ({"distill": True}, None),
    }
