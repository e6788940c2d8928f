"""Training and evaluation: AdamW for a fixed number of steps, on CPU or CUDA.

One recipe for every model, so that a comparison changes one thing at a time:

- AdamW with a fixed step budget and batch size (batches are drawn without
  replacement, epoch after epoch, from a seeded shuffle); weight decay on the
  weight matrices and kernels only, as timm, DeiT and nanoGPT give it: not on
  biases, norms, the position table or the prefix tokens (:func:`parameter_groups`);
- a linear warm-up, then a cosine decay to zero or a constant rate;
- optional augmentation: a random crop of the image padded by 4 pixels, and a
  horizontal flip with probability 1/2 (vectorised over the batch);
- optional random erasing (Zhong et al. 2020, as DeiT uses it): with
  probability ``erase`` a rectangle of each standardised image is replaced by
  Gaussian noise;
- optionally, one fixed shuffle of the patch grid, or any fixed rearrangement
  of the pixel positions (:mod:`vitbias.permute`), applied to every batch
  *after* the augmentation, so that a crop moves the original image and the
  rearrangement stays the same function of it;
- fixed seeds: the same configuration gives the same losses and the same
  accuracy on a given machine.

AdamW runs as PyTorch's fused kernel: on small models the per-step cost is
mostly optimizer bookkeeping, and the fused update takes a tenth or more off it.

The device is found by :func:`vitbias.profile.device`. On CUDA the model runs
in ``channels_last`` layout under autocast, with cuDNN's deterministic
algorithms: bf16 where the device supports it, else (a T4, a V100) fp16 with a
gradient scaler, since fp16's narrow range underflows small gradients
(:func:`autocast_dtype`); on the CPU in float32, in ``channels_last`` only for a model that
prefers it (the CNN), and back in the default layout when training or
prediction ends. Models and tensors move with ``.to(device)``, never with
``.cuda()``.
"""

from __future__ import annotations

import math
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .data import ImageSet
from .permute import permute_patches
from .permute import rearrange as rearrange_pixels
from .profile import device as default_device

SCHEDULES = ("cosine", "constant")
PAD = 4
ERASE_AREA = (0.02, 1 / 3)  # the erased fraction of the image, as in timm's RandomErasing
ERASE_ASPECT = (0.3, 1 / 0.3)  # its height / width, drawn log-uniformly


