"""Parameter and multiply-add counts from a configuration, checked against timm and torch."""

import numpy as np
import pytest
import timm
import torch

from vitbias import cost, geometry, vit


def meta_timm(name, **kwargs):
    with torch.device("meta"):
        return timm.create_model(name, pretrained=False, **kwargs)


@pytest.mark.parametrize("name", vit.STANDARD)
def test_parameter_counts_match_timms_models(name):
    model = meta_timm(vit.TIMM_NAMES[name])
    assert cost.parameter_counts(vit.STANDARD[name])["total"] == geometry.parameter_count(model)


def test_vit_b16_has_86_567_656_parameters_with_1000_classes():
    assert cost.parameter_counts(vit.VIT_B_16)["total"] == 86_567_656


def test_a_block_of_width_768_splits_into_attention_mlp_and_layernorms():
    split = cost.block_parameters(768)
    assert split == {"attention": 2_362_368, "mlp": 4_722_432, "layernorms": 3_072, "total": 7_087_872}


def test_block_parameters_count_a_timm_block():
    model = meta_timm("vit_small_patch16_224")
    assert cost.block_parameters(384)["total"] == geometry.parameter_count(model.blocks[0])


def test_the_shape_table_agrees_with_the_model_and_its_parameters_add_up():
    config = vit.TINY_VIT.replace(reg_tokens=2)
    model = vit.ViT(config)
    table = cost.shape_table(config)
    assert [(step, shape) for step, shape, _ in table] == model.trace(torch.zeros(1, 3, 32, 32))
    assert sum(p for _, _, p in table) == geometry.parameter_count(model)


@pytest.mark.parametrize("config", [
    vit.VIT_B_16, vit.VIT_TI_16, vit.VIT_B_8.replace(img_size=448, depth=1),
    vit.TINY_VIT.replace(pool="mean", class_token=False), vit.TINY_VIT.replace(reg_tokens=4),
], ids=["B/16", "Ti/16", "B/8 at 448, one block", "TinyViT mean", "TinyViT registers"])
def test_forward_macs_are_what_torchs_flop_counter_counts(config):
    with torch.device("meta"):
        model = vit.ViT(config)
        images = torch.empty(1, 3, config.img_size, config.img_size)
    assert cost.forward_macs(config)["total"] == cost.torch_counted_macs(model, images)


def test_forward_macs_count_timms_vit_b16_too():
    model = meta_timm("vit_base_patch16_224")
    images = torch.empty(1, 3, 224, 224, device="meta")
    assert cost.forward_macs(vit.VIT_B_16)["total"] == cost.torch_counted_macs(model, images)


def test_the_cost_table_reproduces_the_source_figures_to_their_rounding():
    rows = cost.cost_table(768, 12, [(224, 16), (224, 8), (448, 8)])
    published = [(196, 16.65, 0.71, 17.36, 4), (784, 66.59, 11.33, 77.92, 15),
                 (3136, 266.36, 181.27, 447.62, 40)]
    for row, (N, dense, attention, total, share) in zip(rows, published):
        assert row.tokens == N
        assert (round(row.dense, 2), round(row.attention, 2), round(row.total, 2)) == (dense, attention, total)
        assert round(100 * row.attention_share) == share
    assert rows[1].total / rows[0].total == pytest.approx(4.49, abs=0.005)


def test_halving_the_patch_multiplies_the_dense_term_by_4_and_attention_by_16():
    a, b = cost.cost_table(384, 12, [(224, 16), (224, 8)])
    assert b.dense / a.dense == pytest.approx(4, rel=1e-12)
    assert b.attention / a.attention == pytest.approx(16, rel=1e-12)


def test_attention_overtakes_the_rest_at_6d_tokens():
    N = cost.attention_crossover_tokens(768)
    assert N == 4608
    dense, attention = cost.block_macs(int(N), 768)
    assert dense == attention
    below, above = cost.block_macs(int(N) - 1, 768), cost.block_macs(int(N) + 1, 768)
    assert below[1] < below[0] and above[1] > above[0]


def test_window_attention_is_linear_in_tokens_and_global_attention_quadratic():
    d = 96
    assert cost.window_attention_macs(112, 7, d) == 4 * cost.window_attention_macs(56, 7, d)
    assert cost.global_attention_macs(112**2, d) == 16 * cost.global_attention_macs(56**2, d)
    ratio = cost.global_attention_macs(56**2, d) / cost.window_attention_macs(56, 7, d)
    assert ratio == 56**2 / 7**2
    assert cost.window_attention_macs(14, 14, d) == cost.global_attention_macs(14**2, d)


@pytest.mark.parametrize("tokens, d, mlp_ratio", [(196, 768, 4.0), (3136, 96, 4.0), (17, 64, 2.0)])
def test_the_projections_are_the_blocks_dense_term_without_the_mlp(tokens, d, mlp_ratio):
    dense, _ = cost.block_macs(tokens, d, mlp_ratio)
    hidden = int(d * mlp_ratio)
    assert cost.projection_macs(tokens, d) == dense - 2 * tokens * d * hidden


def test_time_forward_returns_one_positive_time_per_repeat():
    model = torch.nn.Linear(4, 4)
    seconds = cost.time_forward(model, torch.zeros(1, 4), repeats=3, warmup=1)
    assert seconds.shape == (3,) and np.all(seconds > 0)


def test_bad_inputs_raise_value_errors():
    with pytest.raises(ValueError, match="must divide"):
        cost.cost_table(768, 12, [(224, 15)])
    with pytest.raises(ValueError, match="must divide"):
        cost.window_attention_macs(56, 5, 96)
    with pytest.raises(ValueError, match="tokens"):
        cost.block_macs(0, 768)
    with pytest.raises(ValueError, match="tokens"):
        cost.projection_macs(0, 96)
    with pytest.raises(ValueError, match="ViTConfig"):
        cost.parameter_counts({"embed_dim": 768})
    with pytest.raises(ValueError, match="mlp_ratio"):
        cost.attention_crossover_tokens(768, mlp_ratio=0)
    with pytest.raises(ValueError, match="repeats"):
        cost.time_forward(torch.nn.Identity(), torch.zeros(1), repeats=0)
