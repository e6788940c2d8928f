"""The book's figures. Each function draws one figure and returns it.

Figures are closed before they are returned, so a notebook shows each one
exactly once: as the value of the cell that made it.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
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
    ax.set_ylim(toy.sigma**2 * 0.9, float(sim.full.mean(axis=1).max()) * 1.3)
    ax.set_yticks([0.25, 0.3, 0.4, 0.5, 1, 2, 4])
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("training rows $N$")
    ax.set_ylabel("test error per output")
    ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    plt.close(fig)
    return fig


# ---------------------------------------------------------------------------
# Patches as tokens
# ---------------------------------------------------------------------------


def _patches_show_image(ax, image, title, patch=None, grid_color="white"):
    """An image (C, H, W) or (H, W) on ``ax``, scaled to [0, 1], with an optional patch grid."""
    image = np.asarray(image, dtype=float)
    if image.ndim == 3:
        image = np.moveaxis(image, 0, -1)
    low, high = image.min(), image.max()
    shown = (image - low) / (high - low) if high > low else np.zeros_like(image)
    ax.imshow(shown, cmap="gray" if shown.ndim == 2 else None, vmin=0, vmax=1,
              interpolation="nearest")
    if patch:
        for edge in np.arange(patch, image.shape[0], patch) - 0.5:
            ax.axhline(edge, color=grid_color, linewidth=1.0)
        for edge in np.arange(patch, image.shape[1], patch) - 0.5:
            ax.axvline(edge, color=grid_color, linewidth=1.0)
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def patches_images(images, titles, patch=None, size=2.4, grid_color="white"):
    """Images side by side, each with the patch grid drawn over it."""
    fig, axes = plt.subplots(1, len(images), figsize=(size * len(images), size + 0.3))
    for ax, image, title in zip(np.atleast_1d(axes), images, titles):
        _patches_show_image(ax, image, title, patch, grid_color)
    fig.tight_layout()
    plt.close(fig)
    return fig


def patches_attention_share(rows, d: int, crossover: float):
    """Attention's share of the encoder's multiply-adds, ``N / (N + 6d)``, against the token count."""
    N = np.geomspace(16, 4 * crossover, 400)
    share = 2 * N**2 * d / (12 * N * d**2 + 2 * N**2 * d)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.plot(N, 100 * share, color="tab:blue", linewidth=1.5, label="attention share, $N/(N + 6d)$")
    for row in rows:
        ax.plot(row.tokens, 100 * row.attention_share, "o", color="tab:red", markersize=5)
        ax.annotate(f"{row.image} px / {row.patch}\n$N$ = {row.tokens:,}",
                    (row.tokens, 100 * row.attention_share), textcoords="offset points",
                    xytext=(-8, 8), ha="right", fontsize=8)
    ax.axvline(crossover, color="0.3", linestyle="--", linewidth=1,
               label=f"$N = 6d$ = {crossover:,.0f}: attention is half")
    ax.axhline(50, color="0.6", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_ylim(0, 100)
    ax.set_xlabel("tokens $N$")
    ax.set_ylabel("attention's share of multiply-adds (%)")
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    fig.tight_layout()
    plt.close(fig)
    return fig


def patches_time_against_macs(labels, macs, seconds):
    """Measured seconds per forward pass against predicted multiply-adds, log-log.

    ``seconds`` holds one array of repeated runs per setting; the dots are the
    fastest run, the bars span all runs, the dashed line is constant
    throughput through the first setting.
    """
    macs = np.asarray(macs, dtype=float) / 1e9
    runs = [np.asarray(s, dtype=float) for s in seconds]
    fastest = np.array([s.min() for s in runs])
    slowest = np.array([s.max() for s in runs])
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.vlines(macs, fastest, slowest, color="tab:blue", linewidth=2, alpha=0.4)
    ax.plot(macs, fastest, "o", color="tab:blue", label="measured (fastest run; bar: all runs)")
    span = np.geomspace(macs.min() / 1.5, macs.max() * 1.5, 50)
    ax.plot(span, fastest[0] * span / macs[0], "--", color="0.4", linewidth=1,
            label="time proportional to multiply-adds")
    for x, y, label in zip(macs, fastest, labels):
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(6, 6), fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("predicted multiply-adds (billions)")
    ax.set_ylabel("seconds per forward pass")
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    fig.tight_layout()
    plt.close(fig)
    return fig


def patches_position_resize(old, new, row: int, col: int, rows, cols):
    """A position-table pattern before (old x old) and after (new x new) resizing.

    The new cell ``(row, col)`` is circled on the right and the four old cells
    it averages are boxed on the left.
    """
    old, new = np.asarray(old, dtype=float), np.asarray(new, dtype=float)
    low, high = min(old.min(), new.min()), max(old.max(), new.max())
    fig, axes = plt.subplots(1, 2, figsize=(7.6, 3.8))
    for ax, grid, title in ((axes[0], old, f"{old.shape[0]} x {old.shape[1]} (trained size)"),
                            (axes[1], new, f"{new.shape[0]} x {new.shape[1]} (resized)")):
        ax.imshow(grid, cmap="RdBu_r", vmin=low, vmax=high, interpolation="nearest")
        ax.set_title(title, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    for r in rows:
        for c in cols:
            axes[0].add_patch(plt.Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False,
                                            edgecolor="black", linewidth=1.5))
    axes[1].plot(col, row, "o", markersize=9, markerfacecolor="none", markeredgecolor="black",
                 markeredgewidth=1.5)
    fig.tight_layout()
    plt.close(fig)
    return fig


# ---------------------------------------------------------------------------
# Symmetry
# ---------------------------------------------------------------------------


def symmetry_error_curves(shifts, errors: dict, patch: int):
    """Equivariance error against a horizontal shift, one line per layer.

    ``errors`` maps a layer's label to its errors at ``shifts`` (pixels);
    dotted vertical lines mark the whole-patch shifts (multiples of ``patch``).
    """
    shifts = np.asarray(shifts)
    fig, ax = plt.subplots(figsize=(7, 3.8))
    styles = ("o-", "s--", "^-", "D:")
    for (label, values), style in zip(errors.items(), styles * len(errors)):
        ax.plot(shifts, values, style, markersize=5, linewidth=1.3, label=label)
    for k in range(int(shifts.min()) // patch, int(shifts.max()) // patch + 1):
        ax.axvline(k * patch, color="0.6", linestyle=":", linewidth=1)
    ax.set_xticks(shifts)
    ax.set_xlabel("horizontal shift (pixels)")
    ax.set_ylabel("equivariance error")
    ax.set_ylim(bottom=-0.05)
    ax.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    plt.close(fig)
    return fig


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


def aconv_convergence(alphas, error64, error32, rho, bound, floor32, alpha_star):
    """The construction's relative error against ``alpha`` (float64 and float32), beside ``rho(alpha)``."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(alphas, bound, "--", color="0.5", linewidth=1.2, label="error bound")
    ax.plot(alphas, rho, "-", color="tab:green", linewidth=3, alpha=0.5, label=r"$\rho(\alpha)$")
    ax.plot(alphas, error64, "o-", color="tab:blue", markersize=3, linewidth=1, markevery=2,
            label="error, float64")
    ax.plot(alphas, error32, "s-", color="tab:orange", markersize=2.5, linewidth=1, markevery=2,
            label="error, float32")
    ax.axhline(floor32, color="tab:orange", linestyle=":", linewidth=1,
               label="float32 convolution's own error")
    ax.axvline(alpha_star, color="0.2", linestyle=":", linewidth=1,
               label=r"leak $=$ float32 rounding unit")
    ax.set_yscale("log")
    ax.set_xlabel(r"sharpness $\alpha$")
    ax.set_ylabel("max error / max output")
    ax.legend(fontsize=8, frameon=False, loc="lower left")
    fig.tight_layout()
    plt.close(fig)
    return fig


