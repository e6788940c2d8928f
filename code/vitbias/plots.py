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
