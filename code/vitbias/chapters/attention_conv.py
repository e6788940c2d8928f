"""The attention-conv chapter: how closely sharpened positional heads compute a convolution, in float64
and float32, how much of one fits in a ViT-B layer, and what gradient descent finds in its place."""

from __future__ import annotations

import numpy as np
import torch

from .. import attention_conv as ac
from .. import conv_fit, geometry, scaling
from .. import literature as lit
from ..evidence import Evidence
from ..runs import runs_folder

FLOAT64_MATH = "float64 math through PyTorch's kernels: another summation order moves it by about 1e-13 relative"
MHA_BOUND = 1e-13  # float64 rounding of two summation orders of one attention layer
OFFSET_SUM_AGREES = 1e-12
CONVERGENCE_ALPHAS = np.arange(2, 121) / 4  # 0.5, 0.75, ..., 30
EXACT_LOOKUP_ALPHAS = np.arange(1000, 2501, 5) / 100
SHARP = 5  # from this alpha on the error is a fixed multiple of rho
WELL_CONDITIONED = 20  # up to this alpha the error is far above float64's rounding
FLOAT32_FOLLOWS = 12  # up to this alpha the float32 error is within a few percent of the float64 one
FIGURE_GRID, FIGURE_ALPHAS = (7, 7), {"low": 0.5, "mid": 2.0, "high": 8.0}
ALPHAS_2D = (1, 2, 5, 10, 20)
VIT_B = "vit_base_patch16_224"
SIZES, SEEDS = (1, 4, 16, 64), (0, 1, 2)
ENDS = {"small": 0, "large": -1}  # the smallest and the largest size, as conv_fit.ONE_FIT_SD keys them
SHORT = {"convolution": "conv", "attention": "atte", "multi-head": "mult"}
WHERE_HEADS_STOP = "where the heads stop moves with the kernel set as a seed would"
CONTENT_TEXT = {
    "less": "Gradient descent learned to set the content aside: on this task the content says nothing about "
            "where to look.",
    "more": "More images made the content matter more, not less.",
    "same": "These seeds cannot tell that from its pull at one image ({apart:.2f} apart, where a paired t "
            "test resolves {resolvable:.2f}).",
}
READING = {
    "construction": "Here gradient descent found the construction itself, in every seed.",
    "worse": "Gradient descent found neither the construction nor, at these sizes, the convolution's accuracy.",
    "better": "Gradient descent did not rebuild the construction, and still fitted the target better than the "
              "convolution at the largest size.",
    "same": "Gradient descent did not rebuild the construction; at the largest size these seeds cannot tell its "
            "error from the convolution's: blurred heads, mixed by the nine value matrices, were enough to come "
            "near the target.",
}


def measure(n: int, head_alphas, fits=None) -> Evidence:
    """The chapter's evidence.

    ``n``: the length of the circular 1-D signal; ``head_alphas``: the soft
    and the sharp alpha of the first section's head, ``(soft, sharp)``;
    ``fits``: the :func:`vitbias.conv_fit.sweep` of :data:`SIZES` and
    :data:`SEEDS`, read from the run cache when ``None``. The chapter's
    other experiments are computed here, each as its page shows it.
    """
    found = Evidence("attention-conv")
    _one_head(found, n, head_alphas)
    _as_a_sum(found, *attention_and_convolution_differences())
    _encoding(found)
    run = convergence_1d(n)
    _convergence(found, run)
    _float32(found, run, ac.first_exact_lookup((n,), k=3, alphas=EXACT_LOOKUP_ALPHAS))
    _nine_heads(found, nine_head_maps())
    _convergence_2d(found, convergence_2d())
    _vit_b(found, ac.timm_attention_shape(VIT_B))
    fitted = by_key(conv_fit.sweep(SIZES, SEEDS, folder=runs_folder()) if fits is None else fits)
    _fitted(found, fitted)
    _multi_head(found, fitted)
    return found


