"""The patches chapter: what cutting an image into tokens costs, in parameters and multiply-adds, and
what a token keeps, checked against timm, the ViT paper and the lecture's lab.

The page computes its experiments in its visible cells and hands each result to the section function
of that name, which glues its numbers into the page's :class:`~vitbias.evidence.Evidence` and keeps its
claims; :func:`measure` is the same sections in the page's order, for the tests.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from .. import cost, models, patches, positions, vit
from .. import literature as lit
from ..evidence import Evidence

TWO_IMPLEMENTATIONS = "float32 rounding of two implementations: a bound, not a value"
FLOAT32_ONLY = "float32 rounding only: a bound, not a value"
FLOAT32 = "float32 forward pass with fixed seeds: another summation order moves it far less than 1 %"
LINEAR_ALGEBRA = "least squares through LAPACK: another summation order moves the sixth digit at most"
TIMING = "wall-clock time of this machine under its load at build time"
TIMED = ("224 / 16", "224 / 8", "448 / 8")  # the cost table's settings, image / patch, in its order
JIGSAW_SIDE, JIGSAW_PATCH = 32, 4  # the jigsaw's images and pieces, the lab's TinyViT's images and patches
HAND_TOKENS = ["[CLS]"] + [f"patch {k}" for k in range(4)]  # the worked example's tokens, in order


def markdown_table(header, rows) -> str:
    """The Markdown text of a table from a header and rows of cells, one row a line."""
    rows = [list(row) for row in rows]
    if not header or any(len(row) != len(header) for row in rows):
        raise ValueError(f"every row needs one cell per column of {list(header)}, got {rows}")
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows])


def table(header, rows):
    """:func:`markdown_table`, shown by the notebook as Markdown."""
    from IPython.display import Markdown

    return Markdown(markdown_table(header, rows))


@functools.cache
def meta_timm(name: str):
    """timm's model ``name`` with its shapes only, no weights drawn; built once, shared by its callers."""
    import timm

    with torch.device("meta"):
        return timm.create_model(name, pretrained=False)


# ---------------------------------------------------------------------------
# What the page's visible cells do not compute themselves.
# ---------------------------------------------------------------------------


def experiment_vit(budget) -> torch.nn.Module:
    """The ViT that ``budget``'s experiments train, on the meta device: its shapes, no weights drawn."""
    with torch.device("meta"):
        return models.build(budget.vit)


def timm_counted_macs() -> int:
    """The multiply-adds PyTorch's FLOP counter finds in timm's ViT-B/16 on one 224-pixel image."""
    return cost.torch_counted_macs(meta_timm("vit_base_patch16_224"), torch.empty(1, 3, 224, 224, device="meta"))


def jigsaw_details(small, shuffled, order, without, with_positions) -> dict:
    """What the jigsaw's models do besides moving the logits: the number of ``"images"``,
    ``"equivariance"`` (how far the shuffled images' output tokens are from the images' output tokens
    shuffled), the ``"logit scale"`` of the model with positions and the ``"position std"`` of its table.

    ``small``, ``shuffled``: the images and their jigsaws, ``(images, C, S, S)``; ``order``: the
    permutation of the ``N`` patches, ``(N,)``; ``without``, ``with_positions``: the two ViTs, which
    average their patch tokens.
    """
    if small.shape != shuffled.shape:
        raise ValueError(f"a jigsaw has its image's shape: {tuple(small.shape)} against {tuple(shuffled.shape)}")
    with torch.no_grad():
        tokens, _ = without.encode(small)
        tokens_shuffled, _ = without.encode(shuffled)
        scale = with_positions(small).abs().max().item()
    return {"images": small.shape[0], "equivariance": (tokens_shuffled - tokens[:, order]).abs().max().item(),
            "logit scale": scale, "position std": with_positions.pos_embed.std().item()}


def resize_difference(table_old: torch.Tensor, table_new: torch.Tensor) -> float:
    """The largest difference between our resize and timm's bilinear ``resample_abs_pos_embed``, on
    ``table_new``, our resize of ``table_old``, and on a random table of ``table_old``'s shape.

    ``table_old``, ``table_new``: ``(1, 1 + old^2, d)`` and ``(1, 1 + new^2, d)``, a [CLS] row first.
    """
    from timm.layers import resample_abs_pos_embed

    old, new = (math.isqrt(t.shape[1] - 1) for t in (table_old, table_new))
    if table_old.shape[1] != 1 + old**2 or table_new.shape[1] != 1 + new**2:
        raise ValueError(f"tables need a [CLS] row and a square grid, got {tuple(table_old.shape)} "
                         f"and {tuple(table_new.shape)}")

    def library(table):
        return resample_abs_pos_embed(table, (new, new), (old, old), num_prefix_tokens=1,
                                      interpolation="bilinear")

    random_table = torch.randn(*table_old.shape, generator=torch.Generator().manual_seed(0))
    return max((table_new - library(table_old)).abs().max().item(),
               (positions.resize_position_table(random_table, old, new) - library(random_table))
               .abs().max().item())


