"""Compute to match on a frontier, checked on a hand-made table."""

import numpy as np
import pytest

from vitbias.crossover import Match, compute_to_match, frontier

COMPUTE = [8.0, 1.0, 2.0, 4.0, 16.0]
ACCURACY = [30.0, 10.0, 9.0, 20.0, 25.0]


def test_the_frontier_keeps_the_points_that_beat_every_cheaper_one():
    # (2, 9) loses to the cheaper (1, 10); (16, 25) loses to the cheaper (8, 30)
    assert frontier(COMPUTE, ACCURACY).tolist() == [1, 3, 0]


def test_ties_in_compute_keep_only_the_more_accurate_point():
    assert frontier([1.0, 1.0, 2.0], [5.0, 6.0, 7.0]).tolist() == [1, 2]


def test_interpolation_is_linear_in_log_compute():
    # halfway between (1, 10) and (4, 20) in accuracy is the geometric mean of 1 and 4
    assert compute_to_match(15.0, COMPUTE, ACCURACY) == Match(pytest.approx(2.0, rel=1e-12), True)
    # a quarter of the way from (4, 20) to (8, 30)
    match = compute_to_match(22.5, COMPUTE, ACCURACY)
    assert match.exact and match.compute == pytest.approx(4.0 * 2.0**0.25, rel=1e-12)
    # frontier points are matched exactly by themselves
    assert compute_to_match(20.0, COMPUTE, ACCURACY).compute == pytest.approx(4.0, rel=1e-12)
    assert compute_to_match(30.0, COMPUTE, ACCURACY).compute == pytest.approx(8.0, rel=1e-12)


def test_a_target_below_the_cheapest_frontier_point_gets_an_upper_bound():
    assert compute_to_match(5.0, COMPUTE, ACCURACY) == Match(1.0, False)
    assert compute_to_match(10.0, COMPUTE, ACCURACY) == Match(1.0, True)


def test_a_target_above_the_frontier_has_no_answer():
    with pytest.raises(ValueError, match="no point on the frontier reaches 31"):
        compute_to_match(31.0, COMPUTE, ACCURACY)


@pytest.mark.parametrize("compute, accuracy", [
    ([1.0, 2.0], [1.0]),
    ([], []),
    ([0.0, 1.0], [1.0, 2.0]),
    ([[1.0, 2.0]], [[1.0, 2.0]]),
    ([1.0, np.nan], [1.0, 2.0]),
])
def test_bad_tables_are_rejected(compute, accuracy):
    with pytest.raises(ValueError):
        frontier(compute, accuracy)
    with pytest.raises(ValueError):
        compute_to_match(1.0, compute, accuracy)
