"""The run cache: train once, reuse everywhere.

A *run* is a plain dictionary that says everything that decides a trained
model::

    {"data": {"name": "shapes", "train": 5000, "test": 2000, "seed": 0, ...},
     "model": {"kind": "vit", "embed_dim": 64, ...},
     "train": {"steps": 300, "batch_size": 64, ...}}

``data`` may ask for a patch shuffle (``"permute": {"fraction", "seed",
"patch"}``, :mod:`vitbias.permute`) or for a world, a fixed rearrangement of
the pixel positions (``"world"``, :func:`vitbias.permute.world_index`): the
test images are rearranged once, the training batches after their
augmentation. :func:`experiment` writes the
configs of a budget's runs.

:func:`run` trains it, or loads it when it was trained before;
:func:`run_many` trains the missing runs of a list side by side (one
single-threaded process per CPU core). Runs are
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
import multiprocessing
import os
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch
from torch import nn

from . import data as _data
from . import models as _models
from .permute import patch_permutation, permute_patches, rearrange, world_index
from .profile import device_name
from .train import TrainConfig, evaluate, train, warmup_steps

RUNS_VARIABLE = "VITBIAS_RUNS"
PACKAGE = Path(__file__).resolve().parent
# The vitbias modules a trained model depends on. The tests check that every
# vitbias module these import is listed here too.
KEY_MODULES = ("data", "models", "vit", "geometry", "permute", "train", "runs", "profile", "priors", "masks",
               "attention_conv")
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

    @property
    def train_accuracy(self) -> float:
        """Accuracy on the run's own training images, un-augmented (shuffled alike when it was)."""
        return self.metrics["train_accuracy"]


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
    recipe = dict(config["train"])
    teacher = recipe.pop("teacher", None)
    try:
        TrainConfig(**recipe)  # validates the recipe
    except TypeError as error:  # a missing or unknown field of the recipe
        raise ValueError(f"a run's recipe needs exactly the fields of vitbias.train.TrainConfig: {error}") from None
    if teacher is not None:
        check_config(teacher)
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

    model, metrics = _train(config, folder)
    _store(entry, config, model, metrics)
    return Run(key, config, model.cpu().eval(), metrics, cached=False)


PERMUTE_KEYS = {"fraction", "seed", "patch"}


def _shuffle(shuffle: dict, image_size: int) -> tuple[np.ndarray, int]:
    """``(order, patch)``: the patch shuffle that a run's ``data["permute"]`` asks for."""
    if not isinstance(shuffle, dict) or set(shuffle) != PERMUTE_KEYS:
        raise ValueError(f"permute must be a dict with the keys {sorted(PERMUTE_KEYS)}, got {shuffle!r}")
    patch = shuffle["patch"]
    if not (isinstance(patch, int) and patch >= 1 and image_size % patch == 0):
        raise ValueError(f"the shuffled patch must divide the image size {image_size}, got {patch!r}")
    grid = image_size // patch
    return patch_permutation((grid, grid), shuffle["fraction"], shuffle["seed"]), patch


def inputs(data: dict):
    """``(training set, test set, how the trainer moves each batch)`` of a run's ``data`` section.

    The test set comes already rearranged (once) when the data ask for a
    patch shuffle or a world; the third item is the keyword the trainer takes
    to do the same to every training batch after augmentation:
    ``{"shuffle": (order, patch)}``, ``{"rearrange": index}`` or ``{}``.
    """
    spec = dict(data)
    wanted, world = spec.pop("permute", None), spec.pop("world", None)
    if wanted is not None and world is not None:
        raise ValueError("a run's data take a patch shuffle or a world, not both")
    train_set, test_set = _data.load(spec)
    size = train_set.images.shape[-1]
    if wanted is not None:
        shuffle = _shuffle(wanted, size)
        return train_set, replace(test_set, images=permute_patches(test_set.images, *shuffle)), {"shuffle": shuffle}
    if world is not None:
        index = world_index(world, size)
        return train_set, replace(test_set, images=rearrange(test_set.images, index)), {"rearrange": index}
    return train_set, test_set, {}


def _moved(images: _data.ImageSet, move: dict) -> _data.ImageSet:
    """``images`` moved as the trainer moves its batches (``move`` from :func:`inputs`)."""
    if "shuffle" in move:
        return replace(images, images=permute_patches(images.images, *move["shuffle"]))
    if "rearrange" in move:
        return replace(images, images=rearrange(images.images, move["rearrange"]))
    return images