# ---------------------------------------------------------------------------
# The evidence, section by section, in the page's order.
# ---------------------------------------------------------------------------


def image_as_tokens(found: Evidence) -> None:
    """ViT-B/16's image, patches and tokens (``patches_image_side``, ``patches_tokens_b16``, ...) and the
    claim that a flattened patch is as long as a token."""
    config = vit.VIT_B_16
    for name, value in (("image_side", config.img_size), ("patch_side", config.patch_size),
                        ("tokens_b16", config.num_patches), ("grid_b16", config.grid_size),
                        ("patch_numbers_b16", config.patch_dim), ("width_b16", config.embed_dim),
                        ("sequence_b16", config.num_tokens)):
        found.number(f"patches_{name}", value)
    found.claim("a flattened ViT-B/16 patch is exactly as long as its token",
                config.patch_dim == config.embed_dim)


def vit_b16_parameters(found: Evidence, traced, ours: int, timm: int) -> None:
    """ViT-B/16's parameters by part (``patches_params_*_b16``, ``patches_block_*``) and their two claims.

    ``traced``: our ViT-B/16's ``(step, shape)`` after each step of one image (:meth:`vit.ViT.trace`), which
    must follow :func:`cost.shape_table`; ``ours``, ``timm``: the parameters of our model and of timm's.
    """
    config = vit.VIT_B_16
    if list(traced) != [(step, shape) for step, shape, _ in cost.shape_table(config)]:
        raise ValueError("the shape table no longer follows the tensor through ViT-B/16")
    counts = cost.parameter_counts(config)
    found.claim("ViT-B/16's counted parameters are our model's and timm's", counts["total"] == ours == timm)
    found.number("patches_params_b16", counts["total"])
    found.number("patches_params_b16_m", counts["total"] / 1e6)
    for name, part in (("embed", "patch embedding"), ("positions", "position table"),
                       ("blocks", "encoder blocks"), ("head", "head")):
        found.number(f"patches_params_{name}_b16", counts[part])
    block = cost.block_parameters(config.embed_dim)
    for part in ("attention", "mlp", "layernorms", "total"):
        found.number(f"patches_block_{part}", block[part])
    if (block["attention"] + block["mlp"] + block["layernorms"] != block["total"]
            or block["total"] * config.depth != counts["encoder blocks"]):
        raise ValueError("ViT-B/16's blocks do not add up to its encoder's parameters")
    found.number("patches_lit_vit_base_m", lit.VIT_BASE_PARAMETERS.value / 1e6)
    found.claim("ViT-B/16's count is Table 1's to within a million",
                abs(counts["total"] - lit.VIT_BASE_PARAMETERS.value) < 1e6)


def standard_size_parameters(found: Evidence, timm_counts: dict[str, int]) -> None:
    """ViT-L/16's parameters (``patches_params_l16_m``, ``patches_params_l_over_b``) and the claim that
    every standard size counts as timm's model does.

    ``timm_counts``: the parameters of timm's model of each standard size, by name (``"ViT-B/16"``).
    """
    counted = {name: cost.parameter_counts(cfg)["total"] for name, cfg in vit.STANDARD.items()}
    if set(timm_counts) != set(counted):
        raise ValueError(f"timm's counts must name the standard sizes {sorted(counted)}, got {sorted(timm_counts)}")
    found.claim("every standard size's counted parameters are timm's",
                all(counted[name] == timm_counts[name] for name in counted))
    found.number("patches_params_l16_m", counted["ViT-L/16"] / 1e6)
    found.number("patches_params_l_over_b", counted["ViT-L/16"] / counted["ViT-B/16"])


