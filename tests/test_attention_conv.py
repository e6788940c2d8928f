"""Attention can compute any convolution, stated as properties."""

import numpy as np
import pytest
import torch

from vitbias import attention_conv as ac
from vitbias import geometry

F64 = torch.float64


def random_conv(seed, dim, batch, channels, out_channels, size, k, dtype=F64, bias=True):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(batch, channels, *([size] * dim) if isinstance(size, int) else size,
                    generator=g, dtype=dtype)
    W = torch.randn(out_channels, channels, *([k] * dim), generator=g, dtype=dtype)
    b = torch.randn(out_channels, generator=g, dtype=dtype) if bias else None
    return X, W, b


# ---------------------------------------------------------------------------
# Multi-head attention as a sum over heads
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("embed, heads", [(12, 3), (16, 4), (8, 1)])
def test_the_sum_over_heads_equals_torch_multihead_attention(embed, heads):
    torch.manual_seed(embed + heads)
    mha = torch.nn.MultiheadAttention(embed, heads, batch_first=True, dtype=F64)
    torch.nn.init.normal_(mha.in_proj_bias)
    torch.nn.init.normal_(mha.out_proj.bias)
    X = torch.randn(3, 7, embed, dtype=F64)
    expected, _ = mha(X, X, X, need_weights=False)
    found = ac.multi_head_attention(X, ac.weights_from_torch(mha))
    torch.testing.assert_close(found, expected, rtol=1e-12, atol=1e-12)


def test_the_sum_over_heads_equals_timm_attention():
    from timm.layers.attention import Attention

    torch.manual_seed(0)
    attn = Attention(24, num_heads=6, qkv_bias=True).to(F64).eval()
    torch.nn.init.normal_(attn.qkv.bias)
    X = torch.randn(2, 10, 24, dtype=F64)
    torch.testing.assert_close(ac.multi_head_attention(X, ac.weights_from_timm(attn)), attn(X),
                               rtol=1e-12, atol=1e-12)


def test_summing_per_head_products_equals_concatenating_heads_then_projecting():
    g = torch.Generator().manual_seed(1)
    h, N, C, d_v, D = 4, 6, 5, 3, 7
    A = torch.softmax(torch.randn(h, N, N, generator=g, dtype=F64), dim=-1)
    X = torch.randn(2, N, C, generator=g, dtype=F64)
    W_V = torch.randn(C, h * d_v, generator=g, dtype=F64)
    W_O = torch.randn(h * d_v, D, generator=g, dtype=F64)
    heads = A @ (X @ W_V).reshape(2, N, h, d_v).transpose(1, 2)                 # (B, h, N, d_v)
    concatenated = heads.transpose(1, 2).reshape(2, N, h * d_v) @ W_O
    summed = ac.sum_over_heads(X, A, ac.head_matrices(W_V, W_O, h))
    torch.testing.assert_close(summed, concatenated, rtol=1e-13, atol=1e-13)


def test_each_head_matrix_has_rank_at_most_the_head_width():
    g = torch.Generator().manual_seed(2)
    W_V = torch.randn(10, 3 * 2, generator=g, dtype=F64)
    W_O = torch.randn(3 * 2, 9, generator=g, dtype=F64)
    ranks = torch.linalg.matrix_rank(ac.head_matrices(W_V, W_O, 3))
    assert ranks.tolist() == [2, 2, 2]


# ---------------------------------------------------------------------------
# The convolution as a sum over offsets
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dim, size, k", [(1, 9, 3), (1, 5, 5), (2, (6, 7), 3), (2, 5, 5), (2, (4, 9), 1)])
def test_the_sum_over_offsets_equals_torch_circular_conv(dim, size, k):
    X, W, b = random_conv(4, dim, batch=2, channels=3, out_channels=4, size=size, k=k)
    torch.testing.assert_close(ac.conv_as_offset_sum(X, W, b), geometry.circular_conv(X, W, b),
                               rtol=1e-12, atol=1e-12)


