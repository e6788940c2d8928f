"""Figures of the bias trade-off toy (``book/bias-toy.md``)."""

from __future__ import annotations

import matplotlib.ticker as ticker
import numpy as np

from .. import toy as _toy
from .style import canvas, finish, legend


def toy_error_curves(sim: _toy.ToySimulation, N_star: float):
    """Simulated test error (mean and 10-90 % band) against the predicted curves."""
    toy = sim.toy
    N_fine = np.geomspace(sim.N.min(), sim.N.max(), 400)
    fig, ax = canvas(figsize=(7, 4.2))
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
    legend(ax)
    return finish(fig)
