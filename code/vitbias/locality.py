"""What a trained ViT learns in place of locality: attention distances, rollout, receptive fields.

A convolution's receptive field is fixed by its architecture: a stack of
stride-1 ``k x k`` convolutions lets the centre cell see ``k // 2`` cells
further in every direction per layer, so on a ``14 x 14`` patch grid 3 x 3
kernels need 7 layers to cover it. Attention has no such limit: every token
can read every other from the first layer on. Whether a ViT attends locally
is therefore something it learns, and it can be measured from its
attention maps (:func:`conv_receptive_field` and
:func:`attention_receptive_field` put the two architectures' fields side by
side). Two measurements:

- The *mean attention distance* of a head (Dosovitskiy et al. 2021,
  Figure 7, right): for each patch query, the attention-weighted mean distance in
  pixels to the keys, averaged over queries and images. A head that attends
  only to its own patch is at 0 px; a head that attends uniformly to all
  patches is at the grid's mean pairwise distance (about 116 px for the
  14 x 14 grid of 16-px patches): the value of a head with no preference
  for near or far patches.
- *Attention rollout* (Abnar and Zuidema 2020): the heads of each layer
  averaged, the residual connection counted as half the flow
  (``A_hat = (A_bar + I) / 2``, rows renormalised), and the layers
  multiplied, last on the left: ``R = A_hat_L ... A_hat_1``. Row ``i`` of
  ``R`` says how much of each input token reaches output token ``i``.

Layouts. An attention map is ``(..., heads, N, N)``: rows are queries,
columns keys, each row sums to 1. The ``N = n_prefix + H_p W_p`` tokens are
the prefix tokens ([CLS], registers) first, then the patches in raster order
(cell ``(r, c)`` is patch ``r W_p + c``). Distances are between patch
centres, ``P`` pixels per grid step.

Implementations differ on the weight a patch query puts on the prefix keys,
which have no position: dropping it and renormalising the patch weights
(``renormalise=True``, the default) measures where among the patches a head
looks; dropping it without renormalising counts it as distance 0 and lowers
the distance of heads that attend to [CLS].
"""

from __future__ import annotations

import numpy as np

from .geometry import as_pair, grid_coordinates, pairwise_offsets, positive_int

# How far a row of an attention map may sum from 1. A float32 softmax over 197
# keys sums to 1 within about 5e-7 (PyTorch's, measured), so maps read from a
# float32 model pass with a margin.
ROW_TOLERANCE = 1e-5

# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------


def prefix_count(n_prefix) -> int:
    """``n_prefix`` (the number of [CLS] and register tokens) as a Python int, else ``ValueError``."""
    if not (isinstance(n_prefix, (int, np.integer)) and not isinstance(n_prefix, bool) and n_prefix >= 0):
        raise ValueError(f"n_prefix must be a non-negative integer (the [CLS] and register tokens), "
                         f"got {n_prefix!r}")
    return int(n_prefix)


def attention_maps(A, layout: tuple[int, int, int] | None = None, name: str = "A") -> np.ndarray:
    """``A`` as float64 attention maps ``(..., heads, N, N)``, checked; else ``ValueError``.

    Checked: at least three axes, the last two square (``N`` queries by ``N``
    keys) and, if ``layout = (n_prefix, H_p, W_p)`` is given, ``N = n_prefix +
    H_p W_p``; no negative weight; every row summing to 1 within
    :data:`ROW_TOLERANCE`.
    """
    A = np.asarray(A, dtype=float)
    if A.ndim < 3 or A.size == 0:
        raise ValueError(f"{name} must be non-empty attention maps (..., heads, N, N), got shape {A.shape}")
    if A.shape[-1] != A.shape[-2]:
        raise ValueError(f"{name} must be square in its last two axes (N queries x N keys), "
                         f"got {A.shape[-2]} x {A.shape[-1]}")
    if layout is not None and A.shape[-1] != layout[0] + layout[1] * layout[2]:
        n_prefix, H_p, W_p = layout
        raise ValueError(f"{name} has N = {A.shape[-1]} tokens, which do not match the grid: n_prefix + H_p W_p "
                         f"= {n_prefix} + {H_p} x {W_p} = {n_prefix + H_p * W_p}")
    sums = A @ np.ones(A.shape[-1])  # the row sums, as a matrix-vector product: one BLAS pass over A
    error = np.abs(sums - 1)
    worst = np.unravel_index(np.argmax(np.where(np.isnan(error), np.inf, error)), error.shape)
    if not error[worst] <= ROW_TOLERANCE:  # also catches NaN
        raise ValueError(f"every row of {name} (a query's weights over the keys) must sum to 1 within "
                         f"{ROW_TOLERANCE:g}, got {float(sums[worst])!r} for the row at (..., head, query) = "
                         f"{tuple(map(int, worst))}")
    lowest = A.min()
    if lowest < 0:
        raise ValueError(f"attention weights must be non-negative, {name} has a weight of {float(lowest)!r}")
    return A


