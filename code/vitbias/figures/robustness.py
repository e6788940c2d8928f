"""Figures of the robustness chapter (``book/robustness.md``): cue conflict and occlusion."""

from __future__ import annotations

import numpy as np

from .style import bare, canvas, finish, legend


def image_row(images, titles, *, scale: float = 1.3):
    """A row of uint8 images ``(N, 3, H, W)``, each with its title."""
    images = np.asarray(images)
    if images.ndim != 4 or len(images) != len(titles):
        raise ValueError(f"need images (N, 3, H, W) and N titles, got {images.shape} and {len(titles)} titles")
    fig, axes = canvas(1, len(images), figsize=(scale * len(images), scale + 0.5), squeeze=False)
    for ax, image, title in zip(axes[0], images, titles):
        ax.imshow(image.transpose(1, 2, 0))
        bare(ax, title, fontsize=7)
    return finish(fig)


def shape_bias_bars(bias: dict, conditions: tuple[str, ...], models: tuple[str, ...] = ("CNN", "ViT")):
    """Shape bias of each model under each training condition: mean over seeds as a bar, each seed a dot.

    ``bias`` maps ``(model, condition)`` to an array of one value per seed.
    """
    fig, ax = canvas(figsize=(6.2, 3.4))
    width = 0.8 / len(models)
    colours = {"CNN": "0.55", "ViT": "black"}
    x = np.arange(len(conditions))
    for k, model in enumerate(models):
        values = [np.asarray(bias[model, c]) for c in conditions]
        position = x - 0.4 + width * (k + 0.5)
        ax.bar(position, [v.mean() for v in values], width * 0.9, color=colours.get(model), alpha=0.6,
               label=model)
        for p, v in zip(position, values):
            ax.plot(np.full(len(v), p), v, "o", color="tab:red", markersize=3)
    ax.axhline(0.5, color="0.5", linestyle=":", linewidth=1)
    ax.set_xticks(x)
    ax.set_xticklabels(conditions)
    ax.set_ylim(0, 1.15)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_ylabel("shape bias")
    legend(ax, loc="upper center", ncol=len(models))
    return finish(fig)


def occlusion_curves(fractions, curves: dict, *, title: str = ""):
    """Accuracy against the fraction of blanked squares, one line per name (mean over seeds, band = range).

    ``curves`` maps a name to ``(seeds, fractions)`` accuracies; a name's
    style is read from it: "CNN" grey, "ViT" black; "off the grid" dashed;
    "erasing" in colour.
    """
    fig, ax = canvas(figsize=(6.2, 3.8))
    for name, values in curves.items():
        values = np.asarray(values)
        colour = ("tab:blue" if "erasing" in name and "CNN" in name else "tab:orange" if "erasing" in name
                  else "0.55" if "CNN" in name else "black")
        style = "--" if "off" in name else "-"
        ax.plot(fractions, values.mean(axis=0), style, marker="o", markersize=3.5, color=colour, label=name,
                linewidth=1.3)
        ax.fill_between(fractions, values.min(axis=0), values.max(axis=0), color=colour, alpha=0.12)
    ax.set_xlabel("fraction of the image blanked")
    ax.set_ylabel("test accuracy")
    ax.set_ylim(0, 1.02)
    if title:
        ax.set_title(title, fontsize=9)
    legend(ax, loc="upper right")
    return finish(fig)
