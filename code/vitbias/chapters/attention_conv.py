"""The attention-conv chapter: how closely sharpened positional heads compute a convolution, in float64
and float32, how much of one fits in a ViT-B layer, and what gradient descent finds in its place.

The page computes every experiment in its own cells and hands each result to
one section function here, which adds that section's glued numbers and claims
to the page's :class:`~vitbias.evidence.Evidence`; :func:`measure` composes
them in the page's order."""

from __future__ import annotations

import numpy as np

from .. import attention_conv as ac
from .. import conv_fit, geometry, noise, scaling
from .. import literature as lit
from ..evidence import Evidence

FLOAT64_MATH = "float64 math through PyTorch's kernels: another summation order moves it by about 1e-13 relative"
MHA_BOUND = 1e-13  # float64 rounding of two summation orders of one attention layer
OFFSET_SUM_AGREES = 1e-12
SHARP = 5  # from this alpha on the error is a fixed multiple of rho
WELL_CONDITIONED = 20  # up to this alpha the error is far above float64's rounding
FLOAT32_FOLLOWS = 12  # up to this alpha the float32 error is within a few percent of the float64 one
FIGURE_ROWS = ("low", "mid", "high")  # the names of the figure's alphas, smallest first
LOOKUP_ALPHAS = np.arange(1000, 2501, 5) / 100  # where the page looks for float32's first exact lookup
SIZES, SEEDS = (1, 4, 16, 64), (0, 1, 2)
ENDS = {"small": 0, "large": -1}  # the smallest and the largest size of the sweep
SHORT = {"convolution": "conv", "attention": "atte", "multi-head": "mult"}
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


NUMBERS = ("error", "train", "content", "settled", "peak")  # what fit_sd measures a fit's sd of


def fit_sd(number: str, layer: str, where: str):
    """One fit's sd of a number the page reports from the fits (``number``: ``"error"``, the relative test
    error, ``"train"``, the training error, ``"content"``, how far the content moves the heads,
    ``"settled"``, how many heads settled on an offset, or ``"peak"``, the median over the heads of
    the weight on their heaviest key; of
    ``layer``, one of :data:`vitbias.conv_fit.LAYERS`, at the sweep's ``where``: ``"small"`` or
    ``"large"``), measured from the glued numbers over the seeds and both kernel sets (``python -m
    tools.booktools noise --glued --chapter attention-conv``)."""
    if number not in NUMBERS or layer not in conv_fit.LAYERS or where not in ENDS:
        raise ValueError(f"no fit sd of {number!r} of the {layer!r} layer at {where!r}")
    return noise.one_run_sd("attention-conv", f"{number}, {layer}, {where}")


def measure(*, weights, mha_difference, offset_difference, run, alpha_star, alpha_exact, head_maps,
            figure_alphas, run_2d, vit_b, k, channels, full, keyed, errors, heads) -> Evidence:
    """The chapter's evidence: its section functions in the page's order, on the page's results.

    Each keyword is the page's variable of that name, described at the
    section function that takes it; ``mha_difference`` and
    ``offset_difference`` are the largest differences its two sums print.
    """
    evidence = Evidence("attention-conv")
    one_head(evidence, weights)
    two_sums(evidence, mha_difference, offset_difference)
    encoding_sizes(evidence)
    convergence_on_a_line(evidence, run)
    float32_lookups(evidence, run, alpha_star, alpha_exact)
    nine_heads(evidence, head_maps, figure_alphas)
    convergence_on_an_image(evidence, run_2d)
    vit_b_layer(evidence, vit_b, k, channels, full)
    fitted_layers(evidence, errors, heads)
    multi_head_layer(evidence, keyed)
    return evidence


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