def token_layout(n_prefix, H_p, W_p) -> tuple[int, int, int]:
    """``(n_prefix, H_p, W_p)`` checked: prefix tokens, then an ``H_p x W_p`` grid of patches."""
    return prefix_count(n_prefix), positive_int("H_p", H_p), positive_int("W_p", W_p)


# ---------------------------------------------------------------------------
# Mean attention distance
# ---------------------------------------------------------------------------


def patch_distances(H_p: int, W_p: int, P: int) -> np.ndarray:
    """``D[q, k] = P |c_q - c_k|``: the distance in pixels between patch centres, ``(H_p W_p, H_p W_p)``.

    ``c_q`` is the grid cell ``(r, c)`` of patch ``q`` (raster order).
    """
    H_p, W_p, P = positive_int("H_p", H_p), positive_int("W_p", W_p), positive_int("P", P)
    return P * np.linalg.norm(pairwise_offsets(grid_coordinates((H_p, W_p))), axis=-1)


def mean_attention_distance(A, H_p: int, W_p: int, P: int, n_prefix: int, *,
                            renormalise: bool = True, exclude_self: bool = False) -> np.ndarray:
    """The mean attention distance of each head, in pixels: ``(..., heads, N, N) -> (heads,)``.

    For image (leading index) ``b``, head ``h`` and patch query ``q``, with
    sums over the patch keys ``k`` only,

        d[b, h, q] = sum_k A[b, h, q, k] D[q, k] / sum_k A[b, h, q, k]

    (``D`` from :func:`patch_distances`); the result is the mean of
    ``d[b, h, q]`` over ``b`` and ``q``. With ``renormalise=False`` the
    denominator is left out: the weight on prefix keys is dropped, not
    redistributed, so a query putting weight ``w`` on the prefix counts
    ``1 - w`` of its distance. With ``exclude_self`` the query's own patch
    is left out of both sums too (a head that reads mostly its own patch then
    counts by where the rest of its weight goes). ``A``: ``N = n_prefix + H_p
    W_p`` tokens, prefix first, rows summing to 1.
    """
    layout = n_prefix, H_p, W_p = token_layout(n_prefix, H_p, W_p)
    P = positive_int("P", P)
    A = attention_maps(A, layout)
    patches = A[..., n_prefix:, n_prefix:]                      # (..., heads, N_p, N_p): patch queries and keys
    if exclude_self:
        patches = patches * (1 - np.eye(H_p * W_p))
    D = patch_distances(H_p, W_p, P)
    # Numerator and denominator in one pass over A; optimize=True lets einsum hand the sum to BLAS.
    sums = np.einsum("...qk,qkc->...qc", patches, np.stack([D, np.ones_like(D)], axis=-1), optimize=True)
    distance, mass = sums[..., 0], sums[..., 1]                 # (..., heads, N_p) each
    if renormalise:
        empty = np.argwhere(mass == 0)
        if len(empty):
            *lead, head, query = (int(i) for i in empty[0])
            count = "1 patch query puts its" if len(empty) == 1 else f"{len(empty)} patch queries put their"
            raise ValueError(f"{count} whole weight on prefix keys{' or itself' if exclude_self else ''}, so "
                             f"renormalising the patch weights "
                             f"is undefined (first: patch query {query}, head {head}, "
                             f"leading index {tuple(lead)}); renormalise=False drops the prefix weight instead")
        distance = distance / mass
    return distance.reshape((-1,) + distance.shape[-2:]).mean(axis=(0, 2))


