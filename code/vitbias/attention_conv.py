"""Attention can compute any convolution (Cordonnier, Loukas and Jaggi 2020).

Three pieces, in the order the chapter uses them:

1. Multi-head attention written so the heads are visible: the output is a sum
   over heads ``j`` of the head's attention-weighted inputs times one matrix,
   ``W^(j) = W_V^(j) W_O^(j)`` (the head's value projection times its row
   block of the output projection).
2. A circular convolution written the same way: a sum over the ``k^d``
   kernel offsets ``Delta`` of the input shifted by ``Delta`` times the tap
   matrix ``W_Delta``.
3. The construction that matches them (the paper's Lemmas 1 and 2): one head
   per offset, whose score for a key at relative position ``delta`` is
   ``<v, r_delta>`` with the quadratic encoding ``r_delta = (|delta|^2, delta)``
   and ``v = -alpha (1, -2 Delta)``. That equals ``-alpha |delta - Delta|^2``
   up to a constant per head, so as ``alpha`` grows the head reads exactly the
   neighbour at offset ``Delta``.

The error of the construction is bounded through ``rho(alpha)``, the total
weight ``sum_{z != 0} exp(-alpha |z|^2)`` over the nonzero integer points of
the line (1-D) or the plane (2-D).

Layouts: tokens are rows, ``(B, N, C)``; weight matrices are stored
``(input, output)`` and applied to row vectors. Signals and images use
PyTorch's layouts, ``(B, C, L)`` and ``(B, C, H, W)``, and kernels PyTorch's
``(C_out, C, k)`` and ``(C_out, C, k, k)``. Every convolution is circular and
in the cross-correlation form libraries compute, with odd ``k`` and
half-width ``a = k // 2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .geometry import (
    circular_conv,
    conv_dim,
    grid_coordinates,
    grid_to_tokens,
    kernel_dim,
    kernel_offsets,
    relative_offsets,
    tokens_to_grid,
)

# float32's rounding unit: the largest relative error of rounding one number.
FLOAT32_ROUNDING_UNIT = float(np.finfo(np.float32).eps) / 2


# ---------------------------------------------------------------------------
# Multi-head attention as a sum over heads.
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class AttentionWeights:
    """The weights of one multi-head attention layer, stored ``(input, output)``.

    ``W_Q, W_K``: ``(C, h d_k)``; ``W_V``: ``(C, h d_v)``; ``W_O``:
    ``(h d_v, D)``; biases ``(h d_k,)``, ``(h d_v,)`` and ``(D,)`` or ``None``.
    Column block ``j`` of ``W_Q``, ``W_K``, ``W_V`` and row block ``j`` of
    ``W_O`` belong to head ``j``.
    """

    W_Q: torch.Tensor
    W_K: torch.Tensor
    W_V: torch.Tensor
    W_O: torch.Tensor
    num_heads: int
    b_Q: torch.Tensor | None = None
    b_K: torch.Tensor | None = None
    b_V: torch.Tensor | None = None
    b_O: torch.Tensor | None = None

    def __post_init__(self):
        h = self.num_heads
        if not (isinstance(h, (int, np.integer)) and h >= 1):
            raise ValueError(f"num_heads must be a positive integer, got {h!r}")
        C = self.W_Q.shape[0]
        for name in ("W_Q", "W_K", "W_V"):
            W = getattr(self, name)
            if W.ndim != 2 or W.shape[0] != C or W.shape[1] % h:
                raise ValueError(f"{name} must be (C={C}, h * d) with h={h} heads, got {tuple(W.shape)}")
        if self.W_Q.shape != self.W_K.shape:
            raise ValueError(f"W_Q and W_K must have one shape, "
                             f"got {tuple(self.W_Q.shape)} and {tuple(self.W_K.shape)}")
        if self.W_O.ndim != 2 or self.W_O.shape[0] != self.W_V.shape[1]:
            raise ValueError(f"W_O must be (h d_v={self.W_V.shape[1]}, D), got {tuple(self.W_O.shape)}")


def weights_from_torch(mha: torch.nn.MultiheadAttention) -> AttentionWeights:
    """The weights of ``torch.nn.MultiheadAttention`` (self-attention, one embed dim).

    PyTorch stores ``(output, input)`` and packs ``Q, K, V`` in ``in_proj_weight``;
    here they are transposed and split.
    """
    if not isinstance(mha, torch.nn.MultiheadAttention):
        raise ValueError(f"expected torch.nn.MultiheadAttention, got {type(mha).__name__}")
    if mha.in_proj_weight is None:
        raise ValueError("separate key/value dimensions (kdim, vdim) are not supported")
    W_Q, W_K, W_V = (W.detach().T for W in mha.in_proj_weight.chunk(3))
    b_Q = b_K = b_V = None
    if mha.in_proj_bias is not None:
        b_Q, b_K, b_V = (b.detach() for b in mha.in_proj_bias.chunk(3))
    if mha.bias_k is not None or mha.add_zero_attn:
        raise ValueError("extra key/value biases (add_bias_kv, add_zero_attn) are not supported")
    b_O = None if mha.out_proj.bias is None else mha.out_proj.bias.detach()
    return AttentionWeights(W_Q, W_K, W_V, mha.out_proj.weight.detach().T, mha.num_heads,
                            b_Q, b_K, b_V, b_O)


def weights_from_timm(attn) -> AttentionWeights:
    """The weights of timm's ``Attention`` block (as in ``vision_transformer.py``)."""
    for name in ("qkv", "proj", "num_heads"):
        if not hasattr(attn, name):
            raise ValueError(f"expected timm's Attention (with .qkv, .proj, .num_heads), got {type(attn).__name__}")
    extras = [getattr(attn, name, torch.nn.Identity()) for name in ("q_norm", "k_norm", "norm")]
    if not all(isinstance(m, torch.nn.Identity) for m in extras) or getattr(attn, "gate", None) is not None:
        raise ValueError("query/key normalisation, output normalisation or gating inside attention is not supported")
    W_Q, W_K, W_V = (W.detach().T for W in attn.qkv.weight.chunk(3))
    b_Q = b_K = b_V = None
    if attn.qkv.bias is not None:
        b_Q, b_K, b_V = (b.detach() for b in attn.qkv.bias.chunk(3))
    b_O = None if attn.proj.bias is None else attn.proj.bias.detach()
    return AttentionWeights(W_Q, W_K, W_V, attn.proj.weight.detach().T, attn.num_heads,
                            b_Q, b_K, b_V, b_O)


