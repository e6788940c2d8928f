"""Figures of patches as tokens: the pipeline, its cost, positions (``book/patches.md``)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import bare, canvas, finish, legend


def _show_image(ax, image, title, patch=None, grid_color="white"):
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
    bare(ax, title)


def patches_images(images, titles, patch=None, size=2.4, grid_color="white"):
    """Images side by side, each with the patch grid drawn over it."""
    fig, axes = canvas(1, len(images), figsize=(size * len(images), size + 0.3))
    for ax, image, title in zip(np.atleast_1d(axes), images, titles):
        _show_image(ax, image, title, patch, grid_color)
    return finish(fig)


def patches_attention_share(rows, d: int, crossover: float):
    """Attention's share of the encoder's multiply-adds, ``N / (N + 6d)``, against the token count."""
    N = np.geomspace(16, 4 * crossover, 400)
    share = 2 * N**2 * d / (12 * N * d**2 + 2 * N**2 * d)
    fig, ax = canvas(figsize=(6.4, 3.8))
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
    legend(ax, loc="upper left")
    return finish(fig)


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
    fig, ax = canvas(figsize=(6.4, 3.8))
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
    legend(ax, loc="upper left")
    return finish(fig)


def patches_position_resize(old, new, row: int, col: int, rows, cols):
    """A position-table pattern before (old x old) and after (new x new) resizing.

    The new cell ``(row, col)`` is circled on the right and the four old cells
    it averages are boxed on the left.
    """
    old, new = np.asarray(old, dtype=float), np.asarray(new, dtype=float)
    low, high = min(old.min(), new.min()), max(old.max(), new.max())
    fig, axes = canvas(1, 2, figsize=(7.6, 3.8))
    for ax, grid, title in ((axes[0], old, f"{old.shape[0]} x {old.shape[1]} (trained size)"),
                            (axes[1], new, f"{new.shape[0]} x {new.shape[1]} (resized)")):
        ax.imshow(grid, cmap="RdBu_r", vmin=low, vmax=high, interpolation="nearest")
        bare(ax, title)
    for r in rows:
        for c in cols:
            axes[0].add_patch(plt.Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False,
                                            edgecolor="black", linewidth=1.5))
    axes[1].plot(col, row, "o", markersize=9, markerfacecolor="none", markeredgecolor="black",
                 markeredgewidth=1.5)
    return finish(fig)
