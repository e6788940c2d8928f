"""Power-law fits of learning curves and their crossings."""

import math

import numpy as np
import pytest
from scipy import stats

from vitbias import scaling

SIZES = [100, 250, 600, 1600, 4000]


def test_a_power_law_is_recovered_exactly_from_its_own_values():
    errors = 3.0 * np.asarray(SIZES, dtype=float) ** -0.4
    fit = scaling.power_law(SIZES, errors)
    assert fit.exponent == pytest.approx(0.4, rel=1e-12)
    assert fit.scale == pytest.approx(3.0, rel=1e-12)
    np.testing.assert_allclose(fit(SIZES), errors, rtol=1e-12)
    assert fit.used == tuple(SIZES)


def test_errors_below_the_test_sets_resolution_are_left_out_and_reported():
    errors = [0.5, 0.2, 0.05, 0.0, 0.0]
    fit = scaling.power_law(SIZES, errors, resolution=1 / 2000)
    assert fit.used == (100, 250, 600)
    slope = np.polyfit(np.log(SIZES[:3]), np.log(errors[:3]), 1)[0]
    assert fit.exponent == pytest.approx(-slope, rel=1e-12)


def test_a_flat_curve_has_exponent_zero():
    assert scaling.power_law(SIZES, [0.3] * 5).exponent == pytest.approx(0.0, abs=1e-12)


def test_two_laws_cross_where_their_errors_are_equal():
    steep = scaling.PowerLaw(0.8, 20.0, ())
    shallow = scaling.PowerLaw(0.2, 1.0, ())
    n = scaling.crossing(steep, shallow)
    assert steep(n) == pytest.approx(shallow(n), rel=1e-12)
    assert n == pytest.approx(20.0 ** (1 / 0.6), rel=1e-12)
    assert scaling.crossing(scaling.PowerLaw(0.5, 2.0, ()), scaling.PowerLaw(0.5, 1.0, ())) == math.inf


def test_a_measured_crossing_is_interpolated_in_log_size_between_the_bracketing_sizes():
    first, second = [0.2, 0.3, 0.5], [0.4, 0.4, 0.4]
    n = scaling.measured_crossing([100, 1000, 10000], first, second)
    assert n == pytest.approx(10 ** 3.5, rel=1e-12)  # the gap -0.1 -> +0.1 changes sign half-way
    assert scaling.measured_crossing([100, 1000], [0.1, 0.2], [0.3, 0.4]) is None
    assert scaling.measured_crossing([100, 1000], [0.3, 0.2], [0.3, 0.4]) == 100.0


@pytest.mark.parametrize("sizes, errors, match", [
    ([100], [0.5], "length"),
    ([100, 50], [0.5, 0.4], "increasing"),
    ([100, 200], [0.5, 1.5], r"\[0, 1\]"),
    ([100, 200, 400], [0.5, 0.0, 0.0], "two errors"),
    ([100, 200], [0.5, float("nan")], "finite"),
])
def test_bad_curves_are_refused(sizes, errors, match):
    with pytest.raises(ValueError, match=match):
        scaling.power_law(sizes, errors)


def test_identical_laws_have_no_single_crossing():
    with pytest.raises(ValueError, match="same"):
        scaling.crossing(scaling.PowerLaw(0.5, 1.0, ()), scaling.PowerLaw(0.5, 1.0, ()))


def test_a_one_sample_difference_is_resolved_beyond_the_t_quantile_of_its_degrees_of_freedom():
    a = [1.0, 2.0, 3.0]  # mean 2, sd 1: standard error 1 / sqrt(3), 2 degrees of freedom
    t_crit = stats.t.ppf(0.975, 2)  # 4.30: three seeds need far more than two standard errors
    assert scaling.resolved(a, 2.0 + 1.01 * t_crit / np.sqrt(3))
    assert not scaling.resolved(a, 2.0 + 0.99 * t_crit / np.sqrt(3))
    assert not scaling.resolved(a, 2.0 + 2.1 / np.sqrt(3))  # what a z test at 2 called resolved


def test_two_samples_are_compared_with_welchs_test_as_scipy_computes_it():
    rng = np.random.default_rng(0)
    for _ in range(200):
        a = rng.normal(0, rng.uniform(0.1, 2), rng.integers(2, 6))
        b = rng.normal(rng.uniform(-3, 3), rng.uniform(0.1, 2), rng.integers(2, 6))
        expected = stats.ttest_ind(a, b, equal_var=False).pvalue < 0.05
        assert scaling.resolved(a, b) == expected
        assert scaling.resolved(a, b, alpha=0.2) == (stats.ttest_ind(a, b, equal_var=False).pvalue < 0.2)


