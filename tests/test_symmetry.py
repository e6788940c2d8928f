"""Which shifts a convolution and a ViT respect, stated as properties."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from vitbias import geometry as G
from vitbias import symmetry as S
from vitbias.vit import ViT, ViTConfig

SEEDS = (0, 1, 2)


# The tensors here are small: one thread is faster than several contending for them.
pytestmark = pytest.mark.usefixtures("one_thread")


def image(seed, C=3, H=12, W=12, batch=None):
    shape = (C, H, W) if batch is None else (batch, C, H, W)
    return np.random.default_rng(seed).standard_normal(shape)


def conv_layer(seed, C=3, O=4, k=3, stride=1, padding="circular"):
    w, b = S.init_conv(np.random.default_rng(100 + seed), O, C, k)
    return lambda x: G.conv2d(x, w, b, stride=stride, padding=padding)


def multiples(H, W, s):
    r, c = np.meshgrid(np.arange(H), np.arange(W), indexing="ij")
    return (r % s == 0) & (c % s == 0)


def encoder_layer(d=16, heads=4, layers=2):
    layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=2 * d, dropout=0.0,
                                       batch_first=True, norm_first=True)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).double().eval()


def encoder_config(d=16, P=4, C=3):
    """Two blocks of the book's ViT, 4 heads, MLP width 2d (the image side is not used)."""
    return ViTConfig(img_size=4 * P, patch_size=P, in_chans=C, embed_dim=d, depth=2, num_heads=4,
                     mlp_ratio=2.0)


def patch_encoder(seed, d=16, P=4, C=3, positions=None, attn_bias=None):
    torch.manual_seed(seed)
    return S.PatchEncoder.from_config(encoder_config(d, P, C), positions=positions, attn_bias=attn_bias)


