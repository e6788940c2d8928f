"""The symmetry chapter's evidence (``vitbias.chapters.symmetry``), on made-up and small inputs."""

import dataclasses
import functools
import re
import types
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from vitbias import data, profile, symmetry
from vitbias.chapters import symmetry as chapter
from vitbias.evidence import Evidence
from vitbias.geometry import conv2d, shift
from vitbias.vit import ViTConfig

PADDING = "zero padding breaks the shift only near the border and the seam"
SIGNAL = "stride 1 follows a shift by 1 and by 2, stride 2 and patches only by 2"
MODELS = ("CNN", "ViT", "ViT, relative bias")
PAGE = Path(__file__).resolve().parent.parent / "book" / "symmetry.md"


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
    chapter.zero_padding(evidence, x, w5, padding_error_map())
    assert evidence.claims[PADDING]
    assert (evidence["sym_pad_half_width"], evidence["sym_pad_bad_columns"], evidence["sym_pad_good_columns"]) \
        == (2, 8, 24)
    stray = padding_error_map()
    stray[3, 16] = 1e-6
    evidence = found()
    chapter.zero_padding(evidence, x, w5, stray)
    assert not evidence.claims[PADDING]


def signal_inputs():
    """The page's short signal ``(1, 1, 8)`` and its three layers, built as the page builds them."""
    signal = np.array([0, 0, 1, 4, 2, 0, 0, 0], dtype=float)[None, None, :]
    kernel = np.array([1.0, 0.0, -1.0]).reshape(1, 1, 1, 3)
    patch = np.array([1.0, -1.0]).reshape(1, 1, 1, 2)
    layers = {"stride 1": lambda s: conv2d(s, kernel),
              "stride 2": lambda s: conv2d(s, kernel, stride=(1, 2)),
              "patches": lambda s: symmetry.patch_embed(s, patch)}
    return signal, layers


def test_the_page_short_signal_backs_the_claim_and_a_constant_one_does_not():
    signal, layers = signal_inputs()
    evidence = found()
    chapter.one_signal(evidence, signal, layers)
    assert evidence.claims[SIGNAL]
    # every layer's output of a constant signal is constant, so even a shift by 1 "commutes"
    evidence = found()
    chapter.one_signal(evidence, np.ones((1, 1, 8)), layers)
    assert not evidence.claims[SIGNAL]
    with pytest.raises(ValueError, match="expected the layers"):
        chapter.one_signal(found(), signal, {"stride 1": layers["stride 1"]})


def test_stacked_layers_and_resnet_strides_are_glued_exactly_and_checked():
    evidence = found()
    chapter.stacked_layers(evidence, chapter.multiples((16, 16), 4))
    chapter.resnet_stages(evidence, [2, 4, 8, 16, 32])
    assert evidence["sym_stack_commuting"] == 16 and evidence["sym_stack_shifts"] == 256
    assert evidence["sym_resnet_total_stride"] == 32 and evidence["sym_resnet_downsamplings"] == 5
    assert all(evidence.claims.values())
    one_more = chapter.multiples((16, 16), 4)
    one_more[2, 0] = True
    evidence = found()
    chapter.stacked_layers(evidence, one_more)
    chapter.resnet_stages(evidence, [2, 4, 4])
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
    chapter.layer_errors(evidence, 8, errors)
    chapter.commuting_shifts(evidence, x, 8, commuting)
    chapter.position_error(evidence, x, 8, layers, errors)
    chapter.fresh_draws(evidence, draws)
    assert len(evidence.claims) == 4 and all(evidence.claims.values()), evidence.claims
    assert evidence["sym_all_shifts"] == 256 and evidence["sym_count_conv2"] == 64
    assert evidence["sym_count_patch"] == 4 and evidence["sym_draws"] == 2
    assert evidence["sym_conv2_odd_error"] == errors["convolution, stride 2"][1]
    assert evidence["sym_draws_pos_min"] == 0.7 and evidence["sym_draws_conv2_max"] == 1.3


def test_a_draw_with_a_small_error_breaks_the_order_one_claim_and_a_third_column_is_refused():
    evidence = found()
    chapter.fresh_draws(evidence, np.array([[1.1, 0.9], [1.3, 0.2]]))
    assert not evidence.claims["both errors are of order one in every draw"]
    with pytest.raises(ValueError, match="draws must be"):
        chapter.fresh_draws(found(), np.ones((2, 3)))


def test_errors_without_one_of_the_four_layers_are_refused():
    x, layers, errors, commuting = measured_layers()
    del errors["patch embedding + positions"]
    with pytest.raises(ValueError, match="expected the layers"):
        chapter.layer_errors(found(), 8, errors)
    with pytest.raises(ValueError, match="expected the layers"):
        chapter.position_error(found(), x, 8, layers, errors)
    del commuting["convolution, stride 1"]
    with pytest.raises(ValueError, match="expected the layers"):
        chapter.commuting_shifts(found(), x, 8, commuting)