def attention_and_convolution_differences() -> tuple[float, float]:
    """The largest differences of the two sums: attention as a sum over heads against PyTorch's
    layer, and a convolution as a sum over offsets against its circular ``conv2d``, on the page's
    random draws (seed 0 of PyTorch's global generator, left as it was found)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        mha = torch.nn.MultiheadAttention(embed_dim=16, num_heads=4, batch_first=True, dtype=torch.float64)
        torch.nn.init.normal_(mha.in_proj_bias)
        X = torch.randn(2, 10, 16, dtype=torch.float64)
        with torch.no_grad():
            library, _ = mha(X, X, X, need_weights=False)
        as_a_sum = ac.multi_head_attention(X, ac.weights_from_torch(mha))
        image = torch.randn(2, 3, 12, 12, dtype=torch.float64)
        kernel, bias = torch.randn(5, 3, 3, 3, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
    offset_sum = ac.conv_as_offset_sum(image, kernel, bias) - geometry.circular_conv(image, kernel, bias)
    return float((library - as_a_sum).abs().max()), float(offset_sum.abs().max())


def convergence_1d(n: int) -> ac.Convergence:
    """The construction against a random three-tap kernel on a circular signal of ``n`` values."""
    generator = torch.Generator().manual_seed(0)
    signal = torch.randn(1, 1, n, generator=generator, dtype=torch.float64)
    taps = torch.randn(1, 1, 3, generator=generator, dtype=torch.float64)
    return ac.convergence(signal, taps, alphas=CONVERGENCE_ALPHAS)


def nine_head_maps() -> np.ndarray:
    """``(alphas, heads, *FIGURE_GRID)``: the nine offset heads' attention from the grid's centre
    pixel, at each of :data:`FIGURE_ALPHAS`."""
    offsets = geometry.kernel_offsets(3, dim=2)
    centre = np.ravel_multi_index(tuple(side // 2 for side in FIGURE_GRID), FIGURE_GRID)
    return np.stack([ac.positional_attention(FIGURE_GRID, offsets, a)[:, centre].reshape(9, *FIGURE_GRID).numpy()
                     for a in FIGURE_ALPHAS.values()])


def convergence_2d() -> ac.Convergence:
    """The construction against a random 3 x 3 kernel, three channels in and four out, with a bias."""
    generator = torch.Generator().manual_seed(1)
    image = torch.randn(2, 3, 16, 16, generator=generator, dtype=torch.float64)
    kernel = torch.randn(4, 3, 3, 3, generator=generator, dtype=torch.float64)
    bias = torch.randn(4, generator=generator, dtype=torch.float64)
    return ac.convergence(image, kernel, alphas=ALPHAS_2D, bias=bias)


def by_key(fits) -> dict:
    """The fits keyed ``(layer, n, seed)``; ``ValueError`` unless every layer, size and seed is there."""
    keyed = {(f.layer, f.n, f.seed): f for f in fits}
    missing = [(name, n, s) for name in conv_fit.LAYERS for n in SIZES for s in SEEDS if (name, n, s) not in keyed]
    if missing:
        raise ValueError(f"the sweep lacks the fits {missing}")
    return keyed


def at(alpha, run, values) -> float:
    """``values`` (one per alpha of ``run``) at ``alpha``; ``ValueError`` where the run has no such alpha."""
    where = np.flatnonzero(np.asarray(run.alphas) == alpha)
    if not where.size:
        raise ValueError(f"the run has no alpha = {alpha}")
    return values[where[0]]


def _one_head(found: Evidence, n: int, head_alphas) -> None:
    """One head on a circular signal of ``n``, aimed at offset +1, soft and sharp."""
    if len(head_alphas) != 2 or not 0 < head_alphas[0] < head_alphas[1]:
        raise ValueError(f"head_alphas must be (soft, sharp), the soft one smaller, got {head_alphas!r}")
    alpha_soft, alpha_sharp = head_alphas
    soft = ac.positional_attention((n,), [[1]], alpha_soft)[0, 0].numpy()
    sharp = ac.positional_attention((n,), [[1]], alpha_sharp)[0, 0].numpy()
    found.number("aconv_n", n)
    found.number("aconv_alpha_soft", int(alpha_soft))
    found.number("aconv_alpha_sharp", int(alpha_sharp))
    found.number("aconv_p_target_soft", soft[1])
    found.number("aconv_p_neighbour_soft", soft[2])
    found.number("aconv_p_two_away_soft", soft[3])
    found.number("aconv_p_target_sharp", sharp[1])
    found.claim("the head's weights are the source's, to the decimals it prints",
                round(soft[1], 2) == lit.SOURCE_HEAD_TARGET_SOFT.value
                and round(soft[0], 2) == round(soft[2], 2) == lit.SOURCE_HEAD_NEIGHBOUR_SOFT.value
                and round(sharp[1], 5) == lit.SOURCE_HEAD_TARGET_SHARP.value)
    # The keys two or more steps away are all the two-neighbour formula leaves out.
    found.claim("the two-neighbour formula gives the target's weight, to within 1e-3",
                abs(soft[1] - 1 / (1 + 2 * np.exp(-alpha_soft))) < 1e-3 and soft[3] < 1e-3)


def _as_a_sum(found: Evidence, mha_difference: float, offset_difference: float) -> None:
    """The two sums: attention over heads against PyTorch's layer, a convolution over offsets against
    its ``conv2d``."""
    found.rounding("aconv_mha_difference", mha_difference, MHA_BOUND,
                   why="float64 rounding of two summation orders: a bound, not a value")
    found.claim("the sum over offsets is PyTorch's circular convolution", offset_difference < OFFSET_SUM_AGREES)


def _encoding(found: Evidence) -> None:
    """How many numbers the quadratic encoding has per offset, on a line and on an image."""
    found.number("aconv_encoding_1d", ac.quadratic_encoding(geometry.relative_offsets((5,))).shape[-1])
    found.number("aconv_encoding_2d", ac.quadratic_encoding(geometry.relative_offsets((5, 5))).shape[-1])


def _convergence(found: Evidence, run) -> None:
    """The 1-D construction's error against alpha, float64 (``run``: :func:`vitbias.attention_conv.convergence`)."""
    found.number("aconv_err_a1", at(1, run, run.error64), rel=1e-6, why=FLOAT64_MATH)
    found.number("aconv_target_a1", 1 / (1 + at(1, run, run.rho)))
    found.number("aconv_err_a10", at(10, run, run.error64), rel=1e-6, why=FLOAT64_MATH)
    found.number("aconv_err_a20", at(20, run, run.error64), rel=1e-6, why=FLOAT64_MATH)
    found.number("aconv_rho_a10", at(10, run, run.rho))
    found.number("aconv_rho_a20", at(20, run, run.rho))
    found.claim("the error falls at every step of alpha and stays under the bound",
                np.all(np.diff(run.error64) < 0) and np.all(run.error64 <= run.bound))
    # The source's run: "as large as the outputs".
    found.claim("at alpha = 1 the error is about half the largest output", 0.3 < at(1, run, run.error64) < 0.7)
    found.claim("the error is in the 1e-4 range at alpha = 10 and a few times 1e-9 at alpha = 20",
                1e-5 < at(10, run, run.error64) < 1e-3 and 1e-9 < at(20, run, run.error64) < 1e-8)
    # The ratio is read where the error is far above float64's rounding (alpha <= 20, error above
    # 1e-9): beyond that the CPU's summation order moves its fourth digit. Both values are then exact
    # math up to a relative 1e-7, hence rel=1e-6.
    sharp = run.alphas >= SHARP
    well_conditioned = sharp & (run.alphas <= WELL_CONDITIONED)
    ratio = run.error64[well_conditioned] / run.rho[well_conditioned]
    found.number("aconv_ratio_min", ratio.min(), rel=1e-6, why=FLOAT64_MATH)
    found.number("aconv_ratio_max", ratio.max(), rel=1e-6, why=FLOAT64_MATH)
    every_ratio = run.error64[sharp] / run.rho[sharp]
    found.claim("from alpha = 5 on the error is a fixed multiple of rho",
                ratio.max() < 1.05 * ratio.min() and every_ratio.max() < 1.01 * ratio.max())
    found.claim("from alpha = 5 on rho is 2 exp(-alpha) to within a percent",
                np.all(np.abs(run.rho[sharp] / (2 * np.exp(-run.alphas[sharp])) - 1) < 0.01))
    found.number("aconv_bound_over_error", (run.bound / run.error64)[run.alphas <= WELL_CONDITIONED].max(),
                 rel=1e-6, why=FLOAT64_MATH)


