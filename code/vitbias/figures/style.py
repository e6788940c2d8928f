"""The style every figure of the book shares: the set-up and the ending, once.

A figure function opens its canvas with :func:`canvas`, writes its legend
with :func:`legend`, clears an image panel's ticks with :func:`bare` and
returns :func:`finish` of its figure. Figures are closed before they are
returned, so a notebook shows each one exactly once: as the value of the
cell that made it.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

LEGEND_STYLE = {"fontsize": 8, "frameon": False}


def canvas(rows: int = 1, columns: int = 1, *, figsize, **kwargs):
    """A new figure and its axes, ``plt.subplots(rows, columns, figsize=...)``."""
    return plt.subplots(rows, columns, figsize=figsize, **kwargs)


def legend(ax, **kwargs):
    """The book's legend: small type, no frame; ``kwargs`` place it (``loc``, ``ncol``, ...)."""
    return ax.legend(**LEGEND_STYLE, **kwargs)


def bare(ax, title: str | None = None, fontsize: float = 9):
    """An image panel: no ticks on either axis, and an optional small title."""
    if title is not None:
        ax.set_title(title, fontsize=fontsize)
    ax.set_xticks([])
    ax.set_yticks([])


def finish(fig, pad: float | None = None):
    """Lay ``fig`` out (``tight_layout``, with ``pad`` when given), close it and return it."""
    if pad is None:
        fig.tight_layout()
    else:
        fig.tight_layout(pad=pad)
    plt.close(fig)
    return fig