def one_head(evidence: Evidence, weights: dict) -> None:
    """``aconv_n``, ``aconv_alpha_*`` and ``aconv_p_*``, and the two claims on one head: a head on a
    circular signal of ``n`` values, aimed at offset +1, soft and sharp.

    ``weights``: ``{alpha: (n,)}`` at two alphas, the smaller one the soft
    head's: the weights of the query at position 0 on the keys at positions
    ``0, ..., n - 1``.
    """
    if len(weights) != 2 or min(weights) <= 0:
        raise ValueError(f"weights must be given at two positive alphas, a soft and a sharp one, got {list(weights)}")
    alpha_soft, alpha_sharp = sorted(weights)
    soft, sharp = (np.asarray(weights[alpha], dtype=float) for alpha in (alpha_soft, alpha_sharp))
    if soft.ndim != 1 or soft.shape != sharp.shape or len(soft) < 4:
        raise ValueError(f"each alpha's weights must be (n,) with n >= 4, got {soft.shape} and {sharp.shape}")
    evidence.number("aconv_n", len(soft))
    evidence.number("aconv_alpha_soft", int(alpha_soft))
    evidence.number("aconv_alpha_sharp", int(alpha_sharp))
    evidence.number("aconv_p_target_soft", soft[1])
    evidence.number("aconv_p_neighbour_soft", soft[2])
    evidence.number("aconv_p_two_away_soft", soft[3])
    evidence.number("aconv_p_target_sharp", sharp[1])
    evidence.claim("the head's weights are the source's, to the decimals it prints",
                   round(soft[1], 2) == lit.SOURCE_HEAD_TARGET_SOFT.value
                   and round(soft[0], 2) == round(soft[2], 2) == lit.SOURCE_HEAD_NEIGHBOUR_SOFT.value
                   and round(sharp[1], 5) == lit.SOURCE_HEAD_TARGET_SHARP.value)
    # The keys two or more steps away are all the two-neighbour formula leaves out.
    evidence.claim("the two-neighbour formula gives the target's weight, to within 1e-3",
                   abs(soft[1] - 1 / (1 + 2 * np.exp(-alpha_soft))) < 1e-3 and soft[3] < 1e-3)


def two_sums(evidence: Evidence, mha_difference, offset_difference) -> None:
    """``aconv_mha_difference`` and the claim on the sum over offsets: the largest differences of
    attention written as a sum over heads from PyTorch's layer, and of a convolution written as a sum
    over offsets from its circular ``conv2d`` (each a number or a 0-d tensor)."""
    evidence.rounding("aconv_mha_difference", float(mha_difference), MHA_BOUND,
                      why="float64 rounding of two summation orders: a bound, not a value")
    evidence.claim("the sum over offsets is PyTorch's circular convolution",
                   float(offset_difference) < OFFSET_SUM_AGREES)


def encoding_sizes(evidence: Evidence) -> None:
    """``aconv_encoding_1d`` and ``aconv_encoding_2d``: how many numbers the quadratic encoding has per
    offset, on a line and on an image."""
    evidence.number("aconv_encoding_1d", ac.quadratic_encoding(geometry.relative_offsets((5,))).shape[-1])
    evidence.number("aconv_encoding_2d", ac.quadratic_encoding(geometry.relative_offsets((5, 5))).shape[-1])


