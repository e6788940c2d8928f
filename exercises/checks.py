"""The cases, comparisons and hints of every exercise: what :mod:`exercises.grade` runs.

Each exercise's cases are drawn from a generator the grader seeds: random
cases first (sizes, non-square grids, strides, prefix counts, sharpness
values), then fixed edge cases. The expected value is always the book's own
function (``vitbias``) on the same inputs.
"""

from __future__ import annotations

import numpy as np
import torch

from exercises.spec import Case, Check, Mistake, as_array
from vitbias import attention_conv, cost, geometry, locality, masks, patches, plan, profile, scaling, symmetry, toy
from vitbias.chapters import crossover as crossover_chapter
from vitbias.vit import VIT_B_16, VIT_L_16, ViTConfig

# Float64 results are compared within RTOL of the larger of 1 and the expected output's largest
# magnitude. A correct version does the book's float64 arithmetic in another order; the rounding of
# a sum of n terms is at most about n * 2^-53 (1.1e-16 n) of the terms' magnitudes, no case sums more
# than a few thousand terms or chains more than six matrix products, so correct versions agree to
# about 1e-12. 1e-9 leaves a margin of 1000 and stays far below the smallest effect of any mistake the
# cases expose (rollout rows left unnormalised on maps read in float32: about 1e-7 of the output).
RTOL = 1e-9


# ---------------------------------------------------------------------------
# Comparisons: None when the reader's value matches, else what differs
# ---------------------------------------------------------------------------

def _numeric(found):
    try:
        array = as_array(found)
        return array.astype(float) if array.dtype != object else None
    except (TypeError, ValueError):
        return None


def close(found, expected) -> str | None:
    """Same shape, finite, and within ``RTOL`` of the output's scale everywhere."""
    expected = as_array(expected).astype(float)
    array = _numeric(found)
    if array is None:
        return f"expected numbers, found a {type(found).__name__}"
    if array.shape != expected.shape:
        return f"the shape is {array.shape}, expected {expected.shape}"
    if not np.all(np.isfinite(array)):
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
        return f"found {array[where]} at index {where}"
    gap = np.abs(array - expected)
    tolerance = RTOL * max(1.0, float(np.abs(expected).max(initial=0.0)))
    if gap.max(initial=0.0) <= tolerance:
        return None
    where = np.unravel_index(np.argmax(gap), gap.shape)
    at = f" at index {tuple(int(i) for i in where)}" if array.ndim else ""
    return (f"largest difference {gap[where]:.3g}{at} (expected {expected[where]:.10g}, "
            f"found {array[where]:.10g}); the tolerance is {tolerance:.1g}")


def same_booleans(axes: str):
    """Exact equality of boolean arrays; ``axes`` names the indices, e.g. ``"[query, key]"``."""

    def compare(found, expected) -> str | None:
        try:
            array = as_array(found)
        except (TypeError, ValueError):
            return f"expected a boolean array, found a {type(found).__name__}"
        if array.shape != expected.shape:
            return f"the shape is {array.shape}, expected {expected.shape}"
        differ = np.argwhere(array != expected)
        if len(differ):
            first = tuple(int(i) for i in differ[0])
            return (f"{len(differ)} of {expected.size} entries differ; the first at {axes} = "
                    f"{list(first)}: expected {bool(expected[first])}, found {array[first].item()!r}")
        if array.dtype != bool:
            return f"the values are right but the dtype is {array.dtype}; expected bool"
        return None

    return compare


def same_integers(found, expected) -> str | None:
    """The same sequence of integers (an int-valued float counts)."""
    try:
        values = tuple(found)
    except TypeError:
        return f"expected {len(expected)} integers, found a {type(found).__name__}"
    if len(values) != len(expected):
        return f"expected {len(expected)} numbers, found {len(values)}"
    for i, (value, want) in enumerate(zip(values, expected)):
        if as_array(value).shape != () or as_array(value) != want:
            return f"entry {i}: expected {want}, found {value!r}"
    return None


def same_parts(found, expected) -> str | None:
    """A dict with the expected keys and equal integer values."""
    if not hasattr(found, "keys"):
        return f"expected a dict, found a {type(found).__name__}"
    missing = [key for key in expected if key not in found]
    extra = [key for key in found if key not in expected]
    if missing or extra:
        return (f"the keys differ: missing {missing}" if missing else "the keys differ") + \
               (f", unexpected {extra}" if extra else "")
    for key, want in expected.items():
        value = found[key]
        if as_array(value).shape != () or as_array(value) != want:
            return f"part {key!r}: expected {want}, found {value!r}"
    return None


# ---------------------------------------------------------------------------
# Shared inputs
# ---------------------------------------------------------------------------

def shape(array) -> str:
    return f"{tuple(array.shape)}"


def attention_maps(rng, lead, heads, n_prefix, H_p, W_p, prefix_pull=(-3.0, 3.0), float32=False):
    """Random attention maps ``(*lead, heads, N, N)``, rows summing to 1.

    Each head has its own sharpness: a patch query scores the patch keys by
    ``-sharpness * distance`` plus noise (local heads for a positive
    sharpness, far-looking ones for a negative), and the prefix keys by one
    offset per head drawn from ``prefix_pull``, so the prefix holds a share of
    the weight that differs between heads. ``float32``: every row is then
    scaled by ``1 + e``, ``|e| < 4e-6``, as rows read from a float32 model sum
    to 1 only within such an ``e``.
    """
    N_p = H_p * W_p
    N = n_prefix + N_p
    cells = geometry.grid_coordinates((H_p, W_p))
    distance = np.linalg.norm(cells[:, None] - cells[None], axis=-1)
    sharpness = rng.uniform(-1.5, 3.0, (heads, 1, 1))
    scores = rng.normal(0.0, 1.0, tuple(lead) + (heads, N, N))
    scores[..., n_prefix:, n_prefix:] += -sharpness * distance
    scores[..., n_prefix:, :n_prefix] += rng.uniform(*prefix_pull, (heads, 1, 1))
    A = np.exp(scores - scores.max(axis=-1, keepdims=True))
    A /= A.sum(axis=-1, keepdims=True)
    if float32:
        A *= 1 + rng.uniform(-4e-6, 4e-6, A.shape[:-1] + (1,))
    return A


def random_lead(rng):
    return [(), (int(rng.integers(1, 4)),), (2, int(rng.integers(1, 3)))][rng.integers(3)]


# ---------------------------------------------------------------------------
# equivariance_error and which_shifts_commute
# ---------------------------------------------------------------------------

