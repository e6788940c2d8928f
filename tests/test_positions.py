"""Resizing a learned position table, and 2-D rotary positions."""

from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from timm.layers import resample_abs_pos_embed
from timm.layers.pos_embed_sincos import apply_rot_embed, build_rotary_pos_embed

from vitbias import geometry, positions


@pytest.mark.parametrize("new, old", [(24, 14), (14, 24), (7, 7), (5, 2), (3, 8)])
def test_the_interpolation_matrix_is_torchs_bilinear_resampling(new, old):
    basis = torch.eye(old, dtype=torch.float64).reshape(old, 1, old, 1)  # each old index alone
    resampled = F.interpolate(basis, size=(new, 1), mode="bilinear", align_corners=False)
    expected = resampled.reshape(old, new).T.numpy()
    np.testing.assert_allclose(positions.interpolation_matrix(new, old), expected, rtol=0, atol=1e-14)


def test_rows_of_the_interpolation_matrix_sum_to_one():
    np.testing.assert_allclose(positions.interpolation_matrix(24, 14).sum(axis=1), 1.0, rtol=0, atol=1e-15)


@pytest.mark.parametrize("old, new, prefix, antialias", [
    (14, 24, 1, True), (14, 24, 5, True), (24, 14, 1, False), (14, 14, 1, True), (7, 10, 0, True),
])
def test_resizing_matches_timms_resample_abs_pos_embed_in_bilinear_mode(old, new, prefix, antialias):
    table = torch.randn(1, prefix + old * old, 32, generator=torch.Generator().manual_seed(0))
    ours = positions.resize_position_table(table, old, new, num_prefix_tokens=prefix)
    theirs = resample_abs_pos_embed(table, (new, new), (old, old), num_prefix_tokens=prefix,
                                    interpolation="bilinear", antialias=antialias)
    assert ours.shape == (1, prefix + new * new, 32)
    torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-5)
    assert torch.equal(ours[:, :prefix], table[:, :prefix])


@pytest.mark.parametrize("new, old", [(24, 14), (14, 24), (7, 7), (5, 2), (3, 8)])
def test_old_coordinates_are_evenly_spaced_and_symmetric_about_the_old_grids_centre(new, old):
    x = positions.old_coordinates(new, old)
    np.testing.assert_allclose(np.diff(x), old / new, rtol=1e-14)
    np.testing.assert_allclose(x + x[::-1], old - 1, rtol=0, atol=1e-13)


def test_the_bilinear_sources_read_the_old_coordinate_wherever_it_lies_inside_the_grid():
    x = positions.old_coordinates(24, 14)
    lower, upper, t = positions.bilinear_sources(24, 14)
    inside = (x >= 0) & (x <= 13)
    assert inside.sum() == 22   # the outer new cell on each side is clamped to the edge
    np.testing.assert_allclose((lower + t)[inside], x[inside], rtol=0, atol=1e-14)
    # new index 6 sits at old coordinate 3 + 7/24 exactly, index 10 at 5 + 5/8
    assert Fraction(x[6]).limit_denominator(1000) == 3 + Fraction(7, 24)
    assert Fraction(x[10]).limit_denominator(1000) == 5 + Fraction(5, 8)