def uniform_attention_distance(H_p: int, W_p: int, P: int, *, exclude_self: bool = False) -> float:
    """The mean attention distance of uniform attention over the patches, in pixels.

    ``(1 / N_p^2) sum_{q, k} P |c_q - c_k|``: the grid's mean distance between
    patch centres over all ordered pairs, a patch with itself included (at
    distance 0), as uniform attention includes it. About 116.5 px for the
    14 x 14 grid of 16-px patches. With ``exclude_self``, the pairs of a patch
    with itself are left out: ``sum_{q != k} P |c_q - c_k| / (N_p (N_p - 1))``.
    """
    D = patch_distances(H_p, W_p, P)
    n = len(D)
    if not exclude_self:
        return float(D.mean())
    if n < 2:
        raise ValueError("a grid of one patch has no other patch to look at")
    return float(D.sum() / (n * (n - 1)))


def neighbour_mask(H_p: int, W_p: int) -> np.ndarray:
    """``M[q, k]``: whether patch ``k`` is one of the (up to) 8 cells around patch ``q``, ``(N_p, N_p)``."""
    H_p, W_p = positive_int("H_p", H_p), positive_int("W_p", W_p)
    offsets = pairwise_offsets(grid_coordinates((H_p, W_p)))
    return np.abs(offsets).max(axis=-1) == 1


def neighbour_weight(A, H_p: int, W_p: int, n_prefix: int) -> np.ndarray:
    """The weight each head puts on the 8 patches around its query, of its weight on patches:
    ``(..., heads, N, N) -> (heads,)``.

    ``w[b, h, q] = sum_{k in N8(q)} A[b, h, q, k] / sum_k A[b, h, q, k]`` (patch keys only),
    averaged over images ``b`` and patch queries ``q``. Uniform attention puts
    :func:`uniform_neighbour_weight` there; a 3 x 3 convolution all of its
    weight but the centre tap's.
    """
    layout = n_prefix, H_p, W_p = token_layout(n_prefix, H_p, W_p)
    A = attention_maps(A, layout)
    patches = A[..., n_prefix:, n_prefix:]
    mass = patches.sum(-1)
    if np.any(mass == 0):
        raise ValueError("a patch query puts its whole weight on prefix keys: its share on neighbours is undefined")
    near = (patches * neighbour_mask(H_p, W_p)).sum(-1) / mass       # (..., heads, N_p)
    return near.reshape((-1,) + near.shape[-2:]).mean(axis=(0, 2))


def uniform_neighbour_weight(H_p: int, W_p: int) -> float:
    """The weight uniform attention over the patches puts on a query's 8 neighbours, averaged over the
    queries: ``mean_q |N8(q)| / N_p`` (a corner patch has 3 neighbours, an edge patch 5)."""
    mask = neighbour_mask(H_p, W_p)
    return float(mask.sum(axis=1).mean() / len(mask))


# ---------------------------------------------------------------------------
# Attention rollout
# ---------------------------------------------------------------------------


def _layers(A_layers, layout: tuple[int, int, int] | None = None) -> list[np.ndarray]:
    """The checked maps of every layer, all of one shape ``(..., heads, N, N)``."""
    try:
        layers = list(A_layers)
    except TypeError:
        raise ValueError(f"A_layers must be a sequence of attention maps, got {type(A_layers).__name__}") from None
    if not layers:
        raise ValueError("A_layers is empty: expected the attention maps of L >= 1 layers")
    checked = []
    for i, A in enumerate(layers):
        checked.append(attention_maps(A, layout, name=f"layer {i}"))
        if checked[i].shape != checked[0].shape:
            raise ValueError(f"every layer's maps must have one shape, got {checked[i].shape} for layer {i} "
                             f"and {checked[0].shape} for layer 0")
    return checked


def residual_attention(A) -> np.ndarray:
    """``A_hat = (A_bar + I) / 2`` with rows renormalised: ``(..., heads, N, N) -> (..., N, N)``.

    ``A_bar`` is the mean over heads; the identity stands for the residual
    connection, half of the flow.
    """
    mean = np.mean(A, axis=-3)
    hat = 0.5 * mean + 0.5 * np.eye(mean.shape[-1])
    return hat / hat.sum(axis=-1, keepdims=True)


