"""The bias toy chapter's evidence (``vitbias.chapters.bias_toy``), on made-up simulations."""

import dataclasses

import numpy as np
import pytest

from vitbias import toy
from vitbias.chapters import bias_toy as chapter
from vitbias.evidence import Evidence

T = toy.Toy()
POINTS = ([0, 1, 2], [0, 1, 2])
BETAS = (0.1, 0.15, 0.2, 0.3, 0.45, 0.6)


def on_the_curves(reps=8):
    """A simulation whose every mean lies on its predicted curve, each with a 2 % spread over the reps."""
    N = toy.log_spaced_rows(T, largest=4000, count=24)
    wobble = 1 + 0.02 * np.resize([1.0, -1.0], reps)  # mean exactly one
    return toy.ToySimulation(T, N, toy.predicted_full_error(T, N)[:, None] * wobble,
                             toy.predicted_conv_error(T, N)[:, None] * wobble)


def sweep_near_the_formula(off=0.5):
    """Crossings ``off`` standard errors from the formula, each with a standard error of 2 % of it."""
    formula = toy.crossover_rows_for(T, BETAS)
    spread = 0.02 * formula
    return toy.CrossingSweep(T, np.array(BETAS), formula, formula + off * spread, spread, reps=64)


def measured(sim=None, sweep=None):
    line, cubic = toy.line_through(*POINTS), toy.polynomial_through(*POINTS, extra=5)
    return chapter.measure(sim or on_the_curves(), sweep or sweep_near_the_formula(), line=line, cubic=cubic,
                           points=POINTS)


def test_the_exact_numbers_are_those_of_the_formulas():
    found = measured()
    assert (found["toy_line_at_3"], found["toy_cubic_at_3"]) == (3, 33)
    assert found["toy_approx_conv"] == pytest.approx(T.beta**2, rel=1e-12)
    assert found["toy_crossover_rows"] == T.n + 1 + T.sigma**2 * T.n / T.beta**2
    assert found["toy_full_weights"] == T.n**2 and found["toy_match_ratio_limit"] == T.n**2 / T.k
    assert found["toy_gain_at_0"] == pytest.approx(1 + T.beta) and found["toy_gain_at_16"] == pytest.approx(1 - T.beta)
    assert found["toy_drift_formula_ratio"] == pytest.approx((T.n + 1 + T.sigma**2 * T.n / 0.01)
                                                             / (T.n + 1 + T.sigma**2 * T.n / 0.36))


def test_every_claim_holds_when_the_simulation_sits_on_the_predicted_curves():
    found = measured()
    assert len(found.claims) == 11 and all(found.claims.values())
    assert found["toy_largest_deviation_se"] == pytest.approx(0, abs=1e-9)
    assert found["toy_reps"] == 8 and found["toy_grid_min"] == T.n + 3


def test_a_full_map_that_stops_improving_fails_its_claim():
    sim = on_the_curves()
    full = sim.full.copy()
    full[-1] = full[-2]
    claims = measured(sim=dataclasses.replace(sim, full=full)).claims
    assert not claims["the convolution starts within half a percent of its floor, and the full map falls at "
                      "every step to within one percent of the noise"]


def test_simulated_crossings_three_standard_errors_off_fail_the_agreement_claim():
    found = measured(sweep=sweep_near_the_formula(off=3.0))
    assert found["toy_drift_largest_deviation_se"] == pytest.approx(3.0)
    assert not found.claims["every simulated crossing is within two Monte Carlo standard errors of the formula"]


def test_drifts_out_of_order_are_refused():
    sweep = sweep_near_the_formula()
    backwards = dataclasses.replace(sweep, betas=sweep.betas[::-1], formula=sweep.formula[::-1])
    with pytest.raises(ValueError, match="must rise from the smallest to the largest"):
        measured(sweep=backwards)


def test_a_sweep_without_the_chapters_own_drift_is_refused():
    sweep = sweep_near_the_formula()
    betas = np.array([0.1, 0.15, 0.2, 0.25, 0.45, 0.6])
    with pytest.raises(ValueError, match="must hold the chapter's own 0.3"):
        measured(sweep=dataclasses.replace(sweep, betas=betas, formula=toy.crossover_rows_for(T, betas)))


def test_a_sweep_of_another_toy_is_refused():
    with pytest.raises(ValueError, match="is not the simulation's"):
        measured(sweep=dataclasses.replace(sweep_near_the_formula(), toy=toy.Toy(beta=0.2)))


def test_an_approximation_error_other_than_beta_squared_fails_its_claim():
    found = Evidence("bias-toy")
    chapter.approximation_error(found, T, 1.01 * T.beta**2)
    assert not found.claims["the convolution's approximation error is beta squared"]


def test_a_true_assumption_on_a_drifting_toy_is_refused():
    with pytest.raises(ValueError, match="needs a toy without drift"):
        chapter.true_assumption(Evidence("bias-toy"), T)


def test_points_with_more_xs_than_ys_are_refused():
    line = toy.line_through(*POINTS)
    with pytest.raises(ValueError, match="as many xs as ys"):
        chapter.line_and_cubic(Evidence("bias-toy"), line, line, ([0, 1, 2, 3], [0, 1, 2]))