def _float32(found: Evidence, run, alpha_exact: float) -> None:
    """Where float32 stops seeing the leak: ``alpha_exact``, the first alpha from which float32's
    softmax puts exactly 1 on every target of the 1-D signal, against the leak's level."""
    u = ac.FLOAT32_ROUNDING_UNIT
    alpha_star = {d: ac.alpha_where_leak_is(u, dim=d) for d in (1, 2)}
    found.number("aconv_u", u)
    found.number("aconv_alpha_star_1d", alpha_star[1])
    found.number("aconv_alpha_star_2d", alpha_star[2])
    # Where float32's softmax first rounds the target weight to exactly 1 depends on the order in
    # which it sums the off-target terms; every order lands within one unit of alpha_star (between
    # the single-neighbour point ln(1/u) and alpha_star).
    found.number("aconv_alpha_exact32", alpha_exact, abs=1.0,
                 why="float32 summation order: lands within one unit of alpha_star")
    found.number("aconv_floor32", run.floor32, rel=0.5,
                 why="float32 rounding of the inputs and products: its size, not its digits")
    found.claim("float32's softmax agrees with the 1-D figure", abs(alpha_exact - alpha_star[1]) < 0.25)
    found.claim("float32 needs about the source's alpha on an image, more than on a line",
                round(alpha_star[2]) == lit.SOURCE_FLOAT32_ALPHA.value and alpha_star[1] < alpha_star[2])
    found.number("aconv_alpha_follow", FLOAT32_FOLLOWS)
    early, late = run.alphas <= FLOAT32_FOLLOWS, run.alphas >= alpha_exact
    found.claim("up to alpha_follow the float32 error is within a few percent of the float64 one",
                np.all(np.abs(run.error32[early] / run.error64[early] - 1) < 0.05))
    found.claim("once the heads are exact lookups the float32 error sits at float32's own convolution error",
                np.all((0.5 * run.floor32 < run.error32[late]) & (run.error32[late] < 1.5 * run.floor32)))
    found.claim("the float64 error keeps falling below it", run.error64[-1] < 1e-3 * run.floor32)


