"""Patches as tokens: embedding cut patches, moving them, and what a token keeps.

- :func:`vitbias.geometry.patchify` cuts (B, C, H, W) images into (B, N, P^2 C)
  rows, one per patch in raster order, each flattened channel-first (c, i, j):
  the layout of a ``Conv2d`` weight (d, C, P, P), so a linear map on the rows
  and a strided convolution can share weights (:func:`embed_linear`,
  :func:`embed_conv`).
- :func:`jigsaw` moves whole patches, the shuffle a ViT without positions
  cannot see.
- :func:`pinv_reconstruction_error` and :func:`best_linear_error` measure
  what a ``P^2 C -> d`` embedding throws away before the first attention layer.
- :func:`power_law_images` makes test images whose amplitude spectrum falls
  like ``1/f``, as photographs roughly do (Field 1987).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .geometry import grid_to_tokens, patchify, unpatchify


def _check_images(images, patch: int):
    if not isinstance(images, torch.Tensor) or images.ndim != 4:
        shape = tuple(getattr(images, "shape", ()))
        raise ValueError(f"expected a (B, C, H, W) tensor, got shape {shape}")
    if not (isinstance(patch, int) and patch >= 1):
        raise ValueError(f"the patch side must be a positive integer, got {patch!r}")
    H, W = images.shape[-2:]
    if H % patch or W % patch:
        raise ValueError(f"the patch side {patch} must divide the image sides, got {H} x {W}")


def embed_linear(images: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The ViT paper's ``x_p E + b`` (its Eq. 1): patchify, then one matrix product.

    ``weight``: (d, C, P, P), a ``Conv2d`` weight; returns (B, N, d).
    """
    d, C, P, P2 = weight.shape
    if P != P2 or images.ndim != 4 or images.shape[1] != C:
        raise ValueError(f"weight (d, C, P, P) = {tuple(weight.shape)} does not fit images "
                         f"{tuple(images.shape)}")
    return patchify(images, P) @ weight.reshape(d, C * P * P).T + bias