def logits_against_timm(found: Evidence, checks: dict, differences: dict[str, float], experiments_vit) -> None:
    """The largest logit difference from timm (``patches_timm_max_difference``), the first checked TinyViT
    (``patches_tiny_*``, ``patches_params_tiny``) and their two claims.

    ``checks``: name -> the :class:`vit.ViTConfig` compared, the quick profile's TinyViT first;
    ``differences``: name -> the largest logit difference between timm's model and ours with its weights;
    ``experiments_vit``: the ViT the quick profile's experiments train (:func:`experiment_vit`).
    """
    if not checks or set(differences) != set(checks):
        raise ValueError(f"one difference per configuration checked: {sorted(checks)}, got {sorted(differences)}")
    largest = max(differences.values())
    found.rounding("patches_timm_max_difference", largest, 1e-5, why=TWO_IMPLEMENTATIONS)
    found.claim("our ViT's logits are timm's in every configuration", largest == 0.0)
    tiny = next(iter(checks.values()))
    found.claim("the quick profile's experiments train the first TinyViT checked",
                getattr(experiments_vit, "config", None) == tiny
                and models.parameter_count(experiments_vit) == cost.parameter_counts(tiny)["total"])
    found.number("patches_params_tiny", models.parameter_count(experiments_vit))
    for name, value in (("patch", tiny.patch_size), ("width", tiny.embed_dim), ("depth", tiny.depth),
                        ("tokens", tiny.num_patches)):
        found.number(f"patches_tiny_{name}", value)


def embedding_two_ways(found: Evidence, image, conv, as_matrix, as_conv) -> None:
    """The patch embedding as a matrix and as a convolution (``patches_two_ways_*``): how far apart in
    float32 and in float64, and the largest output; each rounding beyond its bound is a ``ValueError``.

    ``image``: ``(1, C, H, W)``; ``conv``: the ``Conv2d`` whose weights both ways share; ``as_matrix``,
    ``as_conv``: the two float32 embeddings of ``image``, ``(1, N, d)``.
    """
    if as_matrix.shape != as_conv.shape:
        raise ValueError(f"the two ways must give one shape, got {tuple(as_matrix.shape)} and {tuple(as_conv.shape)}")
    with torch.no_grad():
        exact = [embed(image.double(), conv.weight.double(), conv.bias.double())
                 for embed in (patches.embed_linear, patches.embed_conv)]
    found.rounding("patches_two_ways_f32", (as_matrix - as_conv).abs().max().item(), 10 * lit.LAB_TWO_WAYS.value,
                   why="float32 rounding of two summation orders: a bound, not a value")
    found.rounding("patches_two_ways_f64", (exact[0] - exact[1]).abs().max().item(), 1e-12,
                   why="float64 rounding of two summation orders: a bound, not a value")
    found.number("patches_two_ways_largest_output", as_conv.abs().max().item(), rel=1e-4,
                 why="float32 convolution: another summation order moves its last digits")
    found.number("patches_lit_two_ways", lit.LAB_TWO_WAYS.value)
    found.number("patches_params_embed_tiny", cost.parameter_counts(vit.TINY_VIT_QUICK)["patch embedding"])


def lab_tiny_vit(found: Evidence) -> None:
    """The lab's TinyViT, whose tokens are the jigsaw's pieces (``patches_jigsaw_*`` of its shape,
    ``patches_lit_lab_vit_k``), and its two claims."""
    lab_shape = vit.TINY_VIT
    if (lab_shape.img_size, lab_shape.patch_size) != (JIGSAW_SIDE, JIGSAW_PATCH):
        raise ValueError("the lab's TinyViT no longer reads the jigsaw's pieces as its tokens")
    lab_count = cost.parameter_counts(lab_shape)["total"]
    for name, value in (("patch", lab_shape.patch_size), ("tokens", lab_shape.num_patches),
                        ("width", lab_shape.embed_dim), ("depth", lab_shape.depth),
                        ("lab_params", lab_count)):
        found.number(f"patches_jigsaw_{name}", value)
    found.number("patches_lit_lab_vit_k", lit.LAB_CROSSOVER["vit_params"] / 1e3)
    found.claim("our count of the lab's TinyViT rounds to the lab's",
                round(lab_count, -3) == lit.LAB_CROSSOVER["vit_params"])
    quick = vit.TINY_VIT_QUICK
    found.claim("the lab's TinyViT is not the one the quick profile trains",
                lab_shape.patch_size != quick.patch_size and lab_shape.embed_dim != quick.embed_dim)


