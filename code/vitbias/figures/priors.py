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