def split_heads(W: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Column blocks of ``W`` (``(C, h d)``) as one matrix per head, ``(h, C, d)``."""
    C, hd = W.shape
    if hd % num_heads:
        raise ValueError(f"{hd} columns do not split into {num_heads} heads")
    return W.reshape(C, num_heads, hd // num_heads).permute(1, 0, 2)


def head_matrices(W_V: torch.Tensor, W_O: torch.Tensor, num_heads: int) -> torch.Tensor:
    """``W^(j) = W_V^(j) W_O^(j)`` for every head: ``(h, C, D)``, each of rank at most ``d_v``."""
    values = split_heads(W_V, num_heads)                               # (h, C, d_v)
    outputs = W_O.reshape(num_heads, -1, W_O.shape[1])                 # (h, d_v, D)
    return values @ outputs


def content_attention(X: torch.Tensor, weights: AttentionWeights) -> torch.Tensor:
    """Attention probabilities ``softmax(Q K^T / sqrt(d_k))`` per head: ``(B, h, N, N)``.

    ``X``: ``(B, N, C)``.
    """
    h = weights.num_heads
    Q = X @ weights.W_Q + (0 if weights.b_Q is None else weights.b_Q)
    K = X @ weights.W_K + (0 if weights.b_K is None else weights.b_K)
    B, N, hd = Q.shape
    Q = Q.reshape(B, N, h, hd // h).transpose(1, 2)                    # (B, h, N, d_k)
    K = K.reshape(B, N, h, hd // h).transpose(1, 2)
    return torch.softmax(Q @ K.transpose(-2, -1) / (hd // h) ** 0.5, dim=-1)


def sum_over_heads(X: torch.Tensor, attention: torch.Tensor, W_heads: torch.Tensor,
                   bias: torch.Tensor | None = None) -> torch.Tensor:
    """``out_q = sum_j sum_k A^(j)_{qk} x_k W^(j) + b``: multi-head attention as a sum over heads.

    ``X``: ``(B, N, C)``; ``attention``: ``(B, h, N, N)`` or ``(h, N, N)`` (the
    same for every input); ``W_heads``: ``(h, C, D)``; ``bias``: ``(D,)``.
    Returns ``(B, N, D)``.
    """
    if X.ndim != 3:
        raise ValueError(f"X must be (B, N, C), got {tuple(X.shape)}")
    B, N, C = X.shape
    h = W_heads.shape[0]
    if W_heads.ndim != 3 or W_heads.shape[1] != C:
        raise ValueError(f"W_heads must be (h, C={C}, D), got {tuple(W_heads.shape)}")
    if attention.shape[-3:] != (h, N, N) or attention.ndim not in (3, 4):
        raise ValueError(f"attention must be ([B,] h={h}, N={N}, N={N}), got {tuple(attention.shape)}")
    mapped = torch.einsum("bkc,hcd->bhkd", X, W_heads)                # each key through each head's matrix
    out = (attention @ mapped).sum(dim=1)                              # (B, N, D)
    return out if bias is None else out + bias


def multi_head_attention(X: torch.Tensor, weights: AttentionWeights) -> torch.Tensor:
    """Multi-head self-attention computed as a sum over heads: ``(B, N, C) -> (B, N, D)``.

    The value bias passes through unchanged because attention rows sum to one:
    ``A (X W_V + b_V) W_O = A X W_V W_O + b_V W_O``.
    """
    if X.ndim != 3 or X.shape[-1] != weights.W_Q.shape[0]:
        raise ValueError(f"X must be (B, N, C={weights.W_Q.shape[0]}), got {tuple(X.shape)}")
    W_heads = head_matrices(weights.W_V, weights.W_O, weights.num_heads)
    bias = torch.zeros(weights.W_O.shape[1], dtype=X.dtype)
    if weights.b_V is not None:
        bias = bias + weights.b_V @ weights.W_O
    if weights.b_O is not None:
        bias = bias + weights.b_O
    return sum_over_heads(X, content_attention(X, weights), W_heads, bias)


# ---------------------------------------------------------------------------
# The convolution as a sum over offsets.
# ---------------------------------------------------------------------------

def conv_taps(W_conv: torch.Tensor) -> tuple[np.ndarray, torch.Tensor]:
    """Offsets ``(k^d, d)`` and tap matrices ``W_Delta[c', o] = W_conv[o, c', u, v]``, ``(k^d, C, C_out)``."""
    dim = kernel_dim(W_conv)
    C_out, C = W_conv.shape[:2]
    taps = W_conv.reshape(C_out, C, -1).permute(2, 1, 0)
    return kernel_offsets(W_conv.shape[-1], dim), taps


def conv_as_offset_sum(X: torch.Tensor, W_conv: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``Conv(X)_p = sum_Delta x_{p + Delta} W_Delta + b``: the convolution as ``k^d`` lookups.

    Each offset is one gather of the shifted tokens (indices wrap around), so
    this is ``sum_over_heads`` with every "head" a hard lookup.
    """
    dim = conv_dim(X, W_conv, bias)
    shape = X.shape[2:]
    offsets, taps = conv_taps(W_conv.to(X.dtype))
    positions = grid_coordinates(shape)                                         # (N, d)
    source = (positions[None] + offsets[:, None]) % np.array(shape)            # (h, N, d)
    index = torch.as_tensor(np.ravel_multi_index(tuple(source.transpose(2, 0, 1)), shape))  # (h, N)
    tokens = grid_to_tokens(X, dim)                                             # (B, N, C)
    shifted = tokens[:, index]                                                  # (B, h, N, C)
    out = torch.einsum("bhnc,hco->bno", shifted, taps)
    if bias is not None:
        out = out + bias.to(X.dtype)
    return tokens_to_grid(out, shape)


# ---------------------------------------------------------------------------
# The construction: positional heads with the quadratic encoding.
# ---------------------------------------------------------------------------

def quadratic_encoding(offsets: np.ndarray) -> np.ndarray:
    """The paper's relative encoding ``r_delta = (|delta|^2, delta)``: ``(..., d + 1)``."""
    offsets = np.asarray(offsets)
    return np.concatenate([np.sum(offsets**2, axis=-1, keepdims=True), offsets], axis=-1)


def offset_queries(targets: np.ndarray, alpha: float) -> np.ndarray:
    """The query vectors ``v_j = -alpha (1, -2 Delta_j)``, one per head: ``(h, d + 1)``.

    ``<v_j, r_delta> = -alpha (|delta|^2 - 2 <Delta_j, delta>)
    = -alpha |delta - Delta_j|^2 + alpha |Delta_j|^2``, and the constant
    cancels in the softmax (the paper's Lemma 2).
    """
    targets = np.asarray(targets, dtype=float)
    alpha = _check_alpha(alpha)
    return -alpha * np.concatenate([np.ones((len(targets), 1)), -2 * targets], axis=1)


def positional_attention(shape, targets: np.ndarray, alpha: float,
                         dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Attention of the offset heads on a circular grid ``shape``: ``(h, N, N)``.

    Head ``j`` scores key ``k`` for query ``q`` by ``<v_j, r_delta(q, k)>``,
    the same for every input, and normalises with a softmax over keys.
    """
    targets = np.asarray(targets)
    if targets.ndim != 2 or targets.shape[1] != len(shape):
        raise ValueError(f"targets must be (h, {len(shape)}) offsets, got {targets.shape}")
    encoding = torch.as_tensor(quadratic_encoding(relative_offsets(shape)), dtype=dtype)  # (N, N, d+1)
    queries = torch.as_tensor(offset_queries(targets, alpha), dtype=dtype)                # (h, d+1)
    scores = torch.einsum("hp,qkp->hqk", queries, encoding)
    return torch.softmax(scores, dim=-1)


def conv_via_attention(X: torch.Tensor, W_conv: torch.Tensor, alpha: float,
                       bias: torch.Tensor | None = None) -> torch.Tensor:
    """A circular ``k x k`` (or ``k``-tap) convolution computed by ``k^d`` attention heads.

    Head ``j`` attends with scores ``-alpha |delta - Delta_j|^2`` and its
    matrix ``W^(j) = W_V^(j) W_O^(j)`` is the tap ``W_{Delta_j}``; the bias is
    the output projection's. ``X``: ``(B, C, L)`` or ``(B, C, H, W)``;
    ``W_conv``: ``(C_out, C, k)`` or ``(C_out, C, k, k)``. Returns the
    convolution's layout, ``(B, C_out, ...)``, approaching
    ``circular_conv(X, W_conv, bias)`` as ``alpha`` grows.
    """
    dim = conv_dim(X, W_conv, bias)
    shape = X.shape[2:]
    offsets, taps = conv_taps(W_conv.to(X.dtype))
    attention = positional_attention(shape, offsets, alpha, dtype=X.dtype)      # (h, N, N)
    out = sum_over_heads(grid_to_tokens(X, dim), attention, taps,
                         None if bias is None else bias.to(X.dtype))
    return tokens_to_grid(out, shape)


# ---------------------------------------------------------------------------
# How close: rho(alpha), the error bound, the float32 threshold.
# ---------------------------------------------------------------------------

def rho(alpha, dim: int = 1) -> np.ndarray:
    """``rho(alpha) = sum_{z in Z^dim, z != 0} exp(-alpha |z|^2)``.

    In 1-D this is ``2 sum_{z >= 1} exp(-alpha z^2)``, about ``2 exp(-alpha)``
    for large ``alpha``; the 2-D sum factorises, ``(1 + rho_1)^2 - 1``, about
    ``4 exp(-alpha)``. A head aimed at ``Delta`` leaks at most
    ``rho / (1 + rho)`` of its weight off its target, on any grid.
    """
    if dim not in (1, 2):
        raise ValueError(f"dim must be 1 or 2, got {dim!r}")
    alpha = np.asarray(alpha, dtype=float)
    if np.any(~np.isfinite(alpha)) or np.any(alpha <= 0):
        raise ValueError(f"alpha must be finite and > 0, got {alpha}")
    # Terms with alpha z^2 > 800 are below float64's smallest number.
    z = np.arange(1, int(np.ceil(np.sqrt(800 / alpha.min()))) + 1)
    rho_1 = 2 * np.exp(-alpha[..., None] * z**2).sum(axis=-1)
    # (1 + rho_1)^2 - 1 written without subtracting 1: no cancellation for large alpha.
    return rho_1 if dim == 1 else 2 * rho_1 + rho_1**2


def off_target_bound(alpha, dim: int = 1) -> np.ndarray:
    """The most weight a head can put off its target: ``rho / (1 + rho)``."""
    r = rho(alpha, dim)
    return r / (1 + r)


def conv_error_bound(X: torch.Tensor, W_conv: torch.Tensor, alpha: float) -> float:
    """Bound on ``max |conv_via_attention - circular_conv|`` in exact arithmetic.

    Head ``j`` returns ``sum_k A_k x_k W_j`` instead of ``x_target W_j``; the
    difference is ``sum_{k != target} A_k (x_k - x_target) W_j``, at most the
    head's off-target weight times the spread (max minus min over positions)
    of ``x W_j`` in each output channel. Summed over heads:
    ``rho / (1 + rho) * sum_j spread_j``, maximised over batch and channels.
    """
    dim = conv_dim(X, W_conv, None)
    _, taps = conv_taps(W_conv.to(X.dtype))
    mapped = torch.einsum("bnc,hco->bhno", grid_to_tokens(X, dim), taps)         # (B, h, N, C_out)
    spread = (mapped.amax(dim=2) - mapped.amin(dim=2)).sum(dim=1)               # (B, C_out)
    return float(off_target_bound(alpha, dim) * spread.max())


def relative_max_error(approx: torch.Tensor, exact: torch.Tensor) -> float:
    """``max |approx - exact| / max |exact|``, computed in float64."""
    exact = exact.double()
    return float((approx.double() - exact).abs().max() / exact.abs().max())


@dataclass(frozen=True)
class Convergence:
    """Relative errors of the construction against ``alpha``, each of shape ``(len(alphas),)``.

    ``error64`` and ``error32``: ``max |conv_via_attention - exact| / max |exact|``
    computed in float64 and in float32, both against the float64 convolution;
    ``bound``: ``conv_error_bound`` on the same scale; ``floor32``: the float32
    convolution's own relative error, the best float32 can do.
    """

    alphas: np.ndarray
    error64: np.ndarray
    error32: np.ndarray
    bound: np.ndarray
    rho: np.ndarray
    floor32: float


def convergence(X: torch.Tensor, W_conv: torch.Tensor, alphas, bias: torch.Tensor | None = None) -> Convergence:
    """Run ``conv_via_attention`` at every ``alpha`` in float64 and float32 (inputs given in float64)."""
    dim = conv_dim(X, W_conv, bias)
    if X.dtype != torch.float64:
        raise ValueError(f"give X in float64 (the float32 copy is made here), got {X.dtype}")
    alphas = np.asarray(alphas, dtype=float)
    exact = circular_conv(X, W_conv, bias)
    scale = float(exact.abs().max())
    X32, W32 = X.float(), W_conv.float()
    b32 = None if bias is None else bias.float()
    error64 = np.array([relative_max_error(conv_via_attention(X, W_conv, a, bias), exact) for a in alphas])
    error32 = np.array([relative_max_error(conv_via_attention(X32, W32, a, b32), exact) for a in alphas])
    bound = np.array([conv_error_bound(X, W_conv, a) for a in alphas]) / scale
    floor32 = relative_max_error(circular_conv(X32, W32, b32), exact)
    return Convergence(alphas, error64, error32, bound, rho(alphas, dim), floor32)


def alpha_where_leak_is(level: float, dim: int = 1) -> float:
    """The ``alpha`` at which a head's largest off-target weight ``rho / (1 + rho)`` equals ``level``.

    With ``level = FLOAT32_ROUNDING_UNIT`` this is where float32 stops seeing
    the leak: it is smaller than the rounding of the target's own weight.
    Solved by bisection; ``rho`` falls strictly as ``alpha`` grows.
    """
    if not 0 < level < 0.5:
        raise ValueError(f"level must be in (0, 0.5), got {level}")
    low, high = 1e-3, 1.0
    while off_target_bound(high, dim) > level:
        high *= 2
    for _ in range(200):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if off_target_bound(mid, dim) > level else (low, mid)
    return 0.5 * (low + high)


def first_exact_lookup(shape, k: int, alphas, dtype: torch.dtype = torch.float32) -> float:
    """The smallest ``alpha`` in ``alphas`` from which all ``k^d`` heads put weight exactly 1 on their targets.

    Computed with PyTorch's softmax in ``dtype`` at every query of the grid
    ``shape``; from there on (to the end of ``alphas``) the leak is below what
    ``dtype`` can represent next to 1. Raises ``ValueError`` if that never happens.
    """
    alphas = np.sort(np.asarray(alphas, dtype=float))
    targets = kernel_offsets(k, len(shape))
    exact = np.array([bool((positional_attention(shape, targets, a, dtype).amax(dim=-1) == 1).all())
                      for a in alphas])
    if not exact[-1]:
        raise ValueError(f"no exact lookup up to alpha = {alphas[-1]} in {dtype}")
    not_exact = np.nonzero(~exact)[0]
    return float(alphas[0] if not_exact.size == 0 else alphas[not_exact[-1] + 1])


# ---------------------------------------------------------------------------
# What fits in a layer.
# ---------------------------------------------------------------------------

def largest_kernel(num_heads: int, head_dim: int, out_dim: int) -> tuple[int, int]:
    """The largest centred ``k x k`` convolution one layer can express, and its output channels.

    The paper's Theorem 1: ``k^2`` heads express a ``k x k`` kernel, and each
    head's matrix ``W_V^(j) W_O^(j)`` has rank at most ``d_v``, so the layer
    reaches ``min(d_v, D_out)`` output channels. ``k`` is the largest odd
    integer with ``k^2 <= h``, since the kernels here are centred.
    """
    for name, value in (("num_heads", num_heads), ("head_dim", head_dim), ("out_dim", out_dim)):
        if not (isinstance(value, (int, np.integer)) and value >= 1):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    k = math.isqrt(int(num_heads))
    if k % 2 == 0:
        k -= 1
    return k, min(head_dim, out_dim)


def heads_for_conv(k: int, in_channels: int, out_channels: int, head_dim: int) -> int:
    """Heads of width ``d_v`` needed for a full ``k x k`` convolution from ``C`` to ``C_out`` channels.

    A tap ``W_Delta`` (``C x C_out``) can have rank ``min(C, C_out)``; one head
    supplies rank at most ``d_v`` at its offset, so each of the ``k^2`` offsets
    needs ``ceil(min(C, C_out) / d_v)`` heads attending to it.
    """
    for name, value in (("k", k), ("in_channels", in_channels), ("out_channels", out_channels),
                        ("head_dim", head_dim)):
        if not (isinstance(value, (int, np.integer)) and value >= 1):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(k) ** 2 * math.ceil(min(in_channels, out_channels) / head_dim)


def timm_attention_shape(model_name: str) -> dict[str, int]:
    """Heads, head width and embedding width of a timm ViT, read from the model itself.

    The model is built on PyTorch's ``meta`` device: the configuration
    without allocating or downloading any weights.
    """
    import timm

    with torch.device("meta"):
        model = timm.create_model(model_name, pretrained=False)
    blocks = getattr(model, "blocks", None)
    if blocks is None or not hasattr(blocks[0], "attn") or not hasattr(blocks[0].attn, "num_heads"):
        raise ValueError(f"{model_name} has no ViT blocks with multi-head attention")
    attn = blocks[0].attn
    return {"num_heads": int(attn.num_heads), "head_dim": int(attn.head_dim),
            "embed_dim": int(model.embed_dim), "depth": len(blocks)}


# ---------------------------------------------------------------------------
# Input checks.
# ---------------------------------------------------------------------------

def _check_alpha(alpha) -> float:
    alpha = float(alpha)
    if not (np.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be finite and > 0, got {alpha}")
    return alpha