def jigsaw_logits(found: Evidence, changes: dict) -> None:
    """How much the jigsaw moves the logits without and with positions (``patches_jigsaw_without``,
    ``_with``, ...) and its two claims; a change without positions beyond rounding is a ``ValueError``.

    ``changes``: the largest logit change ``"without"`` and ``"with"`` positions, and
    :func:`jigsaw_details`' entries.
    """
    found.number("patches_jigsaw_images", changes["images"])
    found.rounding("patches_jigsaw_without", changes["without"], 1e-5, why=FLOAT32_ONLY)
    found.number("patches_jigsaw_with", changes["with"], rel=0.01, why=FLOAT32)
    found.number("patches_jigsaw_logit_scale", changes["logit scale"], rel=0.01, why=FLOAT32)
    found.rounding("patches_jigsaw_equivariance", changes["equivariance"], 1e-5, why=FLOAT32_ONLY)
    found.number("patches_position_std", changes["position std"], rel=0.01, why=FLOAT32)
    found.number("patches_lit_jigsaw_without", lit.LAB_JIGSAW_WITHOUT_POSITIONS.value)
    found.number("patches_lit_jigsaw_with", lit.LAB_JIGSAW_WITH_POSITIONS.value)
    found.claim("positions move the jigsaw's logits by orders of magnitude more than rounding",
                changes["with"] > 100 * changes["without"])
    found.claim("with positions, the jigsaw moves the logits as much as the lab's, within ten times",
                0.1 < changes["with"] / lit.LAB_JIGSAW_WITH_POSITIONS.value < 10)


def kept_directions(found: Evidence, kept) -> None:
    """How many directions of its patch a token can keep, by model (``patches_kept_*``,
    ``patches_patchdim_*``, ``patches_kept_share_*``), and the claim on ViT-Ti/16 and ViT-B/32.

    ``kept``: rows ``(model, d, P^2 C, directions kept)``, ViT-Ti/16 and ViT-B/32 among the models.
    """
    share = {}
    for name, d, D, k in kept:
        if k != min(d, D):
            raise ValueError(f"{name}: a token keeps min(d, P^2 C) = {min(d, D)} directions, not {k}")
        key = name.replace("ViT-", "").replace("/", "_").lower()
        share[name] = k / D
        found.number(f"patches_kept_{key}", k)
        found.number(f"patches_patchdim_{key}", D)
        found.number(f"patches_kept_share_{key}", 100 * k / D)
    if not {"ViT-Ti/16", "ViT-B/32"} <= set(share):
        raise ValueError(f"the directions kept must name ViT-Ti/16 and ViT-B/32, got {sorted(share)}")
    found.claim("ViT-Ti/16 and ViT-B/32 each keep a quarter of a patch",
                share["ViT-Ti/16"] == share["ViT-B/32"] == 0.25)


def pinv_reconstruction(found: Evidence, errors: dict[str, float], patch_count: int) -> None:
    """The relative errors of patches rebuilt through the pseudoinverse of ViT-Ti/16-shaped embeddings
    (``patches_recon_*``) and their three claims.

    ``errors``: the error of the ``"random"`` and the ``"best linear"`` embedding; ``patch_count``: the
    number of test patches they were measured on.
    """
    ti = vit.VIT_TI_16
    # A random d-dimensional row space keeps d / P^2 C of the energy on average, whatever the patches.
    predicted_random = np.sqrt(1 - ti.embed_dim / ti.patch_dim)
    found.number("patches_recon_random", errors["random"], rel=1e-6, why=LINEAR_ALGEBRA)
    found.number("patches_recon_best", errors["best linear"], rel=1e-6, why=LINEAR_ALGEBRA)
    found.number("patches_recon_random_predicted", predicted_random)
    found.number("patches_recon_patches", patch_count)
    found.number("patches_lit_recon_ti16", lit.LAB_PINV_ERROR_TI16.value)
    found.claim("the random embedding's error is near sqrt(1 - d / P^2 C)",
                abs(errors["random"] - predicted_random) < 0.02)
    found.claim("the best linear embedding loses far less than a random one",
                errors["best linear"] < errors["random"] / 2)
    found.claim("the lab's pretrained embedding loses less than a random one",
                lit.LAB_PINV_ERROR_TI16.value < errors["random"])


def patch_sides(found: Evidence) -> None:
    """The near-universal patch sides (``patches_common_side_*``) and the claim that Table 5 uses them."""
    # The patch sides of the ViT paper's Table 5 models, read from their names (ViT-L/16 -> 16).
    table5_sides = sorted({int(model.split("/")[1]) for model, _ in lit.VIT_TABLE5})
    found.number("patches_common_side_small", table5_sides[0])
    found.number("patches_common_side_b16", vit.VIT_B_16.patch_size)
    found.claim("the two smallest patch sides of Table 5 are the slides' near-universal ones",
                table5_sides[:2] == [side.value for side in lit.LAB_COMMON_PATCH_SIDES])