def _train(config: dict, folder: Path):
    """Train the run of ``config``: ``(model, metrics)``; a teacher is run (or read) from ``folder`` first."""
    recipe = dict(config["train"])
    teacher = recipe.pop("teacher", None)
    teacher = None if teacher is None else run(teacher, folder).model
    recipe = TrainConfig(**recipe)
    train_set, test_set, move = inputs(config["data"])
    model = seeded_model(config["model"], recipe.seed)
    history = train(model, train_set, recipe, teacher=teacher, **move)
    scores = evaluate(model, test_set)
    seen = _moved(train_set, move)
    metrics = {"test_accuracy": scores["accuracy"], "test_loss": scores["loss"],
               "train_accuracy": evaluate(model, seen)["accuracy"],
               "final_train_loss": float(history.losses[-50:].mean()),
               "losses": [float(x) for x in history.losses],
               "parameters": _models.parameter_count(model),
               "seconds": history.seconds, "images_per_second": history.images_per_second,
               "device": history.device, "precision": history.precision}
    return model, metrics


def _train_and_store(config: dict, folder: str) -> None:
    """A worker's task: train ``config`` into ``folder`` on one thread."""
    torch.set_num_threads(1)
    run(config, folder)


# What one training worker holds at its peak (measured: about 0.95 GB for the quick profile's
# runs, most of it PyTorch and the generated data), rounded up: a worker is started only where
# the memory left can hold it, so that a 2 GB Binder session trains in its own process instead.
WORKER_BYTES = 1 << 30
MEMORY_VARIABLE = "VITBIAS_MEMORY_LIMIT"


def _cgroup_headroom() -> int | None:
    """The bytes this process's cgroup (v2) may still take: ``memory.max`` less ``memory.current``."""
    root = Path("/sys/fs/cgroup")
    try:
        limit = (root / "memory.max").read_text().strip()
        used = int((root / "memory.current").read_text())
    except (OSError, ValueError):
        return None
    return None if limit == "max" else max(0, int(limit) - used)


