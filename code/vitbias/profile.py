"""The build profile and the device.

The profile is chosen by one environment variable, ``VITBIAS_PROFILE``:

- ``quick`` (default): offline, CPU, data generated in code;
- ``full``: a GPU, CIFAR-10 and pretrained weights from the local cache.

The device is found, never hard-coded: CUDA when present, else the CPU.
"""

from __future__ import annotations

import os

PROFILES = ("quick", "full")
PROFILE_VARIABLE = "VITBIAS_PROFILE"


def current_profile() -> str:
    """The profile named by ``VITBIAS_PROFILE`` (``quick`` when unset)."""
    name = os.environ.get(PROFILE_VARIABLE, "quick").strip() or "quick"
    if name not in PROFILES:
        raise ValueError(
            f"{PROFILE_VARIABLE} must be one of {PROFILES}, got {name!r}"
        )
    return name


def device_name() -> str:
    """``'cuda'`` when a CUDA device is available, else ``'cpu'``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def device():
    """The ``torch.device`` every model and tensor of the book runs on."""
    import torch

    return torch.device(device_name())


# ---------------------------------------------------------------------------
# Budgets: every size, step count and batch size the experiments use.
# ---------------------------------------------------------------------------

from dataclasses import dataclass, field  # noqa: E402

from .models import vit_spec  # noqa: E402
from .vit import TINY_VIT_FULL, TINY_VIT_QUICK  # noqa: E402


@dataclass(frozen=True)
class Budget:
    """The experiment budget of one profile; chapters read their sizes from here.

    - ``dataset``: the data specification of :func:`vitbias.data.load`, less
      its sizes; ``train_sizes``: the training-set sizes compared;
      ``test_size``: the fixed held-out set; ``recipe_size``: the size at
      which augmentation is switched off; ``probe_labels``: the labelled
      images a linear probe is fitted on;
    - ``train``: the recipe shared by every model (``vitbias.train.TrainConfig``);
    - ``cnn``, ``vit``: the model specifications (``vitbias.models.build``);
      the ViT's is made from its typed configuration in ``vitbias.vit``
      (``TINY_VIT_QUICK``, ``TINY_VIT_FULL``) by ``vitbias.models.vit_spec``;
    - ``pretrain``: how the "prior bought elsewhere" is obtained: in ``quick``
      a run on other generated labels (its data and step count), in ``full``
      the pretrained timm ViT-Ti/16 from the local cache (``{"timm": name}``).
    """

    dataset: dict
    train_sizes: tuple[int, ...]
    test_size: int
    recipe_size: int
    probe_labels: int
    train: dict
    cnn: dict
    vit: dict
    pretrain: dict = field(default_factory=dict)


BUDGETS = {
    # Two CPU cores, a few minutes for the crossover chapter: 8 runs of 800
    # steps and one pretraining run of 1,600 steps, each of batch 32.
    "quick": Budget(
        dataset={"name": "shapes", "seed": 0, "texture": "none"},
        train_sizes=(1000, 5000, 20000),
        test_size=2000,
        recipe_size=5000,
        probe_labels=1000,
        train={"steps": 800, "batch_size": 32, "lr": 2e-3, "weight_decay": 0.05,
               "schedule": "cosine", "warmup": 80, "augment": True, "seed": 0},
        cnn={"kind": "cnn", "channels": [16, 32, 64, 144], "depth": [1, 1, 1, 2]},
        vit=vit_spec(TINY_VIT_QUICK),
        pretrain={"data": {"name": "shapes", "seed": 1, "texture": "none", "classes": "other",
                           "train": 20000, "test": 2000},
                  "steps": 1600},
    ),
    # One GPU: CIFAR-10, the source's budget (600 steps of 128 images).
    "full": Budget(
        dataset={"name": "cifar10", "seed": 0},
        train_sizes=(1000, 5000, 20000),
        test_size=10000,
        recipe_size=5000,
        probe_labels=1000,
        train={"steps": 600, "batch_size": 128, "lr": 1e-3, "weight_decay": 0.05,
               "schedule": "cosine", "warmup": 60, "augment": True, "seed": 0},
        cnn={"kind": "cnn", "channels": [32, 64, 128, 160], "depth": [1, 1, 1, 1]},
        vit=vit_spec(TINY_VIT_FULL),
        pretrain={"timm": "vit_tiny_patch16_224.augreg_in21k", "image_size": 224},
    ),
}


def budget(name: str | None = None) -> Budget:
    """The :class:`Budget` of profile ``name`` (the current profile when ``None``)."""
    name = name or current_profile()
    if name not in BUDGETS:
        raise ValueError(f"no budget for profile {name!r}: expected one of {tuple(BUDGETS)}")
    return BUDGETS[name]