def test_samples_without_spread_differ_exactly_when_their_means_do():
    assert scaling.resolved([1.0, 1.0, 1.0], [0.5, 0.5, 0.5])
    assert not scaling.resolved([1.0, 1.0, 1.0], [1.0, 1.0])
    assert not scaling.resolved([1.0, 1.0, 1.0], 1.0)


def test_equivalence_needs_the_confidence_interval_of_the_difference_inside_the_margin():
    a, b = [1.0, 2.0, 3.0], [1.5, 2.5, 3.5]  # difference -0.5, standard error sqrt(2/3), df 4
    half = stats.t.ppf(0.95, 4) * np.sqrt(2 / 3)
    assert scaling.equivalent(a, b, margin=0.5 + half + 1e-9)
    assert not scaling.equivalent(a, b, margin=0.5 + half - 1e-9)
    assert scaling.equivalent([1.0, 1.0], [1.0, 1.0, 1.0], margin=1e-6)


def test_paired_equivalence_is_the_two_one_sided_one_sample_t_tests_of_the_differences():
    a, b = np.array([0.80, 0.90, 0.70, 0.85]), np.array([0.79, 0.92, 0.69, 0.83])
    d = a - b
    for margin in (0.01, 0.02, 0.03, 0.05):
        above = stats.ttest_1samp(d, -margin, alternative="greater").pvalue
        below = stats.ttest_1samp(d, margin, alternative="less").pvalue
        assert scaling.equivalent(a, b, margin, paired=True) == (max(above, below) < 0.05)
    assert scaling.equivalent(a, b, 0.05, paired=True) and not scaling.equivalent(a, b, 0.01, paired=True)


def test_pairing_shows_an_equality_that_the_seeds_shared_spread_hides_from_welchs_test():
    seeds = np.array([0.60, 0.75, 0.90])  # one seed's luck, shared by both of its scores
    own, other = seeds, seeds + np.array([0.004, -0.003, 0.001])
    assert scaling.equivalent(other, own, 0.05, paired=True)
    assert not scaling.equivalent(other, own, 0.05)
    with pytest.raises(ValueError, match="same length"):
        scaling.equivalent(own, own[:2], 0.05, paired=True)


def test_equal_samples_are_equivalent_but_a_small_sample_cannot_show_a_tight_equivalence():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 3), rng.normal(0, 1, 3)
    assert not scaling.equivalent(a, b, margin=0.5)  # three seeds cannot pin a difference to half an sd
    assert not scaling.resolved(a, a + 1e-3)
    assert scaling.equivalent(a, a, margin=10.0)


@pytest.mark.parametrize("call, match", [
    (lambda: scaling.resolved([1.0], 2.0), "at least two"),
    (lambda: scaling.resolved([1.0, float("nan")], 2.0), "finite"),
    (lambda: scaling.resolved([1.0, 2.0], 2.0, alpha=1.5), "alpha"),
    (lambda: scaling.equivalent([1.0, 2.0], 2.0, margin=0.0), "margin"),
    (lambda: scaling.equivalent([1.0, 2.0], [[2.0]], margin=1.0), "sample"),
])
def test_bad_samples_and_levels_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_a_curve_passes_another_for_good_at_the_last_change_of_order():
    first = [0.5, 0.4, 0.6, 0.7, 0.8]
    second = [0.4, 0.5, 0.5, 0.75, 0.9]          # above, below, then above for good from between 600 and 1600
    where, size = scaling.overtaking(SIZES, first, second)
    assert where == "inside"
    assert size == pytest.approx(scaling.measured_crossing(SIZES[2:4], first[2:4], second[2:4]), rel=1e-12)
    assert 600 < size < 1600


def test_a_curve_above_everywhere_passed_before_and_one_below_at_the_end_passes_beyond():
    assert scaling.overtaking(SIZES, [0.1] * 5, [0.2] * 5) == ("before", None)
    assert scaling.overtaking(SIZES, [0.1, 0.1, 0.1, 0.1, 0.3], [0.2] * 5) == ("beyond", None)
    assert scaling.overtaking(SIZES, [0.2] * 5, [0.2] * 5) == ("beyond", None)   # level is not above