def test_aliasing_glues_the_two_subsamplings_and_the_published_gains():
    row = np.array([1.0, -1.0, 1.0, -1.0])[None, None, :]
    keep = lambda s: symmetry.subsample(s, (1, 2))  # noqa: E731
    evidence = found()
    chapter.aliasing(evidence, row, keep)
    chapter.blurring(evidence, {1: 1.2, 3: 0.9, 5: 0.6}, np.array([0.0, 1.2]))
    chapter.published_filters(evidence)
    assert evidence["sym_alias_plain"] == "(1, 1)" and evidence["sym_alias_shifted"] == "(-1, -1)"
    assert evidence["sym_zhang_con_base"] == 89.2 and evidence["sym_zhang_con_gain_max"] == 2.11
    assert (evidence["sym_zhang_acc_gain_min"], evidence["sym_zhang_acc_gain_max"]) == (0.65, 0.88)
    assert all(evidence.claims.values())
    evidence = found()
    chapter.blurring(evidence, {1: 1.2, 3: 0.9, 5: 0.05}, np.array([0.0, 1.2]))
    assert not evidence.claims["each wider blur lowers the stride-2 error, none removes it"]


def encoder_inputs():
    """A small PyTorch encoder as the page builds its own: (encoder, tokens, gap, B, grid_shift, any_perm)."""
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

    return encoder, tokens, gap, B, grid_shift, any_perm


def test_an_encoder_without_positions_commutes_with_any_order_and_a_bias_only_with_the_shift():
    encoder, tokens, gap, B, grid_shift, any_perm = encoder_inputs()
    perm = symmetry.token_permutation((2, 2), (0, 8), patch=8)
    evidence = found()
    chapter.grid_order(evidence, perm)
    chapter.encoder_order(evidence, encoder, tokens, gap, B, grid_shift, any_perm)
    chapter.plain_offset_bias(evidence)
    assert evidence["sym_grid_example"] == "(t1, t0, t3, t2)"
    assert evidence.claims["the encoder commutes with any order, with the bias only with the shift"]
    assert evidence.claims["a bias on plain offsets survives the shift only for pairs it did not wrap"]
    with pytest.raises(ValueError, match="one-column shift"):
        chapter.encoder_order(found(), encoder, tokens, gap, B, any_perm, any_perm)


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
    chapter.trained_models(evidence, *trained_inputs([0.30, 0.32, 0.31]), chance=0.1, logit_change=1e-6)
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
    chapter.trained_models(evidence, *trained_inputs([0.30, 0.32, 0.31], relative_whole=0.0), chance=0.1,
                     logit_change=1e-6)
    assert evidence.outcomes["sym_trained_vit_text"] == "less"
    assert evidence["sym_trained_vit_text"].endswith("so the prediction held")
    assert evidence["sym_trained_vit_reading"] == chapter.VIT_READING["less"]
    evidence = found()
    chapter.trained_models(evidence, *trained_inputs([0.51, 0.50, 0.52]), chance=0.1, logit_change=1e-6)
    assert evidence.outcomes["sym_trained_vit_text"] == "same"
    assert evidence["sym_trained_vit_reading"] == chapter.VIT_READING["same"]


def test_the_fit_claim_fails_for_models_that_do_not_fit_their_set():
    evidence = found()
    chapter.trained_models(evidence, *trained_inputs([0.3, 0.32, 0.31], fit=0.9), chance=0.1, logit_change=1e-6)
    assert not evidence.claims["each model fits its training set"]


def test_a_logit_change_beyond_rounding_fails_the_build():
    with pytest.raises(ValueError, match="rounding noise"):
        chapter.trained_models(found(), *trained_inputs([0.3, 0.32, 0.31]), chance=0.1, logit_change=1e-3)


