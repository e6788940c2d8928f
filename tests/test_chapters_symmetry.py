"""The symmetry chapter's evidence (``vitbias.chapters.symmetry``), on made-up and small inputs."""

import dataclasses
import functools
import types

import numpy as np
import pytest
import torch
from torch import nn

from vitbias import data, profile, symmetry
from vitbias.chapters import symmetry as chapter
from vitbias.evidence import Evidence
from vitbias.geometry import shift

PADDING = "zero padding breaks the shift only near the border and the seam"
SIGNAL = "stride 1 follows a shift by 1 and by 2, stride 2 and patches only by 2"
MODELS = ("CNN", "ViT", "ViT, relative bias")


def found():
    return Evidence("symmetry")


def padding_error_map(W=32, a=2):
    """An error map that is non-zero exactly in the bands the theorem predicts."""
    error_map = np.zeros((W, W))
    columns = {*range(a), *range(W - a, W)} | {(chapter.PADDING_SHIFT + j) % W for j in range(-a, a)}
    error_map[:, sorted(columns)] = 0.3
    return error_map


def test_multiples_marks_exactly_the_shifts_by_whole_periods():
    mask = chapter.multiples((8, 8), 4)
    assert mask.sum() == 4 and mask[0, 0] and mask[4, 4] and mask[0, 4] and not mask[2, 0]


def test_rounding_prints_a_residue_below_the_floor_as_a_bound():
    assert chapter.rounding(3e-13) == "< 1e-12" and chapter.rounding(0.25) == "0.25"
    assert chapter.rounding(2e-7, floor=1e-6) == "< 1e-06"


def test_zero_padding_columns_are_counted_exactly_and_a_stray_column_breaks_the_claim():
    x, w5 = np.zeros((3, 32, 32)), np.zeros((8, 3, 5, 5))
    evidence = found()
    chapter._padding(evidence, x, w5, padding_error_map())
    assert evidence.claims[PADDING]
    assert (evidence["sym_pad_half_width"], evidence["sym_pad_bad_columns"], evidence["sym_pad_good_columns"]) \
        == (2, 8, 24)
    stray = padding_error_map()
    stray[3, 16] = 1e-6
    evidence = found()
    chapter._padding(evidence, x, w5, stray)
    assert not evidence.claims[PADDING]


def test_the_page_short_signal_backs_the_claim_and_a_constant_one_does_not():
    signal = np.array([0, 0, 1, 4, 2, 0, 0, 0], dtype=float)[None, None, :]
    kernel = np.array([1.0, 0.0, -1.0]).reshape(1, 1, 1, 3)
    evidence = found()
    chapter._one_signal(evidence, signal, kernel)
    assert evidence.claims[SIGNAL]
    # every layer's output of a constant signal is constant, so even a shift by 1 "commutes"
    evidence = found()
    chapter._one_signal(evidence, np.ones((1, 1, 8)), kernel)
    assert not evidence.claims[SIGNAL]


def test_stacked_layers_and_resnet_strides_are_glued_exactly_and_checked():
    evidence = found()
    chapter._stacked(evidence, chapter.multiples((16, 16), 4), [2, 4, 8, 16, 32])
    assert evidence["sym_stack_commuting"] == 16 and evidence["sym_stack_shifts"] == 256
    assert evidence["sym_resnet_total_stride"] == 32 and evidence["sym_resnet_downsamplings"] == 5
    assert all(evidence.claims.values())
    one_more = chapter.multiples((16, 16), 4)
    one_more[2, 0] = True
    evidence = found()
    chapter._stacked(evidence, one_more, [2, 4, 4])
    assert not any(evidence.claims.values())