def encoder_cost_table(found: Evidence, rows, crossover: float) -> None:
    """ViT-B's multiply-adds at the slides' three settings (``patches_cost_*``), the crossover
    (``patches_crossover_*``) and their four claims.

    ``rows``: :func:`cost.cost_table`'s rows for ``d = 768``, twelve blocks, one per setting of the
    slides' table; ``crossover``: the number of tokens at which attention costs as much as the rest.
    """
    rows = {(r.image, r.patch): r for r in rows}
    if set(rows) != set(lit.LAB_COST_TABLE):
        raise ValueError(f"the cost table needs the slides' settings {sorted(lit.LAB_COST_TABLE)}, got {sorted(rows)}")
    rounded = []
    for (image, patch), r in rows.items():
        published = {name: p.value for name, p in lit.LAB_COST_TABLE[image, patch].items()}
        rounded.append((round(r.dense, 2), round(r.attention, 2), round(r.total, 2),
                        round(100 * r.attention_share))
                       == (published["dense"], published["attention"], published["total"],
                           published["share"]))
        key = f"{image}_{patch}"
        found.number(f"patches_cost_tokens_{key}", r.tokens)
        found.number(f"patches_cost_dense_{key}", r.dense)
        found.number(f"patches_cost_attention_{key}", r.attention)
        found.number(f"patches_cost_total_{key}", r.total)
        found.number(f"patches_cost_share_{key}", 100 * r.attention_share)
    coarse, fine, large = rows[224, 16], rows[224, 8], rows[448, 8]
    found.number("patches_cost_halve_ratio", fine.total / coarse.total)
    found.claim("our cost table and its halving ratio are the slides', to the digits they print",
                all(rounded) and round(fine.total / coarse.total, 1) == lit.LAB_HALVING_RATIO.value)
    found.claim("halving the patch side multiplies the first term by four and the second by sixteen",
                np.isclose(fine.dense / coarse.dense, 4) and np.isclose(fine.attention / coarse.attention, 16))
    found.number("patches_cost_double_res_attention", large.attention / fine.attention)
    found.number("patches_cost_double_res_total", large.total / fine.total)
    found.claim("doubling the resolution quadruples the tokens and multiplies attention by sixteen",
                np.isclose(large.tokens / fine.tokens, 4) and np.isclose(large.attention / fine.attention, 16))
    found.number("patches_crossover_tokens", crossover)
    found.claim("the two terms are equal at N = 6d, the slides' crossover",
                crossover == 6 * 768 == lit.LAB_CROSSOVER_TOKENS.value
                and np.equal(*cost.block_macs(int(crossover), 768)))
    found.number("patches_crossover_image_side", 16 * np.sqrt(crossover))


def forward_pass_b16(found: Evidence, forward_b16: dict[str, int], timm_macs: int) -> None:
    """The whole forward pass of ViT-B/16 (``patches_forward_b16_*``, ``patches_lesson_b16_gflops``) and
    its two claims.

    ``forward_b16``: our count of its multiply-adds by part, ``"total"`` among them
    (:func:`cost.forward_macs`); ``timm_macs``: PyTorch's count in timm's model (:func:`timm_counted_macs`).
    """
    found.claim("our multiply-adds of ViT-B/16 are what PyTorch's FLOP counter finds in timm's",
                forward_b16["total"] == timm_macs)
    found.number("patches_forward_b16_g", forward_b16["total"] / 1e9)
    found.number("patches_forward_b16_gflops", 2 * forward_b16["total"] / 1e9)
    found.number("patches_lesson_b16_gflops", lit.LESSON_VIT_B16_GFLOPS.value)
    # The lesson's "17.6 GFLOPs" is this multiply-add count, rounded; twice it is not.
    found.claim("the lesson's GFLOPs of ViT-B/16 are our multiply-adds, rounded",
                round(forward_b16["total"] / 1e9, 1) == lit.LESSON_VIT_B16_GFLOPS.value)


def vit_l16_resolutions(found: Evidence) -> None:
    """ViT-L/16 at 224 and 384 pixels (``patches_l16_*``, ``patches_grid_384``) and the claim that its
    attention grows as the square of the token ratio."""
    large_224, large_384 = vit.VIT_L_16, vit.VIT_L_16.replace(img_size=384)
    tokens_224, tokens_384 = large_224.num_patches, large_384.num_patches
    found.number("patches_l16_tokens_224", tokens_224)
    found.number("patches_l16_depth", large_224.depth)
    found.number("patches_l16_tokens_384", tokens_384)
    found.number("patches_grid_384", large_384.grid_size)
    found.number("patches_l16_attention_ratio", (tokens_384 / tokens_224) ** 2)
    found.number("patches_l16_dense_ratio", tokens_384 / tokens_224)
    found.number("patches_l16_embed_params", cost.parameter_counts(large_224)["patch embedding"])
    found.number("patches_l16_block_params", cost.block_parameters(1024)["total"])
    l224, l384 = (cost.forward_macs(cfg)["total"] for cfg in (large_224, large_384))
    found.number("patches_l16_total_ratio", l384 / l224)
    found.claim("ViT-L/16's attention grows as the square of the token ratio",
                np.isclose(cost.block_macs(tokens_384, 1024)[1] / cost.block_macs(tokens_224, 1024)[1],
                           (tokens_384 / tokens_224) ** 2))


