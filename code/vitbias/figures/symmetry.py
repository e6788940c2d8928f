"""Figures of which shifts a layer respects (``book/symmetry.md``)."""

from __future__ import annotations

import numpy as np

from .style import canvas, finish, legend


def symmetry_error_curves(shifts, errors: dict, patch: int):
    """Equivariance error against a horizontal shift, one line per layer.

    ``errors`` maps a layer's label to its errors at ``shifts`` (pixels);
    dotted vertical lines mark the whole-patch shifts (multiples of ``patch``).
    """
    shifts = np.asarray(shifts)
    fig, ax = canvas(figsize=(7, 3.8))
    styles = ("o-", "s--", "^-", "D:")
    for (label, values), style in zip(errors.items(), styles * len(errors)):
        ax.plot(shifts, values, style, markersize=5, linewidth=1.3, label=label)
    for k in range(int(shifts.min()) // patch, int(shifts.max()) // patch + 1):
        ax.axvline(k * patch, color="0.6", linestyle=":", linewidth=1)
    ax.set_xticks(shifts)
    ax.set_xlabel("horizontal shift (pixels)")
    ax.set_ylabel("equivariance error")
    ax.set_ylim(bottom=-0.05)
    legend(ax, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return finish(fig)