def test_trained_accuracies_of_the_wrong_shape_or_shifts_short_of_a_patch_are_refused():
    budget, trained, patch, shifts, under_shift, halves = trained_inputs([0.3, 0.32, 0.31])
    with pytest.raises(ValueError, match="halves"):
        chapter.trained_models(found(), budget, trained, patch, shifts, under_shift,
                         {name: values[:2] for name, values in halves.items()}, chance=0.1, logit_change=0.0)
    with pytest.raises(ValueError, match="whole patch"):
        chapter.trained_models(found(), budget, trained, patch, np.arange(8),
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


def test_the_relative_logit_change_reads_only_the_relative_bias_seeds():
    images = data.shapes(20, 0, split="test", region="left")
    torch.manual_seed(0)
    pooled = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(3, 10))
    flat = nn.Sequential(nn.Flatten(), nn.Linear(images.images[0].size, 10))
    louder = nn.Sequential(flat, nn.Linear(10, 10))
    with torch.no_grad():
        louder[1].weight.copy_(100 * torch.eye(10))
    trained = {("ViT, relative bias", 0): types.SimpleNamespace(model=pooled),
               ("ViT, relative bias", 1): types.SimpleNamespace(model=flat),
               ("CNN", 0): types.SimpleNamespace(model=louder)}
    change = chapter.relative_logit_change(trained, images, 8)
    assert symmetry.largest_logit_change(pooled, images, 8) < change
    assert change == symmetry.largest_logit_change(flat, images, 8) < symmetry.largest_logit_change(louder, images, 8)
    with pytest.raises(ValueError, match="no relative-bias ViT"):
        chapter.relative_logit_change({("CNN", 0): trained["CNN", 0]}, images, 8)


def page_inputs(**changed):
    """Small, consistent stand-ins for everything the page computes, by the names measure takes."""
    x, layers, errors, commuting = measured_layers()
    signal, signal_layers = signal_inputs()
    encoder, tokens, gap, B, grid_shift, any_perm = encoder_inputs()
    torch.manual_seed(1)
    vit = symmetry.PatchEncoder.from_config(ViTConfig(img_size=16, patch_size=8, embed_dim=8, depth=1,
                                                      num_heads=2, mlp_ratio=2.0)).double().eval()
    odd = errors["convolution, stride 2"][1]
    budget, trained, patch, shifts, under_shift, halves = trained_inputs(
        [0.30, 0.32, 0.31], relative_whole=np.array([0.50, 0.51, 0.52]))
    inputs = dict(
        x=x, equivariance_gap=0.0, pooled_gap=0.0, w5=np.zeros((8, 3, 5, 5)),
        error_map=padding_error_map(W=16), signal=signal, signal_layers=signal_layers,
        commute=chapter.multiples((16, 16), 4), strides=[2, 4, 8, 16, 32], P=8, layers=layers, errors=errors,
        commuting=commuting, draws=np.array([[1.1, 0.9], [1.3, 0.7]]),
        row=np.array([1.0, -1.0, 1.0, -1.0])[None, None, :],
        keep_every_second=lambda s: symmetry.subsample(s, (1, 2)), blur_errors={1: odd, 3: 0.8 * odd, 5: 0.6 * odd},
        perm=symmetry.token_permutation((2, 2), (0, 8), patch=8), encoder=encoder, tokens=tokens, gap=gap, B=B,
        grid_shift=grid_shift, any_perm=any_perm, roll_first=torch.zeros(1, 8, 4, 4),
        roll_after=torch.zeros(1, 8, 4, 4), conv_commutes=np.ones((4, 4), dtype=bool), vit_patch=8,
        token_gap=0.0, vit_errors=np.array([0.0, *[0.9] * 7, 0.0]), vit_commutes=chapter.multiples((16, 16), 8),
        vit=vit, image=torch.randn(1, 3, 16, 16), table=0.02 * torch.randn(4, 8),
        pos_errors={"initial scale": 0.01, "tokens' scale": 0.5}, trained=trained, patch=patch, shifts=shifts,
        under_shift=under_shift, halves=halves, chance=0.1, logit_change=1e-6)
    return budget, {**inputs, **changed}


def test_measure_backs_every_claim_the_page_asserts_and_a_stray_column_fails_only_its_own():
    budget, inputs = page_inputs()
    evidence = chapter.measure(budget, **inputs)
    asserted = set(re.findall(r'assert evidence\.claims\["([^"]+)"\]', PAGE.read_text()))
    assert set(evidence.claims) == asserted
    assert all(evidence.claims.values()), evidence.claims
    stray = padding_error_map(W=16)
    stray[3, 11] = 1e-6
    evidence = chapter.measure(budget, **page_inputs(error_map=stray)[1])
    assert [name for name, holds in evidence.claims.items() if not holds] == [PADDING]


def test_the_group_claim_is_checked_on_the_image_itself():
    x = np.random.default_rng(0).standard_normal((3, 8, 8))
    evidence = found()
    chapter.convolution(evidence, x, 0.0, 0.0)
    assert evidence["sym_image_side"] == 8 and all(evidence.claims.values())
    assert np.array_equal(shift(shift(x, (3, 5)), (5, 3)), x)
    evidence = found()
    chapter.convolution(evidence, x, 1e-9, 0.0)
    assert not evidence.claims["the convolution commutes exactly with a shift, its channel means to rounding"]
