"""The patches chapter: what cutting an image into tokens costs, in parameters and multiply-adds, and
what a token keeps, checked against timm, the ViT paper and the lecture's lab."""

from __future__ import annotations

import functools

import numpy as np
import torch

from .. import cost, geometry, handvit, models, patches, positions, vit
from .. import literature as lit
from ..evidence import Evidence

TWO_IMPLEMENTATIONS = "float32 rounding of two implementations: a bound, not a value"
FLOAT32_ONLY = "float32 rounding only: a bound, not a value"
FLOAT32 = "float32 forward pass with fixed seeds: another summation order moves it far less than 1 %"
LINEAR_ALGEBRA = "least squares through LAPACK: another summation order moves the sixth digit at most"
TIMING = "wall-clock time of this machine under its load at build time"
TIMED = ("224 / 16", "224 / 8", "448 / 8")  # the cost table's settings, image / patch, in its order
# The configurations whose logits the chapter compares with timm's.
CHECKS = {"TinyViT, mean of patches": vit.TINY_VIT_QUICK,
          "TinyViT, [CLS]": vit.TINY_VIT_QUICK.replace(pool="cls"),
          "TinyViT, 4 registers": vit.TINY_VIT_QUICK.replace(reg_tokens=4)}
JIGSAW_SIDE, JIGSAW_PATCH = 32, 4  # the jigsaw's images and pieces, the lab's TinyViT's images and patches
KEPT = {"ViT-B/16": vit.VIT_B_16, "ViT-Ti/16": vit.VIT_TI_16, "ViT-B/32": vit.VIT_B_32,
        "ViT-L/16": vit.VIT_L_16}


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
# The experiments: each the page's teaching cell, run again with its seeds.
# ---------------------------------------------------------------------------


def our_vit_b16() -> dict:
    """Our ViT-B/16 on the meta device (shapes only): its ``"trace"``, ``(step, shape)`` after each
    step of one image, and its ``"parameters"``."""
    config = vit.VIT_B_16
    with torch.device("meta"):
        model = vit.ViT(config)
        traced = model.trace(torch.empty(1, config.in_chans, config.img_size, config.img_size))
    return {"trace": traced, "parameters": geometry.parameter_count(model)}


def timm_counts() -> dict[str, int]:
    """The parameters of timm's model of each standard size, by name (``"ViT-B/16"``)."""
    return {name: geometry.parameter_count(meta_timm(vit.TIMM_NAMES[name])) for name in vit.STANDARD}


def timm_counted_macs() -> int:
    """The multiply-adds PyTorch's FLOP counter finds in timm's ViT-B/16 on one 224-pixel image."""
    return cost.torch_counted_macs(meta_timm("vit_base_patch16_224"), torch.empty(1, 3, 224, 224, device="meta"))


def timm_differences() -> dict[str, float]:
    """The largest logit difference between timm's ``VisionTransformer`` and ours with its weights, by
    configuration of :data:`CHECKS`."""
    from timm.models.vision_transformer import VisionTransformer

    differences = {}
    for name, cfg in CHECKS.items():
        torch.manual_seed(0)
        reference = VisionTransformer(**vit.timm_kwargs(cfg)).eval()
        ours = vit.from_timm(reference)
        images = patches.power_law_images(2, cfg.img_size, seed=1)
        with torch.no_grad():
            differences[name] = (ours(images) - reference(images)).abs().max().item()
    return differences


def two_ways() -> dict[str, float]:
    """ViT-B/16's patch embedding as a matrix and as a convolution: how far apart in ``"float32"`` and
    ``"float64"``, and the ``"largest output"``."""
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 768, kernel_size=16, stride=16)
    image = patches.power_law_images(1, 224, seed=0)
    with torch.no_grad():
        as_matrix = patches.embed_linear(image, conv.weight, conv.bias)
        as_conv = patches.embed_conv(image, conv.weight, conv.bias)
        float32 = (as_matrix - as_conv).abs().max().item()
        exact = [f(image.double(), conv.weight.double(), conv.bias.double())
                 for f in (patches.embed_linear, patches.embed_conv)]
    return {"float32": float32, "float64": (exact[0] - exact[1]).abs().max().item(),
            "largest output": as_conv.abs().max().item()}