# ---------------------------------------------------------------------------
# The hand-written pieces agree with the libraries
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("P, H, W", [(2, 4, 6), (4, 8, 12), (8, 16, 16)])
def test_patch_embedding_is_a_conv2d_with_kernel_and_stride_P(seed, P, H, W):
    torch.manual_seed(seed)
    conv = nn.Conv2d(3, 6, kernel_size=P, stride=P).double()
    x = image(seed, H=H, W=W, batch=2)
    weight, bias = conv.weight.detach().numpy(), conv.bias.detach().numpy()
    with torch.no_grad():
        expected = conv(torch.tensor(x)).numpy()
    grid = S.patch_embed(x, weight, bias)
    np.testing.assert_allclose(grid, expected, atol=1e-13)
    tokens = S.patch_tokens(x, weight, bias)
    assert tokens.shape == (2, (H // P) * (W // P), 6)
    np.testing.assert_array_equal(G.grid_to_tokens(grid), tokens)
    np.testing.assert_array_equal(G.tokens_to_grid(tokens, (H // P, W // P)), grid)


def test_init_conv_draws_from_the_range_pytorch_uses_for_conv2d():
    torch.manual_seed(0)
    module = nn.Conv2d(16, 64, 3)
    w, b = S.init_conv(np.random.default_rng(0), 64, 16, 3)
    bound = 1 / np.sqrt(16 * 9)
    for ours, theirs in ((w, module.weight), (b, module.bias)):
        assert ours.shape == tuple(theirs.shape)
        theirs = theirs.detach().abs().max().item()
        assert 0.9 * bound < np.abs(ours).max() <= bound and 0.9 * bound < theirs <= bound * (1 + 1e-6)


def test_a_patch_may_be_one_row_high():
    signal = np.array([0.0, 0, 1, 4, 2, 0, 0, 0])[None, None, :]
    tokens = S.patch_embed(signal, np.array([1.0, -1.0]).reshape(1, 1, 1, 2))
    np.testing.assert_array_equal(tokens, [[[0.0, -3.0, 2.0, 0.0]]])


def test_binomial_blur_is_the_1_2_1_filter_and_keeps_the_mean():
    x = image(3, C=2, H=6, W=6)
    blurred = S.binomial_blur(x)
    k = np.array([1.0, 2.0, 1.0]) / 4
    expected = sum(k[i] * k[j] * np.roll(x, (1 - i, 1 - j), axis=(-2, -1)) for i in range(3) for j in range(3))
    np.testing.assert_allclose(blurred, expected, atol=1e-14)
    np.testing.assert_allclose(blurred.mean(axis=(-2, -1)), x.mean(axis=(-2, -1)), atol=1e-14)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_measurement_layers_are_one_convolution_at_two_strides_and_a_patch_embedding(seed):
    x = image(seed, H=16, W=16)
    layers = S.measurement_layers(np.random.default_rng(seed), x, patch=4)
    (f1, s1), (f2, s2), (fp, sp), (fq, sq) = layers.values()
    assert (s1, s2, sp, sq) == (1, 2, 4, 4)
    np.testing.assert_array_equal(f2(x), S.subsample(f1(x), 2))
    table = fq(x) - fp(x)
    np.testing.assert_allclose(table, fq(2 * x) - fp(2 * x), atol=1e-12)  # a fixed table
    tokens = G.grid_to_tokens(fp(x))
    assert table.shape == fp(x).shape and 0.5 < table.std() / tokens.std() < 2.0


# ---------------------------------------------------------------------------
# Circular shifts
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# The theorem: (a) stride 1, (b) stride s, (c) patch embedding
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k, H, W", [(1, 5, 6), (3, 6, 6), (5, 7, 9)])
def test_a_stride_1_circular_convolution_commutes_with_every_shift(seed, k, H, W):
    f = conv_layer(seed, k=k)
    x = image(seed, H=H, W=W)
    assert S.which_shifts_commute(f, x).all()
    for delta in [(1, 0), (0, 1), (H - 1, W - 1), (-2, 3)]:
        assert S.equivariance_error(f, x, delta) < 1e-13


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("stride, H, W", [(2, 8, 8), (3, 9, 6), (4, 8, 12)])
def test_a_stride_s_convolution_commutes_exactly_with_multiples_of_s(seed, stride, H, W):
    f = conv_layer(seed, stride=stride)
    x = image(seed, H=H, W=W)
    np.testing.assert_array_equal(S.which_shifts_commute(f, x, stride=stride), multiples(H, W, stride))
    # The output moves by delta / s at the multiples ...
    delta = (stride, 2 * stride)
    np.testing.assert_allclose(f(G.shift(x, delta)), G.shift(f(x), (1, 2)), atol=1e-13)
    # ... and by no output shift at all in between.
    assert S.equivariance_error(f, x, (0, 1), stride=stride) > 1e-3


def test_the_error_at_a_non_multiple_is_the_best_over_every_output_shift():
    f = conv_layer(4, stride=2)
    x = image(4, H=8, W=10)
    y, moved = f(x), f(G.shift(x, (1, 3)))
    brute = min(np.abs(moved - np.roll(y, (a, b), axis=(-2, -1))).max()
                for a in range(4) for b in range(5)) / np.abs(y).max()
    assert S.equivariance_error(f, x, (1, 3), stride=2) == pytest.approx(brute, rel=1e-14)


@pytest.mark.parametrize("seed", SEEDS)
def test_stacking_stride_2_layers_multiplies_the_periods(seed):
    first, second = conv_layer(seed, O=4, stride=2), conv_layer(seed + 10, C=4, O=4, stride=2)
    x = image(seed, H=16, W=16)
    mask = S.which_shifts_commute(lambda a: second(first(a)), x, stride=4)
    np.testing.assert_array_equal(mask, multiples(16, 16, 4))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("P, H, W", [(2, 6, 8), (4, 8, 12), (8, 16, 16)])
def test_a_patch_embedding_turns_a_whole_patch_shift_into_a_token_permutation(seed, P, H, W):
    w, b = S.init_conv(np.random.default_rng(seed), 5, 3, P)
    x = image(seed, H=H, W=W)
    for delta in [(0, P), (P, 0), (P, 2 * P), (-P, P)]:
        perm = S.token_permutation((H // P, W // P), delta, P)
        np.testing.assert_array_equal(np.sort(perm), np.arange((H // P) * (W // P)))
        np.testing.assert_allclose(S.patch_tokens(G.shift(x, delta), w, b),
                                   S.patch_tokens(x, w, b)[perm], atol=1e-13)
    def f(a):
        return S.patch_embed(a, w, b)

    np.testing.assert_array_equal(S.which_shifts_commute(f, x, stride=P), multiples(H, W, P))


def test_a_right_shift_by_one_patch_reorders_a_2x2_grid_as_t1_t0_t3_t2():
    perm = S.token_permutation((2, 2), (0, 8), 8)
    np.testing.assert_array_equal(perm, [1, 0, 3, 2])
    X = np.random.default_rng(0).standard_normal((4, 3))
    np.testing.assert_array_equal(S.permutation_matrix(perm) @ X, X[perm])


def test_token_permutations_compose_like_the_shifts():
    grid, P = (3, 4), 2
    a, b = S.token_permutation(grid, (2, 4), P), S.token_permutation(grid, (4, 2), P)
    np.testing.assert_array_equal(a[b], S.token_permutation(grid, (6, 6), P))


# ---------------------------------------------------------------------------
# The symmetry a ViT keeps
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_a_transformer_encoder_without_positions_is_permutation_equivariant(seed):
    torch.manual_seed(seed)
    encoder = encoder_layer()
    tokens = torch.randn(2, 9, 16, dtype=torch.float64)
    perm = torch.randperm(9)
    with torch.no_grad():
        gap = (encoder(tokens[:, perm]) - encoder(tokens)[:, perm]).abs().max()
    assert gap < 1e-12


@pytest.mark.parametrize("seed", SEEDS)
def test_an_attention_bias_keeps_equivariance_for_permutations_that_fix_it(seed):
    rng = np.random.default_rng(seed)
    grid = (3, 3)
    bias = S.relative_position_bias(grid, rng.standard_normal(grid))
    shift_perm = S.token_permutation(grid, (1, 2), 1)
    other_perm = rng.permutation(9)
    np.testing.assert_array_equal(S.conjugate(bias, shift_perm), bias)  # Pi B Pi^T = B
    assert not np.array_equal(S.conjugate(bias, other_perm), bias)
    torch.manual_seed(seed)
    encoder = encoder_layer()
    tokens = torch.randn(1, 9, 16, dtype=torch.float64)
    B = torch.tensor(bias)

    def gap(perm):
        perm = torch.as_tensor(perm)
        with torch.no_grad(), S.without_attention_fastpath():
            return (encoder(tokens[:, perm], mask=B) - encoder(tokens, mask=B)[:, perm]).abs().max()

    assert gap(shift_perm) < 1e-12
    assert gap(other_perm) > 1e-4


@pytest.mark.parametrize("grid, delta", [((4, 4), (0, 1)), ((3, 5), (1, -2)), ((4, 3), (2, 1))])
def test_a_plain_offset_bias_survives_a_shift_only_for_pairs_not_carried_round_the_border(grid, delta):
    rng = np.random.default_rng(sum(grid))
    B = S.plain_position_bias(grid, rng.standard_normal((2 * grid[0] - 1, 2 * grid[1] - 1)))
    wrapped = S.wrapped_tokens(grid, delta, 1)
    inside = ~wrapped[:, None] & ~wrapped[None, :]
    moved = S.conjugate(B, S.token_permutation(grid, delta, 1))
    assert wrapped.any() and not wrapped.all()
    np.testing.assert_array_equal(moved[inside], B[inside])
    assert not np.array_equal(moved, B)


def test_a_plain_offset_bias_depends_on_the_offset_only():
    H, W = 3, 4
    table = np.arange((2 * H - 1) * (2 * W - 1), dtype=float).reshape(2 * H - 1, 2 * W - 1)
    B = S.plain_position_bias((H, W), table)
    r, c = np.divmod(np.arange(H * W), W)
    assert B[0, W + 1] == B[1, W + 2] == table[H - 1 + 1, W - 1 + 1]   # offset (1, 1), twice
    np.testing.assert_array_equal(B, table[r[None, :] - r[:, None] + H - 1, c[None, :] - c[:, None] + W - 1])


def test_a_shift_by_one_patch_to_the_right_wraps_the_first_column_only():
    wrapped = S.wrapped_tokens((3, 4), (0, 8), 8).reshape(3, 4)
    assert wrapped[:, 0].all() and not wrapped[:, 1:].any()
    assert not S.wrapped_tokens((3, 4), (0, 0), 8).any()


@pytest.mark.parametrize("seed", SEEDS)
def test_a_vit_without_positions_commutes_exactly_with_whole_patch_shifts(seed):
    model = patch_encoder(seed)
    x = torch.randn(1, 3, 12, 8, generator=torch.Generator().manual_seed(seed))
    np.testing.assert_array_equal(S.which_shifts_commute(model, x, stride=4), multiples(12, 8, 4))
    # the output tokens move one grid column, and are otherwise unchanged
    model64 = model.double().eval()
    with torch.no_grad():
        y, moved = model64(x.double()), model64(torch.roll(x.double(), 4, -1))
    perm = torch.as_tensor(S.token_permutation((3, 2), (0, 4), 4))
    assert (G.grid_to_tokens(moved) - G.grid_to_tokens(y)[:, perm]).abs().max() < 1e-12


@pytest.mark.parametrize("seed", SEEDS)
def test_absolute_positions_break_even_the_whole_patch_shift_unless_all_rows_are_equal(seed):
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(seed))
    positions = torch.randn(4, 16, generator=torch.Generator().manual_seed(seed + 1))
    with_positions = patch_encoder(seed, positions=positions)
    assert S.which_shifts_commute(with_positions, x, stride=4).sum() == 1  # the identity only
    assert S.equivariance_error(with_positions, x, (0, 4), stride=4) > 1e-3
    constant = patch_encoder(seed, positions=positions[:1].repeat(4, 1))
    assert S.equivariance_error(constant, x, (4, 4), stride=4) < 1e-12


def test_the_patch_encoder_is_the_vits_encoder_without_cls_on_the_grid():
    config = encoder_config()
    torch.manual_seed(7)
    model = ViT(config.replace(class_token=False, pos_embed=False, pool="mean", num_classes=0)).eval()
    encoder = patch_encoder(7).eval()
    torch.testing.assert_close(dict(encoder.named_parameters()),
                               {name.replace("patch_embed.proj", "embed"): p for name, p in model.named_parameters()
                                if not name.startswith("fc_norm")}, rtol=0, atol=0)
    x = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        tokens, _ = model.encode(x, return_attention=False)
        assert torch.equal(G.grid_to_tokens(encoder(x)), tokens)


def test_a_bias_inside_the_vit_gives_finite_outputs_in_evaluation_mode():
    model = patch_encoder(6, attn_bias=np.random.default_rng(6).standard_normal((4, 4)))
    with torch.no_grad():
        out = model.double().eval()(torch.randn(1, 3, 8, 8, dtype=torch.float64))
    assert torch.isfinite(out).all()


def test_the_fastpath_switch_is_off_inside_the_block_and_restored_after_it():
    before = torch.backends.mha.get_fastpath_enabled()
    with S.without_attention_fastpath():
        assert not torch.backends.mha.get_fastpath_enabled()
    assert torch.backends.mha.get_fastpath_enabled() == before


def test_a_relative_bias_inside_the_vit_keeps_the_whole_patch_shifts():
    bias = S.relative_position_bias((2, 3), np.random.default_rng(5).standard_normal((2, 3)))
    model = patch_encoder(5, attn_bias=bias)
    x = torch.randn(1, 3, 8, 12, generator=torch.Generator().manual_seed(5))
    np.testing.assert_array_equal(S.which_shifts_commute(model, x, stride=4), multiples(8, 12, 4))


# ---------------------------------------------------------------------------
# PyTorch's own layers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_conv2d_with_circular_padding_commutes_with_torch_roll(seed):
    torch.manual_seed(seed)
    conv = nn.Conv2d(3, 4, 3, padding=1, padding_mode="circular")
    x = torch.randn(2, 3, 6, 10)
    assert S.which_shifts_commute(conv, x).all()
    with torch.no_grad():
        gap = (conv(torch.roll(x, (2, 3), (-2, -1))) - torch.roll(conv(x), (2, 3), (-2, -1))).abs().max()
    assert gap < 1e-5  # float32, as the module is


def test_a_module_is_measured_on_a_float64_copy_and_left_as_it_was():
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 4, 3, stride=2, padding=1, padding_mode="circular").train()
    before = conv.weight.detach().clone()
    x = torch.randn(1, 3, 8, 8)
    assert S.equivariance_error(conv, x, (2, 4), stride=2) < 1e-14
    assert conv.weight.dtype == torch.float32 and conv.training
    assert torch.equal(conv.weight, before)


def test_plain_functions_receive_torch_tensors_when_given_them():
    x = torch.randn(1, 3, 8, 8, dtype=torch.float64)
    def f(t):
        return F.avg_pool2d(t, 2)

    assert S.equivariance_error(f, x, (2, 4), stride=2) < 1e-14
    assert S.equivariance_error(f, x, (0, 1), stride=2) > 1e-3


def test_resnet50_total_stride_is_32_in_five_doublings():
    import timm

    features = timm.create_model("resnet50", pretrained=False, features_only=True)
    assert S.feature_strides(features, image_size=64) == [2, 4, 8, 16, 32]


# ---------------------------------------------------------------------------
# Borders and aliasing
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("k", [3, 5, 7])
def test_zero_padding_breaks_equivariance_only_within_k_over_2_of_a_border(k):
    a, W, delta = k // 2, 24, 10
    f = conv_layer(k, k=k, padding="zeros")
    x = image(k, H=16, W=W)
    bad = np.flatnonzero(S.equivariance_error_map(f, x, (0, delta)).max(axis=0) > 1e-12)
    border = {*range(a), *range(W - a, W)}
    seam = {(delta + j) % W for j in range(-a, a)}  # where the old border lands
    assert set(bad.tolist()) == border | seam
    frame = np.abs(f(x) - conv_layer(k, k=k)(x)).max(axis=0) > 0
    assert frame[:, :a].all() and frame[:, W - a:].all() and not frame[a:-a, a:-a].any()


def test_subsampling_aliases_1_minus_1_and_blurring_first_removes_it():
    row = np.array([1.0, -1.0, 1.0, -1.0])[None, None, :]
    np.testing.assert_array_equal(S.subsample(row, (1, 2)), [[[1.0, 1.0]]])
    np.testing.assert_array_equal(S.subsample(G.shift(row, 1), (1, 2)), [[[-1.0, -1.0]]])
    np.testing.assert_allclose(S.binomial_blur(row), 0.0, atol=1e-15)


@pytest.mark.parametrize("seed", SEEDS)
def test_blurring_before_subsampling_lowers_but_does_not_remove_the_odd_shift_error(seed):
    x = image(seed, H=16, W=16)
    conv = conv_layer(seed)
    plain = S.equivariance_error(lambda a: S.subsample(conv(a), 2), x, 1, stride=2)
    blurred = S.equivariance_error(lambda a: S.subsample(S.binomial_blur(conv(a)), 2), x, 1, stride=2)
    assert 1e-3 < blurred < plain


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("shift, match", [
    ((0, 8), "does not fit"),
    (-9, "does not fit"),
    ((1, 2, 3), "integer or a pair"),
    (1.5, "integer or a pair"),
    ("1", "integer or a pair"),
])
def test_a_shift_that_does_not_fit_is_rejected(shift, match):
    with pytest.raises(ValueError, match=match):
        S.equivariance_error(conv_layer(0), image(0, H=8, W=8), shift)


def test_an_image_or_stride_that_does_not_fit_is_rejected():
    f = conv_layer(0)
    with pytest.raises(ValueError, match="must divide the image size"):
        S.equivariance_error(f, image(0, H=9, W=9), 1, stride=2)
    with pytest.raises(ValueError, match=r"\(C, H, W\) or a batch"):
        S.equivariance_error(lambda a: a, np.zeros((8, 8)) + 1, 1)
    with pytest.raises(ValueError, match="positive"):
        S.which_shifts_commute(f, image(0), stride=0)
    with pytest.raises(ValueError, match="tol"):
        S.which_shifts_commute(f, image(0), tol=-1.0)


def test_an_f_that_changes_the_batch_or_the_grid_is_rejected():
    x = image(0, H=8, W=8, batch=3)
    with pytest.raises(ValueError, match="keep the batch"):
        S.equivariance_error(lambda a: a[:1], x, 1)
    with pytest.raises(ValueError, match="keep the batch"):
        S.equivariance_error(lambda a: a.sum(axis=0), x, 1)
    with pytest.raises(ValueError, match="output grid"):
        S.equivariance_error(lambda a: a, x, 2, stride=2)
    with pytest.raises(ValueError, match="zero everywhere"):
        S.equivariance_error(lambda a: 0 * a, x, 1)
    with pytest.raises(ValueError, match="non-finite"):
        S.equivariance_error(lambda a: np.full_like(a, np.nan), x, 1)
    with pytest.raises(ValueError, match="function or a torch.nn.Module"):
        S.equivariance_error("conv", x, 1)


def test_bad_layers_are_rejected():
    x = image(0, H=8, W=8)
    with pytest.raises(ValueError, match=r"patch size \(3, 3\) must divide"):
        S.patch_tokens(x, np.zeros((4, 3, 3, 3)))
    with pytest.raises(ValueError, match=r"\(d, C, P_h, P_w\)"):
        S.patch_tokens(x, np.zeros((3, 2, 4)))
    with pytest.raises(ValueError, match="taps"):
        S.binomial_blur(x, taps=2)


def test_a_patch_encoder_needs_a_vit_config_and_vit_blocks():
    with pytest.raises(ValueError, match="ViTConfig"):
        S.PatchEncoder.from_config({"embed_dim": 16})
    with pytest.raises(ValueError, match="vitbias.vit.Block"):
        S.PatchEncoder(nn.Conv2d(3, 16, 4, stride=4), [encoder_layer()])


def test_bad_token_arguments_are_rejected():
    with pytest.raises(ValueError, match="not a whole number"):
        S.token_permutation((2, 2), (0, 3), 8)
    with pytest.raises(ValueError, match="permutation"):
        S.permutation_matrix([0, 0, 1])
    with pytest.raises(ValueError, match="grid's shape"):
        S.relative_position_bias((2, 3), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="one entry per plain offset"):
        S.plain_position_bias((2, 3), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="for this permutation"):
        S.conjugate(np.zeros((3, 3)), [1, 0])
    with pytest.raises(ValueError, match="must divide the shift"):
        S.equivariance_error_map(conv_layer(0, stride=2), image(0, H=8, W=8), (0, 1), stride=2)


# ---------------------------------------------------------------------------
# Trained-model helpers: shifted image sets, accuracy and logits under shifts
# ---------------------------------------------------------------------------

def _relative_bias_vit():
    from vitbias import models, profile

    torch.manual_seed(0)
    return models.build({**profile.budget("quick").vit, "kind": "route", "relative_bias": True}).eval()


def test_a_shifted_image_set_is_every_image_rolled_with_its_label():
    from vitbias import data

    images = data.shapes(5, seed=0)
    moved = S.shifted_images(images, (1, -3))
    np.testing.assert_array_equal(moved.images, np.roll(images.images, (1, -3), axis=(-2, -1)))
    np.testing.assert_array_equal(moved.labels, images.labels)
    with pytest.raises(ValueError, match="does not fit"):
        S.shifted_images(images, 32)


def test_a_relative_bias_vit_keeps_its_logits_under_a_whole_patch_shift_and_not_under_a_pixel_shift():
    from vitbias import data, profile

    model, images = _relative_bias_vit(), data.shapes(20, seed=1)
    patch = profile.budget("quick").vit["patch_size"]
    assert S.largest_logit_change(model, images, patch) < 1e-4
    assert S.largest_logit_change(model, images, 1) > 1e-3
    accuracy = S.accuracy_under_shifts(model, images, (0, patch))
    assert accuracy.shape == (2,) and accuracy[0] == accuracy[1]
