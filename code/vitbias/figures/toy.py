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


def toy_crossing_against_drift(sweep: _toy.CrossingSweep, beta_mark: float):
    """The crossing ``N*`` against the drift ``beta`` on log-log axes, and the simulation's gap.

    Left: the formula ``N* = n + 1 + sigma^2 n / beta^2`` as a line, the
    simulated crossings as dots with bars two Monte Carlo standard errors
    (``sweep.spread``) either side, ``n + 1`` dotted and ``beta_mark`` dashed.
    Right: each simulated crossing's gap from the formula in percent, with the
    same bars, where they are large enough to see.
    """
    toy = sweep.toy
    betas_fine = np.geomspace(sweep.betas.min() / 1.25, sweep.betas.max() * 1.25, 200)
    fig, (ax, gap) = canvas(1, 2, figsize=(9, 3.8), gridspec_kw={"width_ratios": [1.6, 1]})
    ax.plot(betas_fine, _toy.crossover_rows_for(toy, betas_fine), "-", color="tab:purple", linewidth=1.2,
            label=r"predicted $N^\star = n + 1 + \sigma^2 n / \beta^2$")
    ax.errorbar(sweep.betas, sweep.simulated, yerr=2 * sweep.spread, fmt="o", color="tab:purple",
                markersize=4, capsize=2, label=f"simulated ({sweep.reps} training sets per $N$)")
    ax.axhline(toy.n + 1, color="0.4", linestyle=":", linewidth=1, label=rf"$n + 1 = {toy.n + 1}$")
    ax.axvline(beta_mark, color="0.2", linestyle="--", linewidth=1,
               label=rf"this chapter's $\beta = {beta_mark:g}$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(sweep.betas)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(ticker.NullFormatter())
    low, high = 0.8 * (toy.n + 1), 1.1 * float(_toy.crossover_rows_for(toy, betas_fine[:1])[0])
    ax.set_ylim(low, high)
    ax.set_yticks([t for t in (20, 30, 50, 100, 200, 500, 1000, 2000, 5000) if low <= t <= high])
    ax.set_xlabel(r"drift $\beta$ (how wrong the shared kernel is)")
    ax.set_ylabel(r"crossover rows $N^\star$")
    legend(ax)
    percent = 100 * (sweep.simulated / sweep.formula - 1)
    gap.errorbar(sweep.betas, percent, yerr=200 * sweep.spread / sweep.formula, fmt="o",
                 color="tab:purple", markersize=4, capsize=2)
    gap.axhline(0, color="0.4", linestyle=":", linewidth=1)
    gap.set_xscale("log")
    gap.set_xticks(sweep.betas)
    gap.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    gap.xaxis.set_minor_formatter(ticker.NullFormatter())
    gap.set_xlabel(r"drift $\beta$")
    gap.set_ylabel("simulated minus predicted (% of $N^\\star$)")
    return finish(fig)
