"""The patches chapter's evidence (``vitbias.chapters.patches``): exact counts, and claims on made-up
measurements."""

import numpy as np
import pytest
import torch

from vitbias import cost, vit
from vitbias import literature as lit
from vitbias.chapters import patches as chapter
from vitbias.evidence import Evidence


def found():
    return Evidence("patches")


def changes(**moved):
    """A jigsaw that behaves as the chapter says, or as ``moved`` says."""
    return {"images": 16, "without": 1e-7, "with": 5e-3, "equivariance": 1e-7, "logit scale": 0.5,
            "position std": 0.02, **moved}


def hand(**moved):
    weights = np.array([0.1, 0.15, 0.2, 0.15, 0.4])  # [CLS], then patches 0 to 3; the bar in 1 and 3
    return {"weights": weights, "bar": 0.6, "jigsaw": 0.55, "bar, no positions": 0.5,
            "jigsaw, no positions": 0.5, "lost": np.ones(4), "grey tokens": True, **moved}


class Shaped(torch.nn.Module):
    """A made-up model: a configuration and as many parameters as told, none of them drawn."""

    def __init__(self, config, parameters):
        super().__init__()
        self.config = config
        self.weight = torch.nn.Parameter(torch.empty(parameters))


def b16(parameters=86_567_656):
    """Our ViT-B/16 as :func:`our_vit_b16` finds it, without building it."""
    steps = cost.shape_table(vit.VIT_B_16)
    return {"trace": [(step, shape) for step, shape, _ in steps], "parameters": parameters}


def test_a_markdown_table_has_a_header_a_rule_and_one_line_per_row():
    assert chapter.markdown_table(["a", "b"], [(1, "x"), (2, "y")]) == (
        "| a | b |\n| --- | --- |\n| 1 | x |\n| 2 | y |")
    assert chapter.table(["a"], [(1,)]).data == "| a |\n| --- |\n| 1 |"


def test_a_row_with_a_cell_too_few_is_refused():
    with pytest.raises(ValueError, match="one cell per column"):
        chapter.markdown_table(["a", "b"], [(1,)])


def test_vit_b16_has_its_published_parameter_count_by_part():
    evidence = found()
    chapter._vit_b16(evidence, b16(), 86_567_656)
    assert evidence["patches_params_b16"] == 86_567_656
    assert evidence["patches_block_total"] == 12 * 768**2 + 13 * 768 == 7_087_872
    assert evidence["patches_params_blocks_b16"] == 12 * 7_087_872
    assert evidence["patches_params_positions_b16"] == 197 * 768
    assert evidence.entries["patches_params_b16.tol"] == {"rel": 1e-9, "abs": 0.0}
    assert all(evidence.claims.values())
    evidence = found()
    chapter._vit_b16(evidence, b16(), 86_567_656 + 768)
    assert not evidence.claims["ViT-B/16's counted parameters are our model's and timm's"]


def test_a_trace_that_leaves_the_shape_table_is_refused():
    ours = b16()
    ours["trace"] = ours["trace"][:-1]
    with pytest.raises(ValueError, match="shape table"):
        chapter._vit_b16(found(), ours, 86_567_656)


def test_the_cost_table_is_the_cost_model_and_its_crossover_is_six_widths():
    evidence = found()
    chapter._cost_table(evidence)
    N, d = 196, 768
    assert evidence["patches_cost_tokens_224_16"] == N
    assert evidence["patches_cost_total_224_16"] == pytest.approx(12 * (12 * N * d**2 + 2 * N**2 * d) / 1e9)
    assert evidence["patches_cost_double_res_attention"] == pytest.approx(16)
    assert evidence["patches_crossover_tokens"] == 6 * d
    assert all(evidence.claims.values()) and len(evidence.claims) == 4


def test_the_resize_of_new_row_6_column_10_weighs_four_old_cells_by_their_distances():
    evidence = found()
    chapter._four_weights(evidence)
    row, col = 6.5 * 14 / 24 - 0.5, 10.5 * 14 / 24 - 0.5  # pixel centres aligned
    assert evidence["patches_resize_row_position"] == pytest.approx(row)
    assert (evidence["patches_resize_r0"], evidence["patches_resize_c0"]) == (3, 5)
    tr, tc = row - 3, col - 5
    assert evidence["patches_w00"] == pytest.approx((1 - tr) * (1 - tc))
    assert evidence["patches_w11"] == pytest.approx(tr * tc)
    assert evidence.claims["the new cell mixes the old rows and columns it lands between"]


def test_the_jigsaw_claims_hold_for_a_jigsaw_that_behaves_as_the_chapter_says():
    evidence = found()
    chapter._jigsaw(evidence, changes())
    assert all(evidence.claims.values())
    assert evidence["patches_jigsaw_tokens"] == 64
    assert evidence.entries["patches_jigsaw_with.tol"]["rel"] == 0.01


def test_a_position_table_that_moves_the_logits_no_more_than_rounding_fails_its_claim():
    evidence = found()
    chapter._jigsaw(evidence, changes(**{"with": 5e-6}))
    assert not evidence.claims["positions move the jigsaw's logits by orders of magnitude more than rounding"]
    assert not evidence.claims["with positions, the jigsaw moves the logits as much as the lab's, within ten times"]


