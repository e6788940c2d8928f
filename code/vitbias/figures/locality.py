"""Figures of what a trained ViT learns in place of locality (``book/locality.md``)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import canvas, finish, legend


def receptive_fields(layers, conv, attention, cells: int):
    """Cells one patch can see after each layer: stacked 3 x 3 convolutions against attention."""
    fig, ax = canvas(figsize=(6, 3.6))
    ax.plot(layers, conv, "s-", color="tab:blue", label="3 x 3 convolutions")
    ax.plot(layers, attention, "o-", color="tab:red", label="self-attention")
    ax.axhline(cells, color="0.5", linestyle=":", linewidth=1, label="the whole grid")
    ax.set_xticks(layers)
    ax.set_xlabel("layer")
    ax.set_ylabel("patches in the receptive field")
    legend(ax, loc="center right")
    return finish(fig)


def distance_by_layer(panels: dict, uniform: float):
    """Mean attention distance of every head against its layer, one panel per model.

    ``panels`` maps a title to an array ``(runs, layers, heads)`` of distances
    in pixels; each head of each run is a dot, the mean over heads and runs a
    line; ``uniform`` is the distance of uniform attention on the grid.
    """
    fig, axes = canvas(1, len(panels), figsize=(3.6 * len(panels), 3.6), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (title, values) in zip(axes, panels.items()):
        values = np.asarray(values)
        layers = np.arange(1, values.shape[1] + 1)
        spread = np.linspace(-0.15, 0.15, values.shape[0])
        for offset, run in zip(spread, values):
            ax.plot(np.repeat(layers + offset, run.shape[1]), run.ravel(), "o", color="tab:red",
                    alpha=0.45, markersize=4)
        ax.plot(layers, values.mean(axis=(0, 2)), "-", color="tab:red", label="mean over heads")
        ax.axhline(uniform, color="0.5", linestyle=":", linewidth=1, label="uniform attention")
        ax.set_xticks(layers)
        ax.set_xlabel("layer")
        ax.set_title(title, fontsize=9)
    axes[0].set_ylabel("mean attention distance (px)")
    legend(axes[0], loc="lower right")
    return finish(fig)


def position_similarity(similarity: np.ndarray, grid: tuple[int, int], cells=None):
    """The cosine similarity of chosen patches' position vectors with every other, as maps on the grid.

    ``similarity``: ``(N_p, N_p)``; ``cells``: the patch indices to show (all by default).
    """
    H_p, W_p = grid
    cells = range(H_p * W_p) if cells is None else cells
    fig, axes = canvas(H_p, W_p, figsize=(W_p * 1.0, H_p * 1.0))
    for ax in np.ravel(axes):
        ax.axis("off")
    for index in cells:
        ax = np.ravel(axes)[index]
        image = ax.imshow(similarity[index].reshape(H_p, W_p), vmin=-1, vmax=1, cmap="RdBu_r")
    fig.colorbar(image, ax=np.ravel(axes).tolist(), shrink=0.8, label="cosine similarity")
    plt.close(fig)  # no tight_layout: it does not know the colorbar's axes
    return fig


def influence_maps(images: np.ndarray, maps: dict):
    """Each image ``(N, 3, H, W)`` uint8 beside its score maps; ``maps``: title -> ``(N, H_p, W_p)``."""
    rows, columns = len(images), 1 + len(maps)
    fig, axes = canvas(rows, columns, figsize=(columns * 1.5, rows * 1.5))
    axes = np.atleast_2d(axes)
    for row in range(rows):
        axes[row, 0].imshow(images[row].transpose(1, 2, 0), interpolation="nearest")
        for column, values in enumerate(maps.values(), start=1):
            axes[row, column].imshow(values[row], cmap="magma", interpolation="nearest")
        for ax in axes[row]:
            ax.set_xticks([])
            ax.set_yticks([])
    axes[0, 0].set_title("image", fontsize=8)
    for column, title in enumerate(maps, start=1):
        axes[0, column].set_title(title, fontsize=8)
    return finish(fig, pad=0.3)
