"""The patches chapter's evidence (``vitbias.chapters.patches``): exact counts, and claims on made-up
measurements."""

import numpy as np
import pytest
import torch

from vitbias import cost, handvit, patches, positions, profile, vit
from vitbias import literature as lit
from vitbias.chapters import patches as chapter
from vitbias.evidence import Evidence


def found():
    return Evidence("patches")


def changes(**moved):
    """A jigsaw that behaves as the chapter says, or as ``moved`` says: its changes and :func:`jigsaw_details`."""
    return {"images": 16, "without": 1e-7, "with": 5e-3, "equivariance": 1e-7, "logit scale": 0.5,
            "position std": 0.02, **moved}


def bar_out(weights=(0.1, 0.15, 0.2, 0.15, 0.4), vertical=0.6):
    """The bar's forward pass as the chapter reads it: [CLS]'s weights, [CLS] first, then patches 0 to 3
    (the bar in 1 and 3), and P(vertical)."""
    return {"weights": np.array(weights), "probs": np.array([vertical, 1 - vertical])}


def variants(**moved):
    """The worked example's variants as the chapter says, or as ``moved`` says."""
    grey = np.full((4, 3), 0.5)
    return {"results": {"bar": 0.6, "jigsaw": 0.55, "bar, no positions": 0.5, "jigsaw, no positions": 0.5},
            "lost": np.ones(4), "tokens": grey, "grey": grey, **moved}


class Shaped(torch.nn.Module):
    """A made-up model: a configuration and as many parameters as told, none of them drawn."""

    def __init__(self, config, parameters):
        super().__init__()
        self.config = config
        self.weight = torch.nn.Parameter(torch.empty(parameters))


def b16(parameters=86_567_656):
    """Our ViT-B/16's trace and parameters, and timm's, as the page finds them, without building them."""
    steps = cost.shape_table(vit.VIT_B_16)
    return {"traced": [(step, shape) for step, shape, _ in steps], "ours": parameters, "timm": 86_567_656}


def cost_rows():
    """ViT-B's cost table at the slides' settings, as the page computes it."""
    return cost.cost_table(d=768, depth=12, settings=list(lit.LAB_COST_TABLE))


def kept_rows(names=("ViT-B/16", "ViT-Ti/16", "ViT-B/32", "ViT-L/16")):
    """The page's rows ``(model, d, P^2 C, directions kept)``."""
    configs = {"ViT-B/16": vit.VIT_B_16, "ViT-Ti/16": vit.VIT_TI_16, "ViT-B/32": vit.VIT_B_32,
               "ViT-L/16": vit.VIT_L_16}
    return [(name, configs[name].embed_dim, configs[name].patch_dim,
             min(configs[name].embed_dim, configs[name].patch_dim)) for name in names]


def two_ways(moved=0.0):
    """A small patch embedding computed both ways, the matrix's outputs moved by ``moved``."""
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 8, kernel_size=4, stride=4)
    image = torch.rand(1, 3, 8, 8)
    with torch.no_grad():
        as_matrix = patches.embed_linear(image, conv.weight, conv.bias) + moved
        as_conv = patches.embed_conv(image, conv.weight, conv.bias)
    return {"image": image, "conv": conv, "as_matrix": as_matrix, "as_conv": as_conv}


def registers():
    with_registers = vit.VIT_B_16.replace(reg_tokens=4)
    extra = cost.parameter_counts(with_registers)["total"] - cost.parameter_counts(vit.VIT_B_16)["total"]
    return {"with_registers": with_registers, "extra": extra,
            "extra_macs": cost.forward_macs(with_registers)["total"] / cost.forward_macs(vit.VIT_B_16)["total"] - 1}


def swin(window=7):
    """Swin-T's first stage, with windows of side ``window``."""
    return {"side": 56, "width": 96, "window": window, "global_macs": cost.global_attention_macs(56**2, d=96),
            "window_macs": cost.window_attention_macs(56, window=window, d=96)}