def test_a_change_without_positions_beyond_rounding_fails_the_build():
    with pytest.raises(ValueError, match="rounding noise"):
        chapter._jigsaw(found(), changes(without=1e-3))


def test_a_random_embedding_far_from_its_predicted_error_fails_its_claim():
    evidence = found()
    chapter._reconstruction(evidence, {"random": 0.86, "best linear": 0.25, "patches": 2352})
    assert all(evidence.claims.values())
    evidence = found()
    chapter._reconstruction(evidence, {"random": 0.5, "best linear": 0.3, "patches": 2352})
    assert not evidence.claims["the random embedding's error is near sqrt(1 - d / P^2 C)"]
    assert not evidence.claims["the best linear embedding loses far less than a random one"]
    assert evidence["patches_recon_random_predicted"] == pytest.approx(np.sqrt(0.75))


def test_a_logit_difference_from_timm_or_another_experiment_vit_fails_its_claim():
    tiny = vit.TINY_VIT_QUICK
    evidence = found()
    chapter._against_timm(evidence, {"one": 0.0, "two": 0.0}, Shaped(tiny, 214_218))
    assert all(evidence.claims.values()) and evidence["patches_params_tiny"] == 214_218
    evidence = found()
    chapter._against_timm(evidence, {"one": 0.0, "two": 1e-7}, Shaped(tiny.replace(embed_dim=96), 214_218))
    assert not any(evidence.claims.values())


def test_the_hand_example_backs_every_claim_of_its_prose():
    evidence = found()
    chapter._by_hand(evidence, chapter.hand_example())
    assert all(evidence.claims.values())
    assert evidence["patches_hand_lost"] == pytest.approx(1.0)


def test_a_jigsaw_that_keeps_the_answer_or_probabilities_of_the_slides_fail_their_claims():
    evidence = found()
    slides = lit.LAB_HAND_VERTICAL["bar"].value
    chapter._by_hand(evidence, hand(bar=slides, jigsaw=slides))
    assert not evidence.claims["the jigsaw changes the answer, and without positions it does not"]
    assert not evidence.claims["our probabilities are not the slides'"]
    assert not evidence.claims["the head says vertical for the bar"]
    evidence = found()
    chapter._by_hand(evidence, hand(weights=np.array([0.1, 0.15, 0.4, 0.15, 0.2])))
    assert not evidence.claims["[CLS] weighs the bar's lower patch most, then its upper one"]
    assert evidence["patches_hand_weight_bar_top"] == 0.4


def test_timings_are_glued_unchecked_and_their_ranking_is_the_claim():
    macs = {"224 / 16": 1.5e9, "224 / 8": 6e9, "448 / 8": 30e9}
    seconds = {"224 / 16": np.array([0.02, 0.01]), "224 / 8": np.array([0.05]), "448 / 8": np.array([0.4])}
    times = chapter.measure_times(seconds, macs)
    assert times["patches_time_ms_224_16"] == pytest.approx(10.0)
    assert times["patches_time_gmacs_per_s_224_16"] == pytest.approx(150.0)
    assert times.entries["patches_time_ms_224_16.tol"]["unchecked"]
    assert "wall-clock" in times.entries["patches_time_ratio_measured.tol"]["why"]
    assert times["patches_time_ratio_predicted"] == 20.0
    assert times.claims["more predicted work took more time, in the table's order"]
    seconds["224 / 8"] = np.array([0.5])
    assert not chapter.measure_times(seconds, macs).claims["more predicted work took more time, in the table's order"]


def test_timings_missing_a_setting_are_refused():
    with pytest.raises(ValueError, match="timings need the settings"):
        chapter.measure_times({"224 / 16": [0.01]}, {"224 / 16": 1e9})


def test_a_standard_size_counted_otherwise_than_timm_fails_its_claim():
    counted = {name: cost.parameter_counts(cfg)["total"] for name, cfg in vit.STANDARD.items()}
    evidence = found()
    chapter._standard_sizes(evidence, counted)
    assert evidence.claims["every standard size's counted parameters are timm's"]
    assert evidence["patches_params_l_over_b"] == pytest.approx(counted["ViT-L/16"] / 86_567_656)
    evidence = found()
    chapter._standard_sizes(evidence, {**counted, "ViT-L/16": counted["ViT-L/16"] + 1})
    assert not evidence.claims["every standard size's counted parameters are timm's"]


def test_timm_counts_missing_a_standard_size_are_refused():
    with pytest.raises(ValueError, match="standard sizes"):
        chapter._standard_sizes(found(), {"ViT-B/16": 86_567_656})


def test_a_forward_pass_counted_otherwise_than_pytorch_fails_its_claim():
    forward = cost.forward_macs(vit.VIT_B_16)["total"]
    evidence = found()
    chapter._forward_pass(evidence, forward)
    assert all(evidence.claims.values())
    assert evidence["patches_l16_attention_ratio"] == pytest.approx((576 / 196) ** 2)
    evidence = found()
    chapter._forward_pass(evidence, 2 * forward)
    assert not evidence.claims["our multiply-adds of ViT-B/16 are what PyTorch's FLOP counter finds in timm's"]
