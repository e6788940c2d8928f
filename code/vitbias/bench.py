"""How fast the experiments train: ``make bench`` (``python -m vitbias.bench``).

For each model of the current budget it prints the images per second of

- the book's trainer (:func:`vitbias.train.train`: batches drawn from uint8
  images, standardised, AdamW, the schedule), and
- a bare PyTorch loop on the same model and recipe, fed tensors that are
  already standardised (the floor any trainer pays),

with their ratio (best of three alternating measurements each); then, on a CPU with two or more cores, one run on every
core against one single-threaded run per core side by side (which
:func:`vitbias.runs.run_many` uses); and the crossover chapter's last
execution time, from the build's execution cache.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sqlite3
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch
import torch.nn.functional as F

from . import data as _data
from . import profile, runs
from .train import TrainConfig, train


def _model(spec: dict):
    return runs.seeded_model(spec, 0)


def trainer_speed(spec: dict, images, batch_size: int, steps: int) -> float:
    """Images per second of :func:`vitbias.train.train` over ``steps`` steps."""
    recipe = TrainConfig(steps=steps, batch_size=batch_size, augment=False, warmup=1)
    return train(_model(spec), images, recipe, device=profile.device()).images_per_second


def bare_speed(spec: dict, images, batch_size: int, steps: int) -> float:
    """Images per second of a plain loop: forward, cross-entropy, backward, fused AdamW."""
    device = profile.device()
    model = _model(spec).to(device).train()
    mean = torch.tensor(images.mean).view(1, 3, 1, 1)
    std = torch.tensor(images.std).view(1, 3, 1, 1)
    x = ((torch.from_numpy(images.images[:batch_size]).float() / 255 - mean) / std).to(device)
    y = torch.from_numpy(images.labels[:batch_size]).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    start = time.perf_counter()
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return steps * batch_size / (time.perf_counter() - start)


def _one_thread_speed(args) -> float:
    torch.set_num_threads(1)
    return trainer_speed(*args)


def side_by_side(spec: dict, images, batch_size: int, steps: int, workers: int) -> float:
    """Total images per second of ``workers`` single-threaded trainings running at once."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        return sum(pool.map(_one_thread_speed, [(spec, images, batch_size, steps)] * workers))


def chapter_seconds(chapter: str = "crossover", build: Path = Path("_build")) -> float | None:
    """The last recorded execution time of ``chapter`` in the build's execution cache, if any."""
    database = build / ".jupyter_cache" / "global.db"
    if not database.is_file():
        return None
    with sqlite3.connect(database) as connection:
        rows = connection.execute("SELECT uri, data FROM nbcache ORDER BY pk").fetchall()
    times = [json.loads(record or "{}").get("execution_seconds") for uri, record in rows if Path(uri).stem == chapter]
    return times[-1] if times else None


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    budget = profile.budget()
    batch = budget.train["batch_size"]
    images = _data.shapes(max(batch, 256), seed=0)
    print(f"profile {profile.current_profile()}, device {profile.device_name()}, "
          f"{torch.get_num_threads()} threads, batch {batch}, {args.steps} steps")
    for name in ("cnn", "vit"):
        spec = getattr(budget, name)
        trainer_speed(spec, images, batch, 5)  # warm-up: first calls allocate
        # Best of three, alternating, so that a busy moment of the machine does not pick the winner.
        pairs = [(trainer_speed(spec, images, batch, args.steps), bare_speed(spec, images, batch, args.steps))
                 for _ in range(args.repeats)]
        ours, bare = max(p[0] for p in pairs), max(p[1] for p in pairs)
        print(f"{name}: trainer {ours:,.0f} images/s, bare loop {bare:,.0f} images/s, ratio {ours / bare:.2f}")
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        if profile.device_name() == "cpu" and cores >= 2:
            together = side_by_side(spec, images, batch, args.steps, cores)
            print(f"{name}: {cores} single-threaded runs side by side {together:,.0f} images/s in all "
                  f"({together / ours:.2f} x one run on {torch.get_num_threads()} threads)")
    seconds = chapter_seconds()
    print("crossover chapter, last execution: " + ("not built yet" if seconds is None else f"{seconds:.0f} s"))


if __name__ == "__main__":
    main()