def timings(found: Evidence, seconds: dict, macs: dict) -> None:
    """The timings of one ViT-B block at the settings of :data:`TIMED` (``patches_time_*``), glued
    unchecked, and the claim on their ranking.

    ``seconds``: setting -> the seconds of each timed run, ``(repeats,)``;
    ``macs``: setting -> the multiply-adds of the timed model.
    """
    if set(seconds) != set(TIMED) or set(macs) != set(TIMED):
        raise ValueError(f"timings need the settings {TIMED}, got {sorted(seconds)} and {sorted(macs)}")
    fastest = {label: np.min(seconds[label]) for label in TIMED}
    for label in TIMED:
        key = label.replace(" / ", "_")
        found.timing(f"patches_time_ms_{key}", 1000 * fastest[label], why=TIMING)
        found.timing(f"patches_time_gmacs_per_s_{key}", macs[label] / fastest[label] / 1e9, why=TIMING)
        found.number(f"patches_time_macs_g_{key}", macs[label] / 1e9)
    found.timing("patches_time_ratio_measured", fastest["448 / 8"] / fastest["224 / 16"], why=TIMING)
    found.number("patches_time_ratio_predicted", macs["448 / 8"] / macs["224 / 16"])
    found.claim("more predicted work took more time, in the table's order",
                fastest["224 / 16"] < fastest["224 / 8"] < fastest["448 / 8"])


def position_resize(found: Evidence, table_old: torch.Tensor, table_new: torch.Tensor, difference: float) -> None:
    """The resized position table (``patches_resize_rows_*``), its distance from timm's resize
    (``patches_resize_vs_timm``) and the claim that it keeps the [CLS] row.

    ``table_old``, ``table_new``: ``(1, 1 + old^2, d)`` and its resize ``(1, 1 + new^2, d)``, a [CLS] row
    first; ``difference``: :func:`resize_difference`.
    """
    found.rounding("patches_resize_vs_timm", difference, 1e-5, why=TWO_IMPLEMENTATIONS)
    found.claim("the resize keeps the [CLS] row as it is", torch.equal(table_new[:, :1], table_old[:, :1]))
    found.number("patches_resize_rows_old", table_old.shape[1])
    found.number("patches_resize_rows_new", table_new.shape[1])


def resize_cell_weights(found: Evidence, rows, cols, weights) -> None:
    """New row 6, column 10 of the 14 -> 24 resize, the slides' worked example: the old rows and columns
    it mixes (``patches_resize_r0``, ...), where it lands (``patches_resize_*_position``), its weights
    (``patches_w00``, ...) and the claim that it mixes its neighbours.

    ``rows``, ``cols``: the two old rows and columns; ``weights``: ``(2, 2)``, rows by columns
    (:func:`positions.four_weights`); weights that do not round to the slides' are a ``ValueError``.
    """
    (row, col), (old, new) = lit.LAB_RESIZE_CELL, lit.LAB_RESIZE_GRIDS
    if ((row, col), (old, new)) != ((6, 10), (14, 24)):
        raise ValueError("the slides' worked resize is no longer new row 6, column 10 of 14 -> 24")
    (r0, r1), (c0, c1) = rows, cols
    for name, value in (("r0", r0), ("r1", r1), ("c0", c0), ("c1", c1)):
        found.number(f"patches_resize_{name}", value)
    for i, j in np.ndindex(2, 2):
        found.number(f"patches_w{i}{j}", weights[i, j])
    if not np.array_equal(np.round(weights, 2), [[w.value for w in ws] for ws in lit.LAB_RESIZE_WEIGHTS]):
        raise ValueError("the four weights no longer round to the slides'")
    old_at = positions.old_coordinates(new, old)  # where each new row (and column) sits on the old grid
    found.number("patches_resize_row_position", old_at[row])
    found.number("patches_resize_col_position", old_at[col])
    found.claim("the new cell mixes the old rows and columns it lands between",
                (r0, c0) == (int(old_at[row]), int(old_at[col])))