def page(**moved):
    """What the page's cells hand :func:`measure`, made up or computed here, or as ``moved`` says."""
    counted = {name: cost.parameter_counts(cfg)["total"] for name, cfg in vit.STANDARD.items()}
    forward = cost.forward_macs(vit.VIT_B_16)
    tiny = vit.TINY_VIT_QUICK
    rows, cols, weights = positions.four_weights(6, 10, old_grid=14, new_grid=24)
    old, new = torch.zeros(1, 197, 8), torch.zeros(1, 577, 8)
    checks = {"TinyViT": tiny, "TinyViT, [CLS]": tiny.replace(pool="cls")}
    return {"b16": b16(), "timm_counts": counted, "checks": checks,
            "differences": {"TinyViT": 0.0, "TinyViT, [CLS]": 0.0}, "embedding": two_ways(), "jigsaw": changes(),
            "kept": kept_rows(), "errors": {"random": 0.86, "best linear": 0.25}, "patch_count": 2352,
            "cost_rows": cost_rows(), "crossover": cost.attention_crossover_tokens(768), "forward_b16": forward,
            "timm_macs": forward["total"], "resize": {"table_old": old, "table_new": new, "difference": 0.0},
            "cell": {"rows": rows, "cols": cols, "weights": weights},
            "spreads": {"2-D RoPE": 1e-15, "absolute table": 0.05}, "registers": registers(), "swin": swin(),
            "hand_out": bar_out(), "hand": variants(), **moved}


def test_the_chapter_measured_from_page_results_that_back_its_prose_holds_every_claim():
    evidence = chapter.measure(profile.budget("quick"), **page())
    assert len(evidence.claims) == 33 and all(evidence.claims.values())
    assert evidence["patches_tokens_b16"] == 196 and evidence["patches_recon_patches"] == 2352


def test_the_chapter_measured_from_a_jigsaw_that_ignores_positions_fails_that_claim():
    evidence = chapter.measure(profile.budget("quick"), **page(jigsaw=changes(**{"with": 1e-6})))
    failed = [name for name, holds in evidence.claims.items() if not holds]
    assert failed == ["positions move the jigsaw's logits by orders of magnitude more than rounding",
                      "with positions, the jigsaw moves the logits as much as the lab's, within ten times"]


def test_the_chapter_measured_from_a_two_ways_difference_beyond_rounding_is_refused():
    with pytest.raises(ValueError, match="patches_two_ways_f32"):
        chapter.measure(profile.budget("quick"), **page(embedding=two_ways(moved=1e-3)))


def test_two_ways_of_embedding_that_agree_glue_their_rounding_and_largest_output():
    evidence = found()
    ways = two_ways()
    chapter.embedding_two_ways(evidence, **ways)
    assert 0 <= evidence["patches_two_ways_f32"] <= 1e-5
    assert evidence["patches_two_ways_f64"] <= 1e-12
    assert evidence["patches_two_ways_largest_output"] == pytest.approx(ways["as_conv"].abs().max().item())


def test_a_model_said_to_keep_more_than_min_d_p2c_directions_is_refused():
    name, d, D, _ = kept_rows(["ViT-Ti/16"])[0]
    with pytest.raises(ValueError, match="min"):
        chapter.kept_directions(found(), [(name, d, D, D)])


def test_models_keeping_a_third_of_a_patch_fail_the_quarter_claim():
    evidence = found()
    chapter.kept_directions(evidence, kept_rows())
    assert evidence["patches_kept_share_b_32"] == 25.0 and all(evidence.claims.values())
    evidence = found()
    chapter.kept_directions(evidence, [("ViT-Ti/16", 256, 768, 256), ("ViT-B/32", 256, 768, 256)])
    assert not evidence.claims["ViT-Ti/16 and ViT-B/32 each keep a quarter of a patch"]


def test_a_cost_table_without_the_slides_settings_is_refused():
    with pytest.raises(ValueError, match="slides' settings"):
        chapter.encoder_cost_table(found(), cost_rows()[:2], 6 * 768)


def test_a_resize_that_moves_the_cls_row_fails_its_claim():
    old = torch.zeros(1, 197, 8)
    new = torch.zeros(1, 577, 8)
    evidence = found()
    chapter.position_resize(evidence, old, new, 0.0)
    assert evidence.claims["the resize keeps the [CLS] row as it is"] and evidence["patches_resize_rows_new"] == 577
    new[0, 0] = 1.0
    evidence = found()
    chapter.position_resize(evidence, old, new, 0.0)
    assert not evidence.claims["the resize keeps the [CLS] row as it is"]


def test_our_resize_of_a_smooth_table_is_timms_and_a_table_off_its_grid_is_refused():
    old = torch.randn(1, 1 + 4**2, 6, generator=torch.Generator().manual_seed(1))
    assert chapter.resize_difference(old, positions.resize_position_table(old, 4, 6)) < 1e-5
    with pytest.raises(ValueError, match="square grid"):
        chapter.resize_difference(torch.zeros(1, 18, 6), torch.zeros(1, 37, 6))


