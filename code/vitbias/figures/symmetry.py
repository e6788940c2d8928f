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


def trained_shift_accuracy(shifts, accuracy: dict, other_half: dict, patch: int):
    """Left: test accuracy against a horizontal circular shift of the test images, one line per model
    (dots: seeds). Right: accuracy on the half the objects stood in during training and on the other.

    ``accuracy``: model -> ``(seeds, len(shifts))``; ``other_half``: model -> ``(seeds, 2)``, the
    columns its own side of the image and the other side.
    """
    fig, (left, right) = canvas(1, 2, figsize=(9.5, 3.8), gridspec_kw={"width_ratios": [1.6, 1]})
    colours = ("tab:blue", "tab:orange", "tab:green", "tab:purple")
    shifts = np.asarray(shifts)
    for colour, (name, values) in zip(colours, accuracy.items()):
        values = np.asarray(values)
        for row in values:
            left.plot(shifts, row, ".", color=colour, alpha=0.4, markersize=4)
        left.plot(shifts, values.mean(axis=0), "-", color=colour, linewidth=1.5, label=name)
    for whole in shifts[(shifts % patch == 0) & (shifts > 0)]:
        left.axvline(whole, color="0.5", linestyle=":", linewidth=1)
    left.set_xticks(shifts)
    left.set_xlabel("horizontal shift of the test images (pixels)")
    left.set_ylabel("test accuracy")
    legend(left, loc="lower left")
    width = 0.8 / max(len(other_half), 1)
    for i, (colour, (name, values)) in enumerate(zip(colours, other_half.items())):
        values = np.asarray(values)
        place = np.arange(2) + (i - (len(other_half) - 1) / 2) * width
        right.bar(place, values.mean(axis=0), width, color=colour, alpha=0.6, label=name)
        for row in values:
            right.plot(place, row, ".", color="0.2", markersize=3)
    right.set_xticks([0, 1], ["its own side", "the other side"])
    right.set_ylabel("test accuracy")
    right.set_ylim(0, 1)
    return finish(fig)