def jigsaw_changes() -> dict:
    """The jigsaw on an untrained ViT of the lab's TinyViT shape, without and with a position table:
    the number of ``"images"``, the largest logit change ``"without"`` and ``"with"`` positions,
    ``"equivariance"`` (how far the shuffled image's output tokens are from the shuffled output tokens),
    the ``"logit scale"`` and the ``"position std"`` of the fresh table."""
    small = patches.power_law_images(16, JIGSAW_SIDE, seed=2)
    order = torch.randperm((JIGSAW_SIDE // JIGSAW_PATCH) ** 2, generator=torch.Generator().manual_seed(3))
    shuffled = patches.jigsaw(small, JIGSAW_PATCH, order)
    no_positions = vit.TINY_VIT.replace(pool="mean", class_token=False, pos_embed=False)
    torch.manual_seed(0)
    without = vit.ViT(no_positions).eval()
    with_positions = vit.ViT(no_positions.replace(pos_embed=True)).eval()
    with_positions.load_state_dict(without.state_dict(), strict=False)
    with torch.no_grad():
        change_without = (without(shuffled) - without(small)).abs().max().item()
        change_with = (with_positions(shuffled) - with_positions(small)).abs().max().item()
        tokens, _ = without.encode(small)
        tokens_shuffled, _ = without.encode(shuffled)
        scale = with_positions(small).abs().max().item()
    return {"images": small.shape[0], "without": change_without, "with": change_with,
            "equivariance": (tokens_shuffled - tokens[:, order]).abs().max().item(),
            "logit scale": scale, "position std": with_positions.pos_embed.std().item()}


def reconstruction_errors() -> dict:
    """Relative errors of test patches rebuilt through the pseudoinverse of ViT-Ti/16-shaped embeddings,
    ``"random"`` and ``"best linear"``, and the number of ``"patches"``."""
    fit_images = patches.power_law_images(12, 224, seed=10)
    test_images = patches.power_law_images(12, 224, seed=11)

    def flat(images):
        return geometry.patchify(images, 16).reshape(-1, 768).double().numpy()

    torch.manual_seed(0)
    random_E = (torch.nn.Conv2d(3, 192, 16, stride=16).weight.detach()
                .reshape(192, 768).double().numpy())
    best_E = patches.best_linear_basis(flat(fit_images), 192)
    return {"random": patches.pinv_reconstruction_error(flat(test_images), random_E),
            "best linear": patches.pinv_reconstruction_error(flat(test_images), best_E),
            "patches": flat(test_images).shape[0]}


def smooth_tables() -> dict[str, torch.Tensor]:
    """ViT-B/16's smooth position table (a zero [CLS] row and a 2-D sine and cosine table), ``"224"``,
    and resized to 384 pixels, ``"384"``."""
    from timm.layers import build_sincos2d_pos_embed

    table_224 = torch.cat([torch.zeros(1, 1, 768), build_sincos2d_pos_embed([14, 14], dim=768)[None]],
                          dim=1)
    return {"224": table_224,
            "384": positions.resize_position_table(table_224, old_grid=14, new_grid=24)}


def resize_difference(tables: dict[str, torch.Tensor]) -> float:
    """The largest difference between our resize and timm's bilinear ``resample_abs_pos_embed``, on the
    smooth table and on a random one."""
    from timm.layers import resample_abs_pos_embed

    def library(table):
        return resample_abs_pos_embed(table, (24, 24), (14, 14), num_prefix_tokens=1,
                                      interpolation="bilinear")

    random_table = torch.randn(1, 197, 768, generator=torch.Generator().manual_seed(0))
    return max((tables["384"] - library(tables["224"])).abs().max().item(),
               (positions.resize_position_table(random_table, 14, 24) - library(random_table))
               .abs().max().item())


def offset_spreads() -> dict[str, float]:
    """How much one query and one key, placed at every cell of a 14 x 14 grid, score differently among
    pairs with the same offset: with ``"2-D RoPE"`` and with a fresh ``"absolute table"``."""
    grid_rows, grid_cols = geometry.grid_coordinates((14, 14)).T
    generator = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 64, dtype=torch.float64, generator=generator)
    same_q, same_k = q.expand(196, 64), k.expand(196, 64)
    rope = positions.rope_scores(same_q, same_k, grid_rows, grid_cols)
    learned = 0.02 * torch.randn(196, 64, dtype=torch.float64, generator=generator)
    absolute = (same_q + learned) @ (same_k + learned).T
    return {"2-D RoPE": positions.spread_by_offset(rope, grid_rows, grid_cols),
            "absolute table": positions.spread_by_offset(absolute, grid_rows, grid_cols)}


def hand_example() -> dict:
    """The 4 x 4 worked example: the bar's ``"weights"`` (5,), [CLS] first, and P(vertical) of the
    ``"bar"``, its ``"jigsaw"`` and either without positions; the checkerboard's ``"lost"`` (4,), one
    per patch, and whether its tokens are a uniform grey's (``"grey tokens"``)."""
    bar = handvit.vertical_bar()
    jig = handvit.swap_columns_of_patches(bar)
    board = handvit.checkerboard()
    grey = handvit.forward(np.full((4, 4), 0.5))["tokens"]
    return {"weights": handvit.forward(bar)["weights"],
            "bar": handvit.forward(bar)["probs"][0],
            "jigsaw": handvit.forward(jig)["probs"][0],
            "bar, no positions": handvit.forward(bar, positions=False)["probs"][0],
            "jigsaw, no positions": handvit.forward(jig, positions=False)["probs"][0],
            "lost": handvit.lost_per_patch(board),
            "grey tokens": bool(np.allclose(handvit.forward(board)["tokens"], grey))}


# ---------------------------------------------------------------------------
# The evidence, section by section.
# ---------------------------------------------------------------------------


def _image_as_sentence(found: Evidence) -> None:
    config = vit.VIT_B_16
    for name, value in (("image_side", config.img_size), ("patch_side", config.patch_size),
                        ("tokens_b16", config.num_patches), ("grid_b16", config.grid_size),
                        ("patch_numbers_b16", config.patch_dim), ("width_b16", config.embed_dim),
                        ("sequence_b16", config.num_tokens)):
        found.number(f"patches_{name}", value)
    found.claim("a flattened ViT-B/16 patch is exactly as long as its token",
                config.patch_dim == config.embed_dim)


def _vit_b16(found: Evidence, ours: dict, timm_count: int) -> None:
    """ViT-B/16's parameters by part. ``ours``: :func:`our_vit_b16`; ``timm_count``: the parameters
    of timm's model."""
    config = vit.VIT_B_16
    if ours["trace"] != [(step, shape) for step, shape, _ in cost.shape_table(config)]:
        raise ValueError("the shape table no longer follows the tensor through ViT-B/16")
    counts = cost.parameter_counts(config)
    found.claim("ViT-B/16's counted parameters are our model's and timm's",
                counts["total"] == ours["parameters"] == timm_count)
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


def _standard_sizes(found: Evidence, timm_counts: dict[str, int]) -> None:
    """``timm_counts``: :func:`timm_counts`."""
    counted = {name: cost.parameter_counts(cfg)["total"] for name, cfg in vit.STANDARD.items()}
    if set(timm_counts) != set(counted):
        raise ValueError(f"timm's counts must name the standard sizes {sorted(counted)}, got {sorted(timm_counts)}")
    found.claim("every standard size's counted parameters are timm's",
                all(counted[name] == timm_counts[name] for name in counted))
    found.number("patches_params_l16_m", counted["ViT-L/16"] / 1e6)
    found.number("patches_params_l_over_b", counted["ViT-L/16"] / counted["ViT-B/16"])


def _against_timm(found: Evidence, differences: dict[str, float], experiments_vit) -> None:
    """``differences``: :func:`timm_differences`; ``experiments_vit``: the ViT the quick profile's
    experiments train."""
    largest = max(differences.values())
    found.rounding("patches_timm_max_difference", largest, 1e-5, why=TWO_IMPLEMENTATIONS)
    found.claim("our ViT's logits are timm's in every configuration", largest == 0.0)
    tiny = vit.TINY_VIT_QUICK
    found.claim("the quick profile's experiments train the first TinyViT checked",
                getattr(experiments_vit, "config", None) == tiny
                and models.parameter_count(experiments_vit) == cost.parameter_counts(tiny)["total"])
    found.number("patches_params_tiny", models.parameter_count(experiments_vit))
    for name, value in (("patch", tiny.patch_size), ("width", tiny.embed_dim), ("depth", tiny.depth),
                        ("tokens", tiny.num_patches)):
        found.number(f"patches_tiny_{name}", value)


def _two_ways(found: Evidence, apart: dict[str, float]) -> None:
    """``apart``: :func:`two_ways`; each rounding beyond its bound is a ``ValueError``."""
    found.rounding("patches_two_ways_f32", apart["float32"], 10 * lit.LAB_TWO_WAYS.value,
                   why="float32 rounding of two summation orders: a bound, not a value")
    found.rounding("patches_two_ways_f64", apart["float64"], 1e-12,
                   why="float64 rounding of two summation orders: a bound, not a value")
    found.number("patches_two_ways_largest_output", apart["largest output"], rel=1e-4,
                 why="float32 convolution: another summation order moves its last digits")
    found.number("patches_lit_two_ways", lit.LAB_TWO_WAYS.value)
    found.number("patches_params_embed_tiny", cost.parameter_counts(vit.TINY_VIT_QUICK)["patch embedding"])


def _jigsaw(found: Evidence, changes: dict) -> None:
    """``changes``: :func:`jigsaw_changes`."""
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


def _kept(found: Evidence) -> None:
    """How many directions of its patch a token can keep, ``min(d, P^2 C)``, by model."""
    share = {}
    for name, cfg in KEPT.items():
        key = name.replace("ViT-", "").replace("/", "_").lower()
        kept = min(cfg.embed_dim, cfg.patch_dim)
        share[name] = kept / cfg.patch_dim
        found.number(f"patches_kept_{key}", kept)
        found.number(f"patches_patchdim_{key}", cfg.patch_dim)
        found.number(f"patches_kept_share_{key}", 100 * kept / cfg.patch_dim)
    found.claim("ViT-Ti/16 and ViT-B/32 each keep a quarter of a patch",
                share["ViT-Ti/16"] == share["ViT-B/32"] == 0.25)


def _reconstruction(found: Evidence, errors: dict) -> None:
    """``errors``: :func:`reconstruction_errors`."""
    ti = vit.VIT_TI_16
    # A random d-dimensional row space keeps d / P^2 C of the energy on average, whatever the patches.
    predicted_random = np.sqrt(1 - ti.embed_dim / ti.patch_dim)
    found.number("patches_recon_random", errors["random"], rel=1e-6, why=LINEAR_ALGEBRA)
    found.number("patches_recon_best", errors["best linear"], rel=1e-6, why=LINEAR_ALGEBRA)
    found.number("patches_recon_random_predicted", predicted_random)
    found.number("patches_recon_patches", errors["patches"])
    found.number("patches_lit_recon_ti16", lit.LAB_PINV_ERROR_TI16.value)
    found.claim("the random embedding's error is near sqrt(1 - d / P^2 C)",
                abs(errors["random"] - predicted_random) < 0.02)
    found.claim("the best linear embedding loses far less than a random one",
                errors["best linear"] < errors["random"] / 2)
    found.claim("the lab's pretrained embedding loses less than a random one",
                lit.LAB_PINV_ERROR_TI16.value < errors["random"])


def _patch_sides(found: Evidence) -> None:
    # The patch sides of the ViT paper's Table 5 models, read from their names (ViT-L/16 -> 16).
    table5_sides = sorted({int(model.split("/")[1]) for model, _ in lit.VIT_TABLE5})
    found.number("patches_common_side_small", table5_sides[0])
    found.number("patches_common_side_b16", vit.VIT_B_16.patch_size)
    found.claim("the two smallest patch sides of Table 5 are the slides' near-universal ones",
                table5_sides[:2] == [side.value for side in lit.LAB_COMMON_PATCH_SIDES])


def _cost_table(found: Evidence) -> None:
    """ViT-B's multiply-adds at the slides' three settings, by ``(image, patch)``."""
    rows = {(r.image, r.patch): r for r in cost.cost_table(d=768, depth=12, settings=list(lit.LAB_COST_TABLE))}
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
    crossover = cost.attention_crossover_tokens(768)
    found.number("patches_crossover_tokens", crossover)
    found.claim("the two terms are equal at N = 6d, the slides' crossover",
                crossover == 6 * 768 == lit.LAB_CROSSOVER_TOKENS.value
                and np.equal(*cost.block_macs(int(crossover), 768)))
    found.number("patches_crossover_image_side", 16 * np.sqrt(crossover))


def _forward_pass(found: Evidence, timm_macs: int) -> None:
    """The whole forward pass of ViT-B/16, and ViT-L/16 at 224 and 384 pixels; ``timm_macs``:
    :func:`timm_counted_macs`."""
    forward_b16 = cost.forward_macs(vit.VIT_B_16)
    found.claim("our multiply-adds of ViT-B/16 are what PyTorch's FLOP counter finds in timm's",
                forward_b16["total"] == timm_macs)
    found.number("patches_forward_b16_g", forward_b16["total"] / 1e9)
    found.number("patches_forward_b16_gflops", 2 * forward_b16["total"] / 1e9)
    found.number("patches_lesson_b16_gflops", lit.LESSON_VIT_B16_GFLOPS.value)
    # The lesson's "17.6 GFLOPs" is this multiply-add count, rounded; twice it is not.
    found.claim("the lesson's GFLOPs of ViT-B/16 are our multiply-adds, rounded",
                round(forward_b16["total"] / 1e9, 1) == lit.LESSON_VIT_B16_GFLOPS.value)
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


def measure_times(seconds: dict, macs: dict) -> Evidence:
    """The timings of one ViT-B block at the settings of :data:`TIMED`, never compared.

    ``seconds``: setting -> the seconds of each timed run, ``(repeats,)``;
    ``macs``: setting -> the multiply-adds of the timed model.
    """
    if set(seconds) != set(TIMED) or set(macs) != set(TIMED):
        raise ValueError(f"timings need the settings {TIMED}, got {sorted(seconds)} and {sorted(macs)}")
    fastest = {label: np.min(seconds[label]) for label in TIMED}
    found = Evidence("patches")
    for label in TIMED:
        key = label.replace(" / ", "_")
        found.timing(f"patches_time_ms_{key}", 1000 * fastest[label], why=TIMING)
        found.timing(f"patches_time_gmacs_per_s_{key}", macs[label] / fastest[label] / 1e9, why=TIMING)
        found.number(f"patches_time_macs_g_{key}", macs[label] / 1e9)
    found.timing("patches_time_ratio_measured", fastest["448 / 8"] / fastest["224 / 16"], why=TIMING)
    found.number("patches_time_ratio_predicted", macs["448 / 8"] / macs["224 / 16"])
    found.claim("more predicted work took more time, in the table's order",
                fastest["224 / 16"] < fastest["224 / 8"] < fastest["448 / 8"])
    return found


def _resize(found: Evidence, tables: dict[str, torch.Tensor], difference: float) -> None:
    """``tables``: :func:`smooth_tables`; ``difference``: :func:`resize_difference`."""
    found.rounding("patches_resize_vs_timm", difference, 1e-5, why=TWO_IMPLEMENTATIONS)
    found.claim("the resize keeps the [CLS] row as it is", torch.equal(tables["384"][:, :1], tables["224"][:, :1]))
    found.number("patches_resize_rows_old", tables["224"].shape[1])
    found.number("patches_resize_rows_new", tables["384"].shape[1])


def _four_weights(found: Evidence) -> None:
    """New row 6, column 10 of the 14 -> 24 resize, the slides' worked example."""
    (row, col), (old, new) = lit.LAB_RESIZE_CELL, lit.LAB_RESIZE_GRIDS
    if ((row, col), (old, new)) != ((6, 10), (14, 24)):
        raise ValueError("the slides' worked resize is no longer new row 6, column 10 of 14 -> 24")
    (r0, r1), (c0, c1), weights = positions.four_weights(row, col, old_grid=old, new_grid=new)
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


def _rope(found: Evidence, spreads: dict[str, float]) -> None:
    """``spreads``: :func:`offset_spreads`."""
    found.rounding("patches_rope_spread", spreads["2-D RoPE"], 1e-12,
                   why="float64 rounding: a bound, not a value")
    found.number("patches_absolute_spread", spreads["absolute table"], rel=1e-6,
                 why="float64 math through PyTorch's kernels: another summation order moves it by about "
                     "1e-13 relative")
    found.claim("an absolute table scores pairs at one offset differently", spreads["absolute table"] > 1e-3)


def _registers_and_windows(found: Evidence) -> None:
    """Four registers on ViT-B/16, and Swin-T's first stage with global and windowed attention."""
    b16 = vit.VIT_B_16
    with_registers = b16.replace(reg_tokens=4)
    extra = cost.parameter_counts(with_registers)["total"] - cost.parameter_counts(b16)["total"]
    # Registers as Darcet et al. add them (and timm's reg4 models): four vectors, no position rows.
    # Ours, like timm's plain VisionTransformer asked for registers, also gives them rows.
    register_vectors = cost.parameter_counts(with_registers)["register tokens"]
    found.claim("four registers are four vectors, and ours add as many position rows",
                register_vectors == 4 * b16.embed_dim and extra == 2 * register_vectors)
    found.number("patches_registers_vectors", register_vectors)
    found.number("patches_registers_params", extra)
    found.number("patches_registers_macs_pct",
                 100 * (cost.forward_macs(with_registers)["total"] / cost.forward_macs(b16)["total"] - 1))
    # Swin-T's first stage (Liu et al. 2021): 4-pixel patches of a 224-pixel image, width C, M x M windows
    side = b16.img_size // lit.SWIN_PATCH_SIDE.value
    width, window = lit.SWIN_T_CHANNELS.value, lit.SWIN_WINDOW.value
    global_macs = cost.global_attention_macs(side**2, d=width)
    window_macs = cost.window_attention_macs(side, window=window, d=width)
    projections = cost.projection_macs(side**2, width)  # the same with or without windows
    for name, value in (("grid", side), ("tokens", side**2), ("width", width),
                        ("window", window), ("window_tokens", window**2),
                        ("global_g", global_macs / 1e9), ("windows_g", window_macs / 1e9),
                        ("ratio", global_macs / window_macs), ("projections_g", projections / 1e9),
                        ("layer_ratio", (projections + global_macs) / (projections + window_macs))):
        found.number(f"patches_swin_{name}", value)
    found.claim("windows divide attention's cost by the number of tokens over the window's",
                global_macs / window_macs == side**2 / window**2)
    for name in ("SWIN_L_TOP1", "SWIN_L_COCO_BOX_AP", "DEIT_B_TOP1", "DEIT_B_DISTILLED_TOP1"):
        found.number(f"patches_lit_{name.lower()}", getattr(lit, name).value)
    found.claim("DeiT-B's distillation token raised its top-1",
                lit.DEIT_B_DISTILLED_TOP1.value > lit.DEIT_B_TOP1.value)


def _by_hand(found: Evidence, hand: dict) -> None:
    """``hand``: :func:`hand_example`."""
    weights = dict(zip(["[CLS]"] + [f"patch {k}" for k in range(4)], hand["weights"]))
    found.number("patches_hand_weight_cls", weights["[CLS]"])
    found.number("patches_hand_weight_bar_top", weights["patch 1"])
    found.number("patches_hand_weight_bar_bottom", weights["patch 3"])
    found.number("patches_hand_vertical", hand["bar"])
    found.claim("the head says vertical for the bar", hand["bar"] > 0.5)
    # brighter and later patches win
    found.claim("[CLS] weighs the bar's lower patch most, then its upper one",
                weights["patch 3"] > weights["patch 1"] > weights["patch 0"])
    # "the probabilities differ from the slides'": our own weights, other numbers
    ours = {"bar": hand["bar"], "jigsaw": hand["jigsaw"], "no positions": hand["bar, no positions"]}
    found.claim("our probabilities are not the slides'",
                all(round(ours[name], 3) != slide.value for name, slide in lit.LAB_HAND_VERTICAL.items()))
    found.number("patches_hand_jigsaw", hand["jigsaw"])
    found.number("patches_hand_plain", hand["bar, no positions"])
    found.number("patches_hand_lost", float(np.max(hand["lost"])))
    found.claim("the jigsaw changes the answer, and without positions it does not",
                hand["jigsaw"] != hand["bar"]
                and np.isclose(hand["bar, no positions"], hand["jigsaw, no positions"], rtol=0, atol=1e-15))
    found.claim("each checkerboard patch loses a part of length one, leaving a uniform grey's tokens",
                np.allclose(hand["lost"], 1.0) and hand["grey tokens"])


def measure(budget) -> Evidence:
    """The chapter's evidence, every timing excepted (:func:`measure_times`).

    ``budget``: the quick profile's, whose ViT the chapter's experiments train.
    """
    found = Evidence("patches")
    _image_as_sentence(found)
    counts = timm_counts()
    _vit_b16(found, our_vit_b16(), counts["ViT-B/16"])
    _standard_sizes(found, counts)
    with torch.device("meta"):  # shapes only: no weights drawn
        experiments_vit = models.build(budget.vit)
    _against_timm(found, timm_differences(), experiments_vit)
    _two_ways(found, two_ways())
    _jigsaw(found, jigsaw_changes())
    _kept(found)
    _reconstruction(found, reconstruction_errors())
    _patch_sides(found)
    _cost_table(found)
    _forward_pass(found, timm_counted_macs())
    tables = smooth_tables()
    _resize(found, tables, resize_difference(tables))
    _four_weights(found)
    _rope(found, offset_spreads())
    _registers_and_windows(found)
    _by_hand(found, hand_example())
    return found
