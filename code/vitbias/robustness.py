"""Robustness, measured three ways: shape bias on cue conflict, occlusion, small adversarial steps.

- :func:`shape_bias` is Geirhos et al.'s count: among the cue-conflict trials
  that a model answers with the shape's class or the texture's class, the
  share answered by shape. Trials answered with neither do not count, nor do
  trials whose two cues name the same class.
- :func:`occlude` blanks a fraction of the ``patch x patch`` squares of every
  image, on the ViT's patch grid or moved off it, filled with black, the
  image's mean colour or noise: the three reasons Naseer et al.'s occlusion
  result may favour a ViT, each a separate switch.
- :func:`pgd_accuracy` is the accuracy under an L-infinity projected gradient
  attack (Madry et al.) of a few steps in pixel space.
- :func:`nearest_size` and :func:`retained` compare models at matched clean
  accuracy: the share of its clean accuracy each keeps.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .data import ImageSet
from .train import predict

FILLS = ("zero", "mean", "noise")

# The source's six hand-made cue-conflict trials: the shape's class, the
# texture's class and the model's answer. The fourth answer names neither cue.
SIX_TRIALS = {
    "shape": ("cat", "car", "bottle", "dog", "chair", "truck"),
    "texture": ("elephant", "clock", "knife", "bird", "bear", "oven"),
    "prediction": ("cat", "clock", "bottle", "boat", "bear", "truck"),
}


def _vector(values, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    return array


def decisions(predictions, shape_labels, texture_labels) -> dict[str, int]:
    """How many counted trials were answered by shape, by texture, by neither, and how many were excluded.

    A trial whose shape and texture name the same class is excluded (it
    cannot tell the cues apart).
    """
    predictions = _vector(predictions, "predictions")
    shape_labels = _vector(shape_labels, "shape_labels")
    texture_labels = _vector(texture_labels, "texture_labels")
    if not (len(predictions) == len(shape_labels) == len(texture_labels)):
        raise ValueError(f"predictions, shape_labels and texture_labels must have equal lengths, got "
                         f"{len(predictions)}, {len(shape_labels)} and {len(texture_labels)}")
    conflict = shape_labels != texture_labels
    shape = int(np.sum(conflict & (predictions == shape_labels)))
    texture = int(np.sum(conflict & (predictions == texture_labels)))
    return {"shape": shape, "texture": texture, "neither": int(conflict.sum()) - shape - texture,
            "excluded": int((~conflict).sum())}


def shape_bias(predictions, shape_labels, texture_labels) -> float:
    """Shape decisions / (shape decisions + texture decisions), Geirhos et al. (2019), Section 2.

    ``predictions``, ``shape_labels``, ``texture_labels``: ``(N,)`` class
    labels (integers or names). ``ValueError`` when the lengths differ or
    when no trial is answered with either cue.
    """
    count = decisions(predictions, shape_labels, texture_labels)
    answered = count["shape"] + count["texture"]
    if answered == 0:
        raise ValueError("no trial counts: none was answered with its shape's or its texture's class")
    return count["shape"] / answered


def model_decisions(model: nn.Module, conflict: ImageSet) -> dict[str, int]:
    """:func:`decisions` of ``model`` on cue-conflict images (labels: shape, ``textures``: texture class)."""
    if conflict.textures is None:
        raise ValueError("cue-conflict images need their texture classes (ImageSet.textures)")
    answers = predict(model, conflict).argmax(axis=1)
    return decisions(answers, conflict.labels, conflict.textures)


def model_shape_bias(model: nn.Module, conflict: ImageSet) -> float:
    """:func:`shape_bias` of ``model``'s answers on cue-conflict images."""
    count = model_decisions(model, conflict)
    answered = count["shape"] + count["texture"]
    if answered == 0:
        raise ValueError("no trial counts: the model named neither cue on every image")
    return count["shape"] / answered