def rope_offsets(found: Evidence, spreads: dict[str, float]) -> None:
    """How much pairs at one offset score differently (``patches_rope_spread``,
    ``patches_absolute_spread``) and the claim on the absolute table.

    ``spreads``: the largest spread among pairs with the same offset with ``"2-D RoPE"`` and with an
    ``"absolute table"``; a RoPE spread beyond float64 rounding is a ``ValueError``.
    """
    found.rounding("patches_rope_spread", spreads["2-D RoPE"], 1e-12,
                   why="float64 rounding: a bound, not a value")
    found.number("patches_absolute_spread", spreads["absolute table"], rel=1e-6,
                 why="float64 math through PyTorch's kernels: another summation order moves it by about "
                     "1e-13 relative")
    found.claim("an absolute table scores pairs at one offset differently", spreads["absolute table"] > 1e-3)


def register_cost(found: Evidence, with_registers, extra: int, extra_macs: float) -> None:
    """Four registers on ViT-B/16 (``patches_registers_*``) and the claim on what they add.

    ``with_registers``: ViT-B/16's :class:`vit.ViTConfig` with four register tokens; ``extra``: the
    parameters they add to our ViT; ``extra_macs``: the multiply-adds they add, a fraction of ViT-B/16's.
    """
    if with_registers.reg_tokens != 4:
        raise ValueError(f"the chapter adds four registers, got {with_registers.reg_tokens}")
    # Registers as Darcet et al. add them (and timm's reg4 models): four vectors, no position rows.
    # Ours, like timm's plain VisionTransformer asked for registers, also gives them rows.
    register_vectors = cost.parameter_counts(with_registers)["register tokens"]
    found.claim("four registers are four vectors, and ours add as many position rows",
                register_vectors == 4 * with_registers.embed_dim and extra == 2 * register_vectors)
    found.number("patches_registers_vectors", register_vectors)
    found.number("patches_registers_params", extra)
    found.number("patches_registers_macs_pct", 100 * extra_macs)


def swin_windows(found: Evidence, side: int, width: int, window: int, global_macs: int, window_macs: int) -> None:
    """Swin-T's first stage with global and windowed attention (``patches_swin_*``) and the claim on
    their ratio.

    ``side``: the side of its grid of tokens; ``width``: their width; ``window``: the side of a window;
    ``global_macs``, ``window_macs``: attention's multiply-adds over the whole grid and inside windows.
    """
    projections = cost.projection_macs(side**2, width)  # the same with or without windows
    for name, value in (("grid", side), ("tokens", side**2), ("width", width),
                        ("window", window), ("window_tokens", window**2),
                        ("global_g", global_macs / 1e9), ("windows_g", window_macs / 1e9),
                        ("ratio", global_macs / window_macs), ("projections_g", projections / 1e9),
                        ("layer_ratio", (projections + global_macs) / (projections + window_macs))):
        found.number(f"patches_swin_{name}", value)
    found.claim("windows divide attention's cost by the number of tokens over the window's",
                global_macs / window_macs == side**2 / window**2)


def swin_and_deit_results(found: Evidence) -> None:
    """Swin-L's and DeiT-B's published results (``patches_lit_swin_l_*``, ``patches_lit_deit_b_*``) and the
    claim on DeiT-B's distillation token."""
    for name in ("SWIN_L_TOP1", "SWIN_L_COCO_BOX_AP", "DEIT_B_TOP1", "DEIT_B_DISTILLED_TOP1"):
        found.number(f"patches_lit_{name.lower()}", getattr(lit, name).value)
    found.claim("DeiT-B's distillation token raised its top-1",
                lit.DEIT_B_DISTILLED_TOP1.value > lit.DEIT_B_TOP1.value)


def hand_bar(found: Evidence, out: dict) -> None:
    """The worked example on the bar: [CLS]'s attention weights (``patches_hand_weight_*``), P(vertical)
    (``patches_hand_vertical``) and their two claims.

    ``out``: :func:`handvit.forward` of the bar, its ``"weights"`` ``(5,)``, [CLS] first, and its
    ``"probs"`` ``(2,)``, vertical first.
    """
    if len(out["weights"]) != len(HAND_TOKENS):
        raise ValueError(f"one attention weight per token of {HAND_TOKENS}, got {len(out['weights'])}")
    weights = dict(zip(HAND_TOKENS, out["weights"]))
    vertical = out["probs"][0]
    found.number("patches_hand_weight_cls", weights["[CLS]"])
    found.number("patches_hand_weight_bar_top", weights["patch 1"])
    found.number("patches_hand_weight_bar_bottom", weights["patch 3"])
    found.number("patches_hand_vertical", vertical)
    found.claim("the head says vertical for the bar", vertical > 0.5)
    # brighter and later patches win
    found.claim("[CLS] weighs the bar's lower patch most, then its upper one",
                weights["patch 3"] > weights["patch 1"] > weights["patch 0"])


