"""What a ViT learns in place of locality: attention distances and rollout, checked against loops and exact cases."""

import math

import numpy as np
import pytest

from vitbias import locality as L

# (leading axes, H_p, W_p, P, n_prefix): non-square grids, every prefix count, both patch sizes.
CASES = [
    ((2,), 3, 5, 4, 0),
    ((2,), 3, 5, 16, 1),
    ((2, 3), 5, 3, 16, 2),
    ((2, 3), 3, 5, 4, 1),
    ((2,), 4, 4, 16, 2),
    ((2, 3), 2, 3, 4, 0),
]
HEADS = 3


def dirichlet_maps(seed, lead, heads, N):
    """Random attention maps ``lead + (heads, N, N)``: every row drawn from a flat Dirichlet."""
    return np.random.default_rng(seed).dirichlet(np.ones(N), size=lead + (heads, N))


def brute_force_mean_attention_distance(A, H_p, W_p, P, n_prefix, renormalise=True):
    """The definition, one image, head and query at a time, distances from divmod and math.hypot."""
    A = np.asarray(A, dtype=float)
    heads, N = A.shape[-3], A.shape[-1]
    images = A.reshape(-1, heads, N, N)
    total = [0.0] * heads
    for b in range(images.shape[0]):
        for h in range(heads):
            for q in range(H_p * W_p):
                weighted, mass = 0.0, 0.0
                for k in range(H_p * W_p):
                    (rq, cq), (rk, ck) = divmod(q, W_p), divmod(k, W_p)
                    weight = images[b, h, n_prefix + q, n_prefix + k]
                    weighted += weight * P * math.hypot(rq - rk, cq - ck)
                    mass += weight
                total[h] += weighted / mass if renormalise else weighted
    return np.array(total) / (images.shape[0] * H_p * W_p)


def brute_force_rollout(A_layers, n_prefix, H_p, W_p):
    """Heads averaged, half residual, rows renormalised, the product by loops, then the row read off."""
    lead, (heads, N) = A_layers[0].shape[:-3], A_layers[0].shape[-3:-1]
    out = np.empty((math.prod(lead), H_p * W_p))
    for b in range(out.shape[0]):
        R = np.eye(N)
        for A in A_layers:
            maps = A.reshape(-1, heads, N, N)[b]
            hat = np.zeros((N, N))
            for q in range(N):
                for k in range(N):
                    hat[q, k] = 0.5 * sum(maps[h, q, k] for h in range(heads)) / heads + 0.5 * (q == k)
                hat[q] /= hat[q].sum()
            product = np.zeros((N, N))
            for i in range(N):
                for j in range(N):
                    product[i, j] = sum(hat[i, m] * R[m, j] for m in range(N))
            R = product
        out[b] = R[0, n_prefix:] if n_prefix else R.mean(axis=0)
    return out.reshape(lead + (H_p, W_p))


def uniform_maps(lead, heads, N):
    return np.full(lead + (heads, N, N), 1.0 / N)


# ---------------------------------------------------------------------------
# Mean attention distance
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("renormalise", [True, False])
@pytest.mark.parametrize("seed, case", list(enumerate(CASES)))
def test_mean_attention_distance_agrees_with_a_loop_over_images_heads_and_queries(seed, case, renormalise):
    lead, H_p, W_p, P, n_prefix = case
    A = dirichlet_maps(seed, lead, HEADS, n_prefix + H_p * W_p)
    ours = L.mean_attention_distance(A, H_p, W_p, P, n_prefix, renormalise=renormalise)
    assert ours.shape == (HEADS,)
    np.testing.assert_allclose(ours, brute_force_mean_attention_distance(A, H_p, W_p, P, n_prefix, renormalise),
                               rtol=1e-12)


@pytest.mark.parametrize("n_prefix", [0, 1, 2])
def test_a_head_that_attends_only_to_itself_is_at_zero_pixels(n_prefix):
    A = np.broadcast_to(np.eye(n_prefix + 12), (2, 4, n_prefix + 12, n_prefix + 12))
    np.testing.assert_array_equal(L.mean_attention_distance(A, 3, 4, 16, n_prefix), np.zeros(4))


