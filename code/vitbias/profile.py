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
