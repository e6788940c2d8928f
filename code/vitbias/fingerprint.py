"""Fingerprints: a short training of every kind of run, sharp enough to see any change of code.

A long training is not reproducible across CPUs: another set of kernels sums
in another order, the difference grows step by step, and after a few hundred
steps a run moves as a run of another seed would. So the bands on the book's
trained accuracies are wide, and a small unintended change (a learning rate, a
weight decay, an initialisation, a pixel of the data generator) can hide inside
them. The first steps of a training are different: in float64, up to a few dozen
steps, the native and the generic kernels agree to about 1e-7, while any
change of data, model, initialisation or recipe moves the loss at once.

:func:`fingerprint` trains a run's exact configuration (data, model, seed,
recipe) for :data:`STEPS` steps on a small training set, without the run
cache, on one thread and in float64, and returns the mean loss of the last
steps and a few logits on test images. The book glues them with a bound
measured across kernel sets (:data:`BOUND`): a change to what a run depends on
moves them far beyond it.
"""

from __future__ import annotations

import numpy as np
import torch

from . import plan as _plan
from . import runs as _runs
from .train import TrainConfig, predict, train, warmup_steps

# Steps of a fingerprint. In float32 the kernel sets part soonest in models with BatchNorm (a batch
# statistic near a ReLU's kink): on an AMD EPYC with AVX2, at most 1.3e-7 up to 8 steps against the generic
# kernels (ATEN_CPU_CAPABILITY=default) but 5e-5 at 10; on an AMD EPYC with AVX-512, 1.3e-5 already at
# 8 steps for the convolutional stem. So a fingerprint trains in float64 (DTYPE): over every kind, the
# largest difference between the native (AVX-512), AVX2 and generic kernels is then 6e-8 (the generic
# ones; AVX-512 and AVX2 agree exactly), against 1.3e-5 in float32. 8 steps for BatchNorm models and for
# distillation (the student learns the argmax of a teacher trained so briefly that two logits can nearly
# tie), 20 for every other model: at 20 steps the TinyViT's native and generic kernels part by 9e-8
# (AVX-512), and a weight decay of 0.04 for 0.05 moves it by 4e-5; 40 steps cost twice the time and
# told no more.
STEPS = {"batchnorm": 8, "plain": 20}
TRAIN_SIZE = 300      # images of the short training (a run's data, fewer of them)
TEST_IMAGES = 2       # test images whose logits are part of the fingerprint
LOGITS = 2            # logits of each
# Absolute bound on every entry across kernel sets: more than ten times the largest difference measured
# (6e-8 in float64, on three kernel sets), and below what a weight decay of 0.04 for 0.05 moves.
BOUND = 5e-6
DTYPE = torch.float64


def kinds(budget) -> dict[str, dict]:
    """Every kind of trained run the book uses: name -> a run configuration of that kind (seed 0)."""
    n = budget.train_sizes[-1]
    found = {"cnn": _runs.experiment(budget, "cnn", n, 0), "vit": _runs.experiment(budget, "vit", n, 0),
             "shuffled": _runs.experiment(budget, "vit", n, 0, permute=1.0),
             "crop_flip_cnn": _runs.experiment(budget, "cnn", n, 0, augment=True),
             "erasing_cnn": _runs.experiment(budget, "cnn", n, 0, erase=_plan.ERASE),
             "erasing_vit": _runs.experiment(budget, "vit", n, 0, erase=_plan.ERASE)}
    # Hard locality trains on the locality grid; its code path is the mask's on any grid.
    routes = {_plan.LOCAL_ROUTE_NAME: (_plan.LOCAL_ROUTE, None), **_plan.prior_routes(budget)}
    for name, (route, augment) in routes.items():
        found[_plan.ROUTE_SLUGS[name]] = _runs.experiment(budget, "vit", n, 0, route=route, augment=augment)
    if budget.dataset["name"] == "shapes":
        for texture in ("predictive", "random"):
            found[f"texture_{texture}"] = _runs.experiment(budget, "vit", n, 0, texture=texture)
    if "data" in budget.pretrain:
        found["pretraining"] = _runs.pretraining(budget)
    return found


def has_batchnorm(spec: dict) -> bool:
    """Whether the model of ``spec`` normalises by batch statistics (the CNN, the convolutional stem)."""
    return spec["kind"] == "cnn" or bool(spec.get("stem"))


