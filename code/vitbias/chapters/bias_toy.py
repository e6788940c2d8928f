"""What an assumption is worth: the bias toy's exact errors and crossover (a shared 3-tap convolution
against a full linear map), checked by simulation, across drifts, and with a true assumption.

The page calls each section function right after the cell that computes its input, on one
:class:`~vitbias.evidence.Evidence`; :func:`measure` is their composition, in the page's order."""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import literature as lit
from .. import toy
from ..evidence import Evidence

MONTE_CARLO = "Monte Carlo with fixed seeds: LAPACK's summation order may move it by a fraction of its standard error"
DRIFT_GRID = 11  # values of N around each drift's crossing, as the page's sweep asks for
MATCH_ROWS = 10  # the convolution's rows that the prose matches with the full map's


def measure(sim: toy.ToySimulation, sweep: toy.CrossingSweep, *, line, cubic, points) -> Evidence:
    """The chapter's evidence, every section computed from the toy of ``sim``.

    ``sim``: :func:`vitbias.toy.simulate` of the chapter's toy on its grid of
    ``N``; ``sweep``: :func:`vitbias.toy.simulate_crossings` of the same toy
    over the drifts; ``line`` and ``cubic``: the two polynomials through
    ``points``, ``(xs, ys)``.
    """
    T = sim.toy
    if sweep.toy != T:
        raise ValueError(f"the sweep's toy {sweep.toy} is not the simulation's {T}")
    found = Evidence("bias-toy")
    line_and_cubic(found, line, cubic, points)
    toy_constants(found, T)
    approximation = toy.approximation_error_conv(T)
    approximation_error(found, T, approximation)
    n_star = toy.crossover_rows(T)
    predicted_crossover(found, T, n_star, approximation)
    simulated_curves(found, sim, n_star, toy.crossing_point(sim.N, sim.full_mean, sim.conv_mean))
    crossings_against_drift(found, sweep, n_star)
    true_assumption(found, dataclasses.replace(T, beta=0.0))
    return found


def line_and_cubic(found: Evidence, line, cubic, points) -> None:
    """An assumption picks the answer: ``toy_line_at_3`` and ``toy_cubic_at_3``, and the claim that
    ``line`` and ``cubic`` both pass through ``points``, ``(xs, ys)`` of equal length, and part at x = 3."""
    xs, ys = (np.asarray(p, dtype=float) for p in points)
    if xs.shape != ys.shape:
        raise ValueError(f"the points need as many xs as ys, got {xs.shape} and {ys.shape}")
    found.number("toy_line_at_3", round(line(3), 12))
    found.number("toy_cubic_at_3", round(cubic(3), 12))
    # Both fit the data exactly; they differ only away from it.
    found.claim("the line and the cubic both pass through the points, and at x = 3 the cubic says more than "
                "ten times the line",
                np.allclose(line(xs), ys) and np.allclose(cubic(xs), ys) and cubic(3) > 10 * line(3))


