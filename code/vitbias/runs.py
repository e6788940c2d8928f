"""The run cache: train once, reuse everywhere.

A *run* is a plain dictionary that says everything that decides a trained
model::

    {"data": {"name": "shapes", "train": 5000, "test": 2000, "seed": 0, ...},
     "model": {"kind": "vit", "embed_dim": 64, ...},
     "train": {"steps": 300, "batch_size": 64, ...}}

:func:`run` trains it, or loads it when it was trained before. Runs are
stored under ``<checkout>/.runs/<key>/`` (``config.json``, ``metrics.json``
and ``model.pt``), outside ``_build/`` so that ``make clean`` keeps them;
``VITBIAS_RUNS`` moves the cache elsewhere. The key hashes the configuration
with the source of the modules listed in :data:`KEY_MODULES` (what a trained
model depends on: data, models, trainer, this module, budgets and device),
the library versions and the kind of device. A change in any of them gives a
new key and a new training; the old entries are simply never read again.
Editing any other module (figures, analyses, quoted literature) retrains
nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from . import data as _data
from . import models as _models
from .profile import device_name
from .train import TrainConfig, evaluate, train

RUNS_VARIABLE = "VITBIAS_RUNS"
PACKAGE = Path(__file__).resolve().parent
# The vitbias modules a trained model depends on. The tests check that every
# vitbias module these import is listed here too.
KEY_MODULES = ("data", "models", "vit", "geometry", "train", "runs", "profile")
SECTIONS = ("data", "model", "train")


@dataclass(frozen=True)
class Run:
    """A trained model, its configuration and metrics, and whether it came from the cache."""

    key: str
    config: dict
    model: nn.Module
    metrics: dict
    cached: bool

    @property
    def accuracy(self) -> float:
        return self.metrics["test_accuracy"]


def runs_folder() -> Path:
    """``$VITBIAS_RUNS``, else ``.runs`` in the book's checkout (or in the working folder)."""
    chosen = os.environ.get(RUNS_VARIABLE, "").strip()
    if chosen:
        return Path(chosen).expanduser()
    checkout = PACKAGE.parent.parent
    root = checkout if (checkout / "_config.yml").is_file() else Path.cwd()
    return root / ".runs"


def source_digest() -> str:
    """A hash of the source of :data:`KEY_MODULES`, the modules a trained model depends on."""
    digest = hashlib.sha256()
    for name in KEY_MODULES:
        digest.update(name.encode())
        digest.update((PACKAGE / f"{name}.py").read_bytes())
    return digest.hexdigest()


def check_config(config: dict) -> dict:
    """``config`` as a canonical JSON-able dict, else ``ValueError`` saying what is wrong."""
    if not isinstance(config, dict) or set(config) != set(SECTIONS):
        got = sorted(config) if isinstance(config, dict) else type(config).__name__
        raise ValueError(f"a run config is a dict with exactly the keys {SECTIONS}, got {got}")
    TrainConfig(**config["train"])  # validates the recipe
    if config["model"].get("kind") not in _models.MODEL_KINDS:
        raise ValueError(f"model kind must be one of {_models.MODEL_KINDS}, got "
                         f"{config['model'].get('kind')!r}")
    try:
        return json.loads(json.dumps(config, sort_keys=True))
    except TypeError as error:
        raise ValueError(f"a run config must hold only JSON values: {error}") from None


def run_key(config: dict) -> str:
    """The cache key of ``config``: its content, the source, the libraries and the device kind."""
    import timm

    identity = {"config": check_config(config), "source": source_digest(),
                "torch": torch.__version__, "timm": timm.__version__, "numpy": np.__version__,
                "device": device_name()}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:20]


def seeded_model(spec: dict, seed: int) -> nn.Module:
    """The model of ``spec`` with its initial weights drawn from ``seed``."""
    torch.manual_seed(seed)
    return _models.build(spec)


def run(config: dict, folder: Path | str | None = None) -> Run:
    """The trained run of ``config``: loaded from the cache, or trained and stored there."""
    config = check_config(config)
    key = run_key(config)
    folder = Path(folder) if folder is not None else runs_folder()
    entry = folder / key
    if (entry / "metrics.json").is_file() and (entry / "model.pt").is_file():
        model = _models.build(config["model"])
        model.load_state_dict(torch.load(entry / "model.pt", map_location="cpu", weights_only=True))
        model.eval()
        metrics = json.loads((entry / "metrics.json").read_text())
        return Run(key, config, model, metrics, cached=True)

    recipe = TrainConfig(**config["train"])
    train_set, test_set = _data.load(config["data"])
    model = seeded_model(config["model"], recipe.seed)
    history = train(model, train_set, recipe)
    scores = evaluate(model, test_set)
    metrics = {"test_accuracy": scores["accuracy"], "test_loss": scores["loss"],
               "final_train_loss": float(history.losses[-50:].mean()),
               "losses": [float(x) for x in history.losses],
               "parameters": _models.parameter_count(model),
               "seconds": history.seconds, "images_per_second": history.images_per_second,
               "device": history.device}
    _store(entry, config, model, metrics)
    return Run(key, config, model.cpu().eval(), metrics, cached=False)


def _store(entry: Path, config: dict, model: nn.Module, metrics: dict) -> None:
    """Write the run into a temporary folder, then rename it into place."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=entry.parent))
    try:
        (staging / "config.json").write_text(json.dumps(config, indent=1, sort_keys=True))
        (staging / "metrics.json").write_text(json.dumps(metrics, indent=1, sort_keys=True))
        torch.save({k: v.cpu() for k, v in model.state_dict().items()}, staging / "model.pt")
        if entry.exists():  # a concurrent build stored the same run first
            shutil.rmtree(staging)
        else:
            os.replace(staging, entry)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def experiment(budget, model: str, train_size: int, augment: bool = True) -> dict:
    """The run config of ``model`` (``"cnn"`` or ``"vit"``) on ``train_size`` images of ``budget``.

    Every run of a budget shares its data, test set and recipe; only the
    model, the training-set size and the augmentation switch vary.
    """
    if model not in ("cnn", "vit"):
        raise ValueError(f"model must be 'cnn' or 'vit', got {model!r}")
    return {"data": {**budget.dataset, "train": int(train_size), "test": budget.test_size},
            "model": dict(getattr(budget, model)),
            "train": {**budget.train, "augment": bool(augment)}}


def pretraining(budget) -> dict:
    """The run config of the ViT pretrained on other labels (quick profile)."""
    if "data" not in budget.pretrain:
        raise ValueError("this budget's prior comes from pretrained weights, not from a run")
    return {"data": dict(budget.pretrain["data"]), "model": dict(budget.vit),
            "train": {**budget.train, "steps": budget.pretrain["steps"],
                      "warmup": budget.pretrain["steps"] // 10}}