def short(config: dict, steps: int | None = None, train_size: int = TRAIN_SIZE) -> dict:
    """``config`` cut to ``steps`` steps (default :data:`STEPS` for its model) on ``train_size`` images.

    A run with BatchNorm, or distilled from a teacher (which has it), takes the
    shorter count.

    Everything else (data generator, model, seed, learning rate, decay,
    schedule shape, augmentation, erasing, shuffle, teacher) is the run's.
    """
    config = _runs.check_config(config)
    sensitive = has_batchnorm(config["model"]) or "teacher" in config["train"]
    steps = STEPS["batchnorm" if sensitive else "plain"] if steps is None else steps
    if not (isinstance(steps, int) and steps >= 2):
        raise ValueError(f"a fingerprint needs at least two steps, got {steps!r}")
    recipe = {**config["train"], "steps": steps, "warmup": warmup_steps(steps)}
    if "teacher" in recipe:
        recipe["teacher"] = short(recipe["teacher"], None, train_size)
    return {"data": {**config["data"], "train": min(train_size, config["data"]["train"])},
            "model": config["model"], "train": recipe}


def _trained(config: dict):
    """Train ``config`` afresh, in :data:`DTYPE`, outside the run cache: ``(model, losses, test set)``."""
    recipe = dict(config["train"])
    teacher = recipe.pop("teacher", None)
    teacher = None if teacher is None else _trained(teacher)[0]
    train_set, test_set, move = _runs.inputs({**config["data"], "test": TEST_IMAGES})
    recipe = TrainConfig(**recipe)
    model = _runs.seeded_model(config["model"], recipe.seed).to(DTYPE)
    history = train(model, train_set, recipe, device="cpu", teacher=teacher, **move)
    return model, history.losses, test_set


def fingerprint(config: dict) -> dict[str, float]:
    """The fingerprint of a (short) run configuration: ``{"loss": ..., "logit_i_j": ...}``.

    ``loss``: the mean training loss of the last five steps; ``logit_i_j``:
    logit ``j`` of test image ``i``. Trained on one thread, so the result does
    not depend on the number of cores, and in float64 (:data:`DTYPE`), so that
    it does not depend on the CPU's vector instructions beyond about 1e-7.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model, losses, test_set = _trained(_runs.check_config(config))
        logits = predict(model, test_set, device="cpu")
    finally:
        torch.set_num_threads(threads)
    found = {"loss": float(np.mean(losses[-5:]))}
    for i in range(TEST_IMAGES):
        for j in range(LOGITS):
            found[f"logit_{i}_{j}"] = float(logits[i, j])
    return found


def largest_difference(first: dict, second: dict) -> float:
    """The largest ``|a - b|`` over the entries of two sets of fingerprints ``{kind: {entry: value}}``."""
    if set(first) != set(second) or any(set(first[k]) != set(second[k]) for k in first):
        raise ValueError("the fingerprints have different kinds or entries")
    return max(abs(first[k][e] - second[k][e]) for k in first for e in first[k])


def fingerprints(budget) -> dict[str, dict[str, float]]:
    """The fingerprint of every kind of run of ``budget`` (:func:`kinds`), each cut by :func:`short`."""
    return {name: fingerprint(short(config)) for name, config in kinds(budget).items()}


def other_kernels() -> str:
    """The value of ``ATEN_CPU_CAPABILITY`` for the set of CPU kernels this process does not use.

    The generic kernels (``default``) when this process runs the machine's
    native ones, else the native ones (the variable unset, ``""``).
    """
    return "" if torch.backends.cpu.get_cpu_capability() == "DEFAULT" else "default"


def fingerprints_on_other_kernels(profile_name: str) -> dict[str, dict[str, float]]:
    """:func:`fingerprints` of the profile computed in a subprocess on the other set of CPU kernels."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    if other_kernels():
        env["ATEN_CPU_CAPABILITY"] = other_kernels()
    code_dir = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = code_dir + os.pathsep + env.get("PYTHONPATH", "")
    script = ("import json, sys; from vitbias import fingerprint, profile; "
              f"json.dump(fingerprint.fingerprints(profile.budget({profile_name!r})), sys.stdout)")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"the fingerprints on the other kernels failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)
