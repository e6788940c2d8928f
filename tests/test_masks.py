"""Local attention masks: the convolution's neighbourhood, written as which token may see which."""

import itertools

import numpy as np
import pytest

from vitbias.masks import allowed_pairs, grid_local_mask

GRIDS = [(1, 1), (3, 5), (5, 3), (4, 4), (2, 7)]


def brute_force_mask(H_p, W_p, radius, n_prefix):
    """The definition, one pair of tokens at a time."""
    N = n_prefix + H_p * W_p
    mask = np.zeros((N, N), dtype=bool)
    for q, k in itertools.product(range(N), repeat=2):
        if q < n_prefix or k < n_prefix:
            mask[q, k] = True
            continue
        (rq, cq), (rk, ck) = divmod(q - n_prefix, W_p), divmod(k - n_prefix, W_p)
        mask[q, k] = max(abs(rq - rk), abs(cq - ck)) <= radius
    return mask


@pytest.mark.parametrize("H_p, W_p", GRIDS)
@pytest.mark.parametrize("radius", [0, 1, 2, 5])
@pytest.mark.parametrize("n_prefix", [0, 1, 2])
def test_the_mask_is_the_chebyshev_window_with_the_prefix_seeing_and_seen_by_all(H_p, W_p, radius, n_prefix):
    mask = grid_local_mask(H_p, W_p, radius, n_prefix)
    assert mask.dtype == bool and mask.shape == (n_prefix + H_p * W_p,) * 2
    np.testing.assert_array_equal(mask, brute_force_mask(H_p, W_p, radius, n_prefix))


@pytest.mark.parametrize("H_p, W_p", GRIDS)
@pytest.mark.parametrize("n_prefix", [0, 1, 3])
def test_a_radius_that_spans_the_grid_allows_every_pair(H_p, W_p, n_prefix):
    assert grid_local_mask(H_p, W_p, max(H_p, W_p) - 1, n_prefix).all()
    assert grid_local_mask(H_p, W_p, max(H_p, W_p) + 4, n_prefix).all()


@pytest.mark.parametrize("H_p, W_p", GRIDS)
def test_radius_zero_lets_each_patch_see_itself_and_the_prefix_only(H_p, W_p):
    mask = grid_local_mask(H_p, W_p, 0, n_prefix=2)
    np.testing.assert_array_equal(mask[2:, 2:], np.eye(H_p * W_p, dtype=bool))
    assert mask[:2].all() and mask[:, :2].all()


@pytest.mark.parametrize("H_p, W_p", GRIDS)
@pytest.mark.parametrize("radius", [0, 1, 3])
def test_the_mask_is_symmetric(H_p, W_p, radius):
    mask = grid_local_mask(H_p, W_p, radius)
    np.testing.assert_array_equal(mask, mask.T)


@pytest.mark.parametrize("H_p, W_p", GRIDS + [(14, 14), (8, 3)])
@pytest.mark.parametrize("radius", [0, 1, 2, 3, 20])
@pytest.mark.parametrize("n_prefix", [0, 1, 4])
def test_the_number_of_allowed_pairs_equals_its_closed_form(H_p, W_p, radius, n_prefix):
    assert grid_local_mask(H_p, W_p, radius, n_prefix).sum() == allowed_pairs(H_p, W_p, radius, n_prefix)


def test_an_interior_patch_sees_a_full_window_of_two_r_plus_one_squared():
    mask = grid_local_mask(9, 9, 2, n_prefix=0)
    assert mask[4 * 9 + 4].sum() == 25


@pytest.mark.parametrize("args", [(0, 4, 1), (4, 0, 1), (4, 4, -1), (4, 4, 1, -1), (4.0, 4, 1), (4, 4, 1.5),
                                  (4, 4, True), (4, 4, 1, None)])
def test_bad_grids_radii_and_prefix_counts_are_refused(args):
    with pytest.raises(ValueError):
        grid_local_mask(*args)
    with pytest.raises(ValueError):
        allowed_pairs(*args)