def test_offsets_follow_the_flattened_kernel_order():
    offsets, taps = ac.conv_taps(torch.arange(2 * 1 * 3 * 3, dtype=F64).reshape(2, 1, 3, 3))
    assert offsets.tolist() == [[-1, -1], [-1, 0], [-1, 1], [0, -1], [0, 0], [0, 1], [1, -1], [1, 0], [1, 1]]
    # tap (u, v) = (0, 2), offset (-1, +1): W_Delta[c', o] = W[o, c', 0, 2]
    assert taps[2].tolist() == [[2.0, 11.0]]


# ---------------------------------------------------------------------------
# The construction
# ---------------------------------------------------------------------------

def test_quadratic_scores_are_minus_alpha_squared_distance_up_to_a_constant_per_head():
    offsets = geometry.relative_offsets((5, 6))                                      # (N, N, 2)
    targets = geometry.kernel_offsets(3, 2)
    alpha = 1.7
    scores = np.einsum("hp,qkp->hqk", ac.offset_queries(targets, alpha), ac.quadratic_encoding(offsets))
    distance = np.sum((offsets[None] - targets[:, None, None]) ** 2, axis=-1)
    constant = alpha * np.sum(targets**2, axis=1)[:, None, None]
    np.testing.assert_allclose(scores, -alpha * distance + constant, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("shape", [(7,), (4, 5)])
def test_sharp_heads_are_lookups_of_their_target_at_every_query(shape):
    targets = geometry.kernel_offsets(3, len(shape))
    A = ac.positional_attention(shape, targets, alpha=60.0)
    positions = geometry.grid_coordinates(shape)
    target = (positions[None] + targets[:, None]) % np.array(shape)
    index = np.ravel_multi_index(tuple(target.transpose(2, 0, 1)), shape)      # (h, N)
    assert np.array_equal(A.argmax(dim=-1).numpy(), index)
    assert float(A.amax(dim=-1).min()) > 1 - 1e-15


@pytest.mark.parametrize("seed", range(6))
def test_conv_via_attention_matches_torch_conv_within_the_bound(seed):
    rng = np.random.default_rng(seed)
    dim = 1 + seed % 2
    k = int(rng.choice([1, 3, 5]))
    size = tuple(int(s) for s in rng.integers(k, 10, size=dim))
    channels, out_channels = (int(c) for c in rng.integers(1, 5, size=2))
    X, W, b = random_conv(seed, dim, batch=2, channels=channels, out_channels=out_channels,
                          size=size, k=k)
    exact = geometry.circular_conv(X, W, b)
    for alpha in (0.3, 1.0, 3.0, 8.0):
        error = float((ac.conv_via_attention(X, W, alpha, b) - exact).abs().max())
        assert error <= ac.conv_error_bound(X, W, alpha) * (1 + 1e-9) + 1e-12, (alpha, error)


@pytest.mark.parametrize("dim, size", [(1, 16), (2, 8)])
def test_the_error_falls_at_every_step_of_alpha_until_float64_rounding(dim, size):
    X, W, b = random_conv(7, dim, batch=1, channels=2, out_channels=3, size=size, k=3)
    exact = geometry.circular_conv(X, W, b)
    alphas = np.arange(0.5, 40.0, 0.5)
    errors = np.array([ac.relative_max_error(ac.conv_via_attention(X, W, a, b), exact) for a in alphas])
    above_rounding = errors > 1e-13
    assert above_rounding[:10].all() and not above_rounding[-1]
    assert np.all(np.diff(errors[above_rounding]) < 0)
    # and it follows rho: the ratio stays within a factor of four once the heads are sharp
    ratio = errors[above_rounding & (alphas >= 5)] / ac.rho(alphas[above_rounding & (alphas >= 5)], dim)
    assert ratio.max() < 4 * ratio.min()


def test_in_float32_the_error_stops_at_float32s_own_convolution_error():
    X, W, b = random_conv(8, 1, batch=1, channels=1, out_channels=1, size=32, k=3)
    exact = geometry.circular_conv(X, W, b)
    X32, W32, b32 = X.float(), W.float(), b.float()
    floor = ac.relative_max_error(geometry.circular_conv(X32, W32, b32), exact)
    assert 1e-9 < floor < 1e-6
    errors = [ac.relative_max_error(ac.conv_via_attention(X32, W32, a, b32), exact) for a in (25.0, 30.0, 40.0)]
    assert max(errors) < 3 * floor
    assert ac.relative_max_error(ac.conv_via_attention(X, W, 30.0, b), exact) < floor / 100


def test_the_output_keeps_the_input_dtype_and_layout():
    X, W, b = random_conv(9, 2, batch=2, channels=3, out_channels=5, size=(6, 4), k=3, dtype=torch.float32)
    out = ac.conv_via_attention(X, W, 5.0, b)
    assert out.dtype == torch.float32 and tuple(out.shape) == (2, 5, 6, 4)


# ---------------------------------------------------------------------------
# rho, the leak and the float32 threshold
# ---------------------------------------------------------------------------

def test_rho_is_the_lattice_sum_in_one_and_two_dimensions():
    alphas = np.array([0.2, 1.0, 3.0])
    z = np.arange(-60, 61)
    one = np.exp(-alphas[:, None] * z**2).sum(axis=1) - 1
    zz = z[:, None] ** 2 + z[None, :] ** 2
    two = np.exp(-alphas[:, None, None] * zz).sum(axis=(1, 2)) - 1
    np.testing.assert_allclose(ac.rho(alphas, 1), one, rtol=1e-12)
    np.testing.assert_allclose(ac.rho(alphas, 2), two, rtol=1e-12)


def test_rho_approaches_2_and_4_times_exp_minus_alpha():
    for dim, multiple in ((1, 2), (2, 4)):
        assert ac.rho(30.0, dim) / (multiple * np.exp(-30.0)) == pytest.approx(1, rel=1e-10)


@pytest.mark.parametrize("shape", [(9,), (40,), (5, 6), (20, 20)])
def test_a_heads_weight_off_target_never_exceeds_rho_over_one_plus_rho(shape):
    targets = geometry.kernel_offsets(3, len(shape))
    for alpha in (0.1, 0.5, 2.0):
        A = ac.positional_attention(shape, targets, alpha)
        leak = 1 - A.amax(dim=-1)
        assert float(leak.max()) <= ac.off_target_bound(alpha, len(shape)) + 1e-15


def test_on_a_large_grid_the_leak_reaches_the_bound():
    A = ac.positional_attention((64,), np.array([[0]]), 0.3)
    assert float(1 - A[0, 0, 0]) == pytest.approx(float(ac.off_target_bound(0.3, 1)), rel=1e-12)


def test_the_threshold_alpha_puts_the_leak_at_the_requested_level():
    for dim in (1, 2):
        alpha = ac.alpha_where_leak_is(ac.FLOAT32_ROUNDING_UNIT, dim)
        assert float(ac.off_target_bound(alpha, dim)) == pytest.approx(ac.FLOAT32_ROUNDING_UNIT, rel=1e-9)
    assert ac.alpha_where_leak_is(1e-8, 2) > ac.alpha_where_leak_is(1e-8, 1) > ac.alpha_where_leak_is(1e-4, 1)
    assert ac.FLOAT32_ROUNDING_UNIT == 2.0**-24


# ---------------------------------------------------------------------------
# What fits in a layer
# ---------------------------------------------------------------------------

def test_the_largest_kernel_is_the_largest_odd_k_with_k_squared_heads():
    for h in range(1, 60):
        k, channels = ac.largest_kernel(h, head_dim=32, out_dim=20)
        assert k % 2 == 1 and k * k <= h < (k + 2) ** 2
        assert channels == 20
    assert ac.largest_kernel(9, head_dim=16, out_dim=100) == (3, 16)


def test_heads_for_a_full_convolution_cover_every_offset_and_the_full_rank():
    assert ac.heads_for_conv(3, in_channels=8, out_channels=8, head_dim=8) == 9
    assert ac.heads_for_conv(3, in_channels=9, out_channels=9, head_dim=8) == 18
    assert ac.heads_for_conv(5, in_channels=2, out_channels=100, head_dim=4) == 25


def test_the_timm_configuration_agrees_with_the_models_projection_shapes():
    import timm

    shape = ac.timm_attention_shape("vit_tiny_patch16_224")
    with torch.device("meta"):
        model = timm.create_model("vit_tiny_patch16_224", pretrained=False)
    qkv = model.blocks[-1].attn.qkv
    assert qkv.in_features == shape["embed_dim"]
    assert qkv.out_features == 3 * shape["num_heads"] * shape["head_dim"]
    assert shape["depth"] == len(model.blocks)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

def test_bad_convolution_inputs_are_rejected():
    X, W, b = random_conv(0, 2, batch=1, channels=3, out_channels=2, size=6, k=3)
    cases = [
        (X, torch.zeros(2, 3, 4, 4, dtype=F64), None, "odd"),
        (X, torch.zeros(2, 3, 3, 5, dtype=F64), None, "square"),
        (X[:, :, :2, :], W, None, "larger than the input"),
        (X[:, :2], W, None, "channels"),
        (X[0], W, None, r"\(B, C, H, W\)"),
        (X, W[..., 0], None, r"\(B, C, L\)"),
        (X, torch.zeros(2, 3, dtype=F64), None, r"\(C_out, C, k\)"),
        (X, W, torch.zeros(3, dtype=F64), "bias"),
        (X.long(), W, None, "floating-point"),
        (X.numpy(), W, None, "torch.Tensor"),
    ]
    for X_, W_, b_, match in cases:
        with pytest.raises(ValueError, match=match):
            ac.conv_via_attention(X_, W_, 1.0, b_)
    for alpha in (0.0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="alpha"):
            ac.conv_via_attention(X, W, alpha)


def test_bad_attention_weights_are_rejected():
    W = torch.zeros(6, 6)
    with pytest.raises(ValueError, match="num_heads"):
        ac.AttentionWeights(W, W, W, W, num_heads=0)
    with pytest.raises(ValueError, match="W_V"):
        ac.AttentionWeights(W, W, torch.zeros(6, 5), W, num_heads=2)
    with pytest.raises(ValueError, match="W_O"):
        ac.AttentionWeights(W, W, W, torch.zeros(4, 6), num_heads=2)
    with pytest.raises(ValueError, match=r"\(B, N, C=6\)"):
        ac.multi_head_attention(torch.zeros(2, 3, 5), ac.AttentionWeights(W, W, W, W, num_heads=2))
    with pytest.raises(ValueError, match="MultiheadAttention"):
        ac.weights_from_torch(torch.nn.Linear(3, 3))
    from timm.layers.attention import Attention
    with pytest.raises(ValueError, match="normalisation"):
        ac.weights_from_timm(Attention(8, num_heads=2, qk_norm=True, norm_layer=torch.nn.LayerNorm))
    with pytest.raises(ValueError, match="timm's Attention"):
        ac.weights_from_timm(torch.nn.Linear(3, 3))
    with pytest.raises(ValueError, match="attention must be"):
        ac.sum_over_heads(torch.zeros(1, 4, 3), torch.zeros(2, 5, 5), torch.zeros(2, 3, 3))


def test_bad_sizes_and_levels_are_rejected():
    with pytest.raises(ValueError, match="alpha"):
        ac.rho(0.0)
    with pytest.raises(ValueError, match="dim"):
        ac.rho(1.0, dim=3)
    with pytest.raises(ValueError, match="level"):
        ac.alpha_where_leak_is(0.7)
    with pytest.raises(ValueError, match="num_heads"):
        ac.largest_kernel(0, 64, 768)
    with pytest.raises(ValueError, match="head_dim"):
        ac.heads_for_conv(3, 8, 8, head_dim=0)
    with pytest.raises(ValueError, match="odd"):
        geometry.kernel_offsets(4, 2)
    with pytest.raises(ValueError, match="targets"):
        ac.positional_attention((5, 5), np.zeros((3, 1)), 1.0)
    with pytest.raises(ValueError, match="no ViT blocks"):
        ac.timm_attention_shape("resnet18")

