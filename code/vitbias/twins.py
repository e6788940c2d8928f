"""The permutation theorem, run: a ViT and its twin trained on patch-shuffled images.

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

import copy

import numpy as np
import torch

from .models import build
from .permute import permute_positions
from .train import train


def twin_trainings(spec: dict, data, recipe, order, patch: int, dtype=torch.float64):
    """The theorem, run: a ViT trained on ``data`` and its twin trained on the shuffled images.

    Both start from the same weights (drawn from ``recipe.seed``), the twin's
    position table permuted by :func:`permute_positions`; both see the same
    batches and the same augmentation, which acts on the image *before* the
    shuffle. Returns the two loss curves ``(2, steps)`` and the largest
    difference between the twin's final position table and the permuted table
    of the original. In exact arithmetic the curves are equal and the
    difference is zero; ``dtype=torch.float64`` keeps the rounding small.
    """
    if spec.get("kind") != "vit":
        raise ValueError(f"the theorem is about a ViT, got a {spec.get('kind')!r} specification")
    torch.manual_seed(recipe.seed)
    model = build(spec).to(dtype)
    if model.config.patch_size != patch:
        raise ValueError(f"the shuffle must move the ViT's patches ({model.config.patch_size} px), got {patch} px")
    twin = copy.deepcopy(model)
    prefix = model.config.num_prefix_tokens
    with torch.no_grad():
        twin.pos_embed.copy_(permute_positions(model.pos_embed, order, prefix))
    first = train(model, data, recipe, device="cpu")
    second = train(twin, data, recipe, device="cpu", shuffle=(order, patch))
    with torch.no_grad():
        drift = (twin.pos_embed - permute_positions(model.pos_embed, order, prefix)).abs().max()
    return np.stack([first.losses, second.losses]), float(drift)
