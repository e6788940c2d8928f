"""The permutation theorem, run: a ViT and its twin trained on scrambled images.

:mod:`vitbias.permute` moves the patches of an image by one fixed
permutation; a ViT whose position table is permuted alike computes the same
function of the shuffled image as the original computes of the original. Its
initial weights are drawn entry by entry and AdamW acts entry by entry, so
the twin trained on shuffled images follows the original's trajectory, up to
float rounding. :func:`twin_trainings` trains both and returns what can be
compared. An experiment, kept apart from the modules a trained run depends
on (``vitbias.runs.KEY_MODULES``), so that editing it retrains nothing.
"""

from __future__ import annotations

import numpy as np
import torch

from .models import build
from .permute import absorb, scramble_index
from .train import train


def twin_trainings(spec: dict, data, recipe, order, patch: int, dtype=torch.float64, pixel_order=None):
    """The theorem, run: a ViT trained on ``data`` and its twin trained on the scrambled images.

    The twin's images have their patches moved by ``order`` and, with a
    ``pixel_order``, the pixels inside every patch moved alike
    (:func:`vitbias.permute.scramble`). Both start from the same weights
    (drawn from ``recipe.seed``), the twin's made to absorb the scramble
    (:func:`vitbias.permute.absorb`: position table and patch-embedding
    weights permuted); both see the same batches and the same augmentation,
    which acts on the image *before* the scramble. Returns the two loss curves
    ``(2, steps)`` and the largest difference between the twin's final
    weights and the original's final weights absorbed the same way. In exact
    arithmetic the curves are equal and the difference is zero;
    ``dtype=torch.float64`` keeps the rounding small.
    """
    if spec.get("kind") != "vit":
        raise ValueError(f"the theorem is about a ViT, got a {spec.get('kind')!r} specification")
    torch.manual_seed(recipe.seed)
    model = build(spec).to(dtype)
    if model.config.patch_size != patch:
        raise ValueError(f"the shuffle must move the ViT's patches ({model.config.patch_size} px), got {patch} px")
    twin = absorb(model, order, pixel_order)
    index = scramble_index(data.images.shape[-2:], patch, order, pixel_order)
    first = train(model, data, recipe, device="cpu")
    second = train(twin, data, recipe, device="cpu", rearrange=index)
    expected = absorb(model, order, pixel_order)
    with torch.no_grad():
        drift = max((a - b).abs().max() for a, b in zip(twin.parameters(), expected.parameters()))
    return np.stack([first.losses, second.losses]), float(drift)
