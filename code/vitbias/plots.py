"""The book's figures. Each function draws one figure and returns it.

Figures are closed before they are returned, so a notebook shows each one
exactly once: as the value of the cell that made it.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from . import toy as _toy


# ---------------------------------------------------------------------------
# The bias toy
# ---------------------------------------------------------------------------


def toy_error_curves(sim: "_toy.ToySimulation", N_star: float):
    """Simulated test error (mean and 10-90 % band) against the predicted curves."""
    toy = sim.toy
    N_fine = np.geomspace(sim.N.min(), sim.N.max(), 400)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, errors, predicted, colour in (
        ("full map", sim.full, _toy.predicted_full_error(toy, N_fine), "tab:red"),
        (f"convolution (k = {toy.k})", sim.conv, _toy.predicted_conv_error(toy, N_fine), "tab:blue"),
    ):
        low, high = np.quantile(errors, [0.1, 0.9], axis=1)
        ax.fill_between(sim.N, low, high, color=colour, alpha=0.2, linewidth=0)
        ax.plot(sim.N, errors.mean(axis=1), "o", color=colour, markersize=3.5,
                label=f"{name}: simulated")
        ax.plot(N_fine, predicted, "-", color=colour, linewidth=1.2,
                label=f"{name}: predicted")
    ax.axhline(toy.sigma**2, color="0.4", linestyle=":", linewidth=1,
               label=r"noise floor $\sigma^2$")
    ax.axvline(N_star, color="0.2", linestyle="--", linewidth=1,
               label=rf"$N^\star \approx {N_star:.0f}$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(toy.sigma**2 * 0.9, min(4.0, float(sim.full.mean(axis=1).max()) * 1.2))
    ax.set_xlabel("training rows $N$")
    ax.set_ylabel("test error per output")
    ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    plt.close(fig)
    return fig


# ---------------------------------------------------------------------------
# Patches as tokens
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Symmetry
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# The data-scale crossover
# ---------------------------------------------------------------------------


def crossover_pretraining_sets(table5: dict, bit: dict, images: dict):
    """ImageNet top-1 against the size of the pretraining set (ViT Table 5, BiT R152x4)."""
    sets = list(images)
    x = np.array([images[name].value for name in sets])
    fig, ax = plt.subplots(figsize=(7, 4.2))
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
    ax.legend(fontsize=8, frameon=False, ncol=2)
    fig.tight_layout()
    plt.close(fig)
    return fig


def crossover_compute(table6: dict, frontier_names: list, matches: dict):
    """ImageNet top-1 against pretraining exaFLOPs (ViT Table 6), with the ViT frontier.

    ``matches`` maps a ResNet's label to ``(its exaFLOPs, its accuracy, ViT exaFLOPs to match)``.
    """
    style = {"ViT": ("tab:red", "o"), "ResNet": ("tab:blue", "s"), "hybrid": ("tab:green", "^")}
    fig, ax = plt.subplots(figsize=(7, 4.4))
    for family, (colour, marker) in style.items():
        rows = [row for row in table6.values() if row["family"] == family]
        ax.plot([r["exaflops"].value for r in rows], [r["accuracy"].value for r in rows], marker,
                color=colour, linestyle="none", markersize=6, label=family)
    front = [table6[name] for name in frontier_names]
    ax.plot([r["exaflops"].value for r in front], [r["accuracy"].value for r in front], "-",
            color="tab:red", linewidth=1, alpha=0.6, label="ViT frontier")
    for label, (resnet, accuracy, vit) in matches.items():
        ax.annotate("", xy=(vit, accuracy), xytext=(resnet, accuracy),
                    arrowprops=dict(arrowstyle="->", color="0.4", linewidth=0.8))
    ax.set_xscale("log")
    ax.set_xlabel("pretraining compute on JFT-300M (exaFLOPs)")
    ax.set_ylabel("ImageNet top-1 after fine-tuning (%)")
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    fig.tight_layout()
    plt.close(fig)
    return fig


def shapes_gallery(images: "np.ndarray", labels, classes, columns: int = 10):
    """A grid of generated images ``(N, 3, H, W)`` uint8, each titled with its class."""
    rows = -(-len(images) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(columns * 0.9, rows * 1.05))
    for ax in np.ravel(axes):
        ax.axis("off")
    for ax, image, label in zip(np.ravel(axes), images, labels):
        ax.imshow(image.transpose(1, 2, 0), interpolation="nearest")
        ax.set_title(classes[label].replace("_", " "), fontsize=7)
    fig.tight_layout(pad=0.3)
    plt.close(fig)
    return fig


def crossover_measured(sizes, cnn, vit, chance: float, probe: float | None = None,
                       probe_labels: int | None = None):
    """Test accuracy of the small CNN and the TinyViT against the number of training images."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
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
    ax.legend(fontsize=8, frameon=False, loc="center right")
    fig.tight_layout()
    plt.close(fig)
    return fig


# ---------------------------------------------------------------------------
# Attention as convolution
# ---------------------------------------------------------------------------