def hand_variants(found: Evidence, results: dict[str, float], lost, tokens, grey) -> None:
    """The worked example's jigsaw, its bag of patches and its checkerboard (``patches_hand_jigsaw``,
    ``_plain``, ``_lost``) and their three claims.

    ``results``: P(vertical) of the ``"bar"``, its ``"jigsaw"`` and either ``", no positions"``;
    ``lost``: the part of each checkerboard patch that ``E`` drops, ``(4,)``; ``tokens``, ``grey``: the
    checkerboard's and a uniform grey's tokens, ``(4, 3)``.
    """
    # "the probabilities differ from the slides'": our own weights, other numbers
    ours = {"bar": results["bar"], "jigsaw": results["jigsaw"], "no positions": results["bar, no positions"]}
    found.claim("our probabilities are not the slides'",
                all(round(ours[name], 3) != slide.value for name, slide in lit.LAB_HAND_VERTICAL.items()))
    found.number("patches_hand_jigsaw", results["jigsaw"])
    found.number("patches_hand_plain", results["bar, no positions"])
    found.number("patches_hand_lost", float(np.max(lost)))
    found.claim("the jigsaw changes the answer, and without positions it does not",
                results["jigsaw"] != results["bar"]
                and np.isclose(results["bar, no positions"], results["jigsaw, no positions"], rtol=0, atol=1e-15))
    found.claim("each checkerboard patch loses a part of length one, leaving a uniform grey's tokens",
                np.allclose(lost, 1.0) and np.allclose(tokens, grey))


def measure(budget, *, b16: dict, timm_counts: dict[str, int], checks: dict, differences: dict[str, float],
            embedding: dict, jigsaw: dict, kept, errors: dict[str, float], patch_count: int, cost_rows,
            crossover: float, forward_b16: dict[str, int], timm_macs: int, resize: dict, cell: dict,
            spreads: dict[str, float], registers: dict, swin: dict, hand_out: dict, hand: dict) -> Evidence:
    """The chapter's evidence from what its cells computed, every timing excepted (:func:`timings`):
    the section functions above, in the page's order.

    ``budget``: the quick profile's, whose ViT the chapter's experiments train. Each other argument is
    its section's, as that section names it: ``b16``, the keywords of :func:`vit_b16_parameters`;
    ``timm_counts`` (:func:`standard_size_parameters`); ``checks``, ``differences``
    (:func:`logits_against_timm`); ``embedding``, the keywords of :func:`embedding_two_ways`; ``jigsaw``,
    the ``changes`` of :func:`jigsaw_logits`; ``kept`` (:func:`kept_directions`); ``errors``,
    ``patch_count`` (:func:`pinv_reconstruction`); ``cost_rows``, ``crossover``
    (:func:`encoder_cost_table`); ``forward_b16``, ``timm_macs`` (:func:`forward_pass_b16`); ``resize``,
    the keywords of :func:`position_resize`; ``cell``, those of :func:`resize_cell_weights`; ``spreads``
    (:func:`rope_offsets`); ``registers``, those of :func:`register_cost`; ``swin``, those of
    :func:`swin_windows`; ``hand_out``, the ``out`` of :func:`hand_bar`; ``hand``, the keywords of
    :func:`hand_variants`.
    """
    found = Evidence("patches")
    image_as_tokens(found)
    vit_b16_parameters(found, **b16)
    standard_size_parameters(found, timm_counts)
    logits_against_timm(found, checks, differences, experiment_vit(budget))
    embedding_two_ways(found, **embedding)
    lab_tiny_vit(found)
    jigsaw_logits(found, jigsaw)
    kept_directions(found, kept)
    pinv_reconstruction(found, errors, patch_count)
    patch_sides(found)
    encoder_cost_table(found, cost_rows, crossover)
    forward_pass_b16(found, forward_b16, timm_macs)
    vit_l16_resolutions(found)
    position_resize(found, **resize)
    resize_cell_weights(found, **cell)
    rope_offsets(found, spreads)
    register_cost(found, **registers)
    swin_windows(found, **swin)
    swin_and_deit_results(found)
    hand_bar(found, hand_out)
    hand_variants(found, **hand)
    return found
