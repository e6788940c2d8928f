"""The bias trade-off toy, stated as properties."""

import numpy as np
import pytest

from vitbias import toy

T = toy.Toy()


def test_the_cubic_agrees_with_the_line_on_the_data_and_predicts_33_at_3():
    xs, ys = [0, 1, 2], [0, 1, 2]
    cubic = toy.polynomial_through(xs, ys, extra=5)
    line = toy.line_through(xs, ys)
    np.testing.assert_allclose(cubic(np.array(xs)), ys, atol=1e-12)
    assert cubic(3) == pytest.approx(33, abs=1e-10)
    assert line(3) == pytest.approx(3, abs=1e-12)


def test_the_true_map_is_the_drifting_slope_detector():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(T.n)
    t = np.arange(T.n)
    expected = (x[(t - 1) % T.n] - x[(t + 1) % T.n]) * toy.gain(T)
    np.testing.assert_allclose(x @ toy.true_map(T), expected, rtol=1e-14)


def test_the_convolution_fit_recovers_the_kernel_as_N_grows():
    rng = np.random.default_rng(2)
    errors = []
    for N in (50, 500, 5000):
        X, Y = toy.sample_rows(T, rng, reps=4, N=N)
        errors.append(np.abs(toy.fit_conv(X, Y) - [1, 0, -1]).max())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.02


def test_the_full_map_is_exact_without_noise():
    rng = np.random.default_rng(3)
    noiseless = toy.Toy(sigma=0.0)
    X, Y = toy.sample_rows(noiseless, rng, reps=2, N=40)
    np.testing.assert_allclose(toy.fit_full(X, Y), np.broadcast_to(toy.true_map(noiseless), (2, 32, 32)), atol=1e-10)


def test_approximation_error_is_beta_squared():
    for beta in (0.0, 0.1, 0.3, 1.0):
        assert toy.approximation_error_conv(toy.Toy(beta=beta)) == pytest.approx(beta**2, rel=1e-12, abs=1e-15)


def test_crossover_formula_gives_122_rows_for_the_books_constants():
    assert toy.crossover_rows(T) == pytest.approx(33 + 0.25 * 32 / 0.09, rel=1e-12)
    assert round(toy.crossover_rows(T)) == 122
    # at N* the predicted full-map excess equals the convolution's approximation error
    N = toy.crossover_rows(T)
    assert toy.predicted_full_error(T, N) - T.sigma**2 == pytest.approx(T.beta**2, rel=1e-12)


def test_with_beta_zero_the_simulated_excess_follows_the_least_squares_formula():
    exact = toy.Toy(beta=0.0)
    N = np.array([40, 80, 320])
    sim = toy.simulate(exact, N, reps=400, seed=7)
    for which, p, rows in (("full", exact.n, N), ("conv", exact.k, N * exact.n)):
        errors = {"full": sim.full, "conv": sim.conv}[which]
        excess = errors.mean(axis=1) - exact.sigma**2
        predicted = toy.least_squares_excess(exact.sigma, p, rows)
        se = sim.standard_error(which)
        # within four Monte Carlo standard errors
        assert np.all(np.abs(excess - predicted) < 4 * se), (which, excess, predicted, se)


def test_simulate_is_deterministic_for_a_seed_and_independent_of_the_grid():
    a = toy.simulate(T, [40, 100], reps=4, seed=3)
    b = toy.simulate(T, [100], reps=4, seed=3)
    np.testing.assert_array_equal(a.full[1], b.full[0])
    np.testing.assert_array_equal(a.conv[1], b.conv[0])


def test_shared_weights_are_worth_about_n_squared_over_k_rows():
    exact = toy.Toy(beta=0.0)
    N = 1e6
    M = toy.rows_to_match(exact, N)
    assert M / N == pytest.approx(exact.n**2 / exact.k, rel=1e-6)
    expected = exact.sigma**2 * exact.k / (N * exact.n)
    assert toy.least_squares_excess(exact.sigma, exact.n, M) == pytest.approx(expected, rel=1e-12)


def two_draws(means, half_gaps):
    """(len, 2) draws m - e and m + e: mean m, standard error e exactly."""
    means, half_gaps = np.asarray(means, float), np.asarray(half_gaps, float)
    return np.stack([means - half_gaps, means + half_gaps], axis=1)


def test_the_crossover_spread_is_the_differences_standard_error_over_its_slope_per_row():
    N = np.array([10, 20, 30])
    sim = toy.ToySimulation(toy=toy.Toy(), N=N, full=two_draws([3.0, 2.0, 1.0], [0.3] * 3),
                            conv=two_draws([1.0, 2.0, 3.0], [0.4] * 3))
    # the difference falls by 2 every 10 rows (slope 0.2 per row); its standard error is hypot(0.3, 0.4)
    assert sim.crossover_spread(near=20) == pytest.approx(0.5 / 0.2, rel=1e-12)
    assert sim.crossover_spread(near=15) == pytest.approx(0.5 / 0.2, rel=1e-12)
    with pytest.raises(ValueError, match="inside the grid"):
        sim.crossover_spread(near=40)


def test_the_deviation_from_prediction_counts_standard_errors_off_the_formulas():
    T, N = toy.Toy(), np.array([40, 100, 400])
    full, conv = toy.predicted_full_error(T, N), toy.predicted_conv_error(T, N)
    on_the_lines = toy.ToySimulation(T, N, two_draws(full, [0.1] * 3), two_draws(conv, [0.1] * 3))
    assert on_the_lines.deviation_from_prediction() == pytest.approx(0.0, abs=1e-12)
    off = toy.ToySimulation(T, N, two_draws(full + [0, 0.3, 0], [0.1] * 3), two_draws(conv, [0.1] * 3))
    assert off.deviation_from_prediction() == pytest.approx(3.0, rel=1e-9)