def embed_conv(images: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The same map as a ``Conv2d`` with kernel = stride = P, flattened to (B, N, d)."""
    P = weight.shape[-1]
    _check_images(images, P)
    return grid_to_tokens(F.conv2d(images, weight, bias, stride=P))


def jigsaw(images: torch.Tensor, patch: int, order) -> torch.Tensor:
    """Move whole patches: patch ``order[k]`` of the input lands in slot ``k``.

    ``order`` is a permutation of ``range(N)``, raster order.
    """
    _check_images(images, patch)
    B, C, H, W = images.shape
    order = torch.as_tensor(order)
    N = (H // patch) * (W // patch)
    if order.shape != (N,) or not torch.equal(order.sort().values, torch.arange(N)):
        raise ValueError(f"order must be a permutation of range({N}), got {order.tolist()}")
    return unpatchify(patchify(images, patch)[:, order], patch, (C, H, W))


# ---------------------------------------------------------------------------
# What a token keeps.
# ---------------------------------------------------------------------------


def _check_rows(patches: np.ndarray) -> np.ndarray:
    patches = np.asarray(patches, dtype=np.float64)
    if patches.ndim != 2 or patches.shape[0] < 1:
        raise ValueError(f"expected patches as an (M, P^2 C) array, got shape {patches.shape}")
    return patches


def pinv_reconstruction(patches: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The best linear way back from tokens to patches, ``p_hat = E^+ E p``.

    ``patches``: (M, D); ``weight``: the embedding as a (d, D) matrix. The
    token's bias is known and subtracted, so it plays no part. ``E^+ E`` is the
    orthogonal projection onto the row space of ``E``: everything orthogonal
    to those at most ``d`` directions is lost.
    """
    patches = _check_rows(patches)
    weight = np.asarray(weight, dtype=np.float64)
    if weight.ndim != 2 or weight.shape[1] != patches.shape[1]:
        raise ValueError(f"weight must be (d, {patches.shape[1]}), got shape {weight.shape}")
    tokens = patches @ weight.T
    return tokens @ np.linalg.pinv(weight).T


def relative_error(patches: np.ndarray, reconstruction: np.ndarray) -> float:
    """``||P - P_hat||_F / ||P||_F`` over all patches together."""
    patches, reconstruction = _check_rows(patches), _check_rows(reconstruction)
    if patches.shape != reconstruction.shape:
        raise ValueError(f"shapes differ: {patches.shape} and {reconstruction.shape}")
    return float(np.linalg.norm(patches - reconstruction) / np.linalg.norm(patches))


def pinv_reconstruction_error(patches: np.ndarray, weight: np.ndarray) -> float:
    """Relative error of :func:`pinv_reconstruction`."""
    return relative_error(patches, pinv_reconstruction(patches, weight))


def best_linear_error(patches: np.ndarray, rank: int) -> float:
    """The least relative error any ``D -> rank`` linear embedding can leave on these patches.

    By the Eckart-Young theorem the best rank-``rank`` projection keeps the top
    right singular vectors of the (uncentred) patch matrix; the error is the
    share of the squared singular values it drops, square-rooted.
    """
    patches = _check_rows(patches)
    if not (isinstance(rank, (int, np.integer)) and 0 <= rank <= patches.shape[1]):
        raise ValueError(f"rank must be an integer in [0, {patches.shape[1]}], got {rank!r}")
    energy = _principal(patches)[0]
    return float(np.sqrt(max(energy[rank:].sum(), 0.0) / energy.sum()))


def _principal(patches: np.ndarray):
    """Eigenvalues (descending) and eigenvectors (columns) of ``P^T P``: the squared
    singular values and right singular vectors of ``P``, from a D x D problem."""
    energy, vectors = np.linalg.eigh(patches.T @ patches)
    return energy[::-1], vectors[:, ::-1]


def best_linear_basis(patches: np.ndarray, rank: int) -> np.ndarray:
    """The (rank, D) orthonormal rows of the best rank-``rank`` embedding for ``patches``.

    Fit on one set of patches and used as ``weight`` in
    :func:`pinv_reconstruction_error` on another, it measures how well a
    learned embedding of that size can do on patches it has not seen.
    """
    patches = _check_rows(patches)
    if not (isinstance(rank, (int, np.integer)) and 1 <= rank <= patches.shape[1]):
        raise ValueError(f"rank must be an integer in [1, {patches.shape[1]}], got {rank!r}")
    return _principal(patches)[1][:, :rank].T


def power_law_images(count: int, size: int, channels: int = 3, exponent: float = 1.0,
                     seed: int = 0) -> torch.Tensor:
    """Random images whose amplitude spectrum falls like ``1/f**exponent``, (count, C, size, size).

    Each image is a shared grey-level field plus weaker per-channel fields
    (channels of photographs are strongly correlated), scaled to zero mean and
    unit standard deviation, the range a ViT sees after normalisation.
    """
    for name, value in (("count", count), ("size", size), ("channels", channels)):
        if not (isinstance(value, int) and value >= 1):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if not np.isfinite(exponent) or exponent < 0:
        raise ValueError(f"exponent must be finite and >= 0, got {exponent!r}")
    rng = np.random.default_rng(seed)
    f = np.hypot(*np.meshgrid(np.fft.fftfreq(size), np.fft.fftfreq(size), indexing="ij"))
    amplitude = np.zeros_like(f)
    amplitude[f > 0] = f[f > 0] ** -exponent

    def field(n):
        noise = np.fft.fft2(rng.standard_normal((n, size, size)))
        return np.fft.ifft2(noise * amplitude).real

    grey = field(count)[:, None]
    colour = field(count * channels).reshape(count, channels, size, size)
    images = grey + 0.3 * colour
    images = (images - images.mean(axis=(1, 2, 3), keepdims=True)) / images.std(axis=(1, 2, 3), keepdims=True)
    return torch.from_numpy(images.astype(np.float32))