def test_new_row_6_column_10_of_a_14_to_24_resize_averages_four_cells_with_weights_27_44_11_18():
    rows, cols, weights = positions.four_weights(6, 10, old_grid=14, new_grid=24)
    assert rows == (3, 4) and cols == (5, 6)
    # row 6 sits at old row 3 + 7/24, column 10 at old column 5 + 5/8
    exact = np.outer([1 - Fraction(7, 24), Fraction(7, 24)], [1 - Fraction(5, 8), Fraction(5, 8)])
    np.testing.assert_allclose(weights, exact.astype(float), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(np.round(weights, 2), [[0.27, 0.44], [0.11, 0.18]])


def test_the_four_weights_are_the_entries_of_the_resize():
    table = torch.randn(1, 1 + 14 * 14, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    resized = positions.resize_position_table(table, 14, 24)
    (r0, r1), (c0, c1), w = positions.four_weights(6, 10, 14, 24)
    grid = table[0, 1:].reshape(14, 14, 3)
    expected = (w[0, 0] * grid[r0, c0] + w[0, 1] * grid[r0, c1] + w[1, 0] * grid[r1, c0]
                + w[1, 1] * grid[r1, c1])
    torch.testing.assert_close(resized[0, 1 + 6 * 24 + 10], expected, rtol=0, atol=1e-14)


def test_2d_rope_matches_timms_axial_rotary_embedding():
    rows, cols = geometry.grid_coordinates((6, 5)).T
    x = torch.randn(2, 3, 30, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    sin, cos = build_rotary_pos_embed([6, 5], dim=16, in_pixels=False, temperature=100.0,
                                      dtype=torch.float64)
    # timm forms its frequencies in float32, so the two agree to float32 rounding
    torch.testing.assert_close(positions.apply_rope_2d(x, rows, cols, base=100.0),
                               apply_rot_embed(x, sin, cos), rtol=0, atol=1e-6)


def test_2d_rope_scores_depend_only_on_the_offset_between_patches():
    rows, cols = geometry.grid_coordinates((7, 7)).T
    q = torch.randn(49, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    k = torch.randn(49, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    # Same contents, every patch moved by (3, -2): every score is unchanged.
    torch.testing.assert_close(positions.rope_scores(q, k, rows + 3, cols - 2),
                               positions.rope_scores(q, k, rows, cols), rtol=0, atol=1e-12)
    # One query and one key vector at every place: the score is a function of the offset.
    same_q, same_k = q[:1].expand(49, 8), k[:1].expand(49, 8)
    scores = positions.rope_scores(same_q, same_k, rows, cols).numpy()
    offsets = (rows[None, :] - rows[:, None]) * 100 + (cols[None, :] - cols[:, None])
    for offset in np.unique(offsets):
        values = scores[offsets == offset]
        assert np.ptp(values) < 1e-12
    assert positions.spread_by_offset(scores, rows, cols) < 1e-12


def test_spread_by_offset_sees_a_score_that_depends_on_absolute_position():
    rows, cols = geometry.grid_coordinates((4, 4)).T
    relative = -np.abs((rows[None, :] - rows[:, None]) + 2.0 * (cols[None, :] - cols[:, None]))
    assert positions.spread_by_offset(relative, rows, cols) == 0.0
    absolute = relative + 0.5 * rows[:, None]  # the query's own row matters
    assert positions.spread_by_offset(absolute, rows, cols) == pytest.approx(0.5 * 3)


def test_2d_rope_is_a_rotation_rows_in_the_first_half_columns_in_the_second():
    x = torch.randn(10, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    rows, cols = np.arange(10), np.zeros(10, dtype=int)
    rotated = positions.apply_rope_2d(x, rows, cols)
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1), rtol=0, atol=1e-12)
    assert torch.equal(rotated[:, 8:], x[:, 8:])  # column 0 everywhere: the second half is untouched
    assert torch.equal(positions.apply_rope_2d(x, cols, rows)[:, :8], x[:, :8])


def test_bad_inputs_raise_value_errors():
    with pytest.raises(ValueError, match="shape \\(1, 197, d\\)"):
        positions.resize_position_table(torch.zeros(1, 196, 8), 14, 24)
    with pytest.raises(ValueError, match="row"):
        positions.four_weights(24, 0, 14, 24)
    with pytest.raises(ValueError, match="divisible by 4"):
        positions.rope_frequencies(6)
    with pytest.raises(ValueError, match="coordinates"):
        positions.apply_rope_2d(torch.zeros(5, 8), np.arange(4), np.arange(4))
    with pytest.raises(ValueError, match="equal length"):
        positions.rope_angles(np.arange(3), np.arange(4), 8)
    with pytest.raises(ValueError, match="new_size"):
        positions.interpolation_matrix(0, 14)
    with pytest.raises(ValueError, match="old_size"):
        positions.old_coordinates(24, 0)
    with pytest.raises(ValueError, match="scores"):
        positions.spread_by_offset(np.zeros((3, 4)), np.arange(3), np.arange(3))
