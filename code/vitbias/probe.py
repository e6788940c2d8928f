"""The linear probe: how good are a frozen network's features?

Freeze a network, read the vector its classifier head would read (the
pooled features, ``(N, D)``), and fit a multinomial logistic regression on
the features of a few labelled images (scikit-learn). Its test accuracy
measures the features alone: nothing in the network is trained. Comparing a
pretrained network with the same architecture at random initialisation
isolates what pretraining bought.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .data import ImageSet
from .models import features as _features
from .profile import device as default_device
from .vit import ViT


@torch.no_grad()
def extract_features(model: nn.Module, data: ImageSet, *, image_size: int | None = None,
                     mean=None, std=None, batch_size: int = 500, device=None) -> np.ndarray:
    """The frozen features ``(N, D)`` of ``model`` on ``data``.

    Pixels are scaled to [0, 1] and standardised with ``mean``/``std`` (the
    set's own when ``None``); ``image_size`` resizes them first (bilinear), as
    a network pretrained at another resolution needs.
    """
    device = torch.device(device) if device is not None else default_device()
    model = model.to(device).eval()
    mean = torch.tensor(mean if mean is not None else data.mean, device=device).view(1, 3, 1, 1)
    std = torch.tensor(std if std is not None else data.std, device=device).view(1, 3, 1, 1)
    out = []
    for first in range(0, len(data), batch_size):
        x = torch.from_numpy(data.images[first:first + batch_size]).to(device).float() / 255.0
        if image_size is not None and image_size != x.shape[-1]:
            x = F.interpolate(x, size=(image_size, image_size), mode="bilinear", align_corners=False)
        out.append(_features(model, (x - mean) / std).float().cpu())
    return torch.cat(out).numpy()


def linear_probe(train_features, train_labels, test_features, test_labels,
                 C: float = 1.0, max_iter: int = 2000) -> float:
    """Test accuracy of a logistic regression fitted on standardised frozen features."""
    # scikit-learn is imported here so that planning the runs (which names the pretraining) needs none
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    train_features, test_features = np.asarray(train_features), np.asarray(test_features)
    train_labels, test_labels = np.asarray(train_labels), np.asarray(test_labels)
    if train_features.ndim != 2 or test_features.ndim != 2 or train_features.shape[1] != test_features.shape[1]:
        raise ValueError(f"features must be (N, D) arrays with the same D, got "
                         f"{train_features.shape} and {test_features.shape}")
    if train_labels.shape != (len(train_features),) or test_labels.shape != (len(test_features),):
        raise ValueError("one label per feature row is needed")
    classifier = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=max_iter))
    classifier.fit(train_features, train_labels)
    return float((classifier.predict(test_features) == test_labels).mean())


def pretraining_run(budget, seed: int | None = None) -> dict:
    """The run config of the ViT pretrained on other labels (quick and gpu profiles) with training seed
    ``seed`` (the budget's first seed when ``None``): :func:`vitbias.runs.pretraining`'s run, whose
    initial weights and batch order the seed draws; its images are the same for every seed."""
    from . import runs as _runs

    seed = budget.seeds[0] if seed is None else seed
    if not (isinstance(seed, (int, np.integer)) and seed >= 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    config = _runs.pretraining(budget)
    return {**config, "train": {**config["train"], "seed": int(seed)}}


def prior_bought_elsewhere(budget, seed: int | None = None):
    """The pretrained ViT of ``budget``, the same architecture at random, and how to feed them.

    Returns ``(pretrained, random, options)`` where ``options`` are the
    keyword arguments of :func:`extract_features` (resolution, standardisation).
    Quick and gpu profiles: a TinyViT pretrained by :func:`vitbias.runs.run` on
    other generated labels with training seed ``seed`` (:func:`pretraining_run`),
    and its random twin drawn after that seed. Full profile: timm's ViT-Ti/16
    (ImageNet-21k) from the local cache, at 224 px, copied into
    :class:`vitbias.vit.ViT`, the same for every seed; the random twin is a
    ``ViT`` of the same configuration drawn after ``seed`` (the tensors timm
    would draw for that model after that seed). ``seed`` defaults to the
    budget's first.
    """
    from . import models as _models
    from . import runs as _runs

    seed = budget.seeds[0] if seed is None else seed
    if "timm" in budget.pretrain:
        pretrained = _models.pretrained_vit_tiny(num_classes=0)
        torch.manual_seed(seed)
        random = ViT(pretrained.config)
        size = budget.pretrain["image_size"]
        cfg = pretrained.pretrained_cfg
        return pretrained, random, {"image_size": size, "mean": cfg["mean"], "std": cfg["std"]}
    config = pretraining_run(budget, seed)
    pretrained = _runs.run(config).model
    random = _runs.seeded_model(config["model"], config["train"]["seed"])
    return pretrained, random, {}
