"""Figures of attention computing a convolution (``book/attention-conv.md``)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import PowerNorm

from .style import bare, canvas, finish, legend


def aconv_convergence(alphas, error64, error32, rho, bound, floor32, alpha_star):
    """The construction's relative error against ``alpha`` (float64 and float32), beside ``rho(alpha)``."""
    fig, ax = canvas(figsize=(7, 4.2))
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
    legend(ax, loc="lower left")
    return finish(fig)


def aconv_head_weights(weights, offsets, alphas):
    """Each offset head's attention around one query pixel: one row of panels per ``alpha``.

    ``weights``: ``(len(alphas), h, H, W)`` with the query at the centre;
    ``offsets``: ``(h, 2)``, each head's target offset (row, column).
    """
    weights = np.asarray(weights)
    n_alpha, h, H, W = weights.shape
    fig, axes = canvas(n_alpha, h, figsize=(1.05 * h, 1.2 * n_alpha + 0.3), squeeze=False)
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
            bare(ax, rf"$\Delta = ({offsets[j][0]:+d}, {offsets[j][1]:+d})$" if i == 0 else None,
                 fontsize=7)
            if j == 0:
                ax.set_ylabel(rf"$\alpha = {alpha:g}$", fontsize=9)
    return finish(fig, pad=0.3)


def aconv_learned_fit(sizes, errors, centres, offsets):
    """Left: relative test error against training images, per layer (dots: seeds; line: mean).
    Right: the positional attention layer's head centres after training at the largest size, beside the
    offsets.

    ``errors``: layer name -> ``(len(sizes), seeds)``; ``centres``: ``(seeds, h, 2)`` (row, column);
    ``offsets``: ``(k^2, 2)``, the kernel's offsets.
    """
    fig, (left, right) = canvas(1, 2, figsize=(9, 3.8), gridspec_kw={"width_ratios": [1.5, 1]})
    colours = {"convolution": "tab:blue", "attention": "tab:orange", "multi-head": "tab:green"}
    sizes = np.asarray(sizes)
    for name, values in errors.items():
        values = np.asarray(values)
        for seed in range(values.shape[1]):
            left.plot(sizes, values[:, seed], "o", color=colours.get(name, "0.3"), alpha=0.45, markersize=4)
        left.plot(sizes, values.mean(axis=1), "-", color=colours.get(name, "0.3"), linewidth=1.5,
                  label={"attention": "positional attention"}.get(name, name) + " layer")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xticks(sizes, [f"{n:,}" for n in sizes])
    left.set_xlabel("training images N")
    left.set_ylabel("relative test error")
    legend(left, loc="upper right")
    offsets = np.asarray(offsets)
    right.plot(offsets[:, 1], offsets[:, 0], "s", markersize=14, markerfacecolor="none",
               markeredgecolor="tab:blue", label="kernel offsets")
    for seed, found in enumerate(np.asarray(centres)):
        right.plot(found[:, 1], found[:, 0], "o", color="tab:orange", alpha=0.7, markersize=4,
                   label="head centres" if seed == 0 else None)
    right.set_xlim(-2.5, 2.5)
    right.set_ylim(2.5, -2.5)
    right.set_aspect("equal")
    right.set_xlabel("column offset")
    right.set_ylabel("row offset")
    legend(right, loc="lower right")
    return finish(fig)