@functools.cache
def _measured(side=16, P=8):
    """The page's measurement, on a smaller random image: (x, layers, errors, commuting)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, side, side))
    layers = symmetry.measurement_layers(rng, x, patch=P)
    errors = {name: np.array([symmetry.equivariance_error(f, x, d, stride=s) for d in range(P + 1)])
              for name, (f, s) in layers.items()}
    commuting = {name: symmetry.which_shifts_commute(f, x, stride=s) for name, (f, s) in layers.items()}
    return x, layers, errors, commuting


def measured_layers():
    x, layers, errors, commuting = _measured()
    return x, dict(layers), dict(errors), dict(commuting)


def test_random_layers_show_every_zero_of_the_theorem_and_their_numbers_are_glued():
    x, layers, errors, commuting = measured_layers()
    draws = np.array([[1.1, 0.9], [1.3, 0.7]])
    evidence = found()
    measured = chapter._measurement(evidence, x, 8, layers, errors, commuting, draws)
    assert all(evidence.claims.values()), evidence.claims
    assert evidence["sym_all_shifts"] == 256 and evidence["sym_count_conv2"] == 64
    assert evidence["sym_count_patch"] == 4 and evidence["sym_draws"] == 2
    assert evidence["sym_conv2_odd_error"] == measured["conv2"][1] == errors["convolution, stride 2"][1]
    assert evidence["sym_draws_pos_min"] == 0.7 and evidence["sym_draws_conv2_max"] == 1.3


def test_a_draw_with_a_small_error_breaks_the_order_one_claim():
    x, layers, errors, commuting = measured_layers()
    evidence = found()
    chapter._measurement(evidence, x, 8, layers, errors, commuting, np.array([[1.1, 0.9], [1.3, 0.2]]))
    assert not evidence.claims["both errors are of order one in every draw"]


def test_errors_without_one_of_the_four_layers_are_refused():
    x, layers, errors, commuting = measured_layers()
    del errors["patch embedding + positions"]
    with pytest.raises(ValueError, match="expected the layers"):
        chapter._measurement(found(), x, 8, layers, errors, commuting, np.ones((2, 2)))


def test_aliasing_glues_the_two_subsamplings_and_the_published_gains():
    row = np.array([1.0, -1.0, 1.0, -1.0])[None, None, :]
    keep = lambda s: symmetry.subsample(s, (1, 2))  # noqa: E731
    evidence = found()
    chapter._aliasing(evidence, row, keep, {1: 1.2, 3: 0.9, 5: 0.6}, {"conv2": np.array([0.0, 1.2])})
    assert evidence["sym_alias_plain"] == "(1, 1)" and evidence["sym_alias_shifted"] == "(-1, -1)"
    assert evidence["sym_zhang_con_base"] == 89.2 and evidence["sym_zhang_con_gain_max"] == 2.11
    assert (evidence["sym_zhang_acc_gain_min"], evidence["sym_zhang_acc_gain_max"]) == (0.65, 0.88)
    assert all(evidence.claims.values())
    evidence = found()
    chapter._aliasing(evidence, row, keep, {1: 1.2, 3: 0.9, 5: 0.05}, {"conv2": np.array([0.0, 1.2])})
    assert not evidence.claims["each wider blur lowers the stride-2 error, none removes it"]


def test_an_encoder_without_positions_commutes_with_any_order_and_a_bias_only_with_the_shift():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True,
                                       norm_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False).double().eval()
    tokens = torch.randn(1, 16, 8, dtype=torch.float64)
    grid_shift = torch.as_tensor(symmetry.token_permutation((4, 4), (0, 1), patch=1))
    any_perm = torch.randperm(16)
    B = torch.as_tensor(symmetry.relative_position_bias((4, 4), np.random.default_rng(0).standard_normal((4, 4))))

    def gap(perm, bias=None):
        with torch.no_grad(), symmetry.without_attention_fastpath():
            return (encoder(tokens[:, perm], mask=bias) - encoder(tokens, mask=bias)[:, perm]).abs().max().item()

    perm = symmetry.token_permutation((2, 2), (0, 8), patch=8)
    evidence = found()
    chapter._token_order(evidence, perm, encoder, tokens, gap, B, grid_shift, any_perm)
    assert evidence["sym_grid_example"] == "(t1, t0, t3, t2)"
    assert evidence.claims["the encoder commutes with any order, with the bias only with the shift"]
    assert evidence.claims["a bias on plain offsets survives the shift only for pairs it did not wrap"]
    with pytest.raises(ValueError, match="one-column shift"):
        chapter._token_order(found(), perm, encoder, tokens, gap, B, any_perm, any_perm)


def run(steps, fit=1.0):
    return types.SimpleNamespace(config={"data": {"train": 300}, "train": {"steps": steps}},
                                 metrics={"train_accuracy": fit})


def trained_inputs(vit_other, fit=1.0, relative_whole=0.5):
    """Made-up runs and accuracies of three seeds, shifts 0 to 8 pixels."""
    budget = dataclasses.replace(profile.budget("quick"), seeds=(0, 1, 2))
    trained = {(name, s): run(188 if name == "CNN" else 375, fit) for name in MODELS for s in budget.seeds}
    own = np.array([0.50, 0.51, 0.52])
    halves = {"CNN": np.stack([own, own + [0.004, -0.003, 0.001]], axis=1),
              "ViT": np.stack([own, np.asarray(vit_other)], axis=1),
              "ViT, relative bias": np.stack([own, own + [0.01, -0.01, 0.0]], axis=1)}
    under_shift = {name: np.tile(own[:, None], (1, 9)) for name in MODELS}
    under_shift["ViT, relative bias"][:, 8] = relative_whole
    return budget, trained, 8, np.arange(9), under_shift, halves


def test_trained_numbers_are_the_means_over_seeds_and_the_layout_constants():
    evidence = found()
    chapter._trained(evidence, *trained_inputs([0.30, 0.32, 0.31]), chance=0.1, logit_change=1e-6)
    assert evidence["sym_trained_cnn_own"] == pytest.approx(0.51, abs=1e-12)
    assert evidence["sym_trained_rel_whole"] == pytest.approx(0.5, abs=1e-12)
    assert (evidence["sym_trained_band_px"], evidence["sym_trained_size"], evidence["sym_trained_unseen_columns"]) \
        == (24, data.SIZE, 1)
    assert (evidence["sym_trained_n"], evidence["sym_trained_cnn_steps"], evidence["sym_trained_vit_steps"]) \
        == (300, 188, 375)
    assert evidence["sym_trained_margin"] == chapter.MARGIN
    assert evidence.claims["a whole-patch shift keeps the relative-bias ViT's accuracy in every seed"] is False


def test_the_plain_vit_verdict_follows_what_its_seeds_resolve():
    evidence = found()
    chapter._trained(evidence, *trained_inputs([0.30, 0.32, 0.31], relative_whole=0.0), chance=0.1,
                     logit_change=1e-6)
    assert evidence.outcomes["sym_trained_vit_text"] == "less"
    assert evidence["sym_trained_vit_text"].endswith("so the prediction held")
    assert evidence["sym_trained_vit_reading"] == chapter.VIT_READING["less"]
    evidence = found()
    chapter._trained(evidence, *trained_inputs([0.51, 0.50, 0.52]), chance=0.1, logit_change=1e-6)
    assert evidence.outcomes["sym_trained_vit_text"] == "same"
    assert evidence["sym_trained_vit_reading"] == chapter.VIT_READING["same"]


def test_the_fit_claim_fails_for_models_that_do_not_fit_their_set():
    evidence = found()
    chapter._trained(evidence, *trained_inputs([0.3, 0.32, 0.31], fit=0.9), chance=0.1, logit_change=1e-6)
    assert not evidence.claims["each model fits its training set"]


def test_a_logit_change_beyond_rounding_fails_the_build():
    with pytest.raises(ValueError, match="rounding noise"):
        chapter._trained(found(), *trained_inputs([0.3, 0.32, 0.31]), chance=0.1, logit_change=1e-3)


def test_trained_accuracies_of_the_wrong_shape_or_shifts_short_of_a_patch_are_refused():
    budget, trained, patch, shifts, under_shift, halves = trained_inputs([0.3, 0.32, 0.31])
    with pytest.raises(ValueError, match="halves"):
        chapter._trained(found(), budget, trained, patch, shifts, under_shift,
                         {name: values[:2] for name, values in halves.items()}, chance=0.1, logit_change=0.0)
    with pytest.raises(ValueError, match="whole patch"):
        chapter._trained(found(), budget, trained, patch, np.arange(8),
                         {name: values[:, :8] for name, values in under_shift.items()}, halves,
                         chance=0.1, logit_change=0.0)


def test_a_model_that_pools_the_whole_image_scores_alike_under_every_circular_shift():
    images = data.shapes(20, 0, split="test", region="left")
    torch.manual_seed(0)
    pooled = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(3, 10))
    trained = {(name, s): types.SimpleNamespace(model=pooled, accuracy=0.5) for name in MODELS for s in (0, 1)}
    under_shift, halves = chapter.accuracies(trained, images, images, [0, 3, 8])
    assert set(under_shift) == set(MODELS) and under_shift["CNN"].shape == (2, 3) and halves["ViT"].shape == (2, 2)
    assert np.all(under_shift["CNN"] == under_shift["CNN"][:, :1])
    assert np.all(halves["ViT"][:, 0] == 0.5) and np.all(halves["ViT"][:, 1] == under_shift["ViT"][:, 0])


def test_measure_names_what_the_page_has_not_computed():
    with pytest.raises(ValueError, match="has not computed"):
        chapter.measure(profile.budget("quick"), {"x": np.zeros((3, 8, 8))})


def test_the_group_claim_is_checked_on_the_image_itself():
    x = np.random.default_rng(0).standard_normal((3, 8, 8))
    evidence = found()
    chapter._convolution(evidence, x, 0.0, 0.0)
    assert evidence["sym_image_side"] == 8 and all(evidence.claims.values())
    assert np.array_equal(shift(shift(x, (3, 5)), (5, 3)), x)
    evidence = found()
    chapter._convolution(evidence, x, 1e-9, 0.0)
    assert not evidence.claims["the convolution commutes exactly with a shift, its channel means to rounding"]