def aconv_head_weights(weights, offsets, alphas):
    """Each offset head's attention around one query pixel: one row of panels per ``alpha``.

    ``weights``: ``(len(alphas), h, H, W)`` with the query at the centre;
    ``offsets``: ``(h, 2)``, each head's target offset (row, column).
    """
    from matplotlib.colors import PowerNorm

    weights = np.asarray(weights)
    n_alpha, h, H, W = weights.shape
    fig, axes = plt.subplots(n_alpha, h, figsize=(1.05 * h, 1.2 * n_alpha + 0.3), squeeze=False)
    centre = (H // 2, W // 2)
    for i, alpha in enumerate(alphas):
        for j in range(h):
            ax = axes[i, j]
            # A square-root colour scale, so the spread-out weights of a blunt head stay visible.
            ax.imshow(weights[i, j], cmap="Blues", norm=PowerNorm(gamma=0.5, vmin=0, vmax=1))
            target = (centre[0] + offsets[j][0], centre[1] + offsets[j][1])
            ax.plot(centre[1], centre[0], "x", color="tab:red", markersize=4)
            ax.add_patch(plt.Rectangle((target[1] - 0.5, target[0] - 0.5), 1, 1, fill=False,
                                       edgecolor="tab:orange", linewidth=1))
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_title(rf"$\Delta = ({offsets[j][0]:+d}, {offsets[j][1]:+d})$", fontsize=7)
            if j == 0:
                ax.set_ylabel(rf"$\alpha = {alpha:g}$", fontsize=9)
    fig.tight_layout(pad=0.3)
    plt.close(fig)
    return fig
