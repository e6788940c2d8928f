"""Figures of the data-scale crossover, from papers and measured (``book/crossover.md``)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import canvas, finish, legend


def crossover_pretraining_sets(table5: dict, bit: dict, images: dict):
    """ImageNet top-1 against the size of the pretraining set (ViT Table 5, BiT R152x4)."""
    sets = list(images)
    x = np.array([images[name].value for name in sets])
    fig, ax = canvas(figsize=(7, 4.2))
    models = sorted({model for model, _ in table5}, key=lambda m: list(table5).index((m, sets[-1])))
    for model, colour in zip(models, plt.cm.viridis(np.linspace(0.0, 0.85, len(models)))):
        points = [(x[i], table5[(model, name)].value) for i, name in enumerate(sets) if (model, name) in table5]
        ax.plot(*zip(*points), "o-", color=colour, label=model, linewidth=1.3, markersize=4)
    ax.plot(x, [bit[name].value for name in sets], "s--", color="black", linewidth=1.3,
            markersize=5, label="BiT ResNet152x4")
    ax.set_xscale("log")
    ax.set_xticks(x, [f"{name}\n({value / 1e6:.1f}M)" for name, value in zip(sets, x)])
    ax.minorticks_off()
    ax.set_xlabel("pretraining set (images)")
    ax.set_ylabel("ImageNet top-1 after fine-tuning (%)")
    legend(ax, ncol=2)
    return finish(fig)


def crossover_compute(table6: dict, frontier_names: list, matches: dict):
    """ImageNet top-1 against pretraining exaFLOPs (ViT Table 6), with the ViT frontier.

    ``matches`` maps a ResNet's label to ``(its exaFLOPs, its accuracy, ViT exaFLOPs to match)``.
    """
    style = {"ViT": ("tab:red", "o"), "ResNet": ("tab:blue", "s"), "hybrid": ("tab:green", "^")}
    fig, ax = canvas(figsize=(7, 4.4))
    for family, (colour, marker) in style.items():
        rows = [row for row in table6.values() if row["family"] == family]
        ax.plot([r["exaflops"].value for r in rows], [r["accuracy"].value for r in rows], marker,
                color=colour, linestyle="none", markersize=6, label=family)
    front = [table6[name] for name in frontier_names]
    ax.plot([r["exaflops"].value for r in front], [r["accuracy"].value for r in front], "-",
            color="tab:red", linewidth=1, alpha=0.6, label="ViT frontier")
    for resnet, accuracy, vit in matches.values():
        ax.annotate("", xy=(vit, accuracy), xytext=(resnet, accuracy),
                    arrowprops=dict(arrowstyle="->", color="0.4", linewidth=0.8))
    ax.set_xscale("log")
    ax.set_xlabel("pretraining compute on JFT-300M (exaFLOPs)")
    ax.set_ylabel("ImageNet top-1 after fine-tuning (%)")
    legend(ax, loc="lower right")
    return finish(fig)


def shapes_gallery(images: np.ndarray, labels, classes, columns: int = 10):
    """A grid of generated images ``(N, 3, H, W)`` uint8, each titled with its class."""
    rows = -(-len(images) // columns)
    fig, axes = canvas(rows, columns, figsize=(columns * 0.9, rows * 1.05))
    for ax in np.ravel(axes):
        ax.axis("off")
    for ax, image, label in zip(np.ravel(axes), images, labels):
        ax.imshow(image.transpose(1, 2, 0), interpolation="nearest")
        ax.set_title(classes[label].replace("_", " "), fontsize=7)
    return finish(fig, pad=0.3)


def crossover_measured(sizes, cnn, vit, chance: float, probe: float | None = None,
                       probe_labels: int | None = None):
    """Test accuracy of the small CNN and the TinyViT against the number of training images."""
    fig, ax = canvas(figsize=(7, 4.2))
    ax.plot(sizes, cnn, "s-", color="tab:blue", label="small CNN")
    ax.plot(sizes, vit, "o-", color="tab:red", label="TinyViT")
    if probe is not None:
        ax.plot([probe_labels], [probe], "*", color="tab:purple", markersize=12,
                label="pretrained TinyViT, linear probe")
    ax.axhline(chance, color="0.5", linestyle=":", linewidth=1, label="chance")
    ax.set_xscale("log")
    ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
    ax.minorticks_off()
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("training images")
    ax.set_ylabel("test accuracy")
    legend(ax, loc="center right")
    return finish(fig)