class Layer:
    """A NumPy map of images ``(..., C, H, W)`` with its stride, shown by its description."""

    def __init__(self, description: str, forward, stride: int):
        self.description, self.forward, self.stride = description, forward, stride

    def __call__(self, x):
        return self.forward(x)

    def __repr__(self):
        return self.description


def make_layer(rng, kind: str, C: int, H: int, W: int, stride: int = 1, kernel: int = 3) -> Layer:
    """One of the layers whose symmetries the book measures, with random weights."""
    out = int(rng.integers(1, 5))
    if kind in ("convolution", "zero-padded convolution", "tanh of a convolution"):
        w, b = symmetry.init_conv(rng, out, C, kernel)
        padding = "zeros" if kind.startswith("zero") else "circular"
        conv = lambda x: geometry.conv2d(x, w, b, stride=stride, padding=padding)  # noqa: E731
        forward = (lambda x: np.tanh(conv(x))) if kind.startswith("tanh") else conv
        return Layer(f"{kind} ({kernel}x{kernel}, {C} -> {out} channels, stride {stride})", forward, stride)
    if kind == "blur, then subsample":
        return Layer(f"binomial blur, then keep one pixel in {stride} along each axis",
                     lambda x: symmetry.subsample(symmetry.binomial_blur(x), stride), stride)
    w, b = symmetry.init_conv(rng, out, C, stride)
    if kind == "patch embedding":
        return Layer(f"patch embedding ({stride}-pixel patches, {C} -> {out} channels)",
                     lambda x: symmetry.patch_embed(x, w, b), stride)
    table = rng.standard_normal((out, H // stride, W // stride))
    return Layer(f"patch embedding ({stride}-pixel patches, {C} -> {out} channels) plus a position table",
                 lambda x: symmetry.patch_embed(x, w, b) + table, stride)


KINDS = ("convolution", "zero-padded convolution", "tanh of a convolution", "blur, then subsample",
         "patch embedding", "patch embedding with positions")


def random_layer(rng, small: bool = False):
    """``(layer, x)``: a random layer and a random image or batch whose sides its stride divides."""
    kind = KINDS[rng.integers(len(KINDS))]
    if kind in ("convolution", "zero-padded convolution"):
        stride = int(rng.integers(1, 4))
    elif kind == "tanh of a convolution":
        stride = 1
    elif kind == "blur, then subsample":
        stride = 2
    else:
        stride = int(rng.integers(2, 5))
    high = 4 if small else 6
    if stride == 1:
        H, W = (int(rng.integers(3, 3 * high // 2 + 3)) for _ in range(2))
    else:
        H, W = (stride * int(rng.integers(2, high)) for _ in range(2))
    if small:
        while H * W > 120:
            H, W = H - stride, W
    C = int(rng.integers(1, 4))
    lead = (int(rng.integers(1, 3)),) if rng.random() < 0.3 else ()
    x = rng.standard_normal(lead + (C, H, W))
    kernel = int(rng.choice([1, 3, 5])) if kind == "convolution" else 3
    return make_layer(rng, kind.replace(" with positions", " + positions"), C, H, W, stride, kernel), x


def random_shift(rng, H, W, stride):
    if rng.random() < 0.5:  # a shift the stride divides
        return tuple(stride * int(rng.integers(-(n // stride) + 1, n // stride)) for n in (H, W))
    return tuple(int(rng.integers(-n + 1, n)) for n in (H, W))


def _shown_layer(f, x, **more):
    return {"f": repr(f), "x": f"{shape(x)} float64", **{k: repr(v) for k, v in more.items()}}


def equivariance_cases(rng):
    for i in range(8):
        f, x = random_layer(rng)
        shift = random_shift(rng, *x.shape[-2:], f.stride)
        yield Case(f"random case {i + 1}", (f, x, shift, f.stride), {},
                   _shown_layer(f, x, shift=shift, stride=f.stride))
    x = rng.standard_normal((3, 8, 12))
    edges = [
        ("a shift of zero", make_layer(rng, "patch embedding + positions", 3, 8, 12, 4), (0, 0)),
        ("a shift by one whole patch, given as one integer (horizontal)",
         make_layer(rng, "patch embedding + positions", 3, 8, 12, 4), 4),
        ("a shift the stride does not divide (no output shift matches)",
         make_layer(rng, "convolution", 3, 8, 12, 2), (1, -3)),
        ("a shift by whole patches: exact equivariance", make_layer(rng, "patch embedding", 3, 8, 12, 4), (-4, 8)),
        ("a zero-padded convolution: equivariant away from the border only",
         make_layer(rng, "zero-padded convolution", 3, 8, 12, 1), (2, 5)),
    ]
    for label, f, shift in edges:
        yield Case(f"edge case: {label}", (f, x, shift, f.stride), {}, _shown_layer(f, x, shift=shift, stride=f.stride))
    f = make_layer(rng, "convolution", 2, 6, 10, 1)
    batch = rng.standard_normal((2, 2, 6, 10))
    yield Case("edge case: a batch of images, the default stride", (f, batch, (3, -7)), {},
               _shown_layer(f, batch, shift=(3, -7)))


def equivariance(f, x, shift, stride=1, sign=1, normalise=True, search=True, integer_axis=1):
    """The equivariance error, with switches that turn it into the usual mistakes."""
    x = np.asarray(x, dtype=float)
    if isinstance(shift, (int, np.integer)):
        shift = (0, int(shift)) if integer_axis == 1 else (int(shift), 0)
    dr, dc = shift
    y = np.asarray(f(x))
    moved = np.asarray(f(np.roll(x, (dr, dc), axis=(-2, -1))))
    scale = np.abs(y).max() if normalise else 1.0
    if not search or (dr % stride == 0 and dc % stride == 0):
        back = np.roll(y, (sign * (dr // stride), sign * (dc // stride)), axis=(-2, -1))
        return float(np.abs(moved - back).max() / scale)
    Hy, Wy = y.shape[-2:]
    gaps = [np.abs(moved - np.roll(y, (a, b), axis=(-2, -1))).max() for a in range(Hy) for b in range(Wy)]
    return float(min(gaps) / scale)


SHIFT_SIGN = ("The shift moves content by +delta, as np.roll(x, delta) does; f(T_delta x) must be compared with "
              "the output moved the same way, by +delta / s, not -delta / s.")


EQUIVARIANCE = Check(
    reference=symmetry.equivariance_error,
    cases=equivariance_cases,
    compare=close,
    hint="Shift x with np.roll over the last two axes, apply f, and compare with f(x) shifted by delta / s; "
         "when s does not divide delta, take the smallest error over every shift of the output grid. "
         "Divide by max|f(x)|.",
    mistakes=(
        Mistake(lambda f, x, shift, stride=1: equivariance(f, x, shift, stride, sign=-1), SHIFT_SIGN),
        Mistake(lambda f, x, shift, stride=1: equivariance(f, x, shift, stride, normalise=False),
                "The error is relative: divide max|f(T_delta x) - T_{delta/s} f(x)| by max|f(x)|."),
        Mistake(lambda f, x, shift, stride=1: equivariance(f, x, shift, stride, search=False),
                "When the stride does not divide the shift, delta / s is not a shift of the output grid: "
                "return the smallest error over every output shift delta' instead."),
        Mistake(lambda f, x, shift, stride=1: equivariance(f, x, shift, stride, integer_axis=0),
                "A shift given as one integer delta is horizontal: (0, delta), columns, the last axis."),
    ),
)


def commute_cases(rng):
    for i in range(6):
        f, x = random_layer(rng, small=True)
        kwargs = {} if rng.random() < 0.5 else {"tol": float(rng.choice([1e-6, 1e-3, 0.3]))}
        yield Case(f"random case {i + 1}", (f, x, f.stride), kwargs,
                   _shown_layer(f, x, stride=f.stride, **kwargs))
    x = rng.standard_normal((2, 8, 12))
    edges = [
        ("a stride-2 convolution: the even shifts", make_layer(rng, "convolution", 2, 8, 12, 2)),
        ("a patch embedding: the whole-patch shifts", make_layer(rng, "patch embedding", 2, 8, 12, 4)),
        ("positions break even the whole-patch shifts", make_layer(rng, "patch embedding + positions", 2, 8, 12, 4)),
    ]
    for label, f in edges:
        yield Case(f"edge case: {label}", (f, x, f.stride), {}, _shown_layer(f, x, stride=f.stride))
    f = make_layer(rng, "convolution", 2, 4, 6, 1)
    x = rng.standard_normal((2, 4, 6))
    yield Case("edge case: the default stride, a loose tolerance", (f, x), {"tol": 0.5},
               _shown_layer(f, x, tol=0.5))


def commuting(f, x, stride=1, tol=1e-8, **switches):
    H, W = np.shape(x)[-2:]
    return np.array([[equivariance(f, x, (dr, dc), stride, **switches) <= tol for dc in range(W)]
                     for dr in range(H)])


COMMUTE = Check(
    reference=symmetry.which_shifts_commute,
    cases=commute_cases,
    compare=same_booleans("[dr, dc]"),
    hint="Entry [dr, dc] is equivariance_error(f, x, (dr, dc), stride) <= tol, for every 0 <= dr < H, "
         "0 <= dc < W: an (H, W) boolean array of the input's shifts.",
    mistakes=(
        Mistake(lambda f, x, stride=1, tol=1e-8: commuting(f, x, 1, tol),
                "Pass the stride on: a stride-s layer's output moves by delta / s, and only when s divides delta."),
        Mistake(lambda f, x, stride=1, tol=1e-8: commuting(f, x, stride, tol, sign=-1), SHIFT_SIGN),
    ),
)


# ---------------------------------------------------------------------------
# mean_attention_distance
# ---------------------------------------------------------------------------

def _layout_shown(A, **more):
    return {"A": f"{shape(A)} float64 (..., heads, N, N), rows sum to 1", **{k: repr(v) for k, v in more.items()}}


def distance_cases(rng):
    for i in range(6):
        H_p, W_p = (int(n) for n in rng.integers(1, 7, 2))
        if H_p * W_p == 1:
            W_p = 3
        n_prefix = int(rng.choice([0, 1, 1, 2, 5]))
        P = int(rng.choice([2, 4, 8, 14, 16, 32]))
        A = attention_maps(rng, random_lead(rng), int(rng.integers(1, 5)), n_prefix, H_p, W_p)
        yield Case(f"random case {i + 1}", (A, H_p, W_p, P, n_prefix), {},
                   _layout_shown(A, H_p=H_p, W_p=W_p, P=P, n_prefix=n_prefix))
    edges = [
        ("a prefix-free model (n_prefix = 0)", (2,), 3, 0, 3, 5, 8, (-3, 3)),
        ("heads that put most of their weight on the prefix", (), 4, 2, 4, 3, 16, (3, 5)),
        ("a single row of patches", (2,), 2, 1, 1, 6, 4, (-3, 3)),
        ("one patch: no distance to measure but zero", (), 2, 1, 1, 1, 16, (-2, 2)),
        ("ViT-B/16's grid: 14 x 14 patches of 16 px and [CLS]", (), 2, 1, 14, 14, 16, (-3, 3)),
    ]
    for label, lead, heads, n_prefix, H_p, W_p, P, pull in edges:
        A = attention_maps(rng, lead, heads, n_prefix, H_p, W_p, prefix_pull=pull)
        yield Case(f"edge case: {label}", (A, H_p, W_p, P, n_prefix), {},
                   _layout_shown(A, H_p=H_p, W_p=W_p, P=P, n_prefix=n_prefix))
    # Exact heads: one attends only to its own patch (0 px), one attends uniformly to every token.
    H_p, W_p, n_prefix = 3, 4, 1
    N = n_prefix + H_p * W_p
    own = np.full((N, N), 1.0 / N)
    own[n_prefix:] = np.eye(N)[n_prefix:]
    A = np.stack([own, np.full((N, N), 1.0 / N)])
    yield Case("edge case: a head that attends to its own patch, a head that attends uniformly",
               (A, H_p, W_p, 16, n_prefix), {}, _layout_shown(A, H_p=H_p, W_p=W_p, P=16, n_prefix=n_prefix))


def attention_distance(A, H_p, W_p, P, n_prefix, renormalise=True, patches_first=False, cells=None,
                       metric="euclidean"):
    """The mean attention distance, with switches that turn it into the usual mistakes."""
    A = np.asarray(A, dtype=float)
    N_p = H_p * W_p
    if cells is None:
        cells = geometry.grid_coordinates((H_p, W_p))
    offsets = np.abs(cells[:, None] - cells[None])
    D = P * (offsets.sum(-1) if metric == "manhattan" else np.linalg.norm(offsets, axis=-1))
    block = A[..., :N_p, :N_p] if patches_first else A[..., n_prefix:, n_prefix:]
    d = (block * D).sum(-1)
    if renormalise:
        d = d / block.sum(-1)
    return d.reshape((-1,) + d.shape[-2:]).mean(axis=(0, 2))


def _column_major(H_p, W_p):
    index = np.arange(H_p * W_p)
    return np.stack([index % H_p, index // H_p], axis=1)


DISTANCE = Check(
    reference=locality.mean_attention_distance,
    cases=distance_cases,
    compare=close,
    hint="Keep the patch queries and patch keys, A[..., n_prefix:, n_prefix:]; weight the distances "
         "D[q, k] = P |cell_q - cell_k| (Euclidean, patch (r, c) at index r W_p + c), divide by the patch "
         "weights' sum per query, then average over images and queries: one number per head.",
    mistakes=(
        Mistake(lambda A, H_p, W_p, P, n_prefix: attention_distance(A, H_p, W_p, P, n_prefix, renormalise=False),
                "After dropping the prefix keys, renormalise: divide each patch query's weighted distance by the "
                "sum of its weights on the patch keys, so that weight on [CLS] does not count as distance 0."),
        Mistake(lambda A, H_p, W_p, P, n_prefix: attention_distance(A, H_p, W_p, P, n_prefix, patches_first=True),
                "The prefix tokens come first: the patches are tokens n_prefix .. N - 1, not 0 .. H_p W_p - 1."),
        Mistake(lambda A, H_p, W_p, P, n_prefix: attention_distance(A, H_p, W_p, 1, n_prefix),
                "The distance is in pixels: multiply the grid distance by the patch side P."),
        Mistake(lambda A, H_p, W_p, P, n_prefix: attention_distance(A, H_p, W_p, P, n_prefix,
                                                                    cells=_column_major(H_p, W_p)),
                "Raster order runs along the rows: patch index i is at (i // W_p, i % W_p), which matters "
                "when H_p != W_p."),
        Mistake(lambda A, H_p, W_p, P, n_prefix: attention_distance(A, H_p, W_p, P, n_prefix, metric="manhattan"),
                "The distance between patch centres is Euclidean, sqrt(dr^2 + dc^2), not |dr| + |dc|."),
    ),
)


# ---------------------------------------------------------------------------
# attention_rollout
# ---------------------------------------------------------------------------

def _layers_shown(layers, **more):
    A = layers[0]
    return {"A_layers": f"{len(layers)} layers of {shape(A)} float64 (..., heads, N, N)",
            **{k: repr(v) for k, v in more.items()}}


def rollout_cases(rng):
    for i in range(6):
        H_p, W_p = (int(n) for n in rng.integers(1, 6, 2))
        n_prefix = int(rng.choice([0, 1, 1, 2, 4]))
        lead, heads, L = random_lead(rng), int(rng.integers(1, 4)), int(rng.integers(2, 6))
        float32 = bool(rng.random() < 0.5)
        layers = [attention_maps(rng, lead, heads, n_prefix, H_p, W_p, float32=float32) for _ in range(L)]
        shown = _layers_shown(layers, n_prefix=n_prefix, H_p=H_p, W_p=W_p)
        if float32:
            shown["A_layers"] += ", rows sum to 1 within 4e-6 (as read in float32)"
        yield Case(f"random case {i + 1}", (layers, n_prefix, H_p, W_p), {}, shown)
    edges = [
        ("a prefix-free model (n_prefix = 0): the mean of the rows", (2,), 2, 0, 3, 4, 3, False),
        ("maps read from a float32 model: rows sum to 1 within 4e-6", (), 3, 1, 4, 3, 4, True),
        ("one layer", (), 2, 1, 2, 5, 1, False),
        ("four register tokens and [CLS]", (2,), 2, 5, 3, 3, 3, False),
        ("one patch, no prefix", (), 1, 0, 1, 1, 2, False),
    ]
    for label, lead, heads, n_prefix, H_p, W_p, L, float32 in edges:
        layers = [attention_maps(rng, lead, heads, n_prefix, H_p, W_p, float32=float32) for _ in range(L)]
        yield Case(f"edge case: {label}", (layers, n_prefix, H_p, W_p), {},
                   _layers_shown(layers, n_prefix=n_prefix, H_p=H_p, W_p=W_p))


def rollout(A_layers, n_prefix, H_p, W_p, residual=True, renormalise=True, last_on_left=True,
            read="row", share=False):
    """Attention rollout, with switches that turn it into the usual mistakes."""
    hats = []
    for A in A_layers:
        hat = np.mean(A, axis=-3)
        if residual:
            hat = 0.5 * hat + 0.5 * np.eye(hat.shape[-1])
        if renormalise:
            hat = hat / hat.sum(-1, keepdims=True)
        hats.append(hat)
    R = hats[0]
    for hat in hats[1:]:
        R = hat @ R if last_on_left else R @ hat
    if read == "column":
        out = R[..., n_prefix:, 0]
    elif n_prefix or read == "first row":
        out = R[..., 0, n_prefix:]
    else:
        out = R.mean(axis=-2)
    if share:
        out = out / out.sum(-1, keepdims=True)
    return out.reshape(out.shape[:-1] + (H_p, W_p))


ROLLOUT = Check(
    reference=locality.attention_rollout,
    cases=rollout_cases,
    compare=close,
    hint="Per layer: average the heads, A_hat = A_bar / 2 + I / 2, divide each row by its sum; "
         "R = A_hat_L ... A_hat_1 with the last layer on the left; read R[0, n_prefix:] (or the mean of "
         "the rows when n_prefix = 0) and reshape to (..., H_p, W_p).",
    mistakes=(
        Mistake(lambda A, n, H, W: rollout(A, n, H, W, residual=False),
                "Count the residual connection: A_hat = A_bar / 2 + I / 2, half of the flow goes straight up."),
        Mistake(lambda A, n, H, W: rollout(A, n, H, W, last_on_left=False),
                "Tokens are rows and X_l = A_hat_l X_{l-1}, so R = A_hat_L ... A_hat_1: each new layer "
                "multiplies from the left."),
        Mistake(lambda A, n, H, W: rollout(A, n, H, W, renormalise=False),
                "Renormalise the rows of A_bar / 2 + I / 2: maps read from a model (float32) sum to 1 only "
                "approximately, and the rollout is defined with rows summing to exactly 1."),
        Mistake(lambda A, n, H, W: rollout(A, n, H, W, share=True),
                "Do not renormalise the result: R[0, n_prefix:] sums to 1 minus the share that ends on the "
                "prefix tokens."),
        Mistake(lambda A, n, H, W: rollout(A, n, H, W, read="column"),
                "Read a row of R (what reaches the output token), not a column."),
        Mistake(lambda A, n, H, W: rollout(A, n, H, W, read="first row"),
                "Without a prefix there is no [CLS] token to read: average the rows of R."),
    ),
)


# ---------------------------------------------------------------------------
# conv_via_attention
# ---------------------------------------------------------------------------

def conv_cases(rng):
    for i in range(6):
        dims = int(rng.integers(1, 3))
        grid = tuple(int(n) for n in rng.integers(3, 9, dims))
        k = int(rng.choice([1, 3, 3, 5]))
        while k > min(grid):
            k -= 2
        yield _conv_case(rng, f"random case {i + 1}", grid, k, float(np.exp(rng.uniform(np.log(0.3), np.log(40)))),
                         bias=bool(rng.random() < 0.5))
    yield _conv_case(rng, "edge case: a signal (1-D), soft heads", (9,), 3, 0.7, bias=True)
    yield _conv_case(rng, "edge case: a 1 x 1 kernel (one head)", (4, 5), 1, 2.0, bias=True)
    yield _conv_case(rng, "edge case: a kernel as large as the input", (5, 6), 5, 3.0, bias=False)
    yield _conv_case(rng, "edge case: sharp heads (alpha = 60): the convolution itself", (6, 7), 3, 60.0, bias=True)
    yield _conv_case(rng, "edge case: even sides and soft heads (offsets wrap into [-n // 2, n - n // 2))",
                     (4, 6), 3, 0.4, bias=False)


def _conv_case(rng, label, grid, k, alpha, bias):
    B, C, C_out = (int(n) for n in rng.integers(1, 4, 3))
    X = torch.from_numpy(rng.standard_normal((B, C) + grid))
    W = torch.from_numpy(rng.standard_normal((C_out, C) + (k,) * len(grid)) / k)
    b = torch.from_numpy(rng.standard_normal(C_out)) if bias else None
    shown = {"X": f"{shape(X)} float64", "W_conv": shape(W), "alpha": f"{alpha:.4g}",
             "bias": "None" if b is None else shape(b)}
    return Case(label, (X, W, alpha), {"bias": b}, shown)


def positional_heads(X, W_conv, alpha, bias=None, nearest=False, per_head_bias=False):
    """The construction in NumPy, with switches that turn it into the usual mistakes."""
    X, W = X.numpy(), W_conv.numpy()
    grid, k = X.shape[2:], W.shape[-1]
    cells = geometry.grid_coordinates(grid)
    delta = cells[None] - cells[:, None]                                    # (N, N, d): key minus query
    n = np.array(grid)
    targets = geometry.kernel_offsets(k, len(grid))                         # (h, d)
    if nearest:  # the closest image of the key on the torus, for each head's target
        lifts = (delta[None] - targets[:, None, None] + n // 2) % n - n // 2
    else:
        lifts = (delta + n // 2) % n - n // 2
        lifts = lifts[None] - targets[:, None, None]
    scores = -alpha * (lifts**2).sum(-1)                                    # (h, N, N)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    tokens = X.reshape(X.shape[:2] + (-1,)).transpose(0, 2, 1)              # (B, N, C)
    taps = W.reshape(W.shape[:2] + (-1,)).transpose(2, 1, 0)                # (h, C, C_out)
    out = np.einsum("hqk,bkc,hco->bqo", weights, tokens, taps)
    if bias is not None:
        out = out + bias.numpy() * (len(targets) if per_head_bias else 1)
    return torch.from_numpy(out.transpose(0, 2, 1).reshape((X.shape[0], W.shape[0]) + grid))


def _flipped(W):
    return W.flip(dims=tuple(range(2, W.ndim)))


CONV = Check(
    reference=attention_conv.conv_via_attention,
    cases=conv_cases,
    compare=close,
    hint="One head per kernel offset Delta (tap W_conv[o, c, a + Delta]); scores -alpha |delta - Delta|^2 with "
         "delta the key's offset from the query wrapped into [-n // 2, n - n // 2); softmax over the keys; "
         "sum over heads of the weighted inputs times the tap, plus the bias once.",
    mistakes=(
        Mistake(lambda X, W, alpha, bias=None: attention_conv.conv_via_attention(X, _flipped(W), alpha, bias),
                "This is a true convolution (the kernel flipped). Deep-learning convolutions are "
                "cross-correlations: the head aimed at offset +Delta reads X[p + Delta] and uses "
                "W_conv[..., a + Delta], not W_conv[..., a - Delta]."),
        Mistake(lambda X, W, alpha, bias=None: attention_conv.conv_via_attention(X, W.transpose(-1, -2), alpha,
                                                                                  bias),
                "Rows and columns of the kernel are swapped: tap W_conv[o, c, u, v] belongs to the offset "
                "(u - a, v - a), rows first."),
        Mistake(lambda X, W, alpha, bias=None: positional_heads(X, W, alpha, bias, per_head_bias=True),
                "Add the bias once, after the sum over heads (it is the output projection's), not once per head."),
        Mistake(lambda X, W, alpha, bias=None: positional_heads(X, W, alpha, bias, nearest=True),
                "Take the key's offset from the query as one wrapped offset per pair, each coordinate in "
                "[-n // 2, n - n // 2) (vitbias.geometry.relative_offsets), then -alpha |delta - Delta|^2; "
                "at a soft alpha on a small grid the choice of offset shows."),
    ),
)


# ---------------------------------------------------------------------------
# grid_local_mask
# ---------------------------------------------------------------------------

def mask_cases(rng):
    for i in range(8):
        H_p, W_p = (int(n) for n in rng.integers(1, 8, 2))
        radius = int(rng.integers(0, 4))
        n_prefix = int(rng.choice([0, 1, 1, 2, 4]))
        yield Case(f"random case {i + 1}", (H_p, W_p, radius, n_prefix), {},
                   {"H_p": H_p, "W_p": W_p, "radius": radius, "n_prefix": n_prefix})
    edges = [
        ("a prefix-free model (n_prefix = 0)", (4, 5, 1, 0)),
        ("a radius larger than the grid: every pair", (3, 4, 9, 1)),
        ("radius 0: each patch sees only itself and the prefix", (3, 3, 0, 2)),
        ("one patch", (1, 1, 1, 1)),
        ("a single row of patches", (1, 7, 2, 1)),
        ("ViT-B/16's grid, a 3 x 3 window", (14, 14, 1, 1)),
    ]
    for label, args in edges:
        yield Case(f"edge case: {label}", args, {}, dict(zip(("H_p", "W_p", "radius", "n_prefix"), args)))
    yield Case("edge case: the default n_prefix (one [CLS] token)", (3, 5, 1), {},
               {"H_p": 3, "W_p": 5, "radius": 1, "n_prefix": "(not given: 1)"})


def local_mask(H_p, W_p, radius, n_prefix=1, metric="chebyshev", cells=None, prefix="free", within=np.less_equal):
    """The local mask, with switches that turn it into the usual mistakes."""
    cells = geometry.grid_coordinates((H_p, W_p)) if cells is None else cells
    offsets = np.abs(cells[:, None] - cells[None])
    distance = {"chebyshev": offsets.max(-1), "manhattan": offsets.sum(-1),
                "euclidean": np.linalg.norm(offsets, axis=-1)}[metric]
    N = n_prefix + H_p * W_p
    mask = np.ones((N, N), dtype=bool)
    if prefix == "last":
        mask[:H_p * W_p, :H_p * W_p] = within(distance, radius)
        return mask
    mask[n_prefix:, n_prefix:] = within(distance, radius)
    if prefix == "hidden":
        mask[n_prefix:, :n_prefix] = False
        mask[:n_prefix, n_prefix:] = False
    return mask


SQUARE_WINDOW = ("The window is square, like a convolution's: Chebyshev distance max(|dr|, |dc|), not "
                 "|dr| + |dc| (a diamond) nor sqrt(dr^2 + dc^2) (a disc).")

MASK = Check(
    reference=masks.grid_local_mask,
    cases=mask_cases,
    compare=same_booleans("[query, key]"),
    hint="Start from an (N, N) array of True; on the patch block [n_prefix:, n_prefix:] allow the pairs with "
         "max(|r - r'|, |c - c'|) <= radius, patch i at (i // W_p, i % W_p); leave the prefix rows and "
         "columns True; return dtype bool.",
    mistakes=(
        Mistake(lambda H, W, r, n=1: local_mask(H, W, r, n, prefix="hidden"),
                "Leave the prefix free: the prefix rows and columns stay True, so [CLS] can still gather "
                "the whole image and every patch can read it."),
        Mistake(lambda H, W, r, n=1: local_mask(H, W, r, n, metric="manhattan"), SQUARE_WINDOW),
        Mistake(lambda H, W, r, n=1: local_mask(H, W, r, n, metric="euclidean"), SQUARE_WINDOW),
        Mistake(lambda H, W, r, n=1: local_mask(H, W, r, n, within=np.less),
                "The window includes its edge: distance <= radius (radius 1 is a 3 x 3 window)."),
        Mistake(lambda H, W, r, n=1: local_mask(H, W, r, n, prefix="last"),
                "The prefix tokens come first: the patches are tokens n_prefix .. N - 1."),
        Mistake(lambda H, W, r, n=1: local_mask(H, W, r, n, cells=_column_major(H, W)),
                "Raster order runs along the rows: patch i is at (i // W_p, i % W_p), which matters "
                "when H_p != W_p."),
    ),
)


# ---------------------------------------------------------------------------
# embed_linear
# ---------------------------------------------------------------------------

def embed_cases(rng):
    for i in range(6):
        P = int(rng.integers(1, 6))
        H_p, W_p = (int(n) for n in rng.integers(1, 5, 2))
        yield _embed_case(rng, f"random case {i + 1}", int(rng.integers(1, 3)), int(rng.integers(1, 4)),
                          P * H_p, P * W_p, P, int(rng.integers(1, 7)))
    yield _embed_case(rng, "edge case: 1-pixel patches (every pixel a token)", 1, 3, 3, 5, 1, 4)
    yield _embed_case(rng, "edge case: one patch, the whole image", 2, 2, 6, 6, 6, 3)
    yield _embed_case(rng, "edge case: a non-square image of non-square patch grid", 1, 3, 8, 20, 4, 5)
    yield _embed_case(rng, "edge case: ViT-B/16's embedding (16-pixel patches, 768 channels) of a 224-pixel image",
                      1, 3, 224, 224, 16, 768)


def _embed_case(rng, label, B, C, H, W, P, d):
    images = torch.from_numpy(rng.standard_normal((B, C, H, W)))
    conv = torch.nn.Conv2d(C, d, P, stride=P, dtype=torch.float64)
    weight, bias = conv.weight.detach(), conv.bias.detach()
    shown = {"images": f"{shape(images)} float64", "weight": f"{shape(weight)} (d, C, P, P)", "bias": shape(bias)}
    return Case(label, (images, weight, bias), {}, shown)


def flatten_tokens(images, weight, bias, order="channel first", column_major=False, with_bias=True):
    """Patchify and multiply, with switches that turn it into the usual mistakes."""
    d, C, P, _ = weight.shape
    B, _, H, W = images.shape
    blocks = images.reshape(B, C, H // P, P, W // P, P)
    axes = (0, 4, 2, 1, 3, 5) if column_major else (0, 2, 4, 1, 3, 5)
    if order == "channel last":
        axes = axes[:3] + (3, 5, 1)
    rows = blocks.permute(axes).reshape(B, -1, C * P * P)
    return rows @ weight.reshape(d, -1).T + (bias if with_bias else 0)


EMBED = Check(
    reference=patches.embed_conv,
    cases=embed_cases,
    compare=close,
    hint="Reshape the images to (B, C, H/P, P, W/P, P), move the two grid axes first, flatten each patch as "
         "(channel, row, column) and multiply by weight.reshape(d, -1).T, then add the bias.",
    mistakes=(
        Mistake(lambda x, w, b: flatten_tokens(x, w, b, order="channel last"),
                "Flatten each patch channel first, (c, i, j): the order of weight.reshape(d, -1) for a Conv2d "
                "weight (d, C, P, P); (i, j, c) is the order of a channels-last layout."),
        Mistake(lambda x, w, b: flatten_tokens(x, w, b, column_major=True),
                "Tokens go in raster order, row by row: patch (r, c) is token r W/P + c, so the grid's row axis "
                "comes before its column axis."),
        Mistake(lambda x, w, b: flatten_tokens(x, w, b, with_bias=False), "Add the bias."),
    ),
)


# ---------------------------------------------------------------------------
# block_macs and parameter_counts
# ---------------------------------------------------------------------------

def macs_cases(rng):
    for i in range(6):
        N, d = int(rng.integers(1, 700)), 8 * int(rng.integers(1, 161))
        ratio = float(rng.choice([1.0, 1.5, 2.0, 2.5, 3.0, 4.0]))
        yield Case(f"random case {i + 1}", (N, d, ratio), {}, {"tokens": N, "d": d, "mlp_ratio": ratio})
    for label, args in [("ViT-L/16 at 224 pixels, the default MLP ratio", (196, 1024)),
                        ("ViT-L/16 at 384 pixels, the default MLP ratio", (576, 1024)),
                        ("one token", (1, 64, 4.0)),
                        ("a hidden width that int() rounds down (d = 5, ratio 1.5: h = 7)", (10, 5, 1.5))]:
        yield Case(f"edge case: {label}", args, {}, dict(zip(("tokens", "d", "mlp_ratio"), args)))


def _macs(tokens, d, mlp_ratio=4.0, attention_factor=2, ratio=None, flops=1):
    hidden = int(d * (mlp_ratio if ratio is None else ratio))
    return (flops * (4 * tokens * d * d + 2 * tokens * d * hidden), flops * attention_factor * tokens * tokens * d)


MACS = Check(
    reference=cost.block_macs,
    cases=macs_cases,
    compare=same_integers,
    hint="dense = 4 N d^2 (Q, K, V, output) + 2 N d h (the MLP's two matrices); attention = N^2 d (Q K^T) "
         "+ N^2 d (weights times values). Return the two as a tuple of integers.",
    mistakes=(
        Mistake(lambda N, d, r=4.0: _macs(N, d, r, attention_factor=1),
                "Attention has two products of N^2 d each: the scores Q K^T and the weighted sum of the values."),
        Mistake(lambda N, d, r=4.0: _macs(N, d, r, ratio=4.0),
                "The MLP's hidden width is int(d * mlp_ratio), not always 4 d."),
        Mistake(lambda N, d, r=4.0: _macs(N, d, r, flops=2),
                "Count multiply-adds, not FLOPs: one multiply and its add are one multiply-add."),
    ),
)


def config_cases(rng):
    for i in range(6):
        heads = int(rng.integers(1, 5))
        patch = int(rng.choice([2, 4, 8, 16]))
        class_token = bool(rng.random() < 0.7)
        config = ViTConfig(
            img_size=patch * int(rng.integers(1, 15)), patch_size=patch, in_chans=int(rng.choice([1, 3])),
            num_classes=int(rng.choice([0, 10, 100, 1000])), embed_dim=heads * 8 * int(rng.integers(1, 9)),
            depth=int(rng.integers(1, 13)), num_heads=heads, mlp_ratio=float(rng.choice([1.5, 2.0, 3.0, 4.0])),
            pool="cls" if class_token and rng.random() < 0.5 else "mean", class_token=class_token,
            reg_tokens=int(rng.choice([0, 0, 1, 4])), pos_embed=bool(rng.random() < 0.8))
        yield _config_case(f"random case {i + 1}", config)
    edges = [
        ("ViT-B/16 (86.6M parameters)", VIT_B_16),
        ("ViT-L/16 at 384 pixels", VIT_L_16.replace(img_size=384)),
        ("no head (num_classes = 0)", VIT_B_16.replace(num_classes=0, img_size=32)),
        ("no position table", VIT_B_16.replace(pos_embed=False, img_size=64)),
        ("no [CLS] token, four registers, patch tokens averaged",
         ViTConfig(img_size=32, patch_size=4, num_classes=10, embed_dim=64, depth=2, num_heads=4,
                   pool="mean", class_token=False, reg_tokens=4)),
    ]
    for label, config in edges:
        yield _config_case(f"edge case: {label}", config)


def _config_case(label, config):
    fields = ("img_size", "patch_size", "in_chans", "embed_dim", "depth", "num_heads", "mlp_ratio",
              "num_classes", "class_token", "reg_tokens", "pos_embed")
    return Case(label, (config,), {}, {"config": "ViTConfig(" + ", ".join(
        f"{name}={getattr(config, name)!r}" for name in fields) + ")"})


PART_HINTS = {
    "patch embedding": "The patch embedding is Conv2d(C, d, P, stride=P): d C P^2 weights and d biases.",
    "[CLS] token": "The [CLS] token is one learned vector of width d, when class_token is True.",
    "register tokens": "Each register token is one learned vector of width d.",
    "position table": "The position table has one row of width d per token in the encoder, prefix tokens "
                      "included: ((img_size / P)^2 + prefix) d, and nothing without pos_embed.",
    "encoder blocks": "Per block: attention 4 d^2 + 4 d (four d x d projections with biases), MLP 2 d h + h + d "
                      "with h = int(d * mlp_ratio), two LayerNorms 4 d; times depth.",
    "final LayerNorm": "The final LayerNorm has a weight and a bias: 2 d.",
    "head": "The head is Linear(d, num_classes) with bias, and nothing when num_classes = 0.",
    "total": "The total is the sum of the seven parts.",
}


def _part_hint(found, expected):
    problem = same_parts(found, expected)
    if problem and problem.startswith("part "):
        return PART_HINTS[problem.split("'")[1]]
    if problem and problem.startswith("the keys"):
        return f"Return a dict with exactly the keys {list(expected)}."
    return None


PARAMETERS = Check(
    reference=cost.parameter_counts,
    cases=config_cases,
    compare=same_parts,
    hint="Count each part from the configuration; see the docstring for the model's layers.",
    explain=_part_hint,
)


# ---------------------------------------------------------------------------
# toy_crossing_rows and allowed_pairs: two derivations
# ---------------------------------------------------------------------------

def same_integer(found, expected) -> str | None:
    """The same integer (an int-valued float counts)."""
    value = _numeric(found)
    if value is None or value.shape != ():
        return f"expected one integer, found {found!r}"
    if value != expected:
        return f"expected {expected}, found {found!r}"
    return None


def toy_cases(rng):
    for i in range(6):
        n, sigma, beta = int(rng.integers(3, 200)), float(rng.uniform(0.05, 2.0)), float(rng.uniform(0.02, 1.5))
        yield Case(f"random case {i + 1}", (n, sigma, beta), {}, {"n": n, "sigma": sigma, "beta": beta})
    for label, args in [("the chapter's toy: n = 32, sigma = 0.5, beta = 0.3 (about 122 rows)", (32, 0.5, 0.3)),
                        ("no noise: the full map catches up as soon as it can be fitted", (16, 0.0, 0.4)),
                        ("a drift larger than the noise", (8, 0.1, 1.0))]:
        yield Case(f"edge case: {label}", args, {}, dict(zip(("n", "sigma", "beta"), args)))


def _toy_rows(n, sigma, beta):
    return toy.crossover_rows(toy.Toy(n=n, k=1, beta=beta, sigma=sigma))


TOY = Check(
    reference=_toy_rows,
    cases=toy_cases,
    compare=close,
    hint="Set the two excess errors equal, sigma^2 n / (N - n - 1) = beta^2, and solve for N.",
    mistakes=(
        Mistake(lambda n, sigma, beta: n + sigma**2 * n / beta**2,
                "The full map's estimation error has N - n - 1 in its denominator, so the answer is "
                "n + 1 + ..., not n + ..."),
        Mistake(lambda n, sigma, beta: n + 1 + sigma * n / beta,
                "Errors are squared: the noise enters as sigma^2 and the drift as beta^2."),
        Mistake(lambda n, sigma, beta: sigma**2 * n / beta**2,
                "N - n - 1 = sigma^2 n / beta^2 is the number of rows beyond n + 1; add n + 1."),
    ),
)


def _pairs(H_p, W_p, radius, n_prefix=1, prefix=True, diamond=False, double_prefix=False):
    """The count with switches that turn it into the usual mistakes."""
    cells = geometry.grid_coordinates((H_p, W_p))
    offsets = np.abs(cells[:, None] - cells[None])
    distance = offsets.sum(-1) if diamond else offsets.max(-1)
    tokens = n_prefix + H_p * W_p
    extra = (2 * n_prefix * tokens if double_prefix else n_prefix * (2 * tokens - n_prefix)) if prefix else 0
    return int((distance <= radius).sum()) + extra


PAIRS = Check(
    reference=masks.allowed_pairs,
    cases=mask_cases,  # the mask's own cases: the count is of that mask's True entries
    compare=same_integer,
    hint="Along an axis of length L, the pairs within distance r are L + 2 (sum over d = 1 .. min(r, L - 1) of "
         "L - d); the square window multiplies the two axes; add the prefix rows and columns.",
    mistakes=(
        Mistake(lambda H, W, r, n=1: _pairs(H, W, r, n, prefix=False),
                "Count the prefix tokens' pairs too: each sees and is seen by every token."),
        Mistake(lambda H, W, r, n=1: _pairs(H, W, r, n, double_prefix=True),
                "The prefix-by-prefix block sits in both the prefix rows and the prefix columns: count it once."),
        Mistake(lambda H, W, r, n=1: _pairs(H, W, r, n, diamond=True),
                "The window is square, like a convolution's: max(|dr|, |dc|) <= radius, not |dr| + |dc|."),
    ),
)


# ---------------------------------------------------------------------------
# ladder_winners: a prediction
# ---------------------------------------------------------------------------

# The worlds of the crossover chapter's ladder, in its order, as the quick profile plans them.
_RUNGS = list(plan.ladder(profile.budget("quick")))


def measured_ladder() -> tuple[dict, float] | None:
    """``(cnn, vit_plain)`` at the largest size, as the crossover chapter measured them in this
    checkout's run cache (:func:`vitbias.chapters.crossover.measured_ladder`), or None where the
    chapter's runs are not there (then the case is left out)."""
    return crossover_chapter.measured_ladder(profile.budget("quick"))


def _ladder_case(label, cnn, vit_plain):
    shown = {"cnn": ", ".join(f"{world}: {value:.3f}" for world, value in cnn.items()),
             "vit_plain": f"{vit_plain:.3f}"}
    return Case(label, (cnn, vit_plain), {}, shown)


def ladder_cases(rng):
    for i in range(6):
        # the CNN falls rung by rung, as it does in the chapter; the ViT's one number is anywhere
        rungs = int(rng.integers(2, len(_RUNGS) + 1))
        start = float(rng.uniform(0.6, 1.0))
        falls = np.cumsum(np.r_[0.0, rng.uniform(0.02, 0.2, rungs - 1)])
        cnn = {world: round(max(start - fall, 0.1), 4) for world, fall in zip(_RUNGS, falls)}
        yield _ladder_case(f"random case {i + 1}", cnn, round(float(rng.uniform(0.1, 1.0)), 4))
    measured = measured_ladder()
    if measured is not None:
        yield _ladder_case("edge case: the book's own measurement (the crossover chapter, quick profile)", *measured)
    three = _RUNGS[:3]
    yield _ladder_case("edge case: a tie is no win", dict(zip(three, (0.9, 0.7, 0.55))), 0.7)
    yield _ladder_case("edge case: the ViT ahead even on the plain images", dict(zip(three, (0.6, 0.5, 0.4))), 0.65)
    yield _ladder_case("edge case: the CNN ahead in every world", dict(zip(three, (0.95, 0.9, 0.85))), 0.3)
    yield _ladder_case("edge case: a CNN that recovers on a higher rung (measured, not assumed to fall)",
                       dict(zip(_RUNGS[:4], (0.95, 0.6, 0.8, 0.5))), 0.7)


def same_worlds(found, expected) -> str | None:
    """The same worlds, each once, in any order."""
    if isinstance(found, str) or not isinstance(found, (list, tuple, set, frozenset)):
        return f"expected a list of world names, found a {type(found).__name__}"
    found = list(found)
    if len(set(found)) != len(found):
        return "a world is named more than once"
    if set(found) != set(expected):
        missing, extra = [w for w in expected if w not in found], [w for w in found if w not in expected]
        return "; ".join(part for part in (f"missing {missing}" if missing else "",
                                           f"not won: {extra}" if extra else "") if part)
    return None


def _tail_from_first_win(cnn, vit_plain):
    worlds = list(cnn)
    first = next((i for i, w in enumerate(worlds) if vit_plain > cnn[w]), len(worlds))
    return worlds[first:]


LADDER = Check(
    reference=scaling.ladder_winners,
    cases=ladder_cases,
    compare=same_worlds,
    hint="Every world of the ladder is absorbed (vitbias.permute.absorb), so the ViT scores vit_plain in each: "
         "compare that one number with each world's CNN.",
    mistakes=(
        Mistake(lambda cnn, vit_plain: [],
                "The ViT needs no training in the scrambled worlds: by the theorem (vitbias.permute.absorb) its "
                "accuracy in every world of the ladder is its accuracy on the plain images."),
        Mistake(lambda cnn, vit_plain: [w for w, a in cnn.items() if vit_plain >= a],
                "A tie is no win: the ViT must be above the CNN."),
        Mistake(lambda cnn, vit_plain: [w for w, a in cnn.items() if vit_plain > a and w != "plain"],
                "The plain images are a world of the ladder too: the ViT wins there when it is above the CNN."),
        Mistake(_tail_from_first_win,
                "Each world's CNN is measured, not assumed to fall rung by rung: compare every world on its own."),
        Mistake(lambda cnn, vit_plain: [w for w in cnn if w != "plain"],
                "Scrambling costs the CNN accuracy, but the ViT wins a world only where the CNN falls below it."),
    ),
)


CHECKS = {
    "equivariance_error": EQUIVARIANCE,
    "which_shifts_commute": COMMUTE,
    "mean_attention_distance": DISTANCE,
    "attention_rollout": ROLLOUT,
    "conv_via_attention": CONV,
    "grid_local_mask": MASK,
    "embed_linear": EMBED,
    "block_macs": MACS,
    "parameter_counts": PARAMETERS,
    "toy_crossing_rows": TOY,
    "allowed_pairs": PAIRS,
    "ladder_winners": LADDER,
}

