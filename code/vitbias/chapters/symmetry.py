"""The symmetry chapter: which shifts a convolution, a strided layer and a ViT commute with, measured
on random weights and on PyTorch's layers, and how three trained models answer moved objects."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from .. import data, noise, plan, profile, runs, symmetry
from ..evidence import Evidence, band
from ..geometry import shift
from ..literature import ZHANG2019_RESNET50_ACCURACY, ZHANG2019_RESNET50_CONSISTENCY

EXACT = 1e-12  # what "exact" means here: float64 rounding, far below any real error
ORDER_ONE = 0.5  # an error this large is no rounding: a shift that does not commute
# Measured in float64, but from weights PyTorch drew in float32: its vectorised initialisers differ
# across CPU kernels in the last bits, which moves these errors by up to 2e-7 relative (measured:
# native against generic kernels).
FLOAT32_WEIGHTS = "float64 math on weights drawn in float32: other CPU kernels move it by up to 2e-7 relative"

# The page's examples, as its cells set them up.
PADDING_SHIFT = 8  # columns the zero-padded convolution's image is shifted by
ENCODER_GRID = (4, 4)  # the tokens PyTorch's encoder reads, and their one-column shift
ENCODER_SHIFT = (0, 1)

SLUG = {"CNN": "cnn", "ViT": "vit", "ViT, relative bias": "rel"}
MARGIN = 0.05  # the CNN's near-invariance, as an equivalence margin of accuracy fixed before training
CNN_WORDS = {
    "equal": "the same as on its own side within that margin (two one-sided paired t tests, 5 %), "
             "so the prediction held",
    "unresolved": "not shown to be within that margin of its own side's with these seeds, so the "
                  "prediction is not confirmed"}
VIT_WORDS = {
    "more": "higher than on its own side by {apart:.3f}, more than the {resolvable:.3f} that a paired t test "
            "over its {seeds} seeds resolves at 5 %, so the prediction failed",
    "less": "lower than on its own side by {apart:.3f}, more than the {resolvable:.3f} that a paired t test "
            "over its {seeds} seeds resolves at 5 %, so the prediction held",
    "same": "not distinguishable from its own side's ({apart:.3f} apart, where a paired t test over its "
            "{seeds} seeds resolves only {resolvable:.3f} or more at 5 %), so the prediction is not confirmed"}
VIT_READING = {
    "less": "The position vectors it never trained on an object cost it accuracy as soon as objects "
            "reached them: what the CNN's shared filters and the relative bias bring with them, the "
            "plain ViT would have had to be shown.",
    "same": "So the untrained position vectors cost the plain ViT no accuracy that these seeds resolve. "
            "The likely reason is that most of an object on the other side still lies in columns where "
            "the model saw objects; the unseen column holds at most a part of it.",
    "more": "The plain ViT did better on the side it never saw, which the argument did not predict; the "
            "two test sets are different images, so a harder draw of its own side's test set is the "
            "likely reason, not the architecture."}
REL_WORDS = {
    "more": "higher than on its own side by {apart:.3f}, more than the {resolvable:.3f} that a paired "
            "t test over its {seeds} seeds resolves at 5 %",
    "less": "lower than on its own side by {apart:.3f}, more than the {resolvable:.3f} that a paired "
            "t test over its {seeds} seeds resolves at 5 %",
    "same": "not distinguishable from its own side's ({apart:.3f} apart, where a paired t test over "
            "its {seeds} seeds resolves only {resolvable:.3f} or more at 5 %)"}


def rounding(value, floor=EXACT):
    """A residue as text: its size when it is real, "< floor" when it is rounding."""
    return f"{value:.2g}" if value >= floor else f"< {floor:.0e}"


def multiples(shape, period) -> np.ndarray:
    """``(H, W)`` boolean: which shifts ``(dr, dc)`` are multiples of ``period`` in both directions."""
    rows, columns = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")
    return (rows % period == 0) & (columns % period == 0)


def as_text(values) -> str:
    """Whole numbers as a tuple in text: ``"(1, -1)"``."""
    return "(" + ", ".join(f"{v:.0f}" for v in values) + ")"


# ---------------------------------------------------------------------------
# The trained models
# ---------------------------------------------------------------------------


def trained_runs(budget) -> dict:
    """``(model name, seed) -> run`` for every model of :data:`vitbias.plan.SYMMETRY_MODELS` and seed
    (:func:`planned_runs`), read from the run cache."""
    wanted = planned_runs(budget)
    return dict(zip(wanted, runs.run_many(list(wanted.values()))))


def test_sides(trained) -> tuple:
    """The runs' test images, with the objects in the left band (the side they were trained on), and
    as many new ones with the objects in the right band (:data:`vitbias.data.REGIONS`)."""
    spec = next(iter(trained.values())).config["data"]
    _, own_half, _ = runs.inputs(spec)
    other_half = data.shapes(spec["test"], spec["test_seed"], split="test",
                             texture=spec["texture"], region="right")
    return own_half, other_half


def accuracies(trained, own_half, other_half, shifts) -> tuple[dict, dict]:
    """``under_shift``: model name -> ``(seeds, shifts)``, the accuracy on ``own_half`` shifted right
    by each of ``shifts``; ``halves``: model name -> ``(seeds, 2)``, the test accuracy on its own side
    and the accuracy on ``other_half``."""
    names = list(dict.fromkeys(name for name, _ in trained))
    seeds = list(dict.fromkeys(seed for _, seed in trained))

    def shifted(name, seed, images, by):
        return symmetry.accuracy_under_shifts(trained[name, seed].model, images, by)

    under_shift = {name: np.stack([shifted(name, s, own_half, shifts) for s in seeds]) for name in names}
    halves = {name: np.array([[trained[name, s].accuracy, shifted(name, s, other_half, [0])[0]]
                              for s in seeds])
              for name in names}
    return under_shift, halves


def relative_logit_change(trained, images, patch) -> float:
    """The largest change of any relative-bias ViT's logits (every seed of ``trained``, (model name,
    seed) -> run) when ``images`` are shifted right by a whole patch."""
    models = [run.model for (name, _), run in trained.items() if name == "ViT, relative bias"]
    if not models:
        raise ValueError(f"no relative-bias ViT among the trained models {sorted(set(n for n, _ in trained))}")
    return max(symmetry.largest_logit_change(model, images, patch) for model in models)


# ---------------------------------------------------------------------------
# The chapter's evidence, one function per section, each called by the page next to the cell that
# computes its inputs
# ---------------------------------------------------------------------------


def measure(budget, *, x, equivariance_gap, pooled_gap, w5, error_map, signal, signal_layers, commute,
            strides, P, layers, errors, commuting, draws, row, keep_every_second, blur_errors, perm,
            encoder, tokens, gap, B, grid_shift, any_perm, roll_first, roll_after, conv_commutes,
            vit_patch, token_gap, vit_errors, vit_commutes, vit, image, table, pos_errors, trained,
            patch, shifts, under_shift, halves, chance, logit_change) -> Evidence:
    """The chapter's evidence: every section below in the page's order, each on the page's results of
    the same names (their shapes are in the sections' docstrings). ``signal_layers`` are the short
    signal's three layers, ``vit_patch`` the patch encoder's patch side; ``patch`` and ``shifts`` are
    the trained ViTs' patch side and the shifts of their test images."""
    found = Evidence("symmetry")
    convolution(found, x, equivariance_gap, pooled_gap)
    zero_padding(found, x, w5, error_map)
    one_signal(found, signal, signal_layers)
    stacked_layers(found, commute)
    resnet_stages(found, strides)
    layer_errors(found, P, errors)
    commuting_shifts(found, x, P, commuting)
    position_error(found, x, P, layers, errors)
    fresh_draws(found, draws)
    aliasing(found, row, keep_every_second)
    blurring(found, blur_errors, errors["convolution, stride 2"])
    published_filters(found)
    grid_order(found, perm)
    encoder_order(found, encoder, tokens, gap, B, grid_shift, any_perm)
    plain_offset_bias(found)
    fused_path_nan(found, encoder, tokens, B)
    torch_conv(found, roll_first, roll_after, conv_commutes)
    patch_encoder(found, vit_patch, token_gap, vit_errors, vit_commutes)
    position_table(found, vit_patch, vit, image, table, pos_errors)
    trained_models(found, budget, trained, patch, shifts, under_shift, halves, chance=chance,
                   logit_change=logit_change)
    return found


def convolution(found, x, equivariance_gap, pooled_gap):
    """``sym_image_side``, the group claim on ``x`` ``(C, H, W)``, and the claim that a stride-1
    circular convolution commutes with a shift: ``equivariance_gap``, max |conv(T x) - T conv(x)|,
    and ``pooled_gap``, the same for its channel means."""
    found.number("sym_image_side", x.shape[-1])
    H, W = x.shape[-2:]
    found.claim("shifts adding up to the image size do nothing",
                np.array_equal(shift(shift(x, (3, 5)), (H - 3, W - 5)), x))
    found.claim("the convolution commutes exactly with a shift, its channel means to rounding",
                equivariance_gap == 0.0 and pooled_gap < EXACT)


def zero_padding(found, x, w5, error_map):
    """``sym_pad_*``: where a zero-padded convolution with weights ``w5`` ``(O, C, k, k)`` fails to
    commute with a shift of ``x`` ``(C, H, W)`` by :data:`PADDING_SHIFT` columns, from its
    ``error_map`` ``(H, W)``."""
    a, W = w5.shape[-1] // 2, x.shape[-1]
    bad = np.flatnonzero(error_map.max(axis=0) > EXACT)
    border = {*range(a), *range(W - a, W)}
    seam = {(PADDING_SHIFT + j) % W for j in range(-a, a)}
    found.claim("zero padding breaks the shift only near the border and the seam",
                set(bad.tolist()) == border | seam and len(bad) == 4 * a)
    found.number("sym_pad_half_width", a)
    found.number("sym_pad_bad_columns", len(bad))
    found.number("sym_pad_good_columns", W - len(bad))


def one_signal(found, signal, layers):
    """The claim on the short signal ``(1, 1, 8)`` and the page's three ``layers``, {"stride 1",
    "stride 2", "patches"} -> a function of a ``(1, 1, W)`` signal."""
    if set(layers) != {"stride 1", "stride 2", "patches"}:
        raise ValueError(f"expected the layers 'stride 1', 'stride 2' and 'patches', got {list(layers)}")
    out = {name: [layer(shift(signal, d)) for d in (0, 1, 2)] for name, layer in layers.items()}
    # stride 1: every shift moves the output by as much; stride 2 and patches: a shift by 2 moves
    # the output by 1, and after a shift by 1 the output is no shift of the original at all
    found.claim("stride 1 follows a shift by 1 and by 2, stride 2 and patches only by 2",
                all(np.array_equal(out["stride 1"][d], shift(out["stride 1"][0], d)) for d in (1, 2))
                and all(np.array_equal(out[name][2], shift(out[name][0], 1))
                    and not any(np.array_equal(out[name][1], shift(out[name][0], k)) for k in range(4))
                    for name in ("stride 2", "patches")))


def stacked_layers(found, commute):
    """``sym_stack_*``: which shifts two stacked stride-2 layers commute with, ``commute`` ``(H, W)``."""
    found.claim("two stride-2 layers commute with exactly the multiples of 4",
                np.array_equal(commute, multiples(commute.shape, 4)))
    found.number("sym_stack_commuting", int(commute.sum()))
    found.number("sym_stack_shifts", commute.size)


def resnet_stages(found, strides):
    """``sym_resnet_*``: ResNet-50's total stride after each stage, ``strides`` (a list)."""
    found.claim("each of ResNet-50's stages halves the resolution",
                strides == [2 ** (i + 1) for i in range(len(strides))])
    found.number("sym_resnet_total_stride", strides[-1])
    found.number("sym_resnet_downsamplings", len(strides))


def _layer_labels(P) -> dict:
    """The labels of the four measured layers (:func:`vitbias.symmetry.measurement_layers`), by short name."""
    return {"conv1": "convolution, stride 1", "conv2": "convolution, stride 2",
            "pe": f"patch embedding, P = {P}", "pe_pos": "patch embedding + positions"}


def _by_layer(results, P) -> dict:
    """``results``, {label: value} for the four measured layers, by short name."""
    labels = _layer_labels(P)
    if set(results) != set(labels.values()):
        raise ValueError(f"expected the layers {list(labels.values())}, got {list(results)}")
    return {short: results[label] for short, label in labels.items()}


def layer_errors(found, P, errors):
    """``sym_patch`` and the errors' numbers: the four layers' equivariance ``errors``, {label:
    ``(P + 1,)``} at horizontal shifts 0 to ``P``, zero exactly where the theorem says."""
    e = {short: np.asarray(values) for short, values in _by_layer(errors, P).items()}
    shifts = np.arange(P + 1)
    odd, even = shifts % 2 == 1, shifts % 2 == 0
    # stride 1: zero at every shift; stride 2: exact at even shifts, the same error of order one at
    # every odd one; the patch embedding: exact only at 0 and P; positions: broken at P too
    found.claim("each layer's error is zero where the theorem says, order one elsewhere",
                np.all(e["conv1"] == 0.0)
                and np.all(e["conv2"][even] < EXACT) and np.all(e["conv2"][odd] > ORDER_ONE)
                and np.ptp(e["conv2"][odd]) < EXACT
                and e["pe"][0] < EXACT and e["pe"][P] < EXACT and np.all(e["pe"][1:P] > ORDER_ONE)
                and e["pe_pos"][0] < EXACT and e["pe_pos"][P] > ORDER_ONE)
    found.number("sym_patch", P)
    found.number("sym_conv2_odd_error", float(e["conv2"][1]))
    found.number("sym_pe_min_between", float(e["pe"][1:P].min()))
    found.number("sym_pe_max_between", float(e["pe"][1:P].max()))
    found.number("sym_pos_error_at_patch", float(e["pe_pos"][P]))


def commuting_shifts(found, x, P, commuting):
    """``sym_all_shifts`` and ``sym_count_*``: which shifts of ``x`` ``(C, H, W)`` each measured layer
    commutes with, ``commuting`` {label: ``(H, W)``}."""
    side = x.shape[-1]
    counts = {short: int(mask.sum()) for short, mask in _by_layer(commuting, P).items()}
    found.claim("the layers commute with all, the even, the whole-patch shifts, the identity",
                counts == {"conv1": side ** 2, "conv2": (side // 2) ** 2, "pe": (side // P) ** 2, "pe_pos": 1}
                and all(mask[0, 0] for mask in commuting.values()))
    found.number("sym_all_shifts", side ** 2)
    found.number("sym_count_conv2", counts["conv2"])
    found.number("sym_count_patch", counts["pe"])


def position_error(found, x, P, layers, errors):
    """``sym_tenth_table_error``: the patch embedding's error with positions at a whole-patch shift
    (``errors`` {label: ``(P + 1,)``}) against the table's distance from its shifted copy, with the
    measured ``layers`` {label: (f, stride)} on ``x`` ``(C, H, W)``."""
    functions = _by_layer(layers, P)
    (f_pe, _), (f_pos, _) = functions["pe"], functions["pe_pos"]
    error = _by_layer(errors, P)["pe_pos"][P]
    table = f_pos(x) - f_pe(x)
    # The error shrinks with the table: the numerator by exactly a tenth, the denominator a little.
    tenth = symmetry.equivariance_error(lambda i: f_pe(i) + 0.1 * table, x, P, stride=P)
    found.claim("with positions, the error is the table's distance from its shifted copy",
                np.isclose(error, np.abs(table - shift(table, 1)).max() / np.abs(f_pos(x)).max(), rtol=1e-9)
                and 0.1 * error < tenth < 0.2 * error)
    found.number("sym_tenth_table_error", tenth)


def fresh_draws(found, draws):
    """``sym_draws*``: the stride-2 error at an odd shift and the error with positions at a whole
    patch, over fresh draws of image, weights and table, ``draws`` ``(draws, 2)``."""
    draws = np.asarray(draws)
    if draws.ndim != 2 or draws.shape[1] != 2:
        raise ValueError(f"draws must be (draws, 2), got {draws.shape}")
    found.number("sym_draws", len(draws))
    found.number("sym_draws_conv2_min", float(draws[:, 0].min()))
    found.number("sym_draws_conv2_max", float(draws[:, 0].max()))
    found.number("sym_draws_pos_min", float(draws[:, 1].min()))
    found.number("sym_draws_pos_max", float(draws[:, 1].max()))
    found.claim("both errors are of order one in every draw", draws.min() > ORDER_ONE)


def aliasing(found, row, keep_every_second):
    """``sym_alias_*``: the row ``(1, 1, 4)`` subsampled by ``keep_every_second``, before and after a
    one-pixel shift, and blurred."""
    plain = keep_every_second(row)[0, 0]
    after_shift = keep_every_second(shift(row, 1))[0, 0]
    found.claim("subsampling aliases the row, and the blur maps it to zeros",
                np.array_equal(plain, [1.0, 1.0]) and np.array_equal(after_shift, [-1.0, -1.0])
                and np.allclose(symmetry.binomial_blur(row), 0.0, atol=1e-15))
    found.number("sym_alias_plain", as_text(plain))
    found.number("sym_alias_shifted", as_text(after_shift))


def blurring(found, blur_errors, stride2_errors):
    """``sym_blur*_error``: the stride-2 error at an odd shift after a blur, ``blur_errors`` {taps:
    error} for 1, 3 and 5 taps, against the plain stride-2 layer's errors at shifts 0 to P,
    ``stride2_errors`` ``(P + 1,)``."""
    # one tap is no blur: the plain stride-2 layer
    found.claim("each wider blur lowers the stride-2 error, none removes it",
                np.isclose(blur_errors[1], stride2_errors[1], rtol=1e-12)
                and blur_errors[1] > blur_errors[3] > blur_errors[5] > 0.1)
    found.number("sym_blur3_error", blur_errors[3])
    found.number("sym_blur5_error", blur_errors[5])


def published_filters(found):
    """``sym_zhang_*``: the published consistency and accuracy of ResNet-50 with each low-pass filter
    (:mod:`vitbias.literature`)."""
    accuracy = {k: v.value for k, v in ZHANG2019_RESNET50_ACCURACY.items()}
    consistency = {k: v.value for k, v in ZHANG2019_RESNET50_CONSISTENCY.items()}
    filters = ("Rect-2", "Tri-3", "Bin-5")
    acc_gain = [accuracy[f] - accuracy["Baseline"] for f in filters]
    con_gain = [consistency[f] - consistency["Baseline"] for f in filters]
    found.claim("every filter raises accuracy and consistency, Bin-5 consistency most",
                min(acc_gain) > 0 and min(con_gain) > 0 and max(con_gain) == con_gain[-1])
    found.number("sym_zhang_con_base", consistency["Baseline"])
    found.number("sym_zhang_con_bin5", consistency["Bin-5"])
    found.number("sym_zhang_con_gain_max", round(max(con_gain), 10))
    found.number("sym_zhang_acc_gain_min", round(min(acc_gain), 10))
    found.number("sym_zhang_acc_gain_max", round(max(acc_gain), 10))


def grid_order(found, perm):
    """``sym_grid_example``: the token order ``perm`` ``(4,)`` after a one-patch shift of a 2 by 2 grid."""
    found.claim("a one-patch shift of a 2 by 2 grid swaps the tokens of each row", perm.tolist() == [1, 0, 3, 2])
    found.number("sym_grid_example", "(" + ", ".join(f"t{i}" for i in perm) + ")")


def encoder_order(found, encoder, tokens, gap, B, grid_shift, any_perm):
    """``sym_bias_other_perm_gap``: PyTorch's ``encoder`` on ``tokens`` ``(1, 16, d)`` reordered by the
    one-column shift ``grid_shift`` and by ``any_perm``, with and without the relative bias ``B``
    ``(16, 16)``; ``gap(perm, bias)`` is max |encoder(tokens[perm]) - encoder(tokens)[perm]|."""
    if not np.array_equal(np.asarray(grid_shift), symmetry.token_permutation(ENCODER_GRID, ENCODER_SHIFT, 1)):
        raise ValueError(f"grid_shift must be the one-column shift of the {ENCODER_GRID} grid")
    bias, one_column, other_order = (np.asarray(v) for v in (B, grid_shift, any_perm))
    other = gap(any_perm, B)
    # Pi B Pi^T = B for the whole-patch shift alone
    found.claim("the encoder commutes with any order, with the bias only with the shift",
                np.array_equal(symmetry.conjugate(bias, one_column), bias)
                and not np.array_equal(symmetry.conjugate(bias, other_order), bias)
                and gap(any_perm) < EXACT and gap(grid_shift, B) < EXACT and other > 1e-3)
    found.number("sym_bias_other_perm_gap", other, rel=1e-5, why=FLOAT32_WEIGHTS)


def plain_offset_bias(found):
    """The claim that a bias on plain (not circular) offsets of the :data:`ENCODER_GRID` keeps
    Pi B Pi^T = B under its one-column shift for the pairs of patches the shift did not carry round the
    border, and not for the others."""
    plain = symmetry.plain_position_bias(ENCODER_GRID, np.random.default_rng(1).standard_normal(
        tuple(2 * side - 1 for side in ENCODER_GRID)))
    one_column = symmetry.token_permutation(ENCODER_GRID, ENCODER_SHIFT, 1)
    moved = symmetry.conjugate(plain, one_column)
    wrapped = symmetry.wrapped_tokens(ENCODER_GRID, ENCODER_SHIFT, patch=1)
    inside = ~wrapped[:, None] & ~wrapped[None, :]
    found.claim("a bias on plain offsets survives the shift only for pairs it did not wrap",
                wrapped.any() and np.array_equal(moved[inside], plain[inside])
                and not np.array_equal(moved, plain))


def fused_path_nan(found, encoder, tokens, B):
    """The claim that PyTorch's fused inference path of ``encoder`` (evaluation mode) returns NaN on
    ``tokens`` ``(1, N, d)`` with a float mask ``B`` ``(N, N)``."""
    with torch.no_grad():
        found.claim("PyTorch's fused encoder path returns NaN with a float mask",
                    torch.isnan(encoder(tokens, mask=B)).any().item())


def torch_conv(found, roll_first, roll_after, conv_commutes):
    """PyTorch's circular ``Conv2d`` of a rolled image, ``roll_first``, against the roll of its output,
    ``roll_after`` (both ``(1, O, H, W)``), and which of the image's shifts it commutes with,
    ``conv_commutes`` ``(H, W)``."""
    found.claim("PyTorch's circular Conv2d commutes with torch.roll at every shift",
                (roll_first - roll_after).abs().max().item() < 1e-5 and conv_commutes.all())


def patch_encoder(found, P, token_gap, vit_errors, vit_commutes):
    """``sym_vit_fraction_min`` and ``sym_vit_commuting``: the book's ViT as a patch encoder with patch
    side ``P``: ``token_gap``, its tokens after a one-patch roll against the old ones moved one column;
    ``vit_errors`` ``(P + 1,)`` at shifts 0 to ``P``; ``vit_commutes`` ``(H, W)``."""
    # a one-patch roll moves its tokens one column and changes nothing else
    found.claim("the ViT commutes with exactly the whole-patch shifts",
                token_gap < EXACT and vit_errors[0] < EXACT and vit_errors[P] < EXACT
                and vit_errors[1:P].min() > ORDER_ONE
                and np.array_equal(vit_commutes, multiples(vit_commutes.shape, P)))
    found.number("sym_vit_fraction_min", float(vit_errors[1:P].min()), rel=1e-5, why=FLOAT32_WEIGHTS)
    found.number("sym_vit_commuting", int(vit_commutes.sum()))


def position_table(found, P, vit, image, table, pos_errors):
    """``sym_timm_pos_std`` and ``sym_vit_pos_error_*``: timm's position table ``(N_p, d)`` added to the
    patch encoder ``vit`` (patch side ``P``); ``pos_errors``, its error at a whole-patch shift of
    ``image`` ``(1, C, H, W)``, {"initial scale": .., "tokens' scale": ..}."""
    small, large = pos_errors["initial scale"], pos_errors["tokens' scale"]
    # Equal rows are the only table that keeps the symmetry: they act as a bias.
    constant = symmetry.PatchEncoder(vit.embed, vit.blocks, positions=table[:1].repeat(len(table), 1))
    found.claim("a position table breaks the whole-patch shift unless its rows are equal",
                1e-3 < small < large
                and symmetry.equivariance_error(constant, image, P, stride=P) < EXACT)
    found.number("sym_timm_pos_std", table.std().item(), rel=1e-5,
                 why="std of a seeded float32 table: another summation order moves the seventh digit")
    found.number("sym_vit_pos_error_small", small, rel=1e-5, why=FLOAT32_WEIGHTS)
    found.number("sym_vit_pos_error_large", large, rel=1e-5, why=FLOAT32_WEIGHTS)


def trained_models(found, budget, trained, patch, shifts, under_shift, halves, *, chance, logit_change):
    """``sym_trained_*``: three models trained on objects in the left band: ``trained`` (model name,
    seed) -> run; ``patch``, the ViTs' patch side; ``under_shift`` model name -> ``(seeds, shifts)``
    at ``shifts``, 0 to ``patch``; ``halves`` model name -> ``(seeds, 2)`` (own side, other side);
    ``chance``, the accuracy of a guess; ``logit_change``, the largest change of the relative-bias
    ViT's logits under a whole-patch shift (:func:`relative_logit_change`)."""
    names, seeds = tuple(plan.SYMMETRY_MODELS), budget.seeds
    if set(under_shift) != set(names) or set(halves) != set(names):
        raise ValueError(f"expected the models {names}, got {sorted(under_shift)} and {sorted(halves)}")
    shifts = list(shifts)
    if shifts[0] != 0 or patch not in shifts:
        raise ValueError(f"the shifts must run from 0 to a whole patch ({patch}), got {shifts}")
    if any(values.shape != (len(seeds), len(shifts)) for values in under_shift.values()) or any(
            values.shape != (len(seeds), 2) for values in halves.values()):
        raise ValueError(f"under_shift must be (seeds, shifts) and halves (seeds, 2) for {len(seeds)} seeds")
    found.number("sym_trained_max_shift", int(shifts[-1]))
    found.number("sym_trained_patch", patch)
    found.number("sym_trained_n", next(iter(trained.values())).config["data"]["train"])
    found.number("sym_trained_n_seeds", len(seeds))
    _unseen_columns(found, patch)

    # One run's sd of each model's test accuracy, as `python -m tools.booktools noise` measured it
    # from the run cache (vitbias.noise); another CPU moves a run as a new seed would. The accuracies
    # on the other side and under shifts are computed from the trained models: their sds are measured
    # from this chapter's glued values (noise --glued --chapter symmetry), over seeds and kernel sets.
    one_run_sd = {name: noise.one_run_sd("symmetry", name) for name in names}
    other_sd = {name: noise.one_run_sd("symmetry", f"{name}, other side") for name in names}
    shifted_sd = {name: noise.one_run_sd("symmetry", f"{name}, shifted") for name in names}
    steps = {name: trained[name, seeds[0]].config["train"]["steps"] for name in names}
    found.claim("both ViTs train for as many steps", steps["ViT"] == steps["ViT, relative bias"])
    found.number("sym_trained_cnn_steps", steps["CNN"])
    found.number("sym_trained_vit_steps", steps["ViT"])
    fit = {name: [trained[name, s].metrics["train_accuracy"] for s in seeds] for name in names}
    lowest = min(names, key=lambda name: np.mean(fit[name]))
    found.trained("sym_trained_fit_min", fit[lowest], noise.one_run_sd("symmetry", "train"),
                  what="the lowest mean training accuracy of the three models")
    found.claim("each model fits its training set", np.mean(fit[lowest]) >= 0.99)
    off_grid = np.asarray(shifts) % patch != 0
    for name in names:
        tag = SLUG[name]
        found.trained(f"sym_trained_{tag}_own", halves[name][:, 0], one_run_sd[name],
                      what=f"the {name}'s test accuracy with the objects on the side it was trained on")
        found.trained(f"sym_trained_{tag}_other", halves[name][:, 1], other_sd[name],
                      what=f"the {name}'s test accuracy with the objects on the other side")
        found.trained(f"sym_trained_{tag}_shifted", under_shift[name][:, off_grid].mean(axis=1), shifted_sd[name],
                      what=f"the {name}'s test accuracy under shifts of 1 to {patch - 1} pixels, averaged")

    _sides(found, halves, chance)
    # The theorem, on the trained relative-bias ViT: a whole-patch shift changes no prediction, and
    # the logits only by float32 rounding; every seed.
    whole = shifts.index(patch)
    relative = under_shift["ViT, relative bias"]
    found.claim("a whole-patch shift keeps the relative-bias ViT's accuracy in every seed",
                np.array_equal(relative[:, whole], relative[:, 0]))
    found.rounding("sym_trained_rel_logit_change", logit_change, 1e-4,
                   why="float32 rounding of the same sums in another order: the theorem makes it zero")
    found.number("sym_trained_rel_whole", float(relative[:, whole].mean()),
                 abs=band(one_run_sd["ViT, relative bias"], len(seeds)),
                 why="equals the unshifted accuracy exactly (asserted); as trained as any accuracy here")


def _unseen_columns(found, patch):
    """The band of columns the training objects stand in, and the columns of patches none reaches."""
    band_px = [share * data.SIZE for share in data.REGIONS["left"]]
    unseen = (data.SIZE - band_px[1]) / patch
    if not (band_px[0] == 0 and unseen == int(unseen) >= 1):
        raise ValueError(f"the left band {band_px} must start at 0 and leave whole {patch}-pixel columns unseen")
    if [share * data.SIZE for share in data.REGIONS["right"]] != [data.SIZE - band_px[1], data.SIZE]:
        raise ValueError(f"the right band must mirror the left one, got {data.REGIONS}")
    found.number("sym_trained_band_px", int(band_px[1]))
    found.number("sym_trained_size", data.SIZE)
    found.number("sym_trained_unseen_columns", int(unseen))


def _sides(found, halves, chance):
    """Each model's accuracy on the other side against its own, the same model and seed scored on
    both sides, so paired: ``halves`` model name -> ``(seeds, 2)``."""
    found.number("sym_trained_margin", MARGIN)
    # The CNN, near-invariant, as an equivalence within MARGIN, set against what it could lose:
    # everything it learned above chance on its own side.
    cnn = halves["CNN"]
    found.equivalent("sym_trained_cnn_text", cnn[:, 1], cnn[:, 0], MARGIN, paired=True,
                     contrast=float(cnn[:, 0].mean() - chance), **CNN_WORDS)
    vit = halves["ViT"]
    outcome = found.compared("sym_trained_vit_text", vit[:, 1], vit[:, 0], paired=True, **VIT_WORDS)
    found.verdict("sym_trained_vit_reading", VIT_READING[outcome])
    relative = halves["ViT, relative bias"]
    found.compared("sym_trained_rel_text", relative[:, 1], relative[:, 0], paired=True, **REL_WORDS)


def planned_runs(budget) -> dict:
    """``(name, seed)`` for every model of :data:`vitbias.plan.SYMMETRY_MODELS`, trained at the smaller route size
    (where the plain ViT is off its floor, at three eighths of the larger's cost per run) on images
    whose objects stand in the left band (``region="left"``, :data:`vitbias.data.REGIONS`), test
    images likewise, each under the step rule under which its model fits its training set
    (``fit=True``).

    Only generated images can place their objects, so a budget on photographs
    (``full``) trains these on the generated world, with its own models and recipe.
    """
    if budget.dataset["name"] != "shapes":
        budget = dataclasses.replace(budget, dataset=dict(profile.SHAPES))
    n = budget.route_sizes[0]
    return {(name, s): runs.experiment(budget, model, n, s, route=route, region="left", fit=True)
            for name, (model, route) in plan.SYMMETRY_MODELS.items() for s in budget.seeds}


def noise_groups(budget) -> dict[str, dict]:
    """The symmetry chapter's runs by kind of number: each trained model (its name in
    :data:`vitbias.plan.SYMMETRY_MODELS`), one group of its seeds, whose number is its test accuracy on
    images like its training set's (objects in the same half); and ``"train"``, the same groups'
    training accuracies. The chapter's other accuracies of the same models (the other side, shifted
    images) are computed from the trained models: their kinds are measured from the glued values
    (``noise --glued``)."""
    kinds: dict[str, dict] = {}
    for (name, _seed), config in planned_runs(budget).items():
        kinds.setdefault(name, {}).setdefault((name,), []).append(config)
    kinds["train"] = {group: configs for name in list(kinds) for group, configs in kinds[name].items()}
    return kinds