@dataclass(frozen=True)
class TrainConfig:
    """The recipe: steps, batch size, AdamW's rate and decay, schedule, augmentation, erasing, seed.

    The trainer has no recipe of its own: rate, decay, schedule and augmentation
    have no defaults here, and every run of the book takes them from its
    budget's (``vitbias.profile.RECIPE``, the one default recipe). Warm-up,
    erasing and seed default to none, none and 0.
    """

    steps: int
    batch_size: int
    lr: float
    weight_decay: float
    schedule: str
    augment: bool
    warmup: int = 0
    erase: float = 0.0
    seed: int = 0

    def __post_init__(self):
        for name in ("steps", "batch_size"):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and value >= 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not (isinstance(self.warmup, (int, np.integer)) and 0 <= self.warmup < self.steps):
            raise ValueError(f"warmup must be an integer in 0..steps-1, got {self.warmup!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if isinstance(self.erase, bool) or not (isinstance(self.erase, (int, float)) and 0.0 <= self.erase <= 1.0):
            raise ValueError(f"erase is a probability in [0, 1], got {self.erase!r}")
        if not (self.lr > 0 and self.weight_decay >= 0):
            raise ValueError(f"need lr > 0 and weight_decay >= 0, got {self.lr}, {self.weight_decay}")

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class History:
    """What training produced: the loss of every step, the time it took and its speed."""

    losses: np.ndarray
    seconds: float
    images_per_second: float
    device: str
    precision: str = "float32"  # the autocast dtype of the forward passes (autocast_dtype)


def parameter_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """AdamW's two parameter groups: decayed, and exempt (weight decay 0).

    timm's ``param_groups_weight_decay``: a parameter is exempt when it has at
    most one dimension (biases, LayerNorm and BatchNorm scales and shifts,
    gates) or its name is in ``model.no_weight_decay()`` (the position table,
    [CLS] and register tokens, a relative-position table). Decay would pull
    those toward zero for no reason the model states: a position vector or a
    norm's scale is not a weight whose size should be paid for.
    """
    exempt_names = set(model.no_weight_decay()) if hasattr(model, "no_weight_decay") else set()
    decay, exempt = [], []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        (exempt if parameter.ndim <= 1 or name in exempt_names else decay).append(parameter)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": exempt, "weight_decay": 0.0}]


WARMUP_SHARE = 10  # a run warms up over the first tenth of its steps


def warmup_steps(steps: int) -> int:
    """The warm-up of a run of ``steps`` steps: its first tenth (rounded down), the one rule every run keeps."""
    if not (isinstance(steps, (int, np.integer)) and steps >= 1):
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    return int(steps) // WARMUP_SHARE


def learning_rate_factor(step, config: TrainConfig) -> float:
    """The multiplier of ``config.lr`` at ``step`` (0-based): linear warm-up, then cosine or flat."""
    if step < config.warmup:
        return (step + 1) / config.warmup
    if config.schedule == "constant":
        return 1.0
    progress = (step - config.warmup) / max(1, config.steps - config.warmup)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def random_crop_flip(x: torch.Tensor, generator: torch.Generator, pad: int = PAD) -> torch.Tensor:
    """Each image of ``x`` ``(B, C, H, W)`` cropped from its zero-padded copy and flipped with p = 1/2.

    The offsets and flips are drawn on the CPU from ``generator``, so the
    result does not depend on the device.
    """
    B, C, H, W = x.shape
    offsets = torch.randint(0, 2 * pad + 1, (2, B), generator=generator).to(x.device)
    flips = (torch.rand(B, generator=generator) < 0.5).to(x.device)
    padded = F.pad(x, (pad, pad, pad, pad))
    rows = offsets[0][:, None] + torch.arange(H, device=x.device)  # (B, H)
    cols = offsets[1][:, None] + torch.arange(W, device=x.device)  # (B, W)
    cols = torch.where(flips[:, None], cols.flip(-1), cols)
    batch = torch.arange(B, device=x.device)[:, None, None, None]
    channel = torch.arange(C, device=x.device)[None, :, None, None]
    return padded[batch, channel, rows[:, None, :, None], cols[:, None, None, :]]


def random_erase(x: torch.Tensor, probability: float, generator: torch.Generator) -> torch.Tensor:
    """``x`` ``(B, C, H, W)`` with one rectangle of each image, chosen with ``probability``, set to N(0, 1) noise.

    The rectangle covers a fraction of the image drawn uniformly from
    :data:`ERASE_AREA`, with an aspect ratio drawn log-uniformly from
    :data:`ERASE_ASPECT`, clipped to the image, at a uniform position (timm's
    ``RandomErasing(mode="pixel")``, one rectangle). Every draw is made on the
    CPU from ``generator``, for every image whether erased or not, so the
    stream does not depend on the outcome or the device.
    """
    B, C, H, W = x.shape
    area = torch.empty(B, dtype=torch.float64).uniform_(*ERASE_AREA, generator=generator) * H * W
    log_aspect = torch.empty(B, dtype=torch.float64).uniform_(*np.log(ERASE_ASPECT), generator=generator)
    height = torch.sqrt(area * torch.exp(log_aspect)).round().clamp(1, H).long()
    width = torch.sqrt(area / torch.exp(log_aspect)).round().clamp(1, W).long()
    top = (torch.rand(B, generator=generator, dtype=torch.float64) * (H - height + 1)).long()
    left = (torch.rand(B, generator=generator, dtype=torch.float64) * (W - width + 1)).long()
    chosen = torch.rand(B, generator=generator) < probability
    noise = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x.device)
    rows = torch.arange(H)[None, :]
    cols = torch.arange(W)[None, :]
    inside_rows = (rows >= top[:, None]) & (rows < (top + height)[:, None])  # (B, H)
    inside_cols = (cols >= left[:, None]) & (cols < (left + width)[:, None])  # (B, W)
    box = (inside_rows[:, :, None] & inside_cols[:, None, :] & chosen[:, None, None])[:, None]  # (B, 1, H, W)
    return torch.where(box.to(x.device), noise, x)