def test_curves_without_seed_spread_are_overtaken_where_their_means_are_in_every_draw():
    first = np.array([0.5, 0.6, 0.7, 0.8, 0.9])[:, None].repeat(3, axis=1)
    second = np.array([0.3, 0.5, 0.75, 0.9, 0.95])[:, None].repeat(3, axis=1)
    spread = scaling.overtaking_spread(SIZES, first, second, draws=50)
    expected = scaling.overtaking(SIZES, first[:, 0], second[:, 0])[1]
    assert spread.where == "inside" and spread.size == pytest.approx(expected, rel=1e-12)
    assert spread.shares == {"before": 0.0, "inside": 1.0, "beyond": 0.0}
    assert spread.low == pytest.approx(expected, rel=1e-12) and spread.high == pytest.approx(expected, rel=1e-12)


def test_a_curve_far_below_is_passed_beyond_the_sizes_in_every_draw():
    rng = np.random.default_rng(0)
    first = 0.9 + 0.01 * rng.standard_normal((5, 3))
    second = 0.3 + 0.01 * rng.standard_normal((5, 3))
    spread = scaling.overtaking_spread(SIZES, first, second, draws=200)
    assert (spread.where, spread.size) == ("beyond", None) and spread.shares["beyond"] == 1.0
    assert math.isnan(spread.low) and math.isnan(spread.high)


def test_an_overtaking_inside_the_seeds_spread_is_found_in_some_draws_but_not_all():
    # the means change order only at the last size, by less than the seeds' spread
    first = np.array([[0.6, 0.5, 0.4]] * 4 + [[0.55, 0.45, 0.35]])
    second = np.array([[0.42, 0.4, 0.38]] * 4 + [[0.52, 0.5, 0.48]])
    spread = scaling.overtaking_spread(SIZES, first, second, draws=500)
    assert spread.where == "inside" and 0.0 < spread.shares["inside"] < 1.0
    assert sum(spread.shares.values()) == pytest.approx(1.0)
    assert SIZES[0] <= spread.low <= spread.size <= spread.high <= SIZES[-1]


def test_the_bootstrap_is_fixed_by_its_seed():
    rng = np.random.default_rng(1)
    first, second = rng.random((5, 3)), rng.random((5, 3))
    assert scaling.overtaking_spread(SIZES, first, second, seed=3) == scaling.overtaking_spread(
        SIZES, first, second, seed=3)


@pytest.mark.parametrize("first, second, draws, match", [
    (np.zeros((4, 3)), np.zeros((5, 3)), 10, "shape"),
    (np.zeros(5), np.zeros((5, 3)), 10, "shape"),
    (np.zeros((5, 1)), np.zeros((5, 3)), 10, "two seeds"),
    (np.zeros((5, 3)), np.zeros((5, 3)), 0, "draws"),
])
def test_bad_bootstrap_inputs_are_refused(first, second, draws, match):
    with pytest.raises(ValueError, match=match):
        scaling.overtaking_spread(SIZES, first, second, draws=draws)


def test_ladder_winners_are_the_worlds_whose_cnn_falls_below_the_vits_one_accuracy():
    cnn = {"plain": 0.95, "patches shuffled": 0.6, "+ pixels in 2 x 2 blocks": 0.8, "+ pixels in 4 x 4 blocks": 0.5}
    assert scaling.ladder_winners(cnn, 0.7) == ["patches shuffled", "+ pixels in 4 x 4 blocks"]
    assert scaling.ladder_winners(cnn, 0.6) == ["+ pixels in 4 x 4 blocks"]      # a tie is no win
    assert scaling.ladder_winners(cnn, 0.99) == list(cnn)
    with pytest.raises(ValueError, match="map the ladder"):
        scaling.ladder_winners([0.9, 0.5], 0.7)
    with pytest.raises(ValueError, match="finite"):
        scaling.ladder_winners({"plain": float("nan")}, 0.7)


def test_the_paired_t_test_is_scipys_ttest_rel():
    rng = np.random.default_rng(0)
    for n in (3, 5, 8):
        first, second = rng.normal(0.6, 0.05, n), rng.normal(0.55, 0.05, n)
        mean, p = scaling.paired_t(first, second)
        expected = stats.ttest_rel(first, second)
        assert mean == pytest.approx(np.mean(first - second), abs=1e-12)
        assert p == pytest.approx(expected.pvalue, rel=1e-10)


def test_pairing_resolves_a_consistent_difference_that_welchs_test_on_the_same_numbers_cannot():
    # Three seeds that differ a lot from each other, each 0.02 better on the first quantity.
    second = np.array([0.40, 0.60, 0.80])
    first = second + np.array([0.019, 0.020, 0.021])
    assert scaling.resolved_paired(first, second)
    assert not scaling.resolved(first, second)