def convergence_on_a_line(evidence: Evidence, run) -> None:
    """``aconv_err_*``, ``aconv_rho_*``, ``aconv_ratio_*`` and their claims: the 1-D construction's
    float64 error against alpha.

    ``run``: :func:`vitbias.attention_conv.convergence` of a three-tap kernel
    on a circular signal, its alphas including 1, 10, 20 and a range from
    :data:`SHARP` past :data:`WELL_CONDITIONED`.
    """
    evidence.number("aconv_err_a1", at(1, run, run.error64), rel=1e-6, why=FLOAT64_MATH)
    evidence.number("aconv_target_a1", 1 / (1 + at(1, run, run.rho)))
    evidence.number("aconv_err_a10", at(10, run, run.error64), rel=1e-6, why=FLOAT64_MATH)
    evidence.number("aconv_err_a20", at(20, run, run.error64), rel=1e-6, why=FLOAT64_MATH)
    evidence.number("aconv_rho_a10", at(10, run, run.rho))
    evidence.number("aconv_rho_a20", at(20, run, run.rho))
    evidence.claim("the error falls at every step of alpha and stays under the bound",
                   np.all(np.diff(run.error64) < 0) and np.all(run.error64 <= run.bound))
    # The source's run: "as large as the outputs".
    evidence.claim("at alpha = 1 the error is about half the largest output", 0.3 < at(1, run, run.error64) < 0.7)
    evidence.claim("the error is in the 1e-4 range at alpha = 10 and a few times 1e-9 at alpha = 20",
                   1e-5 < at(10, run, run.error64) < 1e-3 and 1e-9 < at(20, run, run.error64) < 1e-8)
    # The ratio is read where the error is far above float64's rounding (alpha <= 20, error above
    # 1e-9): beyond that the CPU's summation order moves its fourth digit. Both values are then exact
    # math up to a relative 1e-7, hence rel=1e-6.
    sharp = run.alphas >= SHARP
    well_conditioned = sharp & (run.alphas <= WELL_CONDITIONED)
    ratio = run.error64[well_conditioned] / run.rho[well_conditioned]
    evidence.number("aconv_ratio_min", ratio.min(), rel=1e-6, why=FLOAT64_MATH)
    evidence.number("aconv_ratio_max", ratio.max(), rel=1e-6, why=FLOAT64_MATH)
    every_ratio = run.error64[sharp] / run.rho[sharp]
    evidence.claim("from alpha = 5 on the error is a fixed multiple of rho",
                   ratio.max() < 1.05 * ratio.min() and every_ratio.max() < 1.01 * ratio.max())
    evidence.claim("from alpha = 5 on rho is 2 exp(-alpha) to within a percent",
                   np.all(np.abs(run.rho[sharp] / (2 * np.exp(-run.alphas[sharp])) - 1) < 0.01))
    evidence.number("aconv_bound_over_error", (run.bound / run.error64)[run.alphas <= WELL_CONDITIONED].max(),
                    rel=1e-6, why=FLOAT64_MATH)


def float32_lookups(evidence: Evidence, run, alpha_star: dict, alpha_exact: float) -> None:
    """``aconv_u``, ``aconv_alpha_*``, ``aconv_floor32`` and the float32 claims: where float32 stops
    seeing the leak.

    ``run``: the 1-D run of :func:`convergence_on_a_line`; ``alpha_star``:
    ``{1: ..., 2: ...}``, the alpha at which the leak reaches float32's
    rounding unit on a line and on an image
    (:func:`vitbias.attention_conv.alpha_where_leak_is`); ``alpha_exact``: the
    first alpha from which float32's softmax puts exactly 1 on every target of
    the 1-D signal (:func:`vitbias.attention_conv.first_exact_lookup`).
    """
    if set(alpha_star) != {1, 2}:
        raise ValueError(f"alpha_star must be given on a line and on an image, {{1: ..., 2: ...}}, "
                         f"got the dimensions {sorted(alpha_star)}")
    evidence.number("aconv_u", ac.FLOAT32_ROUNDING_UNIT)
    evidence.number("aconv_alpha_star_1d", alpha_star[1])
    evidence.number("aconv_alpha_star_2d", alpha_star[2])
    # Where float32's softmax first rounds the target weight to exactly 1 depends on the order in
    # which it sums the off-target terms: every order lands between ln(1/u), where one neighbour's
    # weight alone reaches u, and alpha_star, where the neighbours' sum does, then on the next alpha
    # of the page's grid.
    single = float(np.log(1 / ac.FLOAT32_ROUNDING_UNIT))
    evidence.number("aconv_alpha_exact32", alpha_exact, abs=alpha_star[1] - single + np.diff(LOOKUP_ALPHAS).max(),
                    why="float32 summation order: lands between ln(1/u) and alpha_star, then on the next alpha "
                        "of the grid")
    evidence.number("aconv_floor32", run.floor32, rel=0.5,
                    why="float32 rounding of the inputs and products: its size, not its digits")
    evidence.claim("float32's softmax agrees with the 1-D figure", abs(alpha_exact - alpha_star[1]) < 0.25)
    evidence.claim("float32 needs about the source's alpha on an image, more than on a line",
                   round(alpha_star[2]) == lit.SOURCE_FLOAT32_ALPHA.value and alpha_star[1] < alpha_star[2])
    evidence.number("aconv_alpha_follow", FLOAT32_FOLLOWS)
    early, late = run.alphas <= FLOAT32_FOLLOWS, run.alphas >= alpha_exact
    evidence.claim("up to alpha_follow the float32 error is within a few percent of the float64 one",
                   np.all(np.abs(run.error32[early] / run.error64[early] - 1) < 0.05))
    evidence.claim("once the heads are exact lookups the float32 error sits at float32's own convolution error",
                   np.all((0.5 * run.floor32 < run.error32[late]) & (run.error32[late] < 1.5 * run.floor32)))
    evidence.claim("the float64 error keeps falling below it", run.error64[-1] < 1e-3 * run.floor32)