def _standardiser(images: ImageSet, device, dtype=torch.float32):
    mean = torch.tensor(images.mean, device=device, dtype=dtype).view(1, 3, 1, 1)
    std = torch.tensor(images.std, device=device, dtype=dtype).view(1, 3, 1, 1)
    return mean, std


def _dtype(model: nn.Module) -> torch.dtype:
    """The model's floating dtype (float32, or float64 for the exactness checks)."""
    return next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)


def autocast_dtype(device) -> torch.dtype | None:
    """The reduced precision the trainer computes in on ``device``: ``torch.bfloat16`` on a CUDA device
    that supports it (``torch.cuda.is_bf16_supported()``), ``torch.float16`` on one that does not (its
    gradients then pass through a :class:`torch.amp.GradScaler`), ``None`` (float32) on the CPU."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def _autocast(dtype: torch.dtype | None):
    return nullcontext() if dtype is None else torch.autocast(device_type="cuda", dtype=dtype)


def needs_scaler(dtype: torch.dtype | None) -> bool:
    """Whether gradients computed in ``dtype`` need loss scaling: fp16 only (5 exponent bits against
    bf16's and float32's 8, so small gradients underflow to zero unless the loss is scaled up)."""
    return dtype == torch.float16


def _scaler(dtype: torch.dtype | None) -> torch.amp.GradScaler:
    """A gradient scaler, enabled where :func:`needs_scaler`: a disabled one passes the loss and the step through."""
    return torch.amp.GradScaler("cuda", enabled=needs_scaler(dtype))


def _memory_format(model: nn.Module, device: torch.device) -> torch.memory_format:
    """channels_last on CUDA; on the CPU only for a float32 model that prefers it (the CNN:
    ``prefers_channels_last``); it is slower there for the ViT's one convolution and in float64."""
    if device.type == "cuda":
        return torch.channels_last
    if getattr(model, "prefers_channels_last", False) and _dtype(model) == torch.float32:
        return torch.channels_last
    return torch.contiguous_format


def _place(model: nn.Module, device: torch.device) -> nn.Module:
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
    return model.to(device, memory_format=_memory_format(model, device))


def _unplace(model: nn.Module, device: torch.device) -> nn.Module:
    """On the CPU, ``model`` back in the default layout: the layout changes the rounding of a
    forward pass, and a model just trained must compute as the same model read from the cache."""
    if device.type == "cpu":
        model.to(memory_format=torch.contiguous_format)
    return model


def _inputs(pixels: torch.Tensor, model: nn.Module, device: torch.device) -> torch.Tensor:
    return pixels.contiguous(memory_format=_memory_format(model, device))


