"""How fast the experiments train: ``make bench`` (``python -m tools.bench``).

For each model of the current budget it prints the images per second of

- the book's trainer (:func:`vitbias.train.train`: batches drawn from uint8
  images, standardised, AdamW, the schedule), and
- a bare PyTorch loop on the same model and recipe, fed tensors that are
  already standardised (the floor any trainer pays),

with their ratio (best of three alternating measurements each); then, on a CPU with two or more cores, one run on every
core against one single-threaded run per core side by side (which
:func:`vitbias.runs.run_many` uses); the crossover chapter's last
execution time, from the build's execution cache; and the locality
chapter's measurements (:mod:`vitbias.locality`) against loops over images,
heads and queries (:func:`locality_speed`).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from tools.booktools import BUILD
from vitbias import chapters, locality, plan, profile, runs
from vitbias import data as _data
from vitbias.train import TrainConfig, train


def _model(spec: dict):
    return runs.seeded_model(spec, 0)


def trainer_speed(spec: dict, images, batch_size: int, steps: int) -> float:
    """Images per second of :func:`vitbias.train.train` over ``steps`` steps."""
    recipe = TrainConfig(**{**profile.RECIPE, "steps": steps, "batch_size": batch_size, "warmup": 1})
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


def chapter_seconds(chapter: str = "crossover", build: Path = BUILD) -> float | None:
    """The last recorded execution time of ``chapter`` in the build's execution cache, if any."""
    folder = build / ".jupyter_cache"
    if not folder.is_dir():
        return None
    from jupyter_cache import get_cache

    records = sorted(get_cache(str(folder)).list_cache_records(), key=lambda record: record.pk)
    times = [(record.data or {}).get("execution_seconds") for record in records if Path(record.uri).stem == chapter]
    return times[-1] if times else None


def _distance_by_loops(A, H_p: int, W_p: int, P: int, n_prefix: int) -> np.ndarray:
    """:func:`vitbias.locality.mean_attention_distance` as loops over images, heads and queries."""
    D = locality.patch_distances(H_p, W_p, P)
    images, heads = A.shape[:2]
    total = np.zeros(heads)
    for b in range(images):
        for h in range(heads):
            for q in range(H_p * W_p):
                row = A[b, h, n_prefix + q, n_prefix:]
                total[h] += row @ D[q] / row.sum()
    return total / (images * H_p * W_p)


def _rollout_by_loops(A_layers, n_prefix: int) -> np.ndarray:
    """:func:`vitbias.locality.attention_rollout` as loops over images, layers, heads and queries, ``(B, N_p)``."""
    images, heads, N = A_layers[0].shape[:3]
    out = np.empty((images, N - n_prefix))
    for b in range(images):
        R = np.eye(N)
        for A in A_layers:
            mean = np.zeros((N, N))
            for h in range(heads):
                mean += A[b, h] / heads
            product = np.empty((N, N))
            for q in range(N):
                hat = 0.5 * mean[q]
                hat[q] += 0.5
                product[q] = hat / hat.sum() @ R
            R = product
        out[b] = R[0, n_prefix:] if n_prefix else R.mean(axis=0)
    return out


def _best_seconds(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def locality_speed(images: int = 32, heads: int = 12, grid: int = 14, P: int = 16, layers: int = 12,
                   repeats: int = 3) -> None:
    """Print the seconds of :mod:`vitbias.locality`'s functions and of the loops, and their ratio.

    Softmax maps of random scores, ``(images, heads, 1 + grid^2, 1 + grid^2)``
    with a [CLS] token; the rollout uses that one array for each of its
    ``layers`` layers (its time does not depend on the values). The loops
    handle one query's row of keys at a time in NumPy; they run once, the
    vectorised functions best of ``repeats``.
    """
    N = 1 + grid * grid
    scores = np.random.default_rng(0).standard_normal((images, heads, N, N))
    A = np.exp(scores - scores.max(axis=-1, keepdims=True))
    A /= A.sum(axis=-1, keepdims=True)
    del scores
    rows = [
        ("mean attention distance", lambda: locality.mean_attention_distance(A, grid, grid, P, 1),
         lambda: _distance_by_loops(A, grid, grid, P, 1)),
        (f"attention rollout ({layers} layers)", lambda: locality.attention_rollout([A] * layers, 1, grid, grid),
         lambda: _rollout_by_loops([A] * layers, 1)),
    ]
    print(f"locality: {images} images x {heads} heads x {N} tokens ({grid} x {grid} grid, {P}-px patches)")
    for name, vectorised, loops in rows:
        start = time.perf_counter()
        expected = loops()
        slow = time.perf_counter() - start
        if not np.allclose(vectorised().reshape(expected.shape), expected, rtol=1e-10, atol=1e-14):
            raise AssertionError(f"{name}: the vectorised function and the loops disagree")
        fast = _best_seconds(vectorised, repeats)
        print(f"{name}: {fast * 1e3:,.1f} ms, loops over images, heads and queries {slow * 1e3:,.0f} ms, "
              f"ratio {slow / fast:,.0f}x")


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
    print("chapter: last execution (wall) | training of its runs (single-thread seconds, summed over runs)")
    for chapter in chapters.PLANNED:
        seconds = chapter_seconds(chapter)
        trained, count, missing = plan.training_seconds(chapters.chapter_runs(chapter, budget).values())
        print(f"{chapter:>11}: " + ("not built yet" if seconds is None else f"{seconds:,.0f} s")
              + f" | {trained:,.0f} s over {count - missing} runs" + (f" ({missing} not trained)" if missing else ""))
    locality_speed()


if __name__ == "__main__":
    main()