def _meminfo_available() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo``, in bytes."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def _resident_bytes() -> int:
    """This process's resident memory (``VmRSS`` of ``/proc/self/status``), 0 where it cannot be read."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def available_memory() -> int | None:
    """The bytes new processes may still take: with ``VITBIAS_MEMORY_LIMIT`` set (the bytes the
    session may hold in all, for a limit the system does not show), that less this process's
    resident memory; else the smaller of the cgroup's headroom and the system's available
    memory; ``None`` where neither can be read."""
    given = os.environ.get(MEMORY_VARIABLE, "").strip()
    if given:
        if not given.isdigit() or int(given) < 1:
            raise ValueError(f"{MEMORY_VARIABLE} must be a positive number of bytes, got {given!r}")
        return max(0, int(given) - _resident_bytes())
    known = [found for found in (_cgroup_headroom(), _meminfo_available()) if found is not None]
    return min(known) if known else None


def default_workers() -> int:
    """Trainings run side by side: one per CPU core on a CPU (each on one thread), as many as
    :func:`available_memory` holds at :data:`WORKER_BYTES` each, and at least one (which trains in
    this process); one on a GPU."""
    if device_name() == "cuda":
        return 1
    cores = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    memory = available_memory()
    return cores if memory is None else max(1, min(cores, memory // WORKER_BYTES))


def run_many(configs, folder: Path | str | None = None, workers: int | None = None) -> list[Run]:
    """The runs of ``configs``, in order; those not in the cache are trained first, side by side.

    On a CPU, small models train faster as several single-threaded processes
    than as one multi-threaded one (``make bench`` measures it). Each run is
    trained by exactly one process and stored before it is read, so the result
    does not depend on ``workers``, except through the thread count of the
    kernels: a run trained by a worker uses one thread.
    """
    configs = [check_config(config) for config in configs]
    folder = Path(folder) if folder is not None else runs_folder()
    workers = default_workers() if workers is None else workers
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    missing, seen = [], set()
    for config in configs:
        key = run_key(config)
        if key not in seen and not (folder / key / "metrics.json").is_file():
            missing.append(config)
        seen.add(key)
    if workers > 1 and len(missing) > 1:
        # Longest first, so that no worker is left with one long run at the end.
        missing.sort(key=lambda c: -c["train"]["steps"] * c["train"]["batch_size"])
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(workers, len(missing)), mp_context=context) as pool:
            for done in pool.map(_train_and_store, missing, [str(folder)] * len(missing)):
                del done
    return [run(config, folder) for config in configs]


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


def experiment(budget, model: str, train_size: int, seed: int = 0, *, augment: bool | None = None,
               permute: float = 0.0, route: dict | None = None, texture: str | None = None,
               erase: float = 0.0, world: dict | None = None, region: str | None = None,
               patch: int | None = None, fit: bool = False) -> dict:
    """The run config of ``model`` (``"cnn"`` or ``"vit"``) on ``train_size`` images of ``budget``.

    ``seed`` draws the training set, the initial weights and the batches; the
    test set is the budget's, the same for every run. The step count is
    ``budget.steps(train_size)`` with a tenth of it as warm-up; with ``fit``,
    ``budget.steps(train_size, model)``, the model's rule under which it fits
    its training set (``Budget.fitted``). ``augment``
    overrides the budget's recipe; ``permute`` moves that fraction of the
    patches of every image (the ViT's patch grid, ``budget.permutation_seed``).
    ``route`` (ViT only) switches on routes of :class:`vitbias.priors.RouteViT`;
    with ``distill`` the teacher is the CNN of the same size, seed and data.
    ``texture`` overrides the generated data's fill (:func:`vitbias.data.shapes`)
    for the training and the test images; ``erase`` switches on random erasing
    with that probability; ``world`` rearranges the pixel positions of every
    image (:func:`vitbias.permute.world_index`), instead of a patch shuffle;
    ``region`` keeps every object's centre in one half of the image, in the
    training and the test images (:func:`vitbias.data.shapes`); ``patch``
    (ViT only) replaces the budget's patch size, for the shuffle too.
    """
    if model not in ("cnn", "vit"):
        raise ValueError(f"model must be 'cnn' or 'vit', got {model!r}")
    if not (isinstance(seed, (int, np.integer)) and seed >= 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not 0.0 <= permute <= 1.0:
        raise ValueError(f"permute must lie in [0, 1], got {permute}")
    if route is not None and (model != "vit" or not isinstance(route, dict)):
        raise ValueError(f"a route is a dict of RouteViT keywords for the ViT, got {route!r} for {model!r}")
    if texture is not None and budget.dataset["name"] != "shapes":
        raise ValueError(f"texture applies to generated data only, not to {budget.dataset['name']!r}")
    if texture is not None and texture not in _data.TEXTURE_MODES:
        raise ValueError(f"texture must be one of {_data.TEXTURE_MODES}, got {texture!r}")
    if region is not None and (budget.dataset["name"] != "shapes" or region not in _data.REGIONS):
        raise ValueError(f"region applies to generated data and is one of {tuple(_data.REGIONS)}, "
                         f"got {region!r} on {budget.dataset['name']!r}")
    image_size = int(budget.vit["img_size"])
    if patch is not None and (model != "vit" or not isinstance(patch, (int, np.integer)) or patch < 1
                              or image_size % patch):
        raise ValueError(f"patch (ViT only) must divide the image size {image_size}, got {patch!r} for {model!r}")
    patch = int(budget.vit["patch_size"] if patch is None else patch)
    if not isinstance(fit, bool):
        raise ValueError(f"fit must be True or False, got {fit!r}")
    steps = budget.steps(train_size, model if fit else None)
    data = {**budget.dataset, "train": int(train_size), "test": budget.test_size,
            "seed": int(seed), "test_seed": budget.dataset.get("seed", 0)}
    if budget.dataset["name"] == "cifar10":
        data.pop("test_seed")
    if texture is not None:
        data["texture"] = texture
    if region is not None:
        data["region"] = region
    if world is not None:
        if permute > 0:
            raise ValueError("a run takes a patch shuffle or a world, not both")
        world_index(world, image_size)  # validates the world
        data["world"] = dict(world)
    if permute > 0:
        data["permute"] = {"fraction": float(permute), "seed": budget.permutation_seed, "patch": patch}
    recipe = {**budget.train, "steps": steps, "warmup": warmup_steps(steps), "seed": int(seed)}
    if augment is not None:
        recipe["augment"] = bool(augment)
    if erase:
        recipe["erase"] = float(erase)
    spec = dict(getattr(budget, model))
    if patch != spec.get("patch_size", patch):
        spec["patch_size"] = patch
    if route is not None:
        spec = {**spec, "kind": "route", **route}
        if route.get("distill"):
            recipe["teacher"] = experiment(budget, "cnn", train_size, seed, augment=augment, permute=permute, fit=fit,
                                           world=world, region=region)
    return {"data": data, "model": spec, "train": recipe}


def pretraining(budget) -> dict:
    """The run config of the ViT pretrained on other labels (quick and gpu profiles)."""
    if "data" not in budget.pretrain:
        raise ValueError("this budget's prior comes from pretrained weights, not from a run")
    steps = budget.pretrain["steps"]
    return {"data": dict(budget.pretrain["data"]), "model": dict(budget.vit),
            "train": {**budget.train, "steps": steps, "warmup": warmup_steps(steps), "seed": 0}}
