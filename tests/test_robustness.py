"""Specifications of vitbias.robustness: the shape-bias count, occlusion masks and fills, PGD."""

import numpy as np
import pytest
import torch
from torch import nn

from vitbias import data, robustness
from vitbias.train import evaluate


def test_the_sources_six_trials_give_three_shape_against_two_texture_decisions():
    trials = robustness.SIX_TRIALS
    count = robustness.decisions(trials["prediction"], trials["shape"], trials["texture"])
    assert count == {"shape": 3, "texture": 2, "neither": 1, "excluded": 0}
    assert robustness.shape_bias(trials["prediction"], trials["shape"], trials["texture"]) == 3 / 5


def test_shape_bias_counts_by_hand():
    shape = [0, 1, 2, 3, 4, 5, 6]
    texture = [1, 2, 3, 3, 5, 6, 0]
    answer = [0, 2, 2, 3, 9, 5, 0]
    # trial 3 is excluded (same class), trial 4 names neither:
    # shape decisions at 0, 2, 5; texture decisions at 1, 6.
    assert robustness.decisions(answer, shape, texture) == {"shape": 3, "texture": 2, "neither": 1,
                                                            "excluded": 1}
    assert robustness.shape_bias(answer, shape, texture) == 0.6


def test_a_trial_whose_cues_agree_never_counts_whatever_the_answer():
    assert robustness.shape_bias([1, 0], [1, 0], [1, 5]) == 1.0
    assert robustness.shape_bias([1, 5], [1, 0], [1, 5]) == 0.0


@pytest.mark.parametrize("arguments", [
    ([0, 1], [0, 1, 2], [1, 2, 0]),        # lengths differ
    ([3, 3], [0, 1], [1, 2]),              # neither cue named anywhere
    ([0, 1], [0, 1], [0, 1]),              # every trial excluded
    ([[0]], [[0]], [[1]]),                 # not one-dimensional
])
def test_shape_bias_refuses_what_it_cannot_count(arguments):
    with pytest.raises(ValueError):
        robustness.shape_bias(*arguments)


