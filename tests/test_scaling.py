"""Power-law fits of learning curves and their crossings."""

import math

import numpy as np
import pytest

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


def test_a_difference_is_resolved_only_beyond_z_standard_errors():
    a = [1.0, 2.0, 3.0]  # mean 2, sd 1: standard error 1 / sqrt(3)
    assert scaling.resolved(a, 2.0 + 2.1 / np.sqrt(3))
    assert not scaling.resolved(a, 2.0 + 1.9 / np.sqrt(3))
    b = [4.0, 5.0, 6.0]  # the standard error of the difference is sqrt(2 / 3)
    assert scaling.resolved(a, b, z=2.0) == (3.0 > 2.0 * np.sqrt(2 / 3))
    assert not scaling.resolved(a, b, z=4.0)
    with pytest.raises(ValueError, match="at least two"):
        scaling.resolved([1.0], 2.0)