def train(model: nn.Module, data: ImageSet, config: TrainConfig, device=None,
          shuffle: tuple | None = None, teacher: nn.Module | None = None,
          rearrange: np.ndarray | None = None) -> History:
    """Train ``model`` in place on ``data`` with ``config``; returns the :class:`History`.

    ``shuffle = (order, patch)`` moves the ``patch x patch`` patches of every
    batch by ``order`` (:func:`vitbias.permute.permute_patches`) after the
    augmentation; ``rearrange``, an index ``(H W,)`` of the pixel positions
    (:func:`vitbias.permute.rearrange`), moves the pixels of every batch
    instead. With a ``teacher``, ``model`` returns ``(logits,
    distillation logits)`` in training and the loss is DeiT's hard
    distillation, ``(CE(logits, y) + CE(distillation logits, teacher's class)) / 2``,
    the teacher reading the same (augmented) batch.
    """
    if len(data) < 1:
        raise ValueError("the training set is empty")
    if shuffle is not None and len(shuffle) != 2:
        raise ValueError(f"shuffle must be (order, patch), got {shuffle!r}")
    if shuffle is not None and rearrange is not None:
        raise ValueError("give a patch shuffle or a pixel rearrangement, not both")
    device = torch.device(device) if device is not None else default_device()
    model = _place(model, device)
    model.train()
    if teacher is not None:
        teacher = _place(teacher, device).eval()
    images = torch.from_numpy(data.images).to(device)  # uint8, (N, 3, H, W)
    labels = torch.from_numpy(data.labels).to(device)
    dtype = _dtype(model)
    mean, std = _standardiser(data, device, dtype)
    reduced = autocast_dtype(device)
    scaler = _scaler(reduced)

    generator = torch.Generator().manual_seed(config.seed)
    optimizer = torch.optim.AdamW(parameter_groups(model, config.weight_decay), lr=config.lr, fused=True)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: learning_rate_factor(step, config))
    losses = torch.zeros(config.steps, device=device, dtype=torch.float64)
    order = torch.empty(0, dtype=torch.long)

    start = time.perf_counter()
    for step in range(config.steps):
        while len(order) < config.batch_size:  # a fresh shuffle whenever an epoch runs out
            order = torch.cat([order, torch.randperm(len(data), generator=generator)])
        index, order = order[: config.batch_size].to(device), order[config.batch_size:]
        x = images[index].to(dtype) / 255.0
        if config.augment:
            x = random_crop_flip(x, generator)
        if shuffle is not None:
            x = permute_patches(x, *shuffle)
        if rearrange is not None:
            x = rearrange_pixels(x, rearrange)
        x = (x - mean) / std
        if config.erase > 0:
            x = random_erase(x, config.erase, generator)
        x = _inputs(x, model, device)
        with _autocast(reduced):
            loss = _loss(model(x), labels[index], teacher, x)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        schedule.step()
        losses[step] = loss.detach()
    losses = losses.cpu().numpy()
    seconds = time.perf_counter() - start
    if not np.all(np.isfinite(losses)):
        raise FloatingPointError(f"training diverged: first non-finite loss at step "
                                 f"{int(np.argmin(np.isfinite(losses)))}")
    _unplace(model, device).eval()
    if teacher is not None:
        _unplace(teacher, device)
    return History(losses, seconds, config.steps * config.batch_size / seconds, device.type,
                   str(reduced or torch.float32).removeprefix("torch."))


def _loss(out, labels: torch.Tensor, teacher: nn.Module | None, x: torch.Tensor) -> torch.Tensor:
    """Cross-entropy, or with a teacher DeiT's hard distillation loss on ``out = (logits, distilled)``."""
    if teacher is None:
        return F.cross_entropy(out, labels)
    if not (isinstance(out, tuple) and len(out) == 2):
        raise ValueError("distillation needs a model that returns (logits, distillation logits) in training")
    with torch.no_grad():
        taught = teacher(x).argmax(dim=1)
    return 0.5 * F.cross_entropy(out[0], labels) + 0.5 * F.cross_entropy(out[1], taught)


@torch.no_grad()
def predict(model: nn.Module, data: ImageSet, device=None, batch_size: int = 1000) -> np.ndarray:
    """Logits ``(N, num_classes)`` of ``model`` on every image of ``data``, in eval mode."""
    device = torch.device(device) if device is not None else default_device()
    model = _place(model, device).eval()
    dtype = _dtype(model)
    mean, std = _standardiser(data, device, dtype)
    out = []
    for first in range(0, len(data), batch_size):
        x = torch.from_numpy(data.images[first:first + batch_size]).to(device, dtype) / 255.0
        with _autocast(autocast_dtype(device)):
            out.append(model(_inputs((x - mean) / std, model, device)).float().cpu())
    _unplace(model, device)
    return torch.cat(out).numpy()


def evaluate(model: nn.Module, data: ImageSet, device=None) -> dict[str, float]:
    """Top-1 accuracy and mean cross-entropy of ``model`` on ``data``."""
    logits = torch.from_numpy(predict(model, data, device))
    labels = torch.from_numpy(data.labels)
    return {"accuracy": float((logits.argmax(1) == labels).double().mean()),
            "loss": float(F.cross_entropy(logits, labels))}
