"""Breaking the convolution's assumption on purpose: one fixed shuffle of the patch grid.

Cut every image into ``P x P`` patches and move them with one fixed
permutation, the same for training and test images. Each patch stays intact,
but pixels that were neighbours across a patch border no longer are, so a
convolution's locality becomes false across patch borders. A ViT whose
patches are these patches sees the same tokens, each at another place in its
sequence: with its position table permuted alike it computes the same
function, and trained on the shuffled images it follows the same trajectory
as on the original ones (up to float rounding; :mod:`vitbias.twins` runs it).

A *partial* permutation moves only a fraction of the patches: a dial on how
wrong the convolution's assumption is, the image-scale analogue of the toy's
drift ``beta``.

More generally, :func:`scramble` moves the patches by a *patch order* and the
pixels inside every patch by one *pixel order*, the same in every patch. A
ViT absorbs any such rearrangement exactly (:func:`absorb`: permute the
patch embedding's input weights by the pixel order and the position table's
rows by the patch order). Every rearrangement of pixel positions, absorbed or
not, is an index into the ``H W`` positions (:func:`scramble_index`,
:func:`world_index`), applied by :func:`rearrange`; a run's ``data["world"]``
names one (:data:`WORLD_KEYS`), and the trainer applies it to every batch
after the augmentation, as it does the patch shuffle.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from .geometry import as_pair, patchify, positive_int, unpatchify


def patch_permutation(grid, fraction: float = 1.0, seed: int = 0) -> np.ndarray:
    """A permutation ``order`` (N,) of the ``H_p x W_p`` patch grid that moves ``round(fraction N)`` patches.

    Position ``i`` of a shuffled image holds patch ``order[i]`` of the
    original (raster order). The moved patches are drawn at random from
    ``seed`` and shifted cyclically among themselves, so each of them really
    moves; the others stay. ``fraction = 0`` is the identity.
    """
    Hp, Wp = as_pair(grid, "grid")
    positive_int("grid rows", Hp), positive_int("grid columns", Wp)
    fraction = float(fraction)
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must lie in [0, 1], got {fraction}")
    N = Hp * Wp
    moved = round(fraction * N)
    if moved == 1:
        raise ValueError(f"fraction {fraction} of {N} patches moves one patch, which cannot move alone")
    order = np.arange(N)
    chosen = np.random.default_rng(seed).choice(N, size=moved, replace=False)
    order[chosen] = np.roll(chosen, 1)
    return order


def _check_order(order, N: int) -> np.ndarray:
    order = np.asarray(order)
    if order.shape != (N,) or not np.array_equal(np.sort(order), np.arange(N)):
        raise ValueError(f"expected a permutation of the {N} patches, got an array of shape {order.shape}")
    return order


def permute_patches(images, order, patch):
    """Images with their patches moved: ``(..., C, H, W)`` -> the same shape.

    Patch ``i`` (raster order) of the result is patch ``order[i]`` of the
    input. NumPy in, NumPy out; torch in, torch out.
    """
    rows = patchify(images, patch)                       # (..., N, C P P)
    order = _check_order(order, rows.shape[-2])
    index = torch.as_tensor(order) if torch.is_tensor(rows) else order
    return unpatchify(rows[..., index, :], patch, tuple(images.shape[-3:]))


def permute_positions(pos_embed: torch.Tensor, order, n_prefix: int) -> torch.Tensor:
    """The position table a ViT needs on shuffled images: ``(1, n_prefix + N, d)``, same shape.

    Prefix rows ([CLS], registers) stay; patch row ``i`` becomes the old row
    ``order[i]``, so every patch keeps the position vector it had.
    """
    if pos_embed.ndim != 3 or pos_embed.shape[1] <= n_prefix or n_prefix < 0:
        raise ValueError(f"expected a table (1, n_prefix + N, d) with n_prefix = {n_prefix}, "
                         f"got {tuple(pos_embed.shape)}")
    order = _check_order(order, pos_embed.shape[1] - n_prefix)
    index = torch.cat([torch.arange(n_prefix), n_prefix + torch.as_tensor(order)])
    return pos_embed[:, index]


def _check_permutation(order, n: int, what: str) -> np.ndarray:
    order = np.asarray(order)
    if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
        raise ValueError(f"expected a permutation of the {n} {what}, got an array of shape {order.shape}")
    return order.astype(np.int64)


def scramble_index(image_size, patch, patch_order=None, pixel_order=None) -> np.ndarray:
    """The index ``(H W,)`` of :func:`scramble`: position ``i`` of the result holds position ``index[i]``.

    Positions are raster order over the ``H x W`` image. Patch ``q`` of the
    result is patch ``patch_order[q]`` of the input, and inside it pixel ``k``
    (raster order within the ``P x P`` patch) is pixel ``pixel_order[k]`` of
    that patch. ``None`` leaves the patches, or the pixels, in place.
    """
    H, W = as_pair(image_size, "image size")
    P = positive_int("patch", patch)
    if H % P or W % P:
        raise ValueError(f"the patch {P} must divide the image {H} x {W}")
    Hp, Wp = H // P, W // P
    patch_order = np.arange(Hp * Wp) if patch_order is None else _check_permutation(patch_order, Hp * Wp, "patches")
    pixel_order = (np.arange(P * P) if pixel_order is None
                   else _check_permutation(pixel_order, P * P, "pixels of a patch"))
    q = np.arange(H * W).reshape(Hp, P, Wp, P).transpose(0, 2, 1, 3).reshape(Hp * Wp, P * P)
    # q[a, b]: the image position of pixel b (raster within the patch) of patch a
    source = q[patch_order][:, pixel_order]               # (N, P P): where each result pixel comes from
    index = np.empty(H * W, dtype=np.int64)
    index[q.reshape(-1)] = source.reshape(-1)
    return index


def rearrange(images, index):
    """Images with their pixel positions moved: ``(..., C, H, W)`` -> the same shape.

    Position ``i`` (raster order over ``H x W``) of the result is position
    ``index[i]`` of the input, in every channel. NumPy in, NumPy out; torch
    in, torch out.
    """
    H, W = images.shape[-2:]
    index = _check_permutation(index, H * W, "pixel positions")
    flat = images.reshape(*images.shape[:-2], H * W)
    if torch.is_tensor(images):
        return flat[..., torch.as_tensor(index, device=images.device)].reshape(images.shape)
    return flat[..., index].reshape(images.shape)


def scramble(images, patch, patch_order=None, pixel_order=None):
    """Images with their patches moved by ``patch_order`` and the pixels inside every patch by ``pixel_order``.

    ``(..., C, H, W)`` -> the same shape (:func:`scramble_index`). The pixel
    order is the same in every patch, which is what a ViT can absorb
    (:func:`absorb`). NumPy in, NumPy out; torch in, torch out.
    """
    return rearrange(images, scramble_index(images.shape[-2:], patch, patch_order, pixel_order))


def block_pixel_order(patch: int, block: int, seed: int = 0) -> np.ndarray:
    """A pixel order ``(P P,)`` that permutes the pixels inside each ``block x block`` block of a patch.

    Each block's pixels are shuffled among themselves, independently per
    block (drawn from ``seed``); no pixel leaves its block. ``block = patch``
    permutes the whole patch; ``block = 1`` is the identity.
    """
    P, b = positive_int("patch", patch), positive_int("block", block)
    if P % b:
        raise ValueError(f"the block {b} must divide the patch {P}")
    rng = np.random.default_rng(seed)
    positions = np.arange(P * P).reshape(P // b, b, P // b, b).transpose(0, 2, 1, 3).reshape(-1, b * b)
    order = np.arange(P * P)
    for cells in positions:
        order[cells] = cells[rng.permutation(b * b)]
    return order


WORLD_KEYS = {"patch", "shuffle_patches", "block", "control", "seed"}
CONTROLS = (None, "per_patch", "global")


def world_index(world: dict, image_size: int) -> np.ndarray:
    """The pixel index ``(H W,)`` of a world: a run's ``data["world"]``.

    ``world`` has the keys :data:`WORLD_KEYS`: ``patch`` (the ViT's patch),
    ``shuffle_patches`` (move every patch, :func:`patch_permutation` with
    ``seed``), ``block`` (0 for none, else permute the pixels inside blocks of
    that size, the same order in every patch: :func:`block_pixel_order`), and
    ``control``: ``None`` for the rearrangements above, which a ViT absorbs;
    ``"per_patch"``, a different full pixel order in every patch (after the
    patch shuffle, if any); ``"global"``, one permutation of all ``H W``
    positions. The controls are not absorbed: the patch embedding is shared.
    """
    if not isinstance(world, dict) or set(world) != WORLD_KEYS:
        raise ValueError(f"a world is a dict with the keys {sorted(WORLD_KEYS)}, got {world!r}")
    P = positive_int("patch", world["patch"])
    if image_size % P:
        raise ValueError(f"the world's patch {P} must divide the image size {image_size}")
    if world["control"] not in CONTROLS:
        raise ValueError(f"control must be one of {CONTROLS}, got {world['control']!r}")
    if not isinstance(world["shuffle_patches"], bool):
        raise ValueError(f"shuffle_patches must be True or False, got {world['shuffle_patches']!r}")
    seed, block, grid = int(world["seed"]), int(world["block"]), image_size // P
    if world["control"] == "global":
        return np.random.default_rng(seed).permutation(image_size * image_size)
    patch_order = patch_permutation((grid, grid), 1.0, seed) if world["shuffle_patches"] else None
    pixel_order = block_pixel_order(P, block, seed + 1) if block else None
    index = scramble_index(image_size, P, patch_order, pixel_order)
    if world["control"] == "per_patch":
        rng = np.random.default_rng(seed + 2)
        spots = scramble_index(image_size, P).reshape(grid * grid, P * P)   # each patch's image positions
        within = np.stack([cells[rng.permutation(P * P)] for cells in spots])
        moved = np.empty_like(index)
        moved[spots.reshape(-1)] = within.reshape(-1)   # a different full permutation inside every patch
        index = index[moved]
    return index


def absorb(vit, patch_order=None, pixel_order=None):
    """A copy of ``vit`` whose logits on :func:`scramble`-d images equal ``vit``'s on the originals.

    The patch embedding's weights ``(d, C, P, P)`` take the pixel order on
    their input positions, ``W'[..., k] = W[..., pixel_order[k]]``, and the
    position table's patch rows the patch order (:func:`permute_positions`).
    Exact in exact arithmetic: the scrambled patch ``i`` meets the weights
    and the position vector the original patch met.
    """
    from .vit import PatchEmbed, ViT

    if not isinstance(vit, ViT) or not isinstance(vit.patch_embed, PatchEmbed):
        raise ValueError(f"absorb takes a vitbias ViT with a linear patch embedding, got {type(vit).__name__}")
    P, prefix = vit.config.patch_size, vit.config.num_prefix_tokens
    N = vit.config.grid_size ** 2
    twin = copy.deepcopy(vit)
    with torch.no_grad():
        if pixel_order is not None:
            pixel_order = _check_permutation(pixel_order, P * P, "pixels of a patch")
            weight = vit.patch_embed.proj.weight                     # (d, C, P, P)
            flat = weight.reshape(*weight.shape[:2], P * P)[..., torch.as_tensor(pixel_order)]
            twin.patch_embed.proj.weight.copy_(flat.reshape(weight.shape))
        if patch_order is not None:
            patch_order = _check_permutation(patch_order, N, "patches")
            if vit.pos_embed is not None:  # without one, the blocks are already equivariant to token order
                twin.pos_embed.copy_(permute_positions(vit.pos_embed, patch_order, prefix))
    return twin