def rollout_matrix(A_layers) -> np.ndarray:
    """``R = A_hat_L ... A_hat_1``: the attention rollout of ``L`` layers, ``(..., N, N)``.

    ``A_layers``: ``L`` arrays ``(..., heads, N, N)`` of one shape, first
    layer first; ``A_hat`` from :func:`residual_attention`. Row ``i`` of
    ``R`` sums to 1: the share of each input token in output token ``i``.
    """
    layers = _layers(A_layers)
    R = residual_attention(layers[0])
    for A in layers[1:]:
        R = residual_attention(A) @ R
    return R


def attention_rollout(A_layers, n_prefix: int, H_p: int, W_p: int) -> np.ndarray:
    """The rollout read on the patch grid: ``L x (..., heads, N, N) -> (..., H_p, W_p)``.

    With ``R`` from :func:`rollout_matrix`: the first token's row,
    ``R[0, n_prefix:]``, when ``n_prefix >= 1`` (the [CLS] token that
    classifies), and the mean of the patch rows, ``(1 / N) sum_i R[i, :]``,
    when ``n_prefix = 0`` (a model that average-pools its patches).
    Computed one row at a time, ``v R = (... (v A_hat_L) ...) A_hat_1``,
    without forming ``R``.
    """
    layout = n_prefix, H_p, W_p = token_layout(n_prefix, H_p, W_p)
    layers = _layers(A_layers, layout)
    lead, N = layers[0].shape[:-3], layers[0].shape[-1]
    if n_prefix:
        row = np.zeros(lead + (1, N))
        row[..., 0, 0] = 1.0
    else:
        row = np.full(lead + (1, N), 1.0 / N)
    for A in reversed(layers):  # the loop over the L layers: last layer first, as R multiplies it on the left
        row = row @ residual_attention(A)
    return row[..., 0, n_prefix:].reshape(lead + (H_p, W_p))


# ---------------------------------------------------------------------------
# Receptive fields
# ---------------------------------------------------------------------------