def test_paired_differences_without_spread_differ_exactly_when_their_mean_is_not_zero():
    assert scaling.paired_t([0.5, 0.6], [0.4, 0.5])[1] == 0.0
    assert scaling.paired_t([0.5, 0.6], [0.5, 0.6])[1] == 1.0


def test_the_exact_sign_flip_test_is_scipys_exact_permutation_test_on_paired_samples():
    rng = np.random.default_rng(1)
    for n in (3, 5, 7):
        first, second = rng.normal(0.6, 0.05, n), rng.normal(0.58, 0.05, n)
        expected = stats.permutation_test((first, second), lambda x, y: np.mean(x - y), vectorized=False,
                                          permutation_type="samples", n_resamples=np.inf)
        assert scaling.sign_flip_p(first, second) == pytest.approx(expected.pvalue, rel=1e-12)


def test_three_seeds_can_never_resolve_a_difference_at_five_percent_by_sign_flips_and_five_can_barely_not():
    assert scaling.smallest_sign_flip_p(3) == 0.25 and scaling.smallest_sign_flip_p(5) == 0.0625
    assert scaling.sign_flip_p([0.9, 0.8, 0.7], [0.1, 0.2, 0.3]) == 0.25
    assert scaling.sign_flip_p(np.ones(6), np.zeros(6)) == pytest.approx(2 / 64)


@pytest.mark.parametrize("call, match", [
    (lambda: scaling.paired_t([0.5, 0.6, 0.7], [0.5, 0.6]), "same length"),
    (lambda: scaling.paired_t([0.5], [0.4]), "at least two"),
    (lambda: scaling.sign_flip_p([0.5, np.nan], [0.4, 0.3]), "finite"),
    (lambda: scaling.resolved_paired([0.5, 0.6], [0.4, 0.5], alpha=1.5), "alpha"),
    (lambda: scaling.sign_flip_p(np.ones(21), np.zeros(21)), "too many"),
    (lambda: scaling.smallest_sign_flip_p(0), "positive integer"),
])
def test_bad_paired_samples_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("paired", [False, True])
def test_two_samples_differ_exactly_when_their_means_are_farther_apart_than_the_smallest_resolved_difference(paired):
    resolved = scaling.resolved_paired if paired else scaling.resolved
    rng = np.random.default_rng(3)
    for _ in range(20):
        first, second = rng.normal(0.5, 0.05, 3), rng.normal(0.5, 0.03, 3)
        gap = scaling.smallest_resolved_difference(first, second, paired=paired)
        centred = first - first.mean() + second.mean()  # the same spread, the same mean as second
        assert not resolved(centred + 0.999 * gap, second) and resolved(centred + 1.001 * gap, second)
        assert not resolved(centred - 0.999 * gap, second) and resolved(centred - 1.001 * gap, second)


def test_the_smallest_resolved_difference_is_the_t_quantile_times_the_standard_error():
    first, second = np.array([0.50, 0.55, 0.62]), np.array([0.40, 0.41, 0.47])
    d = first - second
    assert scaling.smallest_resolved_difference(first, second, paired=True) == pytest.approx(
        stats.t.isf(0.025, 2) * d.std(ddof=1) / math.sqrt(3), rel=1e-12)
    v1, v2 = first.var(ddof=1) / 3, second.var(ddof=1) / 3
    df = (v1 + v2) ** 2 / (v1 ** 2 / 2 + v2 ** 2 / 2)
    assert scaling.smallest_resolved_difference(first, second) == pytest.approx(
        stats.t.isf(0.025, df) * math.sqrt(v1 + v2), rel=1e-12)
    assert scaling.smallest_resolved_difference([0.3, 0.3], [0.1, 0.1]) == 0.0
    with pytest.raises(ValueError, match="alpha"):
        scaling.smallest_resolved_difference(first, second, alpha=1.5)


def test_the_smallest_equivalence_margin_is_where_the_two_one_sided_tests_start_to_show_agreement():
    rng = np.random.default_rng(3)
    for paired in (False, True):
        a, b = rng.normal(0.7, 0.02, 4), rng.normal(0.72, 0.02, 4)
        shown = scaling.smallest_equivalence_margin(a, b, paired=paired)
        assert scaling.equivalent(a, b, shown * 1.0001, paired=paired)
        assert not scaling.equivalent(a, b, shown * 0.9999, paired=paired)
    assert scaling.smallest_equivalence_margin([0.5, 0.5], [0.5, 0.5]) == 0.0