def test_a_rope_spread_beyond_float64_rounding_is_refused_and_an_even_table_fails_its_claim():
    with pytest.raises(ValueError, match="patches_rope_spread"):
        chapter.rope_offsets(found(), {"2-D RoPE": 1e-6, "absolute table": 0.05})
    evidence = found()
    chapter.rope_offsets(evidence, {"2-D RoPE": 0.0, "absolute table": 1e-6})
    assert not evidence.claims["an absolute table scores pairs at one offset differently"]


def test_registers_and_windows_are_the_counts_of_the_cost_model():
    evidence = found()
    chapter.register_cost(evidence, **registers())
    chapter.swin_windows(evidence, **swin())
    assert evidence["patches_registers_vectors"] == 4 * 768 and evidence["patches_registers_params"] == 8 * 768
    assert evidence["patches_swin_ratio"] == pytest.approx(56**2 / 7**2)
    assert all(evidence.claims.values())
    evidence = found()
    chapter.swin_windows(evidence, **{**swin(), "window_macs": swin()["window_macs"] * 2})
    assert not evidence.claims["windows divide attention's cost by the number of tokens over the window's"]


def test_other_than_four_registers_are_refused():
    with pytest.raises(ValueError, match="four registers"):
        chapter.register_cost(found(), **{**registers(), "with_registers": vit.VIT_B_16.replace(reg_tokens=2)})


def test_the_jigsaws_details_find_its_equivariance_and_its_models_scale():
    torch.manual_seed(0)
    config = vit.TINY_VIT.replace(pool="mean", class_token=False, pos_embed=False, depth=1)
    without = vit.ViT(config).eval()
    with_positions = vit.ViT(config.replace(pos_embed=True)).eval()
    small = patches.power_law_images(2, 32, seed=2)
    order = torch.randperm(64, generator=torch.Generator().manual_seed(3))
    details = chapter.jigsaw_details(small, patches.jigsaw(small, 4, order), order, without, with_positions)
    assert details["images"] == 2 and details["equivariance"] < 1e-5 and details["logit scale"] > 0
    with pytest.raises(ValueError, match="jigsaw has its image's shape"):
        chapter.jigsaw_details(small, small[:1], order, without, with_positions)


def test_a_markdown_table_has_a_header_a_rule_and_one_line_per_row():
    assert chapter.markdown_table(["a", "b"], [(1, "x"), (2, "y")]) == (
        "| a | b |\n| --- | --- |\n| 1 | x |\n| 2 | y |")
    assert chapter.table(["a"], [(1,)]).data == "| a |\n| --- |\n| 1 |"


def test_a_row_with_a_cell_too_few_is_refused():
    with pytest.raises(ValueError, match="one cell per column"):
        chapter.markdown_table(["a", "b"], [(1,)])


def test_vit_b16_has_its_published_parameter_count_by_part():
    evidence = found()
    chapter.vit_b16_parameters(evidence, **b16())
    assert evidence["patches_params_b16"] == 86_567_656
    assert evidence["patches_block_total"] == 12 * 768**2 + 13 * 768 == 7_087_872
    assert evidence["patches_params_blocks_b16"] == 12 * 7_087_872
    assert evidence["patches_params_positions_b16"] == 197 * 768
    assert evidence.entries["patches_params_b16.tol"] == {"rel": 1e-9, "abs": 0.0}
    assert all(evidence.claims.values())
    evidence = found()
    chapter.vit_b16_parameters(evidence, **b16(86_567_656 + 768))
    assert not evidence.claims["ViT-B/16's counted parameters are our model's and timm's"]


def test_a_trace_that_leaves_the_shape_table_is_refused():
    ours = b16()
    ours["traced"] = ours["traced"][:-1]
    with pytest.raises(ValueError, match="shape table"):
        chapter.vit_b16_parameters(found(), **ours)


def test_the_cost_table_is_the_cost_model_and_its_crossover_is_six_widths():
    evidence = found()
    chapter.encoder_cost_table(evidence, cost_rows(), cost.attention_crossover_tokens(768))
    N, d = 196, 768
    assert evidence["patches_cost_tokens_224_16"] == N
    assert evidence["patches_cost_total_224_16"] == pytest.approx(12 * (12 * N * d**2 + 2 * N**2 * d) / 1e9)
    assert evidence["patches_cost_double_res_attention"] == pytest.approx(16)
    assert evidence["patches_crossover_tokens"] == 6 * d
    assert all(evidence.claims.values()) and len(evidence.claims) == 4