def _nine_heads(found: Evidence, head_maps: np.ndarray) -> None:
    """The nine heads of the figure (``head_maps``: :func:`nine_head_maps`), by how much their
    targets get."""
    offsets = geometry.kernel_offsets(3, dim=2)
    row, column = (side // 2 for side in FIGURE_GRID)
    target_weight = head_maps[:, np.arange(9), row + offsets[:, 0], column + offsets[:, 1]]   # (alphas, heads)
    for weights, (name, alpha) in zip(target_weight, FIGURE_ALPHAS.items()):
        found.number(f"aconv_fig_alpha_{name}", alpha)
        found.number(f"aconv_fig_target_{name}", weights.min())
    found.claim("every head's target weight rises with alpha", np.all(np.diff(target_weight, axis=0) > 0))
    found.claim("at the lowest alpha no target gets 0.3, at the highest each head is a near-exact lookup",
                target_weight[0].max() < 0.3 and target_weight[-1].min() > 0.99)


def _convergence_2d(found: Evidence, run) -> None:
    """The 2-D construction's error against alpha (``run``: :func:`convergence_2d`)."""
    found.number("aconv_2d_err_a10", at(10, run, run.error64), rel=1e-6, why=FLOAT64_MATH)
    found.number("aconv_2d_rho_a10", at(10, run, run.rho))
    found.claim("in 2-D the error falls at every step of alpha and stays under the bound",
                np.all(np.diff(run.error64) < 0) and np.all(run.error64 <= run.bound))
    found.claim("rho_2(10) is 4 exp(-10) to within a percent", abs(at(10, run, run.rho) / (4 * np.exp(-10)) - 1) < 0.01)


def _vit_b(found: Evidence, vit_b: dict) -> None:
    """What one layer of ``vit_b`` (:func:`vitbias.attention_conv.timm_attention_shape`) holds."""
    heads, head_dim, width = vit_b["num_heads"], vit_b["head_dim"], vit_b["embed_dim"]
    k, channels = ac.largest_kernel(heads, head_dim, width)
    full = ac.heads_for_conv(k, width, width, head_dim)
    if full % heads or width % channels:
        raise ValueError(f"the prose's ratios are whole numbers: {full} heads over {heads}, "
                         f"width {width} over {channels} channels")
    found.number("aconv_vitb_heads", heads)
    found.number("aconv_vitb_head_dim", head_dim)
    found.number("aconv_vitb_embed", width)
    found.number("aconv_vitb_k", k)
    found.number("aconv_vitb_k_squared", k * k)
    found.number("aconv_vitb_channels", channels)
    found.number("aconv_vitb_spare_heads", heads - k * k)
    found.number("aconv_vitb_full_heads", full)
    found.number("aconv_vitb_full_over_heads", full // heads)
    found.number("aconv_vitb_width_over_channels", width // channels)
    found.claim("one ViT-B layer holds the source's kernel with the source's output channels",
                (k, channels) == (lit.SOURCE_VITB_KERNEL.value, lit.SOURCE_VITB_CHANNELS.value))
    found.claim("a ViT-B layer holds no full-width convolution", channels < width and full > heads)


def _fitted(found: Evidence, fits: dict) -> None:
    """The three layers fitted to a convolution's noisy outputs (``fits``: :func:`by_key`): test errors
    at the smallest and the largest size, and where the positional heads stopped."""
    found.number("aconv_fit_c_in", conv_fit.CHANNELS[0])
    found.number("aconv_fit_c_out", conv_fit.CHANNELS[1])
    found.number("aconv_fit_grid", conv_fit.GRID)
    found.number("aconv_fit_noise", conv_fit.NOISE)
    found.number("aconv_fit_steps", conv_fit.STEPS)
    found.number("aconv_fit_heads", conv_fit.KERNEL**2)
    found.number("aconv_fit_n_seeds", len(SEEDS))
    found.number("aconv_fit_small", SIZES[0])
    found.number("aconv_fit_large", SIZES[-1])
    found.number("aconv_fit_within", conv_fit.SETTLED)
    # (sizes, seeds) for each layer
    errors = {name: np.array([[fits[name, n, s].error for s in SEEDS] for n in SIZES]) for name in conv_fit.LAYERS}
    for name in conv_fit.LAYERS:
        for where, end in ENDS.items():
            found.trained(f"aconv_fit_{SHORT[name]}_{where}", errors[name][end],
                          conv_fit.ONE_FIT_SD["error", name, end],
                          what=f"relative test error of the {name} layer fitted to {SIZES[end]} images")
    # Each attention layer against the convolution, at the precision the prose shows the errors with: 3
    # places at one image, 4 at the largest. A seed draws the same training images for every layer, so
    # the test is paired: a t test on the seeds' differences.
    for layer in ("attention", "multi-head"):
        for (where, end), places in zip(ENDS.items(), (3, 4)):
            apart, resolvable = f"{{apart:.{places}f}}", f"{{resolvable:.{places}f}}"
            beyond = (f" by {apart}, more than the {resolvable} that a paired t test over {{seeds}} seeds "
                      "resolves at 5 %")
            found.compared(f"aconv_fit_{SHORT[layer]}_{where}_text", errors[layer][end], errors["convolution"][end],
                           more="larger than the convolution's" + beyond,
                           less="smaller than the convolution's" + beyond,
                           same=f"not distinguishable from the convolution's ({apart} apart, where a paired t test "
                                f"over {{seeds}} seeds resolves only {resolvable} or more at 5 %)", paired=True)
    heads = [fits["attention", SIZES[-1], s] for s in SEEDS]
    counts = np.array([conv_fit.settled_offsets(f.centres)[0] for f in heads])      # (seeds,)
    found.number("aconv_fit_settled_total", int(counts.sum()), abs=6,
                 why="where a head stops moves with the kernel set as a seed would; a change of two heads per seed")
    found.number("aconv_fit_settled_possible", conv_fit.KERNEL**2 * len(SEEDS))
    found.verdict("aconv_fit_settled_text",
                  "in no seed did the nine heads settle on the nine offsets" if counts.max() < conv_fit.KERNEL**2
                  else "in at least one seed the nine heads settled on the nine offsets")
    peaks = np.concatenate([conv_fit.peak_weights(f.centres, f.alphas) for f in heads])
    found.number("aconv_fit_peak_median", float(np.median(peaks)), abs=0.15, why=WHERE_HEADS_STOP)
    found.verdict("aconv_fit_reading_text", READING[_reading(counts, errors["attention"][-1],
                                                             errors["convolution"][-1])])
    found.claim("the convolution's error falls as the images grow, on average over the seeds",
                np.all(np.diff(errors["convolution"].mean(axis=1)) < 0))


def _reading(counts, attention, convolution) -> str:
    """Which of :data:`READING` the positional layer's fits say: ``counts`` ``(seeds,)``, its heads
    settled on an offset; ``attention`` and ``convolution`` ``(seeds,)``, the two layers' test errors
    at the largest size."""
    if counts.min() == conv_fit.KERNEL**2:
        return "construction"
    if not scaling.resolved_paired(attention, convolution):
        return "same"
    return "worse" if attention.mean() > convolution.mean() else "better"


def _multi_head(found: Evidence, fits: dict) -> None:
    """The multi-head layer with content scores (``fits``: :func:`by_key`): training errors against the
    noise floor, how far the content moves its heads, and where its biases peak."""
    multi = {n: [fits["multi-head", n, s] for s in SEEDS] for n in SIZES}
    content = np.array([[f.content for f in multi[n]] for n in SIZES])          # (sizes, seeds)
    train_error = {name: np.array([fits[name, SIZES[-1], s].train_error for s in SEEDS])
                   for name in conv_fit.LAYERS}
    floors = np.array([conv_fit.noise_floor(SIZES[-1], s) for s in SEEDS])     # (seeds,)
    found.trained("aconv_fit_mult_train_small", np.array([f.train_error for f in multi[SIZES[0]]]),
                  conv_fit.ONE_FIT_SD["train", "multi-head", 0],
                  what=f"training error of the multi-head layer at {SIZES[0]} image")
    for name in conv_fit.LAYERS:
        found.trained(f"aconv_fit_{SHORT[name]}_train_large", train_error[name],
                      conv_fit.ONE_FIT_SD["train", name, -1],
                      what=f"training error of the {name} layer at {SIZES[-1]} images")
    found.number("aconv_fit_noise_floor", float(floors.mean()), rel=1e-6,
                 why="the target's own error on its noisy training set: exact math up to float rounding")
    for where, end in ENDS.items():
        found.trained(f"aconv_fit_content_{where}", content[end], conv_fit.ONE_FIT_SD["content", "multi-head", end],
                      what=f"how far the content moves the multi-head layer's attention at {SIZES[end]} images")
    settled = np.array([conv_fit.settled_offsets(f.centres)[0] for f in multi[SIZES[-1]]])   # (seeds,)
    found.number("aconv_fit_mult_settled_total", int(settled.sum()), abs=6,
                 why="where a head's biases peak moves with the kernel set as a seed would; two heads per seed")
    found.verdict("aconv_fit_mult_grid_text",
                  "in every seed the biases found the whole grid" if settled.min() == conv_fit.KERNEL**2
                  else "the biases found the grid only in part")
    peaks = np.concatenate([f.peaks for f in multi[SIZES[-1]]])
    found.number("aconv_fit_mult_peak_median", float(np.median(peaks)), abs=0.1, why=WHERE_HEADS_STOP)
    # Within 0.03 of the noise floor, and never below it by much: that would be memorising the noise.
    found.claim("at the largest size every layer fits its training set as far as the noise allows",
                all(np.all(np.abs(train_error[name] - floors) < 0.03) for name in conv_fit.LAYERS))
    found.claim("at one image the multi-head layer memorises its training set",
                all(f.train_error < 0.05 for f in multi[SIZES[0]]))
    found.claim("the content's pull is less at the largest size than at the smallest, in every seed",
                np.all(content[-1] < content[0]))
    found.compared("aconv_fit_content_text", content[-1], content[0], paired=True, **CONTENT_TEXT)
