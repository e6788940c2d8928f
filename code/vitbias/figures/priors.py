"""Figures of the routes that put the convolution's prior back into a ViT (``book/priors.md``)."""

from __future__ import annotations

import numpy as np

from .style import canvas, finish, legend


def route_curves(sizes, accuracy: dict, reference: tuple[str, ...] = ("CNN", "ViT")):
    """Test accuracy against training-set size for every route, mean over seeds with the seeds' range.

    ``accuracy`` maps a name to an array ``(sizes, seeds)``; the names in
    ``reference`` are drawn in grey and black, the routes in colour.
    """
    fig, ax = canvas(figsize=(7, 4.2))
    colours = iter(["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive",
                    "tab:cyan"])
    fixed = {"CNN": dict(color="0.45", linestyle="--"), "ViT": dict(color="black", linestyle="-")}
    for name, values in accuracy.items():
        values = np.asarray(values)
        style = fixed[name] if name in reference else dict(color=next(colours), linestyle="-")
        ax.plot(sizes, values.mean(axis=1), marker="o", label=name, markersize=4, linewidth=1.4, **style)
        ax.fill_between(sizes, values.min(axis=1), values.max(axis=1), alpha=0.12, color=style["color"])
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


def sample_efficiency(fractions, published_gain, sizes, measured_gain: dict):
    """Two panels: ConViT's relative gain over DeiT against the fraction of ImageNet, and ours against size.

    ``published_gain``: percent gains, one per fraction; ``measured_gain`` maps
    a route's name to ``(sizes, seeds)`` relative gains in percent over the
    plain ViT (mean drawn as a line, the seeds' range as a band).
    """
    fig, (left, right) = canvas(1, 2, figsize=(9, 3.6))
    left.plot(np.asarray(fractions) * 100, published_gain, "o-", color="tab:green")
    left.set_xscale("log")
    left.set_xticks(np.asarray(fractions) * 100)
    left.set_xticklabels([f"{f:.0%}" for f in fractions])
    left.set_xlabel("share of each ImageNet class used")
    left.set_ylabel("relative gain in top-1 (%)")
    left.set_title("ConViT-S over DeiT-S (published)", fontsize=9)
    colours = iter(["tab:green", "tab:brown", "tab:blue", "tab:purple"])
    for name, values in measured_gain.items():
        values = np.asarray(values)
        colour = next(colours)
        right.plot(sizes, values.mean(axis=1), "o-", color=colour, label=name)
        right.fill_between(sizes, values.min(axis=1), values.max(axis=1), color=colour, alpha=0.15)
    right.axhline(0, color="0.5", linestyle=":", linewidth=1)
    right.set_xscale("log")
    right.set_xticks(sizes)
    right.set_xticklabels([f"{n:,}" for n in sizes])
    right.set_xlabel("training images (testbed)")
    right.set_ylabel("relative gain in accuracy (%)")
    right.set_title("routes over the plain TinyViT (ours)", fontsize=9)
    legend(right, loc="upper left")
    return finish(fig)
