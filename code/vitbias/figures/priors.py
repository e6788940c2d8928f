"""Figures of the routes that put the convolution's prior back into a ViT (``book/priors.md``)."""

from __future__ import annotations

import numpy as np

from .style import canvas, finish, legend


def routes_on_curves(sizes, curves: dict, size: int, accuracy: dict):
    """The routes' test accuracy at one training-set size, read against the learning curves of the CNN
    and the plain ViT.

    ``curves`` maps ``"CNN"`` and ``"ViT"`` to ``(sizes, seeds)`` accuracies over ``sizes`` (mean drawn
    as a line, the seeds' range as a band); ``accuracy`` maps each route to its seeds' accuracies
    ``(seeds,)`` at ``size``: the mean as a dot, the seeds' range as a bar, the dots spread a little
    sideways so that none hides another. Where a route's dot meets the plain ViT's curve to the right
    of ``size`` is how many images of its own the plain ViT needs to do as well.
    """
    fig, ax = canvas(figsize=(7, 4.2))
    fixed = {"CNN": dict(color="0.45", linestyle="--"), "ViT": dict(color="black", linestyle="-")}
    for name, values in curves.items():
        values = np.asarray(values)
        ax.plot(sizes, values.mean(axis=1), marker="o", markersize=4, linewidth=1.4, label=name, **fixed[name])
        ax.fill_between(sizes, values.min(axis=1), values.max(axis=1), alpha=0.12, color=fixed[name]["color"])
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive"]
    spread = np.exp(np.linspace(-0.12, 0.12, len(accuracy)))  # sideways, on the log axis
    for (name, values), colour, shift in zip(accuracy.items(), colours, spread):
        values = np.asarray(values)
        mean = values.mean()
        ax.errorbar([size * shift], [mean], yerr=[[mean - values.min()], [values.max() - mean]], fmt="o",
                    color=colour, markersize=6, capsize=3, label=name)
    ax.set_xscale("log")
    ax.set_xticks(sizes)
    ax.set_xticklabels([f"{n:,}" for n in sizes])
    ax.set_xlabel("training images")
    ax.set_ylabel("test accuracy")
    legend(ax, loc="upper left", ncol=2)
    return finish(fig)


def gates_by_layer(gates: np.ndarray):
    """The positional share ``sigma(lambda)`` of every gated head against its layer.

    ``gates``: ``(runs, layers, heads)``; each head of each run is a dot, the
    mean a line; the dotted line is the share at initialisation.
    """
    from ..priors import GATE_INIT

    gates = np.asarray(gates)
    layers = np.arange(1, gates.shape[1] + 1)
    fig, ax = canvas(figsize=(5, 3.4))
    spread = np.linspace(-0.15, 0.15, gates.shape[0])
    for offset, run in zip(spread, gates):
        ax.plot(np.repeat(layers + offset, run.shape[1]), run.ravel(), "o", color="tab:green", alpha=0.45,
                markersize=4)
    ax.plot(layers, gates.mean(axis=(0, 2)), "-", color="tab:green", label="mean over heads and seeds")
    ax.axhline(1 / (1 + np.exp(-GATE_INIT)), color="0.5", linestyle=":", linewidth=1, label="at initialisation")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xticks(layers)
    ax.set_xlabel("layer")
    ax.set_ylabel("positional share of attention")
    legend(ax, loc="lower left")
    return finish(fig)


def sample_efficiency(fractions, published_gain, size: int, measured_gain: dict):
    """Two panels: ConViT's relative gain over DeiT against the fraction of ImageNet, and ours at one size.

    ``published_gain``: percent gains, one per fraction; ``measured_gain`` maps
    a route's name to its seeds' relative gains in percent over the plain
    ViT's mean, ``(seeds,)``, at ``size`` training images (each seed a dot,
    the mean a bar).
    """
    fig, (left, right) = canvas(1, 2, figsize=(9, 3.6))
    left.plot(np.asarray(fractions) * 100, published_gain, "o-", color="tab:green")
    left.set_xscale("log")
    left.set_xticks(np.asarray(fractions) * 100)
    left.set_xticklabels([f"{f:.0%}" for f in fractions])
    left.set_xlabel("share of each ImageNet class used")
    left.set_ylabel("relative gain in top-1 (%)")
    left.set_title("ConViT-S over DeiT-S (published)", fontsize=9)
    colours = ["tab:green", "tab:brown", "tab:blue", "tab:purple"]
    for i, (values, colour) in enumerate(zip(measured_gain.values(), colours)):
        values = np.asarray(values)
        right.plot(np.full(len(values), i), values, "o", color=colour, alpha=0.6, markersize=5)
        right.plot([i - 0.2, i + 0.2], [values.mean()] * 2, color=colour, linewidth=2.5)
    right.axhline(0, color="0.5", linestyle=":", linewidth=1)
    right.set_xticks(range(len(measured_gain)))
    right.set_xticklabels(list(measured_gain))
    right.set_xlim(-0.6, len(measured_gain) - 0.4)
    right.set_ylabel("relative gain in accuracy (%)")
    right.set_title(f"over the plain TinyViT at {size:,} images (ours)", fontsize=9)
    return finish(fig)
