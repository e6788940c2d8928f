"""The shared geometry, stated as properties and checked against the libraries' versions."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from vitbias import geometry as G

SEEDS = (0, 1, 2)
F64 = torch.float64


def image(seed, C=3, H=12, W=12, batch=None):
    shape = (C, H, W) if batch is None else (batch, C, H, W)
    return np.random.default_rng(seed).standard_normal(shape)


def random_kernel(seed, O, C, k):
    bound = 1 / np.sqrt(C * k * k)
    rng = np.random.default_rng(100 + seed)
    return rng.uniform(-bound, bound, (O, C, k, k)), rng.uniform(-bound, bound, O)


# ---------------------------------------------------------------------------
# Shifts
# ---------------------------------------------------------------------------


def test_shifts_are_np_roll_and_torch_roll_and_form_a_group():
    x = image(0, H=5, W=7)
    np.testing.assert_array_equal(G.shift(x, (2, 3)), np.roll(x, (2, 3), axis=(1, 2)))
    np.testing.assert_array_equal(G.shift(x, 3), np.roll(x, 3, axis=2))
    assert torch.equal(G.shift(torch.tensor(x), (1, -2)), torch.roll(torch.tensor(x), (1, -2), (1, 2)))
    np.testing.assert_array_equal(G.shift(G.shift(x, (1, 4)), (3, 5)), G.shift(x, (4, 9)))
    np.testing.assert_array_equal(G.shift(x, (5, 7)), x)


# ---------------------------------------------------------------------------
# Patches
# ---------------------------------------------------------------------------


def test_patchify_puts_patch_r_c_in_row_r_Wp_plus_c():
    x = np.arange(2 * 4 * 6, dtype=float).reshape(2, 4, 6)
    Xp = G.patchify(x, 2)
    assert Xp.shape == (6, 8)
    np.testing.assert_array_equal(Xp[1 * 3 + 2], x[:, 2:4, 4:6].reshape(-1))


def test_patchify_lists_the_patches_in_raster_order_channel_by_channel():
    x = torch.randn((2, 3, 8, 12), generator=torch.Generator().manual_seed(0))
    rows = G.patchify(x, 4)
    assert rows.shape == (2, 6, 48)
    for r in range(2):
        for c in range(3):
            expected = x[:, :, 4 * r:4 * r + 4, 4 * c:4 * c + 4].reshape(2, 48)
            assert torch.equal(rows[:, 3 * r + c], expected)


@pytest.mark.parametrize("P", [1, 2, 3, 4, 6, 12])
def test_patchify_is_torch_unfold_with_kernel_and_stride_P(P):
    x = torch.randn((2, 3, 12, 24), generator=torch.Generator().manual_seed(P), dtype=F64)
    assert torch.equal(G.patchify(x, P), F.unfold(x, kernel_size=P, stride=P).transpose(1, 2))


def test_patchify_gives_the_same_numbers_on_numpy_and_torch_and_keeps_leading_axes():
    x = image(1, C=2, H=6, W=8, batch=3)
    rows = G.patchify(x, (3, 2))
    assert isinstance(rows, np.ndarray) and rows.shape == (3, 8, 12)
    np.testing.assert_array_equal(rows, G.patchify(torch.tensor(x), (3, 2)).numpy())
    np.testing.assert_array_equal(G.patchify(x[None], (3, 2))[0], rows)


@pytest.mark.parametrize("H, W", [(12, 12), (8, 12), (6, 10)])
def test_unpatchify_inverts_patchify_for_every_patch_size_that_divides_the_image(H, W):
    x = image(2, C=3, H=H, W=W, batch=2)
    sizes = [(p, q) for p in range(1, H + 1) if H % p == 0 for q in range(1, W + 1) if W % q == 0]
    for patch in sizes:
        np.testing.assert_array_equal(G.unpatchify(G.patchify(x, patch), patch, (3, H, W)), x)
        xt = torch.tensor(x)
        assert torch.equal(G.unpatchify(G.patchify(xt, patch), patch, (3, H, W)), xt)


def test_unpatchify_is_torch_fold_with_kernel_and_stride_P():
    rows = torch.randn((2, 6, 48), generator=torch.Generator().manual_seed(3))
    expected = F.fold(rows.transpose(1, 2), output_size=(8, 12), kernel_size=4, stride=4)
    assert torch.equal(G.unpatchify(rows, 4, (3, 8, 12)), expected)


# ---------------------------------------------------------------------------
# Tokens and grids
# ---------------------------------------------------------------------------


def test_token_grid_conversions_work_on_tensors():
    tokens = torch.arange(24.0).reshape(1, 6, 4)
    grid = G.tokens_to_grid(tokens, (2, 3))
    assert grid.shape == (1, 4, 2, 3)
    assert torch.equal(G.grid_to_tokens(grid), tokens)


def test_grid_to_tokens_is_flatten_then_transpose_for_signals_and_images():
    for shape, dims in (((2, 5, 7), 1), ((2, 5, 3, 4), 2)):
        x = torch.randn(shape, generator=torch.Generator().manual_seed(dims), dtype=F64)
        tokens = G.grid_to_tokens(x, dims)
        assert torch.equal(tokens, x.flatten(2).transpose(1, 2))
        assert torch.equal(G.tokens_to_grid(tokens, shape[2:]), x)
        np.testing.assert_array_equal(G.grid_to_tokens(x.numpy(), dims), tokens.numpy())


def test_token_n_of_the_grid_is_the_patch_embedding_of_patch_n():
    x = image(4, H=8, W=12, batch=2)
    conv = nn.Conv2d(3, 5, kernel_size=4, stride=4).double()
    with torch.no_grad():
        grid = conv(torch.tensor(x))
    weight = conv.weight.detach().reshape(5, -1)
    by_rows = G.patchify(torch.tensor(x), 4) @ weight.T + conv.bias.detach()
    torch.testing.assert_close(G.grid_to_tokens(grid), by_rows, rtol=0, atol=1e-13)


# ---------------------------------------------------------------------------
# Coordinates and offsets
# ---------------------------------------------------------------------------


def test_grid_coordinates_list_the_cells_in_raster_order():
    coords = G.grid_coordinates((3, 4))
    assert coords.shape == (12, 2)
    np.testing.assert_array_equal(coords, np.stack(np.divmod(np.arange(12), 4), axis=1))
    np.testing.assert_array_equal(G.grid_coordinates((5,)), np.arange(5)[:, None])
    np.testing.assert_array_equal(G.grid_coordinates(2), [[0, 0], [0, 1], [1, 0], [1, 1]])


def test_pairwise_offsets_are_key_minus_query():
    coords = np.array([[0, 0], [2, 1], [-1, 3]])
    offsets = G.pairwise_offsets(coords)
    assert offsets.shape == (3, 3, 2)
    for q in range(3):
        for k in range(3):
            np.testing.assert_array_equal(offsets[q, k], coords[k] - coords[q])


def test_relative_offsets_wrap_around_the_torus():
    for n in (5, 6):
        delta = G.relative_offsets((n,))[..., 0]
        assert delta.min() == -(n // 2) and delta.max() == n - n // 2 - 1
        q, k = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        assert np.all((q + delta - k) % n == 0)
        assert np.all(np.sort(delta, axis=1) == np.sort(delta[0]))  # every query sees the same offsets


def test_kernel_offsets_follow_the_flattened_kernel_order():
    assert G.kernel_offsets(3, 1).ravel().tolist() == [-1, 0, 1]
    assert G.kernel_offsets(3, 2).tolist() == [[-1, -1], [-1, 0], [-1, 1], [0, -1], [0, 0], [0, 1],
                                               [1, -1], [1, 0], [1, 1]]


# ---------------------------------------------------------------------------
# Circular convolution: by hand (NumPy), by the library (torch), as a matrix
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k, stride, size", [(1, 1, 6), (3, 1, 8), (3, 2, 8), (5, 2, 12), (3, 4, 12), (5, 3, 9)])
def test_conv2d_is_torch_conv2d_with_circular_or_zero_padding(seed, k, stride, size):
    x = image(seed, C=2, H=size, W=size, batch=2)
    w, b = random_kernel(seed, 3, 2, k)
    xt, wt, bt = map(torch.tensor, (x, w, b))
    a = k // 2
    circular = F.conv2d(F.pad(xt, (a, a, a, a), mode="circular"), wt, bt, stride=stride)
    zeros = F.conv2d(xt, wt, bt, stride=stride, padding=a)
    np.testing.assert_allclose(G.conv2d(x, w, b, stride=stride), circular.numpy(), atol=1e-13)
    np.testing.assert_allclose(G.conv2d(x, w, b, stride=stride, padding="zeros"), zeros.numpy(), atol=1e-13)


def test_conv2d_matches_a_conv2d_module_with_padding_mode_circular():
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 5, 3, padding=1, padding_mode="circular").double()
    x = image(0, H=10, W=14)
    with torch.no_grad():
        expected = conv(torch.tensor(x)).numpy()
    got = G.conv2d(x, conv.weight.detach().numpy(), conv.bias.detach().numpy())
    np.testing.assert_allclose(got, expected, atol=1e-13)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k, H, W", [(1, 5, 6), (3, 6, 6), (5, 7, 9)])
def test_the_hand_written_conv2d_and_the_library_circular_conv_agree(seed, k, H, W):
    x = image(seed, C=2, H=H, W=W, batch=2)
    w, b = random_kernel(seed, 4, 2, k)
    library = G.circular_conv(torch.tensor(x), torch.tensor(w), torch.tensor(b))
    np.testing.assert_allclose(G.conv2d(x, w, b), library.numpy(), rtol=1e-12, atol=1e-13)


def test_the_library_conv_is_a_circular_cross_correlation():
    g = torch.Generator().manual_seed(3)
    X, W, b = (torch.randn(s, generator=g, dtype=F64) for s in ((1, 2, 5, 6), (3, 2, 3, 3), (3,)))
    a = 1
    expected = np.zeros((1, 3, 5, 6))
    for u in range(3):  # taps, not pixels
        for v in range(3):
            shifted = np.roll(X.numpy(), (-(u - a), -(v - a)), axis=(2, 3))     # x[r + u - a, c + v - a]
            expected += np.einsum("bchw,oc->bohw", shifted, W[:, :, u, v].numpy())
    expected += b.numpy()[None, :, None, None]
    np.testing.assert_allclose(G.circular_conv(X, W, b).numpy(), expected, rtol=1e-12, atol=1e-12)


def test_circulant_matches_circular_cross_correlation():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(11), rng.standard_normal(5)
    expected = [sum(w[j] * x[(t + j - 2) % 11] for j in range(5)) for t in range(11)]
    np.testing.assert_allclose(x @ G.circulant(w, 11), expected, rtol=1e-13)


@pytest.mark.parametrize("k, n", [(1, 4), (3, 7), (5, 5), (7, 16)])
def test_the_circulant_matrix_is_the_library_conv1d_with_circular_padding(k, n):
    rng = np.random.default_rng(k)
    kernels, x = rng.standard_normal((2, 3, k)), rng.standard_normal((6, n))
    C = G.circulant(kernels, n)
    assert C.shape == (2, 3, n, n)
    library = G.circular_conv(torch.tensor(x)[:, None], torch.tensor(kernels.reshape(6, 1, k)))  # (6, 6, n)
    ours = np.einsum("bi,oit->bot", x, C.reshape(6, n, n))
    np.testing.assert_allclose(ours, library.numpy(), rtol=1e-12, atol=1e-13)


def test_every_entry_of_the_circulant_is_exactly_one_tap_or_zero():
    w = np.array([0.1, -0.3, 0.7])
    C = G.circulant(w, 5)
    t = np.arange(5)
    for j, tap in enumerate(w):
        assert np.all(C[(t + j - 1) % 5, t] == tap)
    assert np.count_nonzero(C) == 15
    assert C.flags["C_CONTIGUOUS"]  # sums over it run in the usual order


# ---------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------


def test_parameter_count_counts_every_scalar_or_only_those_that_train():
    model = nn.Sequential(nn.Linear(3, 4), nn.Conv2d(2, 5, 3))
    assert G.parameter_count(model) == 3 * 4 + 4 + 2 * 5 * 9 + 5
    model[0].weight.requires_grad_(False)
    assert G.parameter_count(model) == 4 + 2 * 5 * 9 + 5
    assert G.parameter_count(model, trainable_only=False) == 3 * 4 + 4 + 2 * 5 * 9 + 5


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


def test_patches_that_do_not_fit_are_rejected():
    x = torch.zeros(1, 3, 8, 8)
    with pytest.raises(ValueError, match="must divide the image size"):
        G.patchify(x, 3)
    with pytest.raises(ValueError, match=r"\(\.\.\., C, H, W\)"):
        G.patchify(x[0, 0], 4)
    with pytest.raises(ValueError, match="expected rows"):
        G.unpatchify(torch.zeros(1, 3, 48), 4, (3, 8, 8))
    with pytest.raises(ValueError, match=r"\(C, H, W\)"):
        G.unpatchify(torch.zeros(1, 4, 48), 4, (8, 8))


def test_grids_that_do_not_fit_are_rejected():
    with pytest.raises(ValueError, match="do not fill"):
        G.tokens_to_grid(np.zeros((5, 4)), (2, 3))
    with pytest.raises(ValueError, match="one or two sides"):
        G.grid_coordinates((2, 3, 4))
    with pytest.raises(ValueError, match="positive integer"):
        G.grid_coordinates((0, 3))
    with pytest.raises(ValueError, match="dims must be 1 or 2"):
        G.grid_to_tokens(np.zeros((2, 3, 4)), dims=3)
    with pytest.raises(ValueError, match="integer or a pair"):
        G.shift(np.zeros((4, 4)), 1.5)
    with pytest.raises(ValueError, match="odd"):
        G.kernel_offsets(4, 2)


def test_bad_convolutions_are_rejected():
    x = image(0, H=8, W=8)
    with pytest.raises(ValueError, match="odd"):
        G.conv2d(x, np.zeros((2, 3, 2, 2)))
    with pytest.raises(ValueError, match="input channels"):
        G.conv2d(x, np.zeros((2, 4, 3, 3)))
    with pytest.raises(ValueError, match="padding"):
        G.conv2d(x, np.zeros((2, 3, 3, 3)), padding="reflect")
    with pytest.raises(ValueError, match="bias"):
        G.conv2d(x, np.zeros((2, 3, 3, 3)), bias=np.zeros(3))
    with pytest.raises(ValueError, match="stride"):
        G.conv2d(x, np.zeros((2, 3, 3, 3)), stride=3)
    with pytest.raises(ValueError, match="odd and at most n"):
        G.circulant(np.ones(4), 8)
    with pytest.raises(ValueError, match="larger than the input"):
        G.circular_conv(torch.zeros(1, 1, 2, 2, dtype=F64), torch.zeros(1, 1, 3, 3, dtype=F64))
    with pytest.raises(ValueError, match="torch.nn.Module"):
        G.parameter_count("model")