def nine_heads(evidence: Evidence, head_maps: np.ndarray, figure_alphas) -> None:
    """``aconv_fig_*`` and the two claims on the nine heads of the figure, by how much their targets get.

    ``head_maps``: ``(alphas, 9, rows, columns)``, the attention from the
    grid's centre pixel ``(rows // 2, columns // 2)`` of the heads aimed at
    ``geometry.kernel_offsets(3, dim=2)``, in that order, at each of
    ``figure_alphas``: three alphas, smallest first, named by :data:`FIGURE_ROWS`.
    """
    head_maps = np.asarray(head_maps)
    if head_maps.ndim != 4 or head_maps.shape[:2] != (len(FIGURE_ROWS), 9) or len(figure_alphas) != len(FIGURE_ROWS):
        raise ValueError(f"head_maps must be ({len(FIGURE_ROWS)}, 9, rows, columns) at {len(FIGURE_ROWS)} alphas, "
                         f"got {head_maps.shape} at {len(figure_alphas)}")
    offsets = geometry.kernel_offsets(3, dim=2)
    row, column = (side // 2 for side in head_maps.shape[2:])
    target_weight = head_maps[:, np.arange(9), row + offsets[:, 0], column + offsets[:, 1]]   # (alphas, heads)
    for weights, name, alpha in zip(target_weight, FIGURE_ROWS, figure_alphas):
        evidence.number(f"aconv_fig_alpha_{name}", alpha)
        evidence.number(f"aconv_fig_target_{name}", weights.min())
    evidence.claim("every head's target weight rises with alpha", np.all(np.diff(target_weight, axis=0) > 0))
    evidence.claim("at the lowest alpha no target gets 0.3, at the highest each head is a near-exact lookup",
                   target_weight[0].max() < 0.3 and target_weight[-1].min() > 0.99)


def convergence_on_an_image(evidence: Evidence, run_2d) -> None:
    """``aconv_2d_*`` and the two claims on the 2-D construction's error against alpha.

    ``run_2d``: :func:`vitbias.attention_conv.convergence` of a 3 x 3 kernel
    on an image, its alphas including 10.
    """
    evidence.number("aconv_2d_err_a10", at(10, run_2d, run_2d.error64), rel=1e-6, why=FLOAT64_MATH)
    evidence.number("aconv_2d_rho_a10", at(10, run_2d, run_2d.rho))
    evidence.claim("in 2-D the error falls at every step of alpha and stays under the bound",
                   np.all(np.diff(run_2d.error64) < 0) and np.all(run_2d.error64 <= run_2d.bound))
    evidence.claim("rho_2(10) is 4 exp(-10) to within a percent",
                   abs(at(10, run_2d, run_2d.rho) / (4 * np.exp(-10)) - 1) < 0.01)


def vit_b_layer(evidence: Evidence, vit_b: dict, k: int, channels: int, full: int) -> None:
    """``aconv_vitb_*`` and the two claims on what one ViT-B layer holds.

    ``vit_b``: :func:`vitbias.attention_conv.timm_attention_shape`'s
    ``num_heads``, ``head_dim`` and ``embed_dim``; ``k`` and ``channels``:
    the largest kernel the layer holds and its output channels
    (:func:`vitbias.attention_conv.largest_kernel`); ``full``: the heads a
    full-width convolution of that size needs
    (:func:`vitbias.attention_conv.heads_for_conv`).
    """
    heads, head_dim, width = vit_b["num_heads"], vit_b["head_dim"], vit_b["embed_dim"]
    if full % heads or width % channels:
        raise ValueError(f"the prose's ratios are whole numbers: {full} heads over {heads}, "
                         f"width {width} over {channels} channels")
    evidence.number("aconv_vitb_heads", heads)
    evidence.number("aconv_vitb_head_dim", head_dim)
    evidence.number("aconv_vitb_embed", width)
    evidence.number("aconv_vitb_k", k)
    evidence.number("aconv_vitb_k_squared", k * k)
    evidence.number("aconv_vitb_channels", channels)
    evidence.number("aconv_vitb_spare_heads", heads - k * k)
    evidence.number("aconv_vitb_full_heads", full)
    evidence.number("aconv_vitb_full_over_heads", full // heads)
    evidence.number("aconv_vitb_width_over_channels", width // channels)
    evidence.claim("one ViT-B layer holds the source's kernel with the source's output channels",
                   (k, channels) == (lit.SOURCE_VITB_KERNEL.value, lit.SOURCE_VITB_CHANNELS.value))
    evidence.claim("a ViT-B layer holds no full-width convolution", channels < width and full > heads)


def fitted_layers(evidence: Evidence, errors: dict, heads) -> None:
    """``aconv_fit_*`` of the set-up, the test errors and the positional heads, and the claim on the
    convolution's error: the three layers fitted to a convolution's noisy outputs.

    ``errors``: ``{layer: (sizes, seeds)}``, each of ``conv_fit.LAYERS``'s
    relative test errors at :data:`SIZES` and :data:`SEEDS`; ``heads``: the
    positional layer's fits at the largest size, one per seed, each with its
    heads' ``centres`` ``(heads, 2)`` and ``alphas`` ``(heads,)``.
    """
    shape = (len(SIZES), len(SEEDS))
    if set(errors) != set(conv_fit.LAYERS) or any(np.shape(e) != shape for e in errors.values()):
        raise ValueError(f"errors must hold {shape} test errors for each of {conv_fit.LAYERS}, "
                         f"got {({name: np.shape(e) for name, e in errors.items()})}")
    if len(heads) != len(SEEDS):
        raise ValueError(f"heads must hold one fit per seed ({len(SEEDS)}), got {len(heads)}")
    evidence.number("aconv_fit_c_in", conv_fit.CHANNELS[0])
    evidence.number("aconv_fit_c_out", conv_fit.CHANNELS[1])
    evidence.number("aconv_fit_grid", conv_fit.GRID)
    evidence.number("aconv_fit_noise", conv_fit.NOISE)
    evidence.number("aconv_fit_steps", conv_fit.STEPS)
    evidence.number("aconv_fit_heads", conv_fit.KERNEL**2)
    evidence.number("aconv_fit_n_seeds", len(SEEDS))
    evidence.number("aconv_fit_small", SIZES[0])
    evidence.number("aconv_fit_large", SIZES[-1])
    evidence.number("aconv_fit_within", conv_fit.SETTLED)
    for name in conv_fit.LAYERS:
        for where, end in ENDS.items():
            evidence.trained(f"aconv_fit_{SHORT[name]}_{where}", errors[name][end],
                             fit_sd("error", name, where),
                             what=f"relative test error of the {name} layer fitted to {SIZES[end]} images")
    # Each attention layer against the convolution, at the precision the prose shows the errors with: 3
    # places at one image, 4 at the largest. A seed draws the same training images for every layer, so
    # the test is paired: a t test on the seeds' differences.
    for layer in ("attention", "multi-head"):
        for (where, end), places in zip(ENDS.items(), (3, 4)):
            apart, resolvable = f"{{apart:.{places}f}}", f"{{resolvable:.{places}f}}"
            beyond = (f" by {apart}, more than the {resolvable} that a paired t test over {{seeds}} seeds "
                      "resolves at 5 %")
            evidence.compared(f"aconv_fit_{SHORT[layer]}_{where}_text", errors[layer][end], errors["convolution"][end],
                              more="larger than the convolution's" + beyond,
                              less="smaller than the convolution's" + beyond,
                              same=f"not distinguishable from the convolution's ({apart} apart, where a paired t test "
                                   f"over {{seeds}} seeds resolves only {resolvable} or more at 5 %)", paired=True)
    counts = np.array([conv_fit.settled_offsets(f.centres)[0] for f in heads])      # (seeds,)
    evidence.summed("aconv_fit_settled_total", counts, fit_sd("settled", "attention", "large"),
                    what="heads of the positional layer settled on their offset, over the seeds")
    evidence.number("aconv_fit_settled_possible", conv_fit.KERNEL**2 * len(SEEDS))
    evidence.verdict("aconv_fit_settled_text",
                     "in no seed did the nine heads settle on the nine offsets" if counts.max() < conv_fit.KERNEL**2
                     else "in at least one seed the nine heads settled on the nine offsets")
    peaks = [np.median(conv_fit.peak_weights(f.centres, f.alphas)) for f in heads]   # (seeds,)
    evidence.trained("aconv_fit_peak_median", peaks, fit_sd("peak", "attention", "large"),
                     what="median weight of a positional head on its heaviest key, a seed's median")
    evidence.verdict("aconv_fit_reading_text", READING[_reading(counts, errors["attention"][-1],
                                                                errors["convolution"][-1])])
    evidence.claim("the convolution's error falls as the images grow, on average over the seeds",
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


def multi_head_layer(evidence: Evidence, keyed: dict) -> None:
    """``aconv_fit_*`` of the multi-head layer and the three claims on its fits: the layer with content
    scores, its training errors against the noise floor, how far the content moves its heads and where
    its biases peak.

    ``keyed``: the fits keyed ``(layer, n, seed)`` (:func:`by_key`).
    """
    multi = {n: [keyed["multi-head", n, s] for s in SEEDS] for n in SIZES}
    content = np.array([[f.content for f in multi[n]] for n in SIZES])          # (sizes, seeds)
    train_error = {name: np.array([keyed[name, SIZES[-1], s].train_error for s in SEEDS])
                   for name in conv_fit.LAYERS}
    floors = np.array([conv_fit.noise_floor(SIZES[-1], s) for s in SEEDS])     # (seeds,)
    evidence.trained("aconv_fit_mult_train_small", np.array([f.train_error for f in multi[SIZES[0]]]),
                     fit_sd("train", "multi-head", "small"),
                     what=f"training error of the multi-head layer at {SIZES[0]} image")
    for name in conv_fit.LAYERS:
        evidence.trained(f"aconv_fit_{SHORT[name]}_train_large", train_error[name],
                         fit_sd("train", name, "large"),
                         what=f"training error of the {name} layer at {SIZES[-1]} images")
    evidence.number("aconv_fit_noise_floor", float(floors.mean()), rel=1e-6,
                    why="the target's own error on its noisy training set: exact math up to float rounding")
    for where, end in ENDS.items():
        evidence.trained(f"aconv_fit_content_{where}", content[end], fit_sd("content", "multi-head", where),
                         what=f"how far the content moves the multi-head layer's attention at {SIZES[end]} images")
    settled = np.array([conv_fit.settled_offsets(f.centres)[0] for f in multi[SIZES[-1]]])   # (seeds,)
    evidence.summed("aconv_fit_mult_settled_total", settled, fit_sd("settled", "multi-head", "large"),
                    what="heads of the multi-head layer whose biases peak on their offset, over the seeds")
    evidence.verdict("aconv_fit_mult_grid_text",
                     "in every seed the biases found the whole grid" if settled.min() == conv_fit.KERNEL**2
                     else "the biases found the grid only in part")
    peaks = [np.median(f.peaks) for f in multi[SIZES[-1]]]                     # (seeds,)
    evidence.trained("aconv_fit_mult_peak_median", peaks, fit_sd("peak", "multi-head", "large"),
                     what="median weight of a multi-head layer's head's biases on its favourite key, a seed's median")
    # Within 0.03 of the noise floor, and never below it by much: that would be memorising the noise.
    evidence.claim("at the largest size every layer fits its training set as far as the noise allows",
                   all(np.all(np.abs(train_error[name] - floors) < 0.03) for name in conv_fit.LAYERS))
    evidence.claim("at one image the multi-head layer memorises its training set",
                   all(f.train_error < 0.05 for f in multi[SIZES[0]]))
    evidence.claim("the content's pull is less at the largest size than at the smallest, in every seed",
                   np.all(content[-1] < content[0]))
    evidence.compared("aconv_fit_content_text", content[-1], content[0], paired=True, **CONTENT_TEXT)