def test_the_resize_of_new_row_6_column_10_weighs_four_old_cells_by_their_distances():
    evidence = found()
    rows, cols, weights = positions.four_weights(6, 10, old_grid=14, new_grid=24)
    chapter.resize_cell_weights(evidence, rows, cols, weights)
    row, col = 6.5 * 14 / 24 - 0.5, 10.5 * 14 / 24 - 0.5  # pixel centres aligned
    assert evidence["patches_resize_row_position"] == pytest.approx(row)
    assert (evidence["patches_resize_r0"], evidence["patches_resize_c0"]) == (3, 5)
    tr, tc = row - 3, col - 5
    assert evidence["patches_w00"] == pytest.approx((1 - tr) * (1 - tc))
    assert evidence["patches_w11"] == pytest.approx(tr * tc)
    assert evidence.claims["the new cell mixes the old rows and columns it lands between"]


def test_the_jigsaw_claims_hold_for_a_jigsaw_that_behaves_as_the_chapter_says():
    evidence = found()
    chapter.lab_tiny_vit(evidence)
    chapter.jigsaw_logits(evidence, changes())
    assert all(evidence.claims.values())
    assert evidence["patches_jigsaw_tokens"] == 64
    assert evidence.entries["patches_jigsaw_with.tol"]["rel"] == 0.01


def test_a_position_table_that_moves_the_logits_no_more_than_rounding_fails_its_claim():
    evidence = found()
    chapter.jigsaw_logits(evidence, changes(**{"with": 5e-6}))
    assert not evidence.claims["positions move the jigsaw's logits by orders of magnitude more than rounding"]
    assert not evidence.claims["with positions, the jigsaw moves the logits as much as the lab's, within ten times"]


def test_a_change_without_positions_beyond_rounding_fails_the_build():
    with pytest.raises(ValueError, match="rounding noise"):
        chapter.jigsaw_logits(found(), changes(without=1e-3))


def test_a_random_embedding_far_from_its_predicted_error_fails_its_claim():
    evidence = found()
    chapter.pinv_reconstruction(evidence, {"random": 0.86, "best linear": 0.25}, 2352)
    assert all(evidence.claims.values())
    evidence = found()
    chapter.pinv_reconstruction(evidence, {"random": 0.5, "best linear": 0.3}, 2352)
    assert not evidence.claims["the random embedding's error is near sqrt(1 - d / P^2 C)"]
    assert not evidence.claims["the best linear embedding loses far less than a random one"]
    assert evidence["patches_recon_random_predicted"] == pytest.approx(np.sqrt(0.75))


def test_a_logit_difference_from_timm_or_another_experiment_vit_fails_its_claim():
    tiny = vit.TINY_VIT_QUICK
    evidence = found()
    checks = {"one": tiny, "two": tiny.replace(pool="cls")}
    chapter.logits_against_timm(evidence, checks, {"one": 0.0, "two": 0.0}, Shaped(tiny, 214_218))
    assert all(evidence.claims.values()) and evidence["patches_params_tiny"] == 214_218
    evidence = found()
    chapter.logits_against_timm(evidence, checks, {"one": 0.0, "two": 1e-7},
                                Shaped(tiny.replace(embed_dim=96), 214_218))
    assert not any(evidence.claims.values())


def test_a_configuration_checked_without_its_difference_is_refused():
    with pytest.raises(ValueError, match="one difference per configuration"):
        chapter.logits_against_timm(found(), {"one": vit.TINY_VIT_QUICK, "two": vit.TINY_VIT}, {"one": 0.0},
                                    Shaped(vit.TINY_VIT_QUICK, 1))


def test_the_hand_example_backs_every_claim_of_its_prose():
    evidence = found()
    bar, board = handvit.vertical_bar(), handvit.checkerboard()
    jig = handvit.swap_columns_of_patches(bar)
    results = {name: handvit.forward(image, positions=with_positions)["probs"][0]
               for name, image, with_positions in (("bar", bar, True), ("jigsaw", jig, True),
                                                   ("bar, no positions", bar, False),
                                                   ("jigsaw, no positions", jig, False))}
    chapter.hand_bar(evidence, handvit.forward(bar))
    chapter.hand_variants(evidence, results, handvit.lost_per_patch(board), handvit.forward(board)["tokens"],
                          handvit.forward(np.full((4, 4), 0.5))["tokens"])
    assert len(evidence.claims) == 5 and all(evidence.claims.values())
    assert evidence["patches_hand_lost"] == pytest.approx(1.0)