@pytest.mark.parametrize("n_prefix", [0, 1, 2])
@pytest.mark.parametrize("H_p, W_p, P", [(14, 14, 16), (3, 5, 4)])
def test_uniform_attention_is_at_the_grids_mean_distance(H_p, W_p, P, n_prefix):
    A = uniform_maps((2,), 3, n_prefix + H_p * W_p)
    ours = L.mean_attention_distance(A, H_p, W_p, P, n_prefix)
    assert np.abs(ours - L.uniform_attention_distance(H_p, W_p, P)).max() <= 1e-12


def test_uniform_attention_on_the_14x14_grid_of_16px_patches_is_about_116px():
    assert abs(L.uniform_attention_distance(14, 14, 16) - 116) <= 1


def test_uniform_attention_distance_is_the_mean_over_all_ordered_pairs_self_included():
    # A 1 x 2 grid: pairs (0, 0), (0, 1), (1, 0), (1, 1) at 0, P, P, 0.
    assert L.uniform_attention_distance(1, 2, 16) == 8.0


@pytest.mark.parametrize("n_prefix", [1, 2])
@pytest.mark.parametrize("w", [0.25, 0.5, 0.9])
def test_without_renormalising_a_prefix_weight_w_scales_the_distance_by_one_minus_w(w, n_prefix):
    H_p, W_p, heads = 3, 5, 4
    patches = dirichlet_maps(7, (2,), heads, H_p * W_p)
    prefix = np.random.default_rng(8).dirichlet(np.ones(n_prefix), size=(2, heads, H_p * W_p))
    A = np.zeros((2, heads, n_prefix + H_p * W_p, n_prefix + H_p * W_p))
    A[..., n_prefix:, :n_prefix] = w * prefix
    A[..., n_prefix:, n_prefix:] = (1 - w) * patches
    A[..., :n_prefix, :] = 1.0 / A.shape[-1]  # prefix queries: not measured
    renormalised = L.mean_attention_distance(A, H_p, W_p, 16, n_prefix)
    np.testing.assert_allclose(renormalised, L.mean_attention_distance(patches, H_p, W_p, 16, 0), rtol=1e-12)
    np.testing.assert_allclose(L.mean_attention_distance(A, H_p, W_p, 16, n_prefix, renormalise=False),
                               (1 - w) * renormalised, rtol=1e-12)


def test_a_query_with_all_its_weight_on_the_prefix_cannot_be_renormalised_but_counts_zero_without():
    A = uniform_maps((1,), 2, 1 + 6)
    A[0, 1, 1 + 4] = np.eye(7)[0]  # head 1, patch query 4: everything on [CLS]
    with pytest.raises(ValueError, match="1 patch query puts its whole weight on prefix keys.*patch query 4, head 1"):
        L.mean_attention_distance(A, 2, 3, 16, 1)
    plain = L.mean_attention_distance(A, 2, 3, 16, 1, renormalise=False)
    assert plain[1] < plain[0]
    np.testing.assert_allclose(plain, brute_force_mean_attention_distance(A, 2, 3, 16, 1, renormalise=False))