def occlusion_mask(count: int, height: int, width: int, fraction: float, patch: int, *,
                   offset: int = 0, seed: int = 0) -> np.ndarray:
    """``(count, height, width)`` bool: ``round(fraction * cells)`` of the ``patch``-squares of each image.

    The squares are cells of the grid of side ``patch``, chosen at random per
    image; ``offset`` moves the whole mask down and right by that many pixels
    around the border (a circular shift), so the blanked area is the same
    and, for ``0 < offset < patch``, every square straddles four patches.
    """
    if not (isinstance(patch, (int, np.integer)) and patch >= 1 and height % patch == 0
            and width % patch == 0):
        raise ValueError(f"patch must be a positive integer dividing {height} x {width}, got {patch!r}")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must lie in [0, 1], got {fraction}")
    if not (isinstance(offset, (int, np.integer)) and 0 <= offset < patch):
        raise ValueError(f"offset must be an integer in 0..{patch - 1}, got {offset!r}")
    rows, cols = height // patch, width // patch
    cells = rows * cols
    chosen = int(round(fraction * cells))
    rng = np.random.default_rng([int(seed), 7])
    rank = rng.random((count, cells)).argsort(axis=1).argsort(axis=1)  # a random order of the cells
    blank = (rank < chosen).reshape(count, rows, cols)
    mask = blank.repeat(patch, axis=1).repeat(patch, axis=2)
    return np.roll(mask, (offset, offset), axis=(1, 2))


def occlude(images: ImageSet, fraction: float, patch: int, *, offset: int = 0, fill: str = "zero",
            seed: int = 0) -> ImageSet:
    """``images`` with a ``fraction`` of their ``patch``-squares blanked (:func:`occlusion_mask`).

    ``fill``: ``"zero"`` (black, as Naseer et al. drop patches), ``"mean"``
    (each image's own mean colour, so the squares add no new edge of their
    own colour) or ``"noise"`` (uniform random pixels). The same ``seed``
    blanks the same squares whatever the offset and fill, so curves that
    differ in one switch are paired image by image.
    """
    if fill not in FILLS:
        raise ValueError(f"fill must be one of {FILLS}, got {fill!r}")
    pixels = images.images
    n, channels, height, width = pixels.shape
    mask = occlusion_mask(n, height, width, fraction, patch, offset=offset, seed=seed)[:, None]
    if fill == "zero":
        value = np.zeros_like(pixels)
    elif fill == "mean":
        value = np.broadcast_to(np.round(pixels.mean(axis=(2, 3), keepdims=True)).astype(np.uint8),
                                pixels.shape)
    else:
        value = np.random.default_rng([int(seed), 8]).integers(0, 256, pixels.shape, dtype=np.uint8)
    return replace(images, images=np.where(mask, value, pixels))


def pgd_attack(model: nn.Module, images: ImageSet, epsilon: float, steps: int = 5,
               step_size: float | None = None, *, seed: int = 0, batch_size: int = 500) -> np.ndarray:
    """Adversarial pixels ``(N, 3, H, W)`` in [0, 1]: an L-infinity PGD attack of radius ``epsilon``.

    Madry et al. (2018): a uniform random start in the ``epsilon``-ball, then
    ``steps`` signed-gradient ascent steps on the cross-entropy of size
    ``step_size`` (default ``2.5 * epsilon / steps``), each followed by the
    projection back onto the ball and onto [0, 1]. The model reads the
    standardised pixels, in eval mode, in float32 on the CPU.
    """
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be non-negative, got {epsilon}")
    if not (isinstance(steps, (int, np.integer)) and steps >= 1):
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    step_size = 2.5 * epsilon / steps if step_size is None else step_size
    if not step_size >= 0:
        raise ValueError(f"step_size must be non-negative, got {step_size}")
    model = model.cpu().eval()
    mean = torch.tensor(images.mean, dtype=torch.float32).view(1, 3, 1, 1)
    std = torch.tensor(images.std, dtype=torch.float32).view(1, 3, 1, 1)
    generator = torch.Generator().manual_seed(int(seed))
    attacked = []
    for first in range(0, len(images), batch_size):
        clean = torch.from_numpy(images.images[first:first + batch_size]).float() / 255.0
        labels = torch.from_numpy(images.labels[first:first + batch_size])
        start = (torch.rand(clean.shape, generator=generator) * 2 - 1) * epsilon
        x = (clean + start).clamp(0.0, 1.0)
        for _ in range(steps):
            x.requires_grad_(True)
            loss = F.cross_entropy(model((x - mean) / std), labels)
            (gradient,) = torch.autograd.grad(loss, x)
            with torch.no_grad():
                x = x + step_size * gradient.sign()
                x = torch.minimum(torch.maximum(x, clean - epsilon), clean + epsilon).clamp(0.0, 1.0)
        attacked.append(x.detach())
    return torch.cat(attacked).numpy()