def test_a_jigsaw_that_keeps_the_answer_or_probabilities_of_the_slides_fail_their_claims():
    evidence = found()
    slides = lit.LAB_HAND_VERTICAL["bar"].value
    chapter.hand_bar(evidence, bar_out(vertical=slides))
    chapter.hand_variants(evidence, **variants(results={"bar": slides, "jigsaw": slides, "bar, no positions": 0.5,
                                                        "jigsaw, no positions": 0.5}))
    assert not evidence.claims["the jigsaw changes the answer, and without positions it does not"]
    assert not evidence.claims["our probabilities are not the slides'"]
    assert not evidence.claims["the head says vertical for the bar"]
    evidence = found()
    chapter.hand_bar(evidence, bar_out(weights=(0.1, 0.15, 0.4, 0.15, 0.2)))
    assert not evidence.claims["[CLS] weighs the bar's lower patch most, then its upper one"]
    assert evidence["patches_hand_weight_bar_top"] == 0.4


def test_a_checkerboard_whose_tokens_differ_from_grey_fails_its_claim():
    evidence = found()
    chapter.hand_variants(evidence, **variants(tokens=np.full((4, 3), 0.6)))
    assert not evidence.claims["each checkerboard patch loses a part of length one, leaving a uniform grey's tokens"]
    assert evidence.claims["our probabilities are not the slides'"]


def test_attention_weights_for_too_few_tokens_are_refused():
    with pytest.raises(ValueError, match="one attention weight per token"):
        chapter.hand_bar(found(), bar_out(weights=(0.5, 0.5)))


def test_timings_are_glued_unchecked_and_their_ranking_is_the_claim():
    macs = {"224 / 16": 1.5e9, "224 / 8": 6e9, "448 / 8": 30e9}
    seconds = {"224 / 16": np.array([0.02, 0.01]), "224 / 8": np.array([0.05]), "448 / 8": np.array([0.4])}
    times = Evidence("patches")
    chapter.timings(times, seconds, macs)
    assert times["patches_time_ms_224_16"] == pytest.approx(10.0)
    assert times["patches_time_gmacs_per_s_224_16"] == pytest.approx(150.0)
    assert times.entries["patches_time_ms_224_16.tol"]["unchecked"]
    assert "wall-clock" in times.entries["patches_time_ratio_measured.tol"]["why"]
    assert times["patches_time_ratio_predicted"] == 20.0
    assert times.claims["more predicted work took more time, in the table's order"]
    seconds["224 / 8"] = np.array([0.5])
    slower = Evidence("patches")
    chapter.timings(slower, seconds, macs)
    assert not slower.claims["more predicted work took more time, in the table's order"]


def test_timings_missing_a_setting_are_refused():
    with pytest.raises(ValueError, match="timings need the settings"):
        chapter.timings(Evidence("patches"), {"224 / 16": [0.01]}, {"224 / 16": 1e9})


def test_a_standard_size_counted_otherwise_than_timm_fails_its_claim():
    counted = {name: cost.parameter_counts(cfg)["total"] for name, cfg in vit.STANDARD.items()}
    evidence = found()
    chapter.standard_size_parameters(evidence, counted)
    assert evidence.claims["every standard size's counted parameters are timm's"]
    assert evidence["patches_params_l_over_b"] == pytest.approx(counted["ViT-L/16"] / 86_567_656)
    evidence = found()
    chapter.standard_size_parameters(evidence, {**counted, "ViT-L/16": counted["ViT-L/16"] + 1})
    assert not evidence.claims["every standard size's counted parameters are timm's"]


def test_timm_counts_missing_a_standard_size_are_refused():
    with pytest.raises(ValueError, match="standard sizes"):
        chapter.standard_size_parameters(found(), {"ViT-B/16": 86_567_656})


def test_a_forward_pass_counted_otherwise_than_pytorch_fails_its_claim():
    forward = cost.forward_macs(vit.VIT_B_16)["total"]
    evidence = found()
    chapter.forward_pass_b16(evidence, cost.forward_macs(vit.VIT_B_16), forward)
    chapter.vit_l16_resolutions(evidence)
    assert all(evidence.claims.values())
    assert evidence["patches_l16_attention_ratio"] == pytest.approx((576 / 196) ** 2)
    evidence = found()
    chapter.forward_pass_b16(evidence, cost.forward_macs(vit.VIT_B_16), 2 * forward)
    assert not evidence.claims["our multiply-adds of ViT-B/16 are what PyTorch's FLOP counter finds in timm's"]
