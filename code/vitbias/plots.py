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