@torch.no_grad()
def pixel_accuracy(model: nn.Module, pixels: np.ndarray, images: ImageSet, batch_size: int = 500) -> float:
    """Top-1 accuracy of ``model`` on float ``pixels`` ``(N, 3, H, W)`` in [0, 1] with ``images``' labels."""
    if pixels.shape != images.images.shape:
        raise ValueError(f"pixels must have the images' shape {images.images.shape}, got {pixels.shape}")
    model = model.cpu().eval()
    mean = torch.tensor(images.mean, dtype=torch.float32).view(1, 3, 1, 1)
    std = torch.tensor(images.std, dtype=torch.float32).view(1, 3, 1, 1)
    correct = 0
    for first in range(0, len(images), batch_size):
        x = torch.from_numpy(pixels[first:first + batch_size]).float()
        labels = torch.from_numpy(images.labels[first:first + batch_size])
        correct += int((model((x - mean) / std).argmax(1) == labels).sum())
    return correct / len(images)


def pgd_accuracy(model: nn.Module, images: ImageSet, epsilon: float, steps: int = 5, **attack) -> float:
    """Top-1 accuracy of ``model`` on :func:`pgd_attack`'s images (``epsilon = 0``: the clean accuracy)."""
    return pixel_accuracy(model, pgd_attack(model, images, epsilon, steps, **attack), images)


def retained(perturbed, clean, chance: float = 0.0) -> np.ndarray:
    """The share of its margin over chance a model keeps under a perturbation, per seed:
    ``(perturbed - chance) / (clean - chance)``; with ``chance = 0``, of its clean accuracy.

    Two models compared at matched clean accuracy are compared on this share,
    so that a gap under the perturbation is not the clean gap restated. Taken
    against chance, a model that falls to guessing keeps nothing whatever its
    clean accuracy, where the plain ratio would still credit it with
    ``chance / clean`` (below chance, the share is negative).
    """
    perturbed, clean = np.asarray(perturbed, dtype=float), np.asarray(clean, dtype=float)
    if perturbed.shape != clean.shape:
        raise ValueError(f"perturbed and clean accuracies must have one shape, got {perturbed.shape} "
                         f"and {clean.shape}")
    if not 0 <= chance < 1:
        raise ValueError(f"chance must lie in [0, 1), got {chance!r}")
    if not (np.all(clean > chance) and np.all(clean <= 1) and np.all(perturbed >= 0) and np.all(perturbed <= 1)):
        raise ValueError(f"accuracies must lie in [0, 1], the clean ones above chance ({chance:g})")
    return (perturbed - chance) / (clean - chance)


def nearest_size(target: float, accuracy_by_size: dict) -> int:
    """The training-set size whose mean clean accuracy is nearest ``target`` (on a tie, the smaller size).

    ``accuracy_by_size`` maps a size to its seeds' clean accuracies: how a
    model trained on fewer images is matched to another model's accuracy.
    """
    if not accuracy_by_size:
        raise ValueError("no sizes to choose from")
    if not 0.0 <= target <= 1.0:
        raise ValueError(f"target must be an accuracy in [0, 1], got {target}")
    return min(sorted(accuracy_by_size), key=lambda n: abs(float(np.mean(accuracy_by_size[n])) - target))