def conv_receptive_field(grid, kernel: int, layers: int) -> np.ndarray:
    """Cells of the grid that the centre cell sees after each of ``layers`` stride-1 convolutions: ``(layers,)``.

    ``grid`` is ``g`` (a ``g x g`` grid) or ``(H_p, W_p)``; ``kernel`` is an
    odd ``k``. After ``l`` layers of ``k x k`` kernels the field reaches
    ``l a`` cells (``a = k // 2``) on every side of the centre, clipped to
    the grid: along a side of ``n`` cells with centre ``c = n // 2`` it covers
    ``min(c + l a, n - 1) - max(c - l a, 0) + 1`` cells, and the field is the
    product of the two sides. For an even ``n`` the two middle cells are
    mirror images, so either gives the same counts. On 14 x 14 with 3 x 3
    kernels: 9, 25, 49, 81, 121, 169, then the whole grid, 196, at layer 7.
    """
    H_p, W_p = (positive_int("a grid side", n) for n in as_pair(grid, "grid"))
    if not (isinstance(kernel, (int, np.integer)) and not isinstance(kernel, bool)
            and kernel >= 1 and kernel % 2 == 1):
        raise ValueError(f"kernel must be a positive odd integer (a centred kernel), got {kernel!r}")
    layers = positive_int("layers", layers)
    reach = (kernel // 2) * np.arange(1, layers + 1)           # (layers,)

    def covered(n: int) -> np.ndarray:
        centre = n // 2
        return np.minimum(centre + reach, n - 1) - np.maximum(centre - reach, 0) + 1

    return covered(H_p) * covered(W_p)


def attention_receptive_field(grid, layers: int) -> np.ndarray:
    """Cells a patch sees after each of ``layers`` attention layers, ``(layers,)``: all ``H_p W_p`` from the first."""
    H_p, W_p = (positive_int("a grid side", n) for n in as_pair(grid, "grid"))
    return np.full(positive_int("layers", layers), H_p * W_p)


# ---------------------------------------------------------------------------
# Reading a trained ViT
# ---------------------------------------------------------------------------


def standardised_images(images, start: int, stop: int, *, image_size: int | None = None,
                        mean=None, std=None):
    """Images ``start:stop`` of an :class:`vitbias.data.ImageSet` as the float32 input of a model, ``(B, 3, S, S)``.

    Pixels are scaled to [0, 1], resized (bilinear) to ``image_size`` when
    given, as a network pretrained at another resolution needs, and
    standardised with ``mean`` and ``std`` (the set's own when ``None``), as
    :func:`vitbias.probe.extract_features` feeds them.
    """
    import torch
    import torch.nn.functional as F

    mean = torch.tensor(images.mean if mean is None else mean, dtype=torch.float32).view(1, 3, 1, 1)
    std = torch.tensor(images.std if std is None else std, dtype=torch.float32).view(1, 3, 1, 1)
    x = torch.from_numpy(images.images[start:stop]).float() / 255
    if image_size is not None and image_size != x.shape[-1]:
        x = F.interpolate(x, size=(image_size, image_size), mode="bilinear", align_corners=False)
    return (x - mean) / std


def vit_attention(model, images, count: int = 500, **feed) -> np.ndarray:
    """The attention maps of ``model`` (a :class:`vitbias.vit.ViT`) on the first ``count`` images.

    ``images`` is a :class:`vitbias.data.ImageSet`, standardised as in
    training (``feed``: the keywords of :func:`standardised_images`); returns
    float64 maps ``(count, layers, heads, N, N)``, computed on the CPU in
    float32.
    """
    import torch

    count = positive_int("count", min(count, len(images)))
    x = standardised_images(images, 0, count, **feed)
    with torch.no_grad():
        _, maps = model.cpu().eval()(x, return_attention=True)
    return maps.double().numpy()


def _per_layer(model, images, statistic, count: int, batch_size: int, **feed) -> np.ndarray:
    """``statistic(maps, config)`` (``(B, heads, N, N) -> (heads,)``, a mean over images) of every layer of
    ``model`` on the first ``count`` images, ``batch_size`` at a time: ``(layers, heads)``."""
    import torch

    count = positive_int("count", min(count, len(images)))
    batch_size = positive_int("batch_size", batch_size)
    model = model.cpu().eval()
    total = 0.0
    for start in range(0, count, batch_size):
        stop = min(start + batch_size, count)
        with torch.no_grad():
            _, maps = model(standardised_images(images, start, stop, **feed), return_attention=True)
        maps = maps.double().numpy()                                  # (B, layers, heads, N, N)
        total = total + (stop - start) * np.stack([statistic(maps[:, layer], model.config)
                                                   for layer in range(maps.shape[1])])
    return total / count


def distance_by_layer(model, images, count: int = 500, batch_size: int = 50, *, exclude_self: bool = False,
                      **feed) -> np.ndarray:
    """The mean attention distance of every head of every layer of ``model``: ``(layers, heads)``, in pixels.

    :func:`mean_attention_distance` (``exclude_self`` as there) over the first
    ``count`` images, its grid, patch size and prefix read from ``model.config``
    (a :class:`vitbias.vit.ViT`); the maps are computed ``batch_size`` images
    at a time, so a 224-px model's do not have to fit in memory at once
    (``(batch, layers, heads, N, N)`` float64). ``feed`` as for
    :func:`standardised_images`.
    """
    def distance(maps, config):
        return mean_attention_distance(maps, config.grid_size, config.grid_size, config.patch_size,
                                       config.num_prefix_tokens, exclude_self=exclude_self)

    return _per_layer(model, images, distance, count, batch_size, **feed)


def neighbour_weight_by_layer(model, images, count: int = 500, batch_size: int = 50, **feed) -> np.ndarray:
    """:func:`neighbour_weight` of every head of every layer of ``model``, as :func:`distance_by_layer`
    reads it: ``(layers, heads)``."""
    def near(maps, config):
        return neighbour_weight(maps, config.grid_size, config.grid_size, config.num_prefix_tokens)

    return _per_layer(model, images, near, count, batch_size, **feed)


def maps_in_original_grid(A, order, n_prefix: int) -> np.ndarray:
    """Maps of a ViT that reads shuffled images, re-indexed by the patches' places in the original image.

    Token ``i`` of a shuffled image holds original patch ``order[i]``
    (:func:`vitbias.permute.patch_permutation`), so original patch ``j`` is
    token ``argsort(order)[j]``: the result's patch rows and columns are in the
    original raster order, prefix tokens unchanged. ``(..., N, N)`` in and out.
    """
    n_prefix = prefix_count(n_prefix)
    A = np.asarray(A)
    order = np.asarray(order)
    N_p = A.shape[-1] - n_prefix
    if order.shape != (N_p,) or not np.array_equal(np.sort(order), np.arange(N_p)):
        raise ValueError(f"order must be a permutation of the {N_p} patch tokens, got shape {order.shape}")
    index = np.concatenate([np.arange(n_prefix), n_prefix + np.argsort(order)])
    return A[..., index, :][..., :, index]


def position_similarity(pos_embed, n_prefix: int) -> np.ndarray:
    """Cosine similarity between the patches' position vectors: ``(1, N, d)`` or ``(N, d)`` -> ``(N_p, N_p)``."""
    table = np.asarray(pos_embed, dtype=float)
    table = table.reshape(table.shape[-2:])[prefix_count(n_prefix):]
    unit = table / np.linalg.norm(table, axis=-1, keepdims=True)
    return unit @ unit.T


def similarity_at_distance(similarity, H_p: int, W_p: int, low: float, high: float = np.inf) -> float:
    """The mean of ``similarity[q, k]`` over pairs of distinct patches whose grid distance ``r`` is in ``[low, high]``.

    ``low = high = 1``: the 4 neighbours; ``low = g / 2``: the far patches.
    """
    distance = patch_distances(H_p, W_p, 1)
    chosen = (distance >= low) & (distance <= high) & (distance > 0)
    if not chosen.any():
        raise ValueError(f"no pair of patches lies at a grid distance in [{low}, {high}] on {H_p} x {W_p}")
    return float(np.asarray(similarity)[chosen].mean())


def patch_gradient_norms(model, images, patch: int, count: int = 200) -> np.ndarray:
    """Influence of each input patch on the prediction: ``(count, H_p, W_p)``.

    For each image, the gradient of the predicted class's logit with respect
    to the standardised input pixels, and its Euclidean norm over each
    ``patch x patch`` patch (all channels): how much a small change of that
    patch moves the decision. Unlike attention weights, it sees the value
    vectors, the MLPs and the residual path. CPU, float32.
    """
    import torch

    count = positive_int("count", min(count, len(images)))
    patch = positive_int("patch", patch)
    mean = torch.tensor(images.mean).view(1, 3, 1, 1)
    std = torch.tensor(images.std).view(1, 3, 1, 1)
    x = ((torch.from_numpy(images.images[:count]).float() / 255 - mean) / std).requires_grad_(True)
    model = model.cpu().eval()
    logits = model(x)
    logits.gather(1, logits.argmax(1, keepdim=True)).sum().backward()
    B, C, H, W = x.shape
    if H % patch or W % patch:
        raise ValueError(f"patch {patch} must divide the image size {H} x {W}")
    g = x.grad.reshape(B, C, H // patch, patch, W // patch, patch)
    return g.pow(2).sum(dim=(1, 3, 5)).sqrt().double().numpy()


def rank_correlation(first, second) -> np.ndarray:
    """Spearman's rank correlation of two score maps, per leading index: ``(..., H, W) x 2 -> (...)``.

    The Pearson correlation of the ranks of the flattened maps (ties broken by
    position): 1 when the two rank the patches alike, -1 when in reverse.
    """
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if first.shape != second.shape or first.ndim < 2:
        raise ValueError(f"expected two score maps (..., H, W) of one shape, got {first.shape} and {second.shape}")
    flat = [a.reshape(a.shape[:-2] + (-1,)) for a in (first, second)]
    if flat[0].shape[-1] < 2:
        raise ValueError("a rank correlation needs at least two patches")
    ranks = [np.argsort(np.argsort(a, axis=-1), axis=-1).astype(float) for a in flat]
    centred = [r - r.mean(axis=-1, keepdims=True) for r in ranks]
    return (centred[0] * centred[1]).sum(-1) / np.sqrt((centred[0] ** 2).sum(-1) * (centred[1] ** 2).sum(-1))