@pytest.mark.parametrize("fraction", [0.0, 0.25, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("offset", [0, 4])
def test_the_mask_blanks_round_fraction_times_cells_whole_squares(fraction, offset):
    mask = robustness.occlusion_mask(20, 32, 32, fraction, 8, offset=offset, seed=3)
    assert mask.shape == (20, 32, 32)
    assert np.all(mask.sum(axis=(1, 2)) == round(fraction * 16) * 64)


def test_the_aligned_mask_is_a_union_of_grid_cells_and_the_offset_mask_is_it_rolled():
    aligned = robustness.occlusion_mask(30, 32, 32, 0.5, 8, seed=1)
    cells = aligned.reshape(30, 4, 8, 4, 8)
    assert np.all(cells.all(axis=(2, 4)) == cells.any(axis=(2, 4)))  # each cell all or nothing
    shifted = robustness.occlusion_mask(30, 32, 32, 0.5, 8, offset=4, seed=1)
    assert np.array_equal(shifted, np.roll(aligned, (4, 4), axis=(1, 2)))


def test_one_square_moved_by_half_a_patch_covers_a_quarter_of_four_patches():
    shifted = robustness.occlusion_mask(30, 32, 32, 1 / 16, 8, offset=4, seed=1)
    per_patch = shifted.reshape(30, 4, 8, 4, 8).sum(axis=(2, 4))
    assert np.all(np.sort(per_patch.reshape(30, -1), axis=1)[:, -4:] == 16)
    assert np.all(per_patch.sum(axis=(1, 2)) == 64)


def test_the_masks_differ_between_images_and_repeat_with_the_seed():
    first = robustness.occlusion_mask(50, 32, 32, 0.5, 8, seed=0)
    assert not all(np.array_equal(first[0], m) for m in first[1:])
    assert np.array_equal(first, robustness.occlusion_mask(50, 32, 32, 0.5, 8, seed=0))


@pytest.mark.parametrize("kwargs", [dict(fraction=-0.1), dict(fraction=1.5), dict(patch=5), dict(patch=0),
                                    dict(offset=8), dict(offset=-1), dict(offset=1.5)])
def test_occlusion_mask_refuses_bad_arguments(kwargs):
    arguments = dict(fraction=0.5, patch=8, offset=0) | kwargs
    with pytest.raises(ValueError):
        robustness.occlusion_mask(2, 32, 32, arguments.pop("fraction"), arguments.pop("patch"), **arguments)


@pytest.fixture(scope="module")
def images():
    return data.shapes(40, seed=0, split="test")


def test_zero_fill_blacks_out_the_masked_pixels_and_leaves_the_rest(images):
    out = robustness.occlude(images, 0.5, 8, fill="zero", seed=2).images
    mask = robustness.occlusion_mask(len(images), 32, 32, 0.5, 8, seed=2)[:, None]
    assert np.all(out[np.broadcast_to(mask, out.shape)] == 0)
    assert np.array_equal(out[np.broadcast_to(~mask, out.shape)],
                          images.images[np.broadcast_to(~mask, out.shape)])


def test_mean_fill_paints_each_image_its_own_mean_colour(images):
    out = robustness.occlude(images, 1.0, 8, fill="mean").images
    expected = np.round(images.images.mean(axis=(2, 3))).astype(np.uint8)
    assert np.array_equal(out[:, :, 0, 0], expected)
    assert np.all(out == out[:, :, :1, :1])


def test_noise_fill_is_not_constant_and_occlude_refuses_an_unknown_fill(images):
    out = robustness.occlude(images, 1.0, 8, fill="noise").images
    assert out.std() > 50
    with pytest.raises(ValueError):
        robustness.occlude(images, 0.5, 8, fill="blur")


class _Linear(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.head = nn.Linear(3 * 32 * 32, 10)

    def forward(self, x):
        return self.head(x.flatten(1))


def test_pgd_with_zero_radius_is_the_clean_accuracy(images):
    model = _Linear()
    assert robustness.pgd_accuracy(model, images, 0.0, steps=3) == evaluate(model, images)["accuracy"]


def test_pgd_images_stay_in_the_ball_and_in_range_and_lower_the_accuracy(images):
    model = _Linear()
    epsilon = 4 / 255
    attacked = robustness.pgd_attack(model, images, epsilon, steps=3)
    clean = images.images / 255.0
    assert np.all(np.abs(attacked - clean) <= epsilon + 1e-6)
    assert attacked.min() >= 0.0 and attacked.max() <= 1.0
    # a linear model's loss rises along the gradient's sign: the attack finds what it should
    labels = torch.from_numpy(images.labels)
    mean = torch.tensor(images.mean).view(1, 3, 1, 1)
    std = torch.tensor(images.std).view(1, 3, 1, 1)
    loss = [torch.nn.functional.cross_entropy(model((torch.tensor(p, dtype=torch.float32) - mean) / std),
                                              labels).item() for p in (clean, attacked)]
    assert loss[1] > loss[0]


@pytest.mark.parametrize("kwargs", [dict(epsilon=-0.1), dict(steps=0), dict(steps=1.5), dict(step_size=-1.0)])
def test_pgd_refuses_bad_arguments(images, kwargs):
    arguments = dict(epsilon=0.01, steps=2) | kwargs
    with pytest.raises(ValueError):
        robustness.pgd_attack(_Linear(), images, **arguments)


def test_the_share_kept_is_the_perturbed_accuracy_over_the_clean_one_seed_by_seed():
    assert robustness.retained([0.4, 0.3], [0.8, 0.6]).tolist() == [0.5, 0.5]
    assert robustness.retained(0.9, 0.9) == 1.0


def test_against_chance_a_model_that_falls_to_guessing_keeps_nothing_and_below_it_less():
    assert robustness.retained([0.55, 0.1, 0.05], [1.0, 0.6, 0.6], chance=0.1) == pytest.approx([0.5, 0.0, -0.1])
    assert robustness.retained(0.9, 0.9, chance=0.1) == 1.0
    with pytest.raises(ValueError, match="above chance"):
        robustness.retained([0.1], [0.1], chance=0.1)
    with pytest.raises(ValueError, match="chance must"):
        robustness.retained([0.1], [0.5], chance=1.0)


@pytest.mark.parametrize("perturbed, clean, match", [
    ([0.4, 0.3], [0.8], "one shape"),
    ([0.4], [0.0], r"\[0, 1\]"),
    ([1.2], [0.8], r"\[0, 1\]"),
])
def test_bad_accuracies_for_the_share_kept_are_refused(perturbed, clean, match):
    with pytest.raises(ValueError, match=match):
        robustness.retained(perturbed, clean)


def test_the_matched_size_is_the_one_whose_mean_accuracy_is_nearest_the_target():
    by_size = {50: [0.25, 0.25], 300: [0.75, 0.75], 125: [0.5, 0.5]}
    assert robustness.nearest_size(0.7, by_size) == 300
    assert robustness.nearest_size(0.625, by_size) == 125       # 0.125 from 0.5 and from 0.75: the smaller size
    assert robustness.nearest_size(0.0, by_size) == 50


def test_a_match_needs_sizes_and_an_accuracy():
    with pytest.raises(ValueError, match="no sizes"):
        robustness.nearest_size(0.5, {})
    with pytest.raises(ValueError, match="target"):
        robustness.nearest_size(1.5, {50: [0.2]})