# ---------------------------------------------------------------------------
# Attention rollout
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed, case", list(enumerate(CASES)))
def test_attention_rollout_agrees_with_loops_over_images_heads_and_queries(seed, case):
    lead, H_p, W_p, _, n_prefix = case
    N = n_prefix + H_p * W_p
    A_layers = [dirichlet_maps(10 * seed + layer, lead, HEADS, N) for layer in range(3)]
    ours = L.attention_rollout(A_layers, n_prefix, H_p, W_p)
    assert ours.shape == lead + (H_p, W_p)
    np.testing.assert_allclose(ours, brute_force_rollout(A_layers, n_prefix, H_p, W_p), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("n_prefix", [0, 1, 2])
def test_attention_rollout_reads_the_first_row_or_the_mean_patch_row_of_the_rollout_matrix(n_prefix):
    H_p, W_p = 3, 5
    A_layers = [dirichlet_maps(20 + layer, (2, 3), HEADS, n_prefix + H_p * W_p) for layer in range(4)]
    R = L.rollout_matrix(A_layers)
    expected = R[..., 0, n_prefix:] if n_prefix else R.mean(axis=-2)
    np.testing.assert_allclose(L.attention_rollout(A_layers, n_prefix, H_p, W_p),
                               expected.reshape((2, 3, H_p, W_p)), rtol=1e-12, atol=1e-15)


def test_the_rows_of_the_rollout_matrix_sum_to_one():
    A_layers = [dirichlet_maps(30 + layer, (2, 3), HEADS, 1 + 15) for layer in range(6)]
    R = L.rollout_matrix(A_layers)
    assert R.shape == (2, 3, 16, 16) and R.min() >= 0
    np.testing.assert_allclose(R.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n_prefix", [1, 2])
def test_rollout_of_one_identity_layer_gives_the_first_token_nothing_from_the_patches(n_prefix):
    A = np.broadcast_to(np.eye(n_prefix + 6), (2, 3, n_prefix + 6, n_prefix + 6))
    np.testing.assert_array_equal(L.rollout_matrix([A]), np.broadcast_to(np.eye(n_prefix + 6), (2,) + A.shape[-2:]))
    np.testing.assert_array_equal(L.attention_rollout([A], n_prefix, 2, 3), np.zeros((2, 2, 3)))


def test_rollout_of_one_identity_layer_without_prefix_is_uniform():
    A = np.broadcast_to(np.eye(6), (2, 3, 6, 6))
    np.testing.assert_allclose(L.attention_rollout([A], 0, 2, 3), np.full((2, 2, 3), 1 / 6), rtol=1e-15)


@pytest.mark.parametrize("layers", [1, 5])
def test_rollout_of_uniform_maps_without_prefix_is_uniform(layers):
    A = uniform_maps((2,), 3, 15)
    np.testing.assert_allclose(L.attention_rollout([A] * layers, 0, 3, 5), np.full((2, 3, 5), 1 / 15), rtol=1e-12)


# ---------------------------------------------------------------------------
# Receptive fields
# ---------------------------------------------------------------------------


def test_3x3_convolutions_cover_the_14x14_grid_at_layer_7():
    np.testing.assert_array_equal(L.conv_receptive_field(14, 3, 9), [9, 25, 49, 81, 121, 169, 196, 196, 196])


def test_5x5_convolutions_cover_the_14x14_grid_at_layer_4():
    np.testing.assert_array_equal(L.conv_receptive_field(14, 5, 4), [25, 81, 169, 196])


def test_a_receptive_field_is_clipped_on_each_side_of_a_rectangular_grid():
    # 3 x 5 grid, centre (1, 2): 3 x 3, then 3 x 5 once the rows are used up.
    np.testing.assert_array_equal(L.conv_receptive_field((3, 5), 3, 3), [9, 15, 15])
    np.testing.assert_array_equal(L.conv_receptive_field(14, 1, 3), [1, 1, 1])


def test_attention_sees_the_whole_grid_from_the_first_layer():
    np.testing.assert_array_equal(L.attention_receptive_field(14, 3), [196, 196, 196])
    np.testing.assert_array_equal(L.attention_receptive_field((3, 5), 2), [15, 15])
    assert L.conv_receptive_field(14, 3, 7)[-1] == L.attention_receptive_field(14, 1)[0]


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


def good_maps(lead=(2,), n_prefix=1, H_p=2, W_p=3):
    return dirichlet_maps(0, lead, 2, n_prefix + H_p * W_p)


def with_entry(A, index, value):
    A = A.copy()
    A[index] = value
    return A


def negative_row():
    A = good_maps()
    A[0, 0, 2, :] = np.full(7, 1.1 / 6)
    A[0, 0, 2, 3] = -0.1
    return A


BAD_MAPS = [
    (good_maps()[..., :6], "square"),
    (good_maps()[0, 0], r"\(\.\.\., heads, N, N\)"),
    (good_maps(H_p=3), "do not match the grid.*1 \\+ 2 x 3 = 7"),
    (with_entry(good_maps(), (1, 0, 3, 2), 5.0), "sum to 1 within 1e-05"),
    (0.999 * good_maps(), "sum to 1"),
    (with_entry(good_maps(), (0, 1, 0, 0), np.nan), "sum to 1"),
    (negative_row(), "non-negative"),
]


@pytest.mark.parametrize("A, match", BAD_MAPS)
def test_bad_attention_maps_are_refused_by_both_functions(A, match):
    with pytest.raises(ValueError, match=match):
        L.mean_attention_distance(A, 2, 3, 16, 1)
    with pytest.raises(ValueError, match=match):
        L.attention_rollout([good_maps(), A] if A.shape == good_maps().shape else [A], 1, 2, 3)


@pytest.mark.parametrize("n_prefix", [-1, 1.0, True, "1", None])
def test_a_prefix_count_that_is_not_a_non_negative_integer_is_refused(n_prefix):
    with pytest.raises(ValueError, match="n_prefix must be a non-negative integer"):
        L.mean_attention_distance(good_maps(), 2, 3, 16, n_prefix)
    with pytest.raises(ValueError, match="n_prefix must be a non-negative integer"):
        L.attention_rollout([good_maps()], n_prefix, 2, 3)


@pytest.mark.parametrize("H_p, W_p, P, match", [
    (0, 6, 16, "H_p must be a positive integer"),
    (2, -3, 16, "W_p must be a positive integer"),
    (2, 3, 0, "P must be a positive integer"),
    (2, 3, -16, "P must be a positive integer"),
    (2.0, 3, 16, "H_p must be a positive integer"),
])
def test_grid_sides_and_patch_sizes_that_are_not_positive_are_refused(H_p, W_p, P, match):
    with pytest.raises(ValueError, match=match):
        L.mean_attention_distance(good_maps(), H_p, W_p, P, 1)
    with pytest.raises(ValueError, match=match):
        L.uniform_attention_distance(H_p, W_p, P)
    if P > 0:
        with pytest.raises(ValueError, match=match):
            L.attention_rollout([good_maps()], 1, H_p, W_p)


def test_an_empty_list_of_layers_is_refused():
    with pytest.raises(ValueError, match="A_layers is empty"):
        L.attention_rollout([], 1, 2, 3)
    with pytest.raises(ValueError, match="A_layers is empty"):
        L.rollout_matrix([])


def test_layers_of_different_shapes_are_refused():
    with pytest.raises(ValueError, match="one shape.*layer 1"):
        L.attention_rollout([good_maps(), good_maps(lead=(3,))], 1, 2, 3)
    with pytest.raises(ValueError, match="one shape.*layer 2"):
        L.rollout_matrix([good_maps(), good_maps(), good_maps(lead=(2, 1))])


def test_the_layer_at_fault_is_named():
    with pytest.raises(ValueError, match="layer 2 has N = 8 tokens"):
        L.attention_rollout([good_maps(), good_maps(), good_maps(n_prefix=2)], 1, 2, 3)


@pytest.mark.parametrize("args, match", [
    ((14, 4, 3), "kernel must be a positive odd integer"),
    ((14, 0, 3), "kernel must be a positive odd integer"),
    ((14, 3, 0), "layers must be a positive integer"),
    ((0, 3, 3), "a grid side must be a positive integer"),
    (((14, 14, 14), 3, 3), "integer or a pair of integers"),
])
def test_bad_receptive_field_arguments_are_refused(args, match):
    with pytest.raises(ValueError, match=match):
        L.conv_receptive_field(*args)


def test_bad_attention_receptive_field_arguments_are_refused():
    with pytest.raises(ValueError, match="layers must be a positive integer"):
        L.attention_receptive_field(14, 0)
    with pytest.raises(ValueError, match="a grid side must be a positive integer"):
        L.attention_receptive_field((14, -1), 2)


def test_maps_of_a_shuffled_model_read_in_the_original_grid_undo_the_shuffle():
    """A ViT on shuffled images whose attention is the original's, shuffled alike, maps back exactly."""
    from vitbias import permute

    rng = np.random.default_rng(3)
    original = rng.dirichlet(np.ones(17), size=(2, 17))            # (heads, N, N), one prefix token
    order = permute.patch_permutation((4, 4), 1.0, seed=0)
    token = np.concatenate([[0], 1 + order])                        # token i of the shuffled image: original token
    shuffled = original[:, token][:, :, token]
    np.testing.assert_array_equal(L.maps_in_original_grid(shuffled, order, 1), original)
    with pytest.raises(ValueError, match="permutation"):
        L.maps_in_original_grid(shuffled, order[:-1], 1)


def test_position_similarity_is_one_on_the_diagonal_and_symmetric():
    rng = np.random.default_rng(0)
    table = rng.standard_normal((1, 1 + 12, 8))
    S = L.position_similarity(table, 1)
    assert S.shape == (12, 12)
    np.testing.assert_allclose(np.diag(S), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(S, S.T, rtol=0, atol=1e-12)


def test_similarity_at_distance_averages_exactly_the_pairs_it_names():
    S = np.arange(16.0 * 16).reshape(16, 16)
    neighbours = [(q, k) for q in range(16) for k in range(16)
                  if abs(q // 4 - k // 4) + abs(q % 4 - k % 4) == 1]
    assert L.similarity_at_distance(S, 4, 4, 1, 1) == pytest.approx(np.mean([S[p] for p in neighbours]))
    assert len(neighbours) == 2 * 2 * 4 * 3  # 24 edges of a 4 x 4 grid, each counted both ways
    with pytest.raises(ValueError, match="no pair"):
        L.similarity_at_distance(S, 4, 4, 10)


def test_attention_of_a_vit_has_one_map_per_layer_and_head_with_rows_summing_to_one():
    import torch

    from vitbias import data, models

    torch.manual_seed(0)
    model = models.build({"kind": "vit", "img_size": 32, "patch_size": 8, "embed_dim": 16, "depth": 2,
                          "num_heads": 2})
    maps = L.vit_attention(model, data.shapes(5, seed=0), count=3)
    assert maps.shape == (3, 2, 2, 17, 17)
    np.testing.assert_allclose(maps.sum(-1), 1.0, rtol=0, atol=1e-5)


def test_rank_correlation_is_one_for_the_same_order_and_minus_one_for_the_reverse():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4, 4))
    np.testing.assert_allclose(L.rank_correlation(a, 2 * a + 1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(L.rank_correlation(a, -a), -1.0, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="one shape"):
        L.rank_correlation(a, a[:, :2])


def test_a_model_that_reads_one_patch_is_influenced_by_that_patch_only():
    import torch

    from vitbias import data

    class TopLeft(torch.nn.Module):
        def forward(self, x):
            return torch.stack([x[:, :, :8, :8].sum(dim=(1, 2, 3)), -x[:, :, :8, :8].sum(dim=(1, 2, 3))], dim=1)

    norms = L.patch_gradient_norms(TopLeft(), data.shapes(4, seed=0), patch=8, count=4)
    assert norms.shape == (4, 4, 4)
    np.testing.assert_allclose(norms[:, 0, 0], np.sqrt(3 * 64), rtol=1e-6)  # d(+-sum)/dx = +-1 on 192 pixels
    assert np.count_nonzero(norms) == 4


@pytest.mark.parametrize("by_layer, of_maps", [
    (L.distance_by_layer, lambda maps: L.mean_attention_distance(maps, 4, 4, 8, 1)),
    (L.neighbour_weight_by_layer, lambda maps: L.neighbour_weight(maps, 4, 4, 1)),
], ids=["distance", "neighbour weight"])
def test_a_statistic_by_layer_in_batches_equals_the_statistic_of_all_maps_at_once(by_layer, of_maps):
    import torch

    from vitbias import data, models

    torch.manual_seed(0)
    model = models.build({"kind": "vit", "img_size": 32, "patch_size": 8, "embed_dim": 16, "depth": 2,
                          "num_heads": 2})
    images = data.shapes(7, seed=0)
    maps = L.vit_attention(model, images, count=7)
    expected = np.stack([of_maps(maps[:, layer]) for layer in range(2)])
    np.testing.assert_allclose(by_layer(model, images, count=7, batch_size=3), expected, rtol=1e-6, atol=0)


def test_distance_by_layer_feeds_a_224_pixel_vit_ti_16_resized_images_on_its_14_by_14_grid():
    import torch

    from vitbias import data, vit

    torch.manual_seed(0)
    model = vit.ViT(vit.VIT_TI_16.replace(depth=2))
    distance = L.distance_by_layer(model, data.shapes(2, seed=0), count=2, image_size=224,
                                   mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))
    assert distance.shape == (2, 3)
    # Near-uniform attention at initialisation: close to the 14 x 14 grid's uniform distance.
    np.testing.assert_allclose(distance, L.uniform_attention_distance(14, 14, 16), rtol=0.05)


def test_leaving_out_the_query_itself_changes_only_a_head_that_reads_itself():
    H_p, W_p, P, n_prefix = 3, 4, 8, 1
    N = n_prefix + H_p * W_p
    A = dirichlet_maps(3, (2,), HEADS, N)
    # Looking only at itself, a head is at distance 0; left out, it is where the rest of its weight goes.
    self_heavy = 0.5 * A + 0.5 * np.eye(N)
    D = L.patch_distances(H_p, W_p, P)
    patches = self_heavy[..., n_prefix:, n_prefix:] * (1 - np.eye(H_p * W_p))
    expected = ((patches * D).sum(-1) / patches.sum(-1)).mean(axis=(0, 2))
    np.testing.assert_allclose(L.mean_attention_distance(self_heavy, H_p, W_p, P, n_prefix, exclude_self=True),
                               expected, rtol=1e-12)
    assert np.all(L.mean_attention_distance(self_heavy, H_p, W_p, P, n_prefix, exclude_self=True)
                  > L.mean_attention_distance(self_heavy, H_p, W_p, P, n_prefix))


def test_uniform_attention_without_the_query_itself_looks_as_far_as_the_mean_over_the_other_patches():
    H_p, W_p, P = 3, 4, 8
    D = L.patch_distances(H_p, W_p, P)
    others = D[~np.eye(len(D), dtype=bool)]
    assert L.uniform_attention_distance(H_p, W_p, P, exclude_self=True) == pytest.approx(others.mean(), rel=1e-12)
    uniform = np.full((1, 1, 1 + H_p * W_p, 1 + H_p * W_p), 1 / (1 + H_p * W_p))
    assert L.mean_attention_distance(uniform, H_p, W_p, P, 1, exclude_self=True)[0] == pytest.approx(
        others.mean(), rel=1e-12)
    with pytest.raises(ValueError, match="one patch"):
        L.uniform_attention_distance(1, 1, P, exclude_self=True)


def test_the_neighbours_of_a_patch_are_the_eight_cells_around_it_and_fewer_at_edges_and_corners():
    mask = L.neighbour_mask(3, 4)
    counts = mask.sum(axis=1).reshape(3, 4)
    np.testing.assert_array_equal(counts, [[3, 5, 5, 3], [5, 8, 8, 5], [3, 5, 5, 3]])
    assert not mask.diagonal().any() and (mask == mask.T).all()
    assert L.uniform_neighbour_weight(3, 4) == pytest.approx(counts.mean() / 12)


def test_a_head_that_attends_only_to_its_neighbours_puts_all_its_patch_weight_there_whatever_its_prefix_weight():
    H_p, W_p, n_prefix = 4, 4, 1
    mask = L.neighbour_mask(H_p, W_p)
    A = np.zeros((1, 1, 17, 17))
    A[..., n_prefix:, n_prefix:] = 0.6 * mask / mask.sum(axis=1, keepdims=True)
    A[..., :, 0] += 0.4
    A[..., 0, :] = 1 / 17
    assert L.neighbour_weight(A, H_p, W_p, n_prefix)[0] == pytest.approx(1.0, rel=1e-12)
    uniform = np.full((1, 1, 17, 17), 1 / 17)
    assert L.neighbour_weight(uniform, H_p, W_p, n_prefix)[0] == pytest.approx(L.uniform_neighbour_weight(4, 4))
