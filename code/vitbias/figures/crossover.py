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


CURVE_STYLE = {"small CNN": ("tab:blue", "s", "-"), "TinyViT": ("tab:red", "o", "-")}


def _spread(ax, sizes, values, label):
    """One learning curve: the mean over seeds as a line, each seed as a faint point."""
    colour, marker, line = CURVE_STYLE.get(label, ("0.3", "o", "-"))
    values = np.asarray(values)  # (sizes, seeds)
    ax.plot(sizes, values.mean(axis=1), marker=marker, linestyle=line, color=colour, label=label,
            markerfacecolor="white" if line == "--" else colour)
    ax.plot(np.repeat(sizes, values.shape[1]), values.ravel(), marker, color=colour, alpha=0.35, markersize=3)


def crossover_measured(sizes, curves: dict, chance: float, fits: dict | None = None):
    """Test error against the number of training images on log-log axes, and test accuracy.

    ``curves`` maps a label to test accuracies ``(len(sizes), seeds)``; ``fits``
    maps a label to a fitted :class:`vitbias.scaling.PowerLaw` of its error,
    drawn over the sizes it was fitted on.
    """
    fig, (err_ax, acc_ax) = canvas(1, 2, figsize=(10, 4.2))
    for label, values in curves.items():
        _spread(acc_ax, sizes, values, label)
        _spread(err_ax, sizes, 1 - np.asarray(values), label)
    for label, fit in (fits or {}).items():
        n = np.geomspace(fit.used[0], fit.used[-1], 50)
        err_ax.plot(n, fit(n), ":", color=CURVE_STYLE.get(label, ("0.3",))[0], linewidth=1.5)
    err_ax.set_xscale("log")
    err_ax.set_yscale("log")
    err_ax.set_ylabel("test error (log scale" + ("; dotted: power-law fit)" if fits else ")"))
    acc_ax.set_xscale("log")
    acc_ax.axhline(chance, color="0.5", linestyle=":", linewidth=1, label="chance")
    acc_ax.set_ylim(0, 1.02)
    acc_ax.set_ylabel("test accuracy")
    for ax in (err_ax, acc_ax):
        ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
        ax.minorticks_off()
        ax.set_xlabel("training images")
    legend(acc_ax, loc="lower right")
    return finish(fig)


def worlds_gallery(worlds: dict, titles):
    """One row per world: ``worlds`` maps a world's name to its images ``(N, 3, H, W)`` uint8."""
    rows, columns = len(worlds), len(titles)
    fig, axes = canvas(rows, columns, figsize=(columns * 1.05 + 2.6, rows * 1.05))
    for row, (name, images) in enumerate(worlds.items()):
        for column in range(columns):
            ax = axes[row, column]
            ax.imshow(images[column].transpose(1, 2, 0), interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
        axes[row, 0].set_ylabel(name, fontsize=7, rotation=0, ha="right", va="center")
    for column, title in enumerate(titles):
        axes[0, column].set_title(title, fontsize=7)
    return finish(fig, pad=0.3)


def worlds_curves(sizes, cnn: dict, vit, crossings: dict, chance: float):
    """The CNN's learning curve in every world, the ViT's plain one, and where the ViT passes each.

    ``cnn`` maps a world's name to test accuracies ``(len(sizes), seeds)``, in
    the ladder's order; ``vit`` is the ViT's on the plain images; ``crossings``
    maps a world's name to the size where the ViT passes that CNN curve
    (``None``: not inside the sizes), drawn as a mark on the ViT's curve.
    """
    fig, ax = canvas(figsize=(7.2, 4.4))
    shades = plt.cm.Blues(np.linspace(0.95, 0.4, len(cnn)))
    sizes = np.asarray(sizes, dtype=float)
    vit = np.asarray(vit)
    for (name, values), colour in zip(cnn.items(), shades):
        values = np.asarray(values)
        ax.plot(sizes, values.mean(axis=1), "s-", color=colour, label=f"small CNN, {name}", markersize=4)
        ax.plot(np.repeat(sizes, values.shape[1]), values.ravel(), "s", color=colour, alpha=0.3, markersize=2.5)
    ax.plot(sizes, vit.mean(axis=1), "o-", color="tab:red", linewidth=2, label="TinyViT, every world (theorem)")
    ax.plot(np.repeat(sizes, vit.shape[1]), vit.ravel(), "o", color="tab:red", alpha=0.3, markersize=3)
    vit_at = np.log(sizes), vit.mean(axis=1)
    for name, colour in zip(cnn, shades):
        n = crossings.get(name)
        if n is not None:
            ax.plot([n], [np.interp(np.log(n), *vit_at)], "v", color=colour, markersize=11,
                    markeredgecolor="black", zorder=5)
    ax.axhline(chance, color="0.5", linestyle=":", linewidth=1, label="chance")
    ax.set_xscale("log")
    ax.set_xticks(sizes, [f"{n:,.0f}" for n in sizes])
    ax.minorticks_off()
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("training images")
    ax.set_ylabel("test accuracy")
    legend(ax, loc="upper left")
    return finish(fig)


def shuffled_gallery(images: np.ndarray, shuffled: np.ndarray, titles):
    """Each image ``(N, 3, H, W)`` uint8 above its shuffled version."""
    columns = len(images)
    fig, axes = canvas(2, columns, figsize=(columns * 1.1, 2.5))
    for column in range(columns):
        for row, batch in enumerate((images, shuffled)):
            ax = axes[row, column]
            ax.imshow(batch[column].transpose(1, 2, 0), interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
        axes[0, column].set_title(titles[column], fontsize=7)
    axes[0, 0].set_ylabel("original", fontsize=8)
    axes[1, 0].set_ylabel("shuffled", fontsize=8)
    return finish(fig, pad=0.3)