def test_crossing_point_interpolates_in_log_N():
    N = np.array([10.0, 100.0])
    assert toy.crossing_point(N, [2.0, 0.0], [1.0, 1.0]) == pytest.approx(np.sqrt(1000.0))


@pytest.mark.parametrize("kwargs, match", [
    (dict(sigma=-0.1), "sigma"),
    (dict(beta=-1.0), "beta"),
    (dict(k=2), "odd"),
    (dict(n=2), "n must"),
    (dict(k=35), "longer"),
])
def test_bad_constants_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        toy.Toy(**kwargs)


def test_the_full_map_needs_more_than_n_plus_one_rows():
    rng = np.random.default_rng(0)
    X, Y = toy.sample_rows(T, rng, reps=1, N=T.n + 1)
    with pytest.raises(ValueError, match="N > n \\+ 1"):
        toy.fit_full(X, Y)
    with pytest.raises(ValueError, match="exceed n \\+ 1"):
        toy.simulate(T, [T.n + 1])
    with pytest.raises(ValueError, match="sigma"):
        toy.least_squares_excess(-1.0, 3, 100)


def test_no_crossover_without_drift_and_no_crossing_without_a_sign_change():
    with pytest.raises(ValueError, match="no crossover"):
        toy.crossover_rows(toy.Toy(beta=0.0))
    with pytest.raises(ValueError, match="do not cross"):
        toy.crossing_point([1, 2, 3], [3, 3, 3], [1, 1, 1])


def test_mismatched_shapes_are_rejected():
    with pytest.raises(ValueError, match="reps, N, n"):
        toy.fit_conv(np.zeros((2, 5, 8)), np.zeros((2, 5, 7)))


# ---------------------------------------------------------------------------
# The crossing against the drift.
# ---------------------------------------------------------------------------

def test_the_formula_crossing_of_a_sweep_matches_crossover_rows_at_each_drift():
    betas = [0.05, 0.3, 1.0, 2.5]
    expected = [toy.crossover_rows(toy.Toy(n=T.n, k=T.k, beta=b, sigma=T.sigma)) for b in betas]
    np.testing.assert_allclose(toy.crossover_rows_for(T, betas), expected, rtol=1e-14)
    assert toy.crossover_rows_for(T, np.array(betas)).shape == (4,)


def test_halving_the_drift_quadruples_the_rows_beyond_n_plus_one():
    beyond = toy.crossover_rows_for(T, [0.1, 0.2, 0.4]) - (T.n + 1)
    np.testing.assert_allclose(beyond[:-1] / beyond[1:], [4, 4], rtol=1e-12)


def test_the_formula_crossing_falls_as_the_drift_grows_towards_n_plus_one():
    N_star = toy.crossover_rows_for(T, np.geomspace(0.01, 100, 50))
    assert np.all(np.diff(N_star) < 0)
    assert np.all(N_star > T.n + 1)
    assert N_star[-1] == pytest.approx(T.n + 1, abs=1e-3)


@pytest.fixture(scope="module")
def sweep():
    return toy.simulate_crossings(T, [0.15, 0.3, 0.6], reps=32, count=9, seed=1)


def test_the_crossing_falls_as_the_drift_grows(sweep):
    assert np.all(np.diff(sweep.formula) < 0)
    assert np.all(np.diff(sweep.simulated) < 0)


def test_every_simulated_crossing_is_within_three_monte_carlo_errors_of_the_formula(sweep):
    assert sweep.formula.shape == sweep.simulated.shape == sweep.spread.shape == (3,)
    np.testing.assert_allclose(sweep.formula, toy.crossover_rows_for(T, [0.15, 0.3, 0.6]), rtol=1e-14)
    assert np.all(sweep.spread > 0)
    assert np.all(sweep.deviation() < 3), sweep.deviation()


def test_a_sweep_is_deterministic_for_a_seed_and_each_drift_has_its_own_stream():
    a = toy.simulate_crossings(T, [0.3, 0.6], reps=4, count=5, seed=2)
    b = toy.simulate_crossings(T, [0.3, 0.6], reps=4, count=5, seed=2)
    np.testing.assert_array_equal(a.simulated, b.simulated)
    one = toy.simulate(toy.Toy(beta=0.6), toy.rows_around(T, a.formula[1], 2.0, 5), reps=4, seed=3)
    assert a.simulated[1] == toy.crossing_point(one.N, one.full_mean, one.conv_mean)


def test_the_rows_around_a_crossing_bracket_it_and_never_reach_n_plus_one():
    rows = toy.rows_around(T, 122, factor=2, count=11)
    assert rows[0] == 61 and rows[-1] == 244 and len(rows) == 11
    near = toy.rows_around(T, 36, factor=2, count=11)
    assert near[0] == T.n + 3 and np.all(np.diff(near) > 0)
    with pytest.raises(ValueError, match="factor > 1"):
        toy.rows_around(T, 122, factor=1)


@pytest.mark.parametrize("betas", [[0.3, 0.0], [-0.1], [np.inf], [np.nan], [], [[0.1, 0.2]], ["a lot"], 0.3])
def test_drifts_that_are_not_positive_finite_1d_numbers_are_rejected(betas):
    with pytest.raises(ValueError, match="beta"):
        toy.crossover_rows_for(T, betas)
    with pytest.raises(ValueError, match="beta"):
        toy.simulate_crossings(T, betas, reps=2, count=3)