def toy_constants(found: Evidence, T: toy.Toy) -> None:
    """The toy's constants (``toy_n``, ``toy_k``, ``toy_beta``, ...) and its drifting gain at the start,
    a quarter and a half of the row (``toy_gain_at_*``); no claims."""
    gain = toy.gain(T)
    found.number("toy_n", T.n)
    found.number("toy_k", T.k)
    found.number("toy_beta", T.beta)
    found.number("toy_sigma", T.sigma)
    found.number("toy_full_weights", T.n * T.n)
    for position in (0, T.n // 4, T.n // 2):
        found.number(f"toy_gain_at_{position}", gain[position])
    found.number("toy_quarter", T.n // 4)
    found.number("toy_half", T.n // 2)


def approximation_error(found: Evidence, T: toy.Toy, approximation: float) -> None:
    """The convolution's approximation error per output, ``approximation`` (a float, the page's
    :func:`vitbias.toy.approximation_error_conv` of ``T``): ``toy_approx_conv``, and the claim that it is
    ``beta`` squared."""
    found.number("toy_approx_conv", approximation)
    found.claim("the convolution's approximation error is beta squared",
                np.isclose(approximation, T.beta**2, rtol=1e-12))


def predicted_crossover(found: Evidence, T: toy.Toy, n_star: float, approximation: float) -> None:
    """The predicted crossover ``n_star`` (a float, the page's :func:`vitbias.toy.crossover_rows` of ``T``):
    ``toy_crossover_rows``, the convolution's neglected estimation error there
    (``toy_conv_excess_at_crossover``, from its ``approximation`` error), and the claim that it rounds to
    the source's figure."""
    found.number("toy_crossover_rows", n_star)
    found.claim("N* rounds to the source's crossover rows", round(n_star) == lit.SOURCE_TOY_CROSSOVER.value)
    found.number("toy_conv_excess_at_crossover", toy.predicted_conv_error(T, n_star) - T.sigma**2 - approximation)


def simulated_curves(found: Evidence, sim: toy.ToySimulation, n_star: float, sim_star: float) -> None:
    """The experiment: both models fitted on ``sim.full.shape[1]`` training sets at every ``N`` of the
    grid, ``(grid,)``; ``sim_star``, where the simulated means cross (the page's
    :func:`vitbias.toy.crossing_point`), against the predicted ``n_star``. Glues ``toy_grid_*``,
    ``toy_reps``, ``toy_sim_crossover_*``, ``toy_*_excess_*_pct`` and ``toy_largest_deviation_se``; claims
    the agreement of crossings and curves, and which model wins on each side of ``N*``."""
    T = sim.toy
    found.number("toy_grid_size", len(sim.N))
    found.number("toy_grid_min", int(sim.N.min()))
    found.number("toy_grid_max", int(sim.N.max()))
    found.number("toy_reps", sim.full.shape[1])
    rows_per_se = sim.crossover_spread(near=n_star)  # how far Monte Carlo error alone can move it
    # Within one Monte Carlo standard error of the crossing: a fraction of it is what LAPACK's order moves.
    found.number("toy_sim_crossover_rows", sim_star, abs=rows_per_se, why=MONTE_CARLO + ", one of them")
    found.number("toy_sim_crossover_rows_se", rows_per_se, rel=0.5, why=MONTE_CARLO)
    found.number("toy_sim_crossover_gap_pct", 100 * abs(sim_star - n_star) / n_star, abs=100 * rows_per_se / n_star,
                 why=MONTE_CARLO + ", one of the crossing's, as a percentage of N*")
    found.claim("the simulated crossover agrees with the formula within three Monte Carlo standard errors "
                "and 5 %", abs(sim_star - n_star) <= min(3 * rows_per_se, 0.05 * n_star))
    floor_conv = T.sigma**2 + toy.approximation_error_conv(T)
    found.number("toy_conv_excess_smallest_pct", 100 * (sim.conv_mean[0] / floor_conv - 1), rel=0.1,
                 why=MONTE_CARLO)
    found.number("toy_full_excess_largest_pct", 100 * (sim.full_mean[-1] / T.sigma**2 - 1), rel=0.1,
                 why=MONTE_CARLO)
    found.claim("the convolution starts within half a percent of its floor, and the full map falls at every "
                "step to within one percent of the noise",
                sim.conv_mean[0] < 1.005 * floor_conv and np.all(np.diff(sim.full_mean) < 0)
                and sim.full_mean[-1] < 1.01 * T.sigma**2)
    # The full map's formula is exact in expectation; the convolution's is the large-N approximation.
    deviation = sim.deviation_from_prediction()
    found.number("toy_largest_deviation_se", deviation, rel=0.5, why=MONTE_CARLO)
    found.claim("every simulated mean is within four Monte Carlo standard errors of its predicted curve",
                deviation < 4)
    below, above = sim.N < 0.8 * n_star, sim.N > 1.2 * n_star
    found.claim("the convolution wins below N* and loses above it, with a margin of 20 %",
                np.all(sim.conv_mean[below] < sim.full_mean[below])
                and np.all(sim.conv_mean[above] > sim.full_mean[above]))


def crossings_against_drift(found: Evidence, sweep: toy.CrossingSweep, n_star: float) -> None:
    """The more wrong the assumption, the sooner: the crossing for each drift, ``(drifts,)``, by formula
    and by simulation, the drifts rising and holding the toy's own, whose crossing is ``n_star``. Glues
    ``toy_drift_*``; claims the four-fold rows of half the drift, the simulation's agreement with the
    formula, and the crossing's fall."""
    T = sweep.toy
    if not np.all(np.diff(sweep.betas) > 0):
        raise ValueError(f"the drifts must rise from the smallest to the largest, got {sweep.betas}")
    grid_sizes = {len(toy.rows_around(T, N, 2.0, DRIFT_GRID)) for N in sweep.formula}
    if grid_sizes != {DRIFT_GRID}:
        raise ValueError(f"each drift's grid must hold {DRIFT_GRID} values of N, got sizes {grid_sizes}")
    own = np.flatnonzero(sweep.betas == T.beta)
    if len(own) != 1 or not np.isclose(sweep.formula[own[0]], n_star, rtol=1e-12):
        raise ValueError(f"the drifts {sweep.betas} must hold the chapter's own {T.beta}, with its crossing")
    found.number("toy_drift_count", len(sweep.betas))
    found.number("toy_drift_grid_size", DRIFT_GRID)
    found.number("toy_drift_reps", sweep.reps)
    found.number("toy_drift_beta_min", float(sweep.betas[0]))
    found.number("toy_drift_beta_max", float(sweep.betas[-1]))
    found.number("toy_drift_formula_at_min", sweep.formula[0])
    found.number("toy_drift_formula_at_max", sweep.formula[-1])
    found.number("toy_drift_formula_ratio", sweep.formula[0] / sweep.formula[-1])
    found.number("toy_drift_sim_at_min", sweep.simulated[0], rel=0.02, why=MONTE_CARLO)
    found.number("toy_drift_sim_at_max", sweep.simulated[-1], rel=0.02, why=MONTE_CARLO)
    deviation = float(sweep.deviation().max())
    found.number("toy_drift_largest_deviation_se", deviation, rel=0.5, why=MONTE_CARLO)
    beyond = toy.crossover_rows_for(T, [T.beta / 2, T.beta]) - (T.n + 1)
    found.claim("halving the drift makes the rows beyond n + 1 four times as many",
                np.isclose(beyond[0] / beyond[1], 4, rtol=1e-12))
    # Within three standard errors, and within two: the figure's bars all cross zero.
    found.claim("every simulated crossing is within two Monte Carlo standard errors of the formula",
                deviation < 2)
    found.claim("N* falls as the drift grows, by formula and in simulation, each simulated step down larger "
                "than three standard errors of the difference",
                np.all(np.diff(sweep.formula) < 0) and np.all(np.diff(sweep.simulated) < 0)
                and np.all(-np.diff(sweep.simulated) > 3 * np.hypot(sweep.spread[1:], sweep.spread[:-1])))


def true_assumption(found: Evidence, exact: toy.Toy) -> None:
    """What a true assumption is worth: the full map's rows that match the convolution's on ``exact``, the
    page's toy with no drift. Glues ``toy_match_*``; claims that the ratio falls towards ``n^2/k``."""
    if exact.beta != 0:
        raise ValueError(f"a true assumption needs a toy without drift, got beta = {exact.beta}")
    found.number("toy_match_conv_rows", MATCH_ROWS)
    found.number("toy_match_full_rows", toy.rows_to_match(exact, MATCH_ROWS))
    found.number("toy_match_ratio", toy.rows_to_match(exact, MATCH_ROWS) / MATCH_ROWS)
    found.number("toy_match_ratio_limit", exact.n**2 / exact.k)
    found.claim("the ratio of rows falls towards n^2/k from above",
                toy.rows_to_match(exact, 1000) / 1000 > exact.n**2 / exact.k)
