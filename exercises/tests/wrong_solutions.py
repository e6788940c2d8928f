"""Plausible wrong solutions, one function per mistake: the grader must reject every one.

Each is a reference solution (``exercises.solutions``) with one mistake a
reader could make, named after it. ``WRONG`` maps each to its exercise and to
a phrase the grader's hint should contain (None where no hint is singled out).
"""

import numpy as np
import torch
import torch.nn.functional as F

from exercises.solutions.attention_rollout import residual_attention
from exercises.solutions.conv_via_attention import conv_via_attention, wrapped_offsets
from exercises.solutions.equivariance_error import equivariance_error, roll
from exercises.solutions.mean_attention_distance import patch_distances
from exercises.solutions.parameter_counts import parameter_counts

# ---------------------------------------------------------------------------
# equivariance_error, which_shifts_commute
# ---------------------------------------------------------------------------


def _error(f, x, dr, dc, stride, sign=1, normalise=True, search=True, axes=(-2, -1)):
    y = np.asarray(f(x))
    moved = np.asarray(f(np.roll(x, (dr, dc), axis=axes)))
    scale = np.abs(y).max() if normalise else 1.0
    if not search or (dr % stride == 0 and dc % stride == 0):
        return float(np.abs(moved - roll(y, (sign * (dr // stride), sign * (dc // stride)))).max() / scale)
    return float(min(np.abs(moved - roll(y, (a, b))).max()
                     for a in range(y.shape[-2]) for b in range(y.shape[-1])) / scale)


def _pair(shift):
    return (0, shift) if np.ndim(shift) == 0 else shift


def equivariance_error_with_the_wrong_shift_sign(f, x, shift, stride=1):
    return _error(f, x, *_pair(shift), stride, sign=-1)


def equivariance_error_not_relative_to_the_output(f, x, shift, stride=1):
    return _error(f, x, *_pair(shift), stride, normalise=False)


def equivariance_error_rounding_the_output_shift(f, x, shift, stride=1):
    return _error(f, x, *_pair(shift), stride, search=False)


def equivariance_error_reading_one_integer_as_a_vertical_shift(f, x, shift, stride=1):
    return _error(f, x, *((shift, 0) if np.ndim(shift) == 0 else shift), stride)


def equivariance_error_for_single_images_only(f, x, shift, stride=1):
    return _error(f, x, *_pair(shift), stride, axes=(1, 2))


def which_shifts_commute_ignoring_the_stride(f, x, stride=1, tol=1e-8):
    H, W = np.shape(x)[-2:]
    return np.array([[_error(f, x, dr, dc, 1) <= tol for dc in range(W)] for dr in range(H)])


def which_shifts_commute_over_the_output_grid(f, x, stride=1, tol=1e-8):
    H, W = np.shape(x)[-2:]
    return np.array([[equivariance_error(f, x, (dr, dc), stride) <= tol for dc in range(0, W, stride)]
                     for dr in range(0, H, stride)])


# ---------------------------------------------------------------------------
# mean_attention_distance
# ---------------------------------------------------------------------------


def _distance(A, D, queries, keys, renormalise=True):
    block = A[..., queries, :][..., keys]
    d = (block * D).sum(-1)
    if renormalise:
        d = d / block.sum(-1)
    return d.reshape((-1,) + d.shape[-2:]).mean(axis=(0, 2))


def mean_attention_distance_without_dropping_the_prefix(A, H_p, W_p, P, n_prefix):
    """Every token counted, the prefix tokens placed on the first patch's cell."""
    cells = np.concatenate([np.zeros(n_prefix, int), np.arange(H_p * W_p)])
    D = patch_distances(H_p, W_p, P)[cells][:, cells]
    return _distance(A, D, slice(None), slice(None))


def mean_attention_distance_without_renormalising(A, H_p, W_p, P, n_prefix):
    patches = slice(n_prefix, None)
    return _distance(A, patch_distances(H_p, W_p, P), patches, patches, renormalise=False)


def mean_attention_distance_reading_the_first_tokens_as_patches(A, H_p, W_p, P, n_prefix):
    patches = slice(0, H_p * W_p)
    return _distance(A, patch_distances(H_p, W_p, P), patches, patches)


def mean_attention_distance_with_one_class_token_hard_coded(A, H_p, W_p, P, n_prefix):
    return _distance(A, patch_distances(H_p, W_p, P), slice(1, None), slice(1, None))


def mean_attention_distance_in_grid_cells(A, H_p, W_p, P, n_prefix):
    patches = slice(n_prefix, None)
    return _distance(A, patch_distances(H_p, W_p, 1), patches, patches)


def mean_attention_distance_with_rows_and_columns_swapped(A, H_p, W_p, P, n_prefix):
    c, r = np.divmod(np.arange(H_p * W_p), H_p)
    D = P * np.hypot(r[:, None] - r[None], c[:, None] - c[None])
    patches = slice(n_prefix, None)
    return _distance(A, D, patches, patches)


def mean_attention_distance_with_manhattan_distance(A, H_p, W_p, P, n_prefix):
    r, c = np.divmod(np.arange(H_p * W_p), W_p)
    D = P * (np.abs(r[:, None] - r[None]) + np.abs(c[:, None] - c[None]))
    patches = slice(n_prefix, None)
    return _distance(A, D, patches, patches)


# ---------------------------------------------------------------------------
# attention_rollout
# ---------------------------------------------------------------------------


def _rollout(A_layers, n_prefix, H_p, W_p, hat=residual_attention, last_on_left=True, read="row", share=False):
    R = None
    for A in A_layers:
        step = hat(np.asarray(A))
        R = step if R is None else (step @ R if last_on_left else R @ step)
    if read == "column":
        out = R[..., n_prefix:, 0]
    elif n_prefix or read == "first row":
        out = R[..., 0, n_prefix:]
    else:
        out = R.mean(axis=-2)
    if share:
        out = out / out.sum(-1, keepdims=True)
    return out.reshape(out.shape[:-1] + (H_p, W_p))


def _attention_only(A):
    mean = A.mean(axis=-3)
    return mean / mean.sum(-1, keepdims=True)


def _unnormalised(A):
    return 0.5 * A.mean(axis=-3) + 0.5 * np.eye(A.shape[-1])


def _normalised_before_the_residual(A):
    mean = A.mean(axis=-3)
    return 0.5 * mean / mean.sum(-1, keepdims=True) + 0.5 * np.eye(A.shape[-1])


def rollout_without_the_residual_half(A_layers, n_prefix, H_p, W_p):
    return _rollout(A_layers, n_prefix, H_p, W_p, hat=_attention_only)


def rollout_with_the_product_in_the_wrong_order(A_layers, n_prefix, H_p, W_p):
    return _rollout(A_layers, n_prefix, H_p, W_p, last_on_left=False)


def rollout_not_renormalising_rows(A_layers, n_prefix, H_p, W_p):
    return _rollout(A_layers, n_prefix, H_p, W_p, hat=_unnormalised)


def rollout_renormalising_before_adding_the_residual(A_layers, n_prefix, H_p, W_p):
    return _rollout(A_layers, n_prefix, H_p, W_p, hat=_normalised_before_the_residual)


def rollout_renormalising_the_patch_shares(A_layers, n_prefix, H_p, W_p):
    return _rollout(A_layers, n_prefix, H_p, W_p, share=True)


def rollout_reading_a_column(A_layers, n_prefix, H_p, W_p):
    return _rollout(A_layers, n_prefix, H_p, W_p, read="column")


def rollout_reading_the_first_row_without_a_prefix(A_layers, n_prefix, H_p, W_p):
    return _rollout(A_layers, n_prefix, H_p, W_p, read="first row")


def rollout_of_the_last_layer_only(A_layers, n_prefix, H_p, W_p):
    return _rollout(A_layers[-1:], n_prefix, H_p, W_p)


# ---------------------------------------------------------------------------
# conv_via_attention
# ---------------------------------------------------------------------------


def conv_via_attention_computing_a_convolution(X, W_conv, alpha, bias=None):
    """A true convolution: the kernel flipped, as in the signal-processing definition."""
    return conv_via_attention(X, W_conv.flip(dims=tuple(range(2, W_conv.ndim))), alpha, bias)


def conv_via_attention_with_the_kernel_transposed(X, W_conv, alpha, bias=None):
    """Rows and columns of a 2-D kernel swapped (a 1-D kernel is left alone)."""
    return conv_via_attention(X, W_conv.transpose(-1, -2) if W_conv.ndim == 4 else W_conv, alpha, bias)


def conv_via_attention_adding_the_bias_per_head(X, W_conv, alpha, bias=None):
    out = conv_via_attention(X, W_conv, alpha, None)
    if bias is not None:
        heads = W_conv.shape[-1] ** (W_conv.ndim - 2)
        out = out + heads * bias.reshape((-1,) + (1,) * (X.ndim - 2))
    return out


def conv_via_attention_ignoring_alpha(X, W_conv, alpha, bias=None):
    """The limit alpha -> infinity: the circular convolution itself, whatever the sharpness."""
    a = W_conv.shape[-1] // 2
    padded = F.pad(X, (a, a) * (X.ndim - 2), mode="circular")
    conv = F.conv1d if X.ndim == 3 else F.conv2d
    return conv(padded, W_conv, bias)


def conv_via_attention_with_the_nearest_offset(X, W_conv, alpha, bias=None):
    """Each head scores a key by its nearest image on the torus, not by the one wrapped offset."""
    grid, k = tuple(X.shape[2:]), W_conv.shape[-1]
    targets = torch.cartesian_prod(*[torch.arange(k) - k // 2] * len(grid)).reshape(-1, len(grid))
    n = torch.tensor(grid)
    gap = (wrapped_offsets(grid)[None] - targets[:, None, None] + n // 2) % n - n // 2
    weights = torch.softmax(-alpha * (gap**2).sum(-1).to(X.dtype), dim=-1)
    taps = W_conv.flatten(2).permute(2, 1, 0)
    out = torch.einsum("hqk,bkc,hco->bqo", weights, X.flatten(2).transpose(1, 2), taps)
    out = out if bias is None else out + bias
    return out.transpose(1, 2).reshape((X.shape[0], W_conv.shape[0]) + grid)


# ---------------------------------------------------------------------------
# grid_local_mask
# ---------------------------------------------------------------------------


def _mask(H_p, W_p, radius, n_prefix, distance="chebyshev", allowed=np.less_equal, order="rows"):
    if order == "rows":
        r, c = np.divmod(np.arange(H_p * W_p), W_p)
    else:
        c, r = np.divmod(np.arange(H_p * W_p), H_p)
    dr, dc = np.abs(r[:, None] - r[None]), np.abs(c[:, None] - c[None])
    d = {"chebyshev": np.maximum(dr, dc), "manhattan": dr + dc, "euclidean": np.hypot(dr, dc)}[distance]
    mask = np.ones((n_prefix + H_p * W_p,) * 2, dtype=bool)
    mask[n_prefix:, n_prefix:] = allowed(d, radius)
    return mask


def grid_local_mask_hiding_the_prefix_tokens(H_p, W_p, radius, n_prefix=1):
    mask = _mask(H_p, W_p, radius, n_prefix)
    mask[:n_prefix, n_prefix:] = mask[n_prefix:, :n_prefix] = False
    return mask


def grid_local_mask_with_manhattan_distance(H_p, W_p, radius, n_prefix=1):
    return _mask(H_p, W_p, radius, n_prefix, distance="manhattan")


def grid_local_mask_with_euclidean_distance(H_p, W_p, radius, n_prefix=1):
    return _mask(H_p, W_p, radius, n_prefix, distance="euclidean")


def grid_local_mask_one_short_of_the_radius(H_p, W_p, radius, n_prefix=1):
    return _mask(H_p, W_p, radius, n_prefix, allowed=np.less)


def grid_local_mask_with_the_prefix_last(H_p, W_p, radius, n_prefix=1):
    mask = _mask(H_p, W_p, radius, n_prefix)
    return np.roll(mask, (-n_prefix, -n_prefix), axis=(0, 1))


def grid_local_mask_with_a_column_major_grid(H_p, W_p, radius, n_prefix=1):
    return _mask(H_p, W_p, radius, n_prefix, order="columns")


def grid_local_mask_of_floats(H_p, W_p, radius, n_prefix=1):
    return _mask(H_p, W_p, radius, n_prefix).astype(float)


def grid_local_mask_without_a_default_prefix(H_p, W_p, radius, n_prefix=0):
    return _mask(H_p, W_p, radius, n_prefix)


# ---------------------------------------------------------------------------
# embed_linear, block_macs, parameter_counts
# ---------------------------------------------------------------------------


def _embed(images, weight, bias, axes=(0, 2, 3, 1, 4, 5)):
    d, C, P, _ = weight.shape
    patches = images.unfold(2, P, P).unfold(3, P, P)          # (B, C, H/P, W/P, P, P)
    rows = patches.permute(axes).reshape(images.shape[0], -1, C * P * P)
    return rows @ weight.reshape(d, -1).T + bias


def embed_linear_flattening_channels_last(images, weight, bias):
    return _embed(images, weight, bias, axes=(0, 2, 3, 4, 5, 1))


def embed_linear_in_column_major_order(images, weight, bias):
    return _embed(images, weight, bias, axes=(0, 3, 2, 1, 4, 5))


def embed_linear_without_the_bias(images, weight, bias):
    return _embed(images, weight, torch.zeros_like(bias))


def block_macs_with_one_attention_product(tokens, d, mlp_ratio=4.0):
    hidden = int(d * mlp_ratio)
    return 4 * tokens * d * d + 2 * tokens * d * hidden, tokens * tokens * d


def block_macs_assuming_an_mlp_ratio_of_four(tokens, d, mlp_ratio=4.0):
    return 12 * tokens * d * d, 2 * tokens * tokens * d


def block_macs_in_flops(tokens, d, mlp_ratio=4.0):
    hidden = int(d * mlp_ratio)
    return 2 * (4 * tokens * d * d + 2 * tokens * d * hidden), 4 * tokens * tokens * d


def _adjusted(config, part, change):
    parts = parameter_counts(config)
    parts[part] += change
    parts["total"] += change
    return parts


def parameter_counts_without_the_patch_bias(config):
    return _adjusted(config, "patch embedding", -config.embed_dim)


def parameter_counts_with_positions_for_patches_only(config):
    prefix = int(config.class_token) + config.reg_tokens
    return _adjusted(config, "position table", -prefix * config.embed_dim if config.pos_embed else 0)


def parameter_counts_without_the_blocks_layernorms(config):
    return _adjusted(config, "encoder blocks", -4 * config.embed_dim * config.depth)


def parameter_counts_with_a_head_even_without_classes(config):
    return _adjusted(config, "head", config.embed_dim if config.num_classes == 0 else 0)


# ---------------------------------------------------------------------------
# toy_crossing_rows, allowed_pairs
# ---------------------------------------------------------------------------

def toy_crossing_rows_without_the_plus_one(n, sigma, beta):
    return n + sigma**2 * n / beta**2


def toy_crossing_rows_with_unsquared_errors(n, sigma, beta):
    return n + 1 + sigma * n / beta


def _axis_pairs(length, radius):
    reach = min(radius, length - 1)
    return length + 2 * sum(length - d for d in range(1, reach + 1))


def allowed_pairs_without_the_prefix(H_p, W_p, radius, n_prefix=1):
    return _axis_pairs(H_p, radius) * _axis_pairs(W_p, radius)


def allowed_pairs_counting_the_prefix_block_twice(H_p, W_p, radius, n_prefix=1):
    tokens = n_prefix + H_p * W_p
    return _axis_pairs(H_p, radius) * _axis_pairs(W_p, radius) + 2 * n_prefix * tokens


def allowed_pairs_with_a_diamond_window(H_p, W_p, radius, n_prefix=1):
    r, c = np.divmod(np.arange(H_p * W_p), W_p)
    manhattan = np.abs(r[:, None] - r[None]) + np.abs(c[:, None] - c[None])
    tokens = n_prefix + H_p * W_p
    return int((manhattan <= radius).sum()) + n_prefix * (2 * tokens - n_prefix)


# ---------------------------------------------------------------------------
# ladder_winners
# ---------------------------------------------------------------------------

def ladder_winners_without_the_theorem(cnn, vit_plain):
    return []  # "the ViT was trained on the plain images only, so nothing can be said"


def ladder_winners_counting_ties(cnn, vit_plain):
    return [world for world, accuracy in cnn.items() if vit_plain >= accuracy]


def ladder_winners_leaving_out_the_plain_images(cnn, vit_plain):
    return [world for world, accuracy in cnn.items() if vit_plain > accuracy and world != "plain"]


def ladder_winners_from_the_first_win_up(cnn, vit_plain):
    worlds = list(cnn)
    first = next((i for i, world in enumerate(worlds) if vit_plain > cnn[world]), len(worlds))
    return worlds[first:]


def ladder_winners_every_scrambled_world(cnn, vit_plain):
    return [world for world in cnn if world != "plain"]


# function -> (exercise, a phrase the hint must contain, or None)
WRONG = {
    equivariance_error_with_the_wrong_shift_sign: ("equivariance_error", "+delta / s, not -delta / s"),
    equivariance_error_not_relative_to_the_output: ("equivariance_error", "divide"),
    equivariance_error_rounding_the_output_shift: ("equivariance_error", "smallest error over every output shift"),
    equivariance_error_reading_one_integer_as_a_vertical_shift: ("equivariance_error", "horizontal"),
    equivariance_error_for_single_images_only: ("equivariance_error", None),
    which_shifts_commute_ignoring_the_stride: ("which_shifts_commute", "Pass the stride on"),
    which_shifts_commute_over_the_output_grid: ("which_shifts_commute", None),
    mean_attention_distance_without_dropping_the_prefix: ("mean_attention_distance", None),
    mean_attention_distance_without_renormalising: ("mean_attention_distance", "renormalise"),
    mean_attention_distance_reading_the_first_tokens_as_patches: ("mean_attention_distance", "come first"),
    mean_attention_distance_with_one_class_token_hard_coded: ("mean_attention_distance", None),
    mean_attention_distance_in_grid_cells: ("mean_attention_distance", "in pixels"),
    mean_attention_distance_with_rows_and_columns_swapped: ("mean_attention_distance", "Raster order"),
    mean_attention_distance_with_manhattan_distance: ("mean_attention_distance", "Euclidean"),
    rollout_without_the_residual_half: ("attention_rollout", "residual"),
    rollout_with_the_product_in_the_wrong_order: ("attention_rollout", "from the left"),
    rollout_not_renormalising_rows: ("attention_rollout", "Renormalise the rows"),
    rollout_renormalising_before_adding_the_residual: ("attention_rollout", None),
    rollout_renormalising_the_patch_shares: ("attention_rollout", "Do not renormalise the result"),
    rollout_reading_a_column: ("attention_rollout", "not a column"),
    rollout_reading_the_first_row_without_a_prefix: ("attention_rollout", "average the rows"),
    rollout_of_the_last_layer_only: ("attention_rollout", None),
    conv_via_attention_computing_a_convolution: ("conv_via_attention", "cross-correlations"),
    conv_via_attention_with_the_kernel_transposed: ("conv_via_attention", "swapped"),
    conv_via_attention_adding_the_bias_per_head: ("conv_via_attention", "bias once"),
    conv_via_attention_ignoring_alpha: ("conv_via_attention", None),
    conv_via_attention_with_the_nearest_offset: ("conv_via_attention", "wrapped offset"),
    grid_local_mask_hiding_the_prefix_tokens: ("grid_local_mask", "prefix free"),
    grid_local_mask_with_manhattan_distance: ("grid_local_mask", "Chebyshev"),
    grid_local_mask_with_euclidean_distance: ("grid_local_mask", "Chebyshev"),
    grid_local_mask_one_short_of_the_radius: ("grid_local_mask", "includes its edge"),
    grid_local_mask_with_the_prefix_last: ("grid_local_mask", "come first"),
    grid_local_mask_with_a_column_major_grid: ("grid_local_mask", "Raster order"),
    grid_local_mask_of_floats: ("grid_local_mask", None),
    grid_local_mask_without_a_default_prefix: ("grid_local_mask", None),
    embed_linear_flattening_channels_last: ("embed_linear", "channel first"),
    embed_linear_in_column_major_order: ("embed_linear", "raster order"),
    embed_linear_without_the_bias: ("embed_linear", "bias"),
    block_macs_with_one_attention_product: ("block_macs", "two products"),
    block_macs_assuming_an_mlp_ratio_of_four: ("block_macs", "int(d * mlp_ratio)"),
    block_macs_in_flops: ("block_macs", "not FLOPs"),
    parameter_counts_without_the_patch_bias: ("parameter_counts", "d biases"),
    parameter_counts_with_positions_for_patches_only: ("parameter_counts", "prefix tokens"),
    parameter_counts_without_the_blocks_layernorms: ("parameter_counts", "two LayerNorms"),
    parameter_counts_with_a_head_even_without_classes: ("parameter_counts", "num_classes = 0"),
    toy_crossing_rows_without_the_plus_one: ("toy_crossing_rows", "n + 1"),
    toy_crossing_rows_with_unsquared_errors: ("toy_crossing_rows", "squared"),
    allowed_pairs_without_the_prefix: ("allowed_pairs", "prefix tokens' pairs"),
    allowed_pairs_counting_the_prefix_block_twice: ("allowed_pairs", "count it once"),
    allowed_pairs_with_a_diamond_window: ("allowed_pairs", "square"),
    ladder_winners_without_the_theorem: ("ladder_winners", "needs no training"),
    ladder_winners_counting_ties: ("ladder_winners", "A tie is no win"),
    ladder_winners_leaving_out_the_plain_images: ("ladder_winners", "plain images are a world"),
    ladder_winners_from_the_first_win_up: ("ladder_winners", "measured, not assumed"),
    ladder_winners_every_scrambled_world: ("ladder_winners", "falls below it"),
}
