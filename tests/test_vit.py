"""The teaching ViT, stated as properties, and checked against timm's VisionTransformer."""

import pytest
import torch
from timm.models.vision_transformer import VisionTransformer

from vitbias import patches, vit

CONFIGS = {
    "ViT-Ti/16": vit.VIT_TI_16,
    "TinyViT quick (mean, with [CLS])": vit.TINY_VIT_QUICK,
    "TinyViT full ([CLS])": vit.TINY_VIT_FULL,
    "TinyViT [CLS]": vit.TINY_VIT,
    "TinyViT mean, no [CLS]": vit.TINY_VIT.replace(pool="mean", class_token=False),
    "TinyViT mean, with [CLS]": vit.TINY_VIT.replace(pool="mean"),
    "TinyViT 4 registers": vit.TINY_VIT.replace(reg_tokens=4),
    "TinyViT no positions": vit.TINY_VIT.replace(pool="mean", class_token=False, pos_embed=False),
}


def timm_and_ours(config, seed=0):
    torch.manual_seed(seed)
    reference = VisionTransformer(**vit.timm_kwargs(config)).eval()
    with torch.no_grad():  # timm starts [CLS] near zero; make every part of the path count
        for p in reference.parameters():
            p.add_(0.05 * torch.randn_like(p))
    return reference, vit.from_timm(reference)


def images_for(config, count=2, seed=1):
    return torch.randn(count, config.in_chans, config.img_size, config.img_size,
                       generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("name", CONFIGS)
def test_logits_match_timm_to_1e_5_after_copying_its_weights(name):
    config = CONFIGS[name]
    reference, ours = timm_and_ours(config)
    x = images_for(config)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), reference(x), rtol=0, atol=1e-5)


@pytest.mark.parametrize("name", CONFIGS)
def test_the_configuration_survives_a_round_trip_through_timm(name):
    config = CONFIGS[name]
    assert vit.config_from_timm(VisionTransformer(**vit.timm_kwargs(config))) == config


@pytest.mark.parametrize("name", CONFIGS)
def test_after_the_same_seed_the_model_holds_timms_tensors_bit_for_bit(name):
    config = CONFIGS[name]
    torch.manual_seed(11)
    theirs = VisionTransformer(**vit.timm_kwargs(config)).state_dict()
    torch.manual_seed(11)
    ours = vit.ViT(config).state_dict()
    assert list(ours) == list(theirs)  # timm's names, in timm's order
    assert all(torch.equal(ours[name], theirs[name]) for name in theirs)


@pytest.mark.parametrize("name", CONFIGS)
def test_without_maps_the_logits_are_timms_bit_for_bit(name):
    config = CONFIGS[name]
    reference, ours = timm_and_ours(config)
    x = images_for(config)
    with torch.no_grad():
        assert torch.equal(ours(x), reference(x))


@pytest.mark.parametrize("name", CONFIGS)
def test_the_maps_path_and_the_fused_path_agree_to_1e_5(name):
    config = CONFIGS[name]
    _, ours = timm_and_ours(config)
    x = images_for(config)
    with torch.no_grad():
        with_maps, _ = ours(x, return_attention=True)
        torch.testing.assert_close(with_maps, ours(x), rtol=0, atol=1e-5)


def test_attention_maps_are_timms_attention_weights():
    config = vit.TINY_VIT.replace(reg_tokens=2)
    reference, ours = timm_and_ours(config)
    captured = []
    for block in reference.blocks:
        block.attn.fused_attn = False  # timm then forms the weights explicitly, before dropout
        block.attn.attn_drop.register_forward_hook(lambda m, args, out: captured.append(out))
    x = images_for(config)
    with torch.no_grad():
        reference(x)
        _, maps = ours(x, return_attention=True)
    assert maps.shape == (2, config.depth, config.num_heads, config.num_tokens, config.num_tokens)
    torch.testing.assert_close(maps, torch.stack(captured, dim=1), rtol=0, atol=1e-6)


def test_attention_rows_are_probability_distributions_and_asking_for_them_barely_changes_the_logits():
    model = vit.ViT(vit.TINY_VIT).eval()
    x = images_for(vit.TINY_VIT)
    with torch.no_grad():
        logits, maps = model(x, return_attention=True)
        torch.testing.assert_close(logits, model(x), rtol=0, atol=1e-5)
    assert torch.all(maps >= 0)
    torch.testing.assert_close(maps.sum(-1), torch.ones(maps.shape[:-1]), rtol=0, atol=1e-6)


def test_without_positions_a_jigsaw_permutes_the_output_tokens_and_leaves_the_mean_alone():
    config = vit.TINY_VIT.replace(pool="mean", class_token=False, pos_embed=False)
    torch.manual_seed(0)
    model = vit.ViT(config).eval()
    x = images_for(config)
    order = torch.randperm(config.num_patches, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        tokens, _ = model.encode(x)
        shuffled, _ = model.encode(patches.jigsaw(x, config.patch_size, order))
        torch.testing.assert_close(shuffled, tokens[:, order], rtol=0, atol=1e-5)
        torch.testing.assert_close(model(patches.jigsaw(x, config.patch_size, order)), model(x),
                                   rtol=0, atol=1e-5)


def test_with_positions_a_jigsaw_changes_the_logits():
    config = vit.TINY_VIT.replace(pool="mean", class_token=False)
    torch.manual_seed(0)
    model = vit.ViT(config).eval()
    x = images_for(config)
    order = torch.randperm(config.num_patches, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        change = (model(patches.jigsaw(x, config.patch_size, order)) - model(x)).abs().max()
    assert change > 1e-4


def test_the_trace_follows_the_tensor_through_vit_b16_without_computing():
    with torch.device("meta"):
        model = vit.ViT(vit.VIT_B_16)
        steps = model.trace(torch.empty(1, 3, 224, 224))
    shapes = dict(steps)
    assert shapes["input"] == (3, 224, 224)
    assert shapes["patches, flattened"] == (196, 768)
    assert shapes["patch embedding"] == (196, 768)
    assert shapes["prefix tokens and positions"] == (197, 768)
    assert shapes["12 encoder blocks"] == (197, 768)
    assert shapes["linear head"] == (1000,)


def test_the_standard_configurations_have_the_published_sizes():
    assert (vit.VIT_B_16.embed_dim, vit.VIT_B_16.depth, vit.VIT_B_16.num_heads, vit.VIT_B_16.mlp_hidden) \
        == (768, 12, 12, 3072)
    assert (vit.VIT_L_16.embed_dim, vit.VIT_L_16.depth, vit.VIT_L_16.num_heads, vit.VIT_L_16.mlp_hidden) \
        == (1024, 24, 16, 4096)
    assert vit.VIT_B_16.num_patches == 196 and vit.VIT_B_16.num_tokens == 197
    assert vit.VIT_B_16.patch_dim == 768 and vit.VIT_B_32.patch_dim == 3072


@pytest.mark.parametrize("changes, message", [
    (dict(img_size=225), "divide"),
    (dict(num_heads=5), "multiple of num_heads"),
    (dict(class_token=False), "needs class_token"),
    (dict(pool="max"), "pool must be"),
    (dict(depth=0), "depth"),
    (dict(reg_tokens=-1), "reg_tokens"),
    (dict(mlp_ratio=0.0), "mlp_ratio"),
])
def test_bad_configurations_raise_value_errors_that_say_what_is_wrong(changes, message):
    with pytest.raises(ValueError, match=message):
        vit.VIT_B_16.replace(**changes)


def test_images_of_the_wrong_shape_are_refused():
    model = vit.ViT(vit.TINY_VIT)
    with pytest.raises(ValueError, match=r"\(B, 3, 32, 32\)"):
        model(torch.zeros(1, 3, 64, 64))
    with pytest.raises(ValueError, match="expected images"):
        model(torch.zeros(3, 32, 32))


def test_a_timm_model_with_parts_this_vit_lacks_is_refused():
    with pytest.raises(ValueError, match="does not fit a plain ViT"):
        vit.from_timm(VisionTransformer(**vit.timm_kwargs(vit.TINY_VIT), init_values=1e-5))
    with pytest.raises(ValueError, match="pooling"):
        vit.from_timm(VisionTransformer(**{**vit.timm_kwargs(vit.TINY_VIT), "global_pool": "map"}))
    with pytest.raises(ValueError, match="VisionTransformer"):
        vit.from_timm(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="ViTConfig"):
        vit.ViT({"embed_dim": 8})


# ---------------------------------------------------------------------------
# Attention biases and masks.
# ---------------------------------------------------------------------------

BIAS_CONFIG = vit.TINY_VIT_QUICK


def model_and_images(seed=0):
    torch.manual_seed(seed)
    model = vit.ViT(BIAS_CONFIG).eval()
    return model, images_for(BIAS_CONFIG)


T, H = BIAS_CONFIG.num_tokens, BIAS_CONFIG.num_heads


@pytest.mark.parametrize("neutral", [torch.ones(T, T, dtype=torch.bool), torch.zeros(T, T),
                                     torch.zeros(H, T, T), torch.ones(2, H, T, T, dtype=torch.bool),
                                     [None, torch.zeros(T, T), None, torch.ones(1, T, T, dtype=torch.bool)]])
def test_an_all_true_mask_or_a_zero_bias_changes_nothing(neutral):
    model, x = model_and_images()
    with torch.no_grad():
        plain, plain_maps = model(x, return_attention=True)
        biased, biased_maps = model(x, return_attention=True, attn_bias=neutral)
        assert torch.equal(biased, plain) and torch.equal(biased_maps, plain_maps)
        torch.testing.assert_close(model(x, attn_bias=neutral), model(x), rtol=0, atol=1e-6)


def test_a_diagonal_mask_gives_identity_maps_so_each_token_attends_to_its_own_value():
    model, x = model_and_images()
    diagonal = torch.eye(T, dtype=torch.bool)
    with torch.no_grad():
        _, maps = model(x, return_attention=True, attn_bias=diagonal)
        assert torch.equal(maps, torch.eye(T).expand_as(maps))
        tokens = model.add_prefix_and_positions(model.patch_tokens(x))
        attn = model.blocks[0].attn
        normed = model.blocks[0].norm1(tokens)
        values = attn.qkv(normed)[..., 2 * BIAS_CONFIG.embed_dim:]       # (B, T, d): V, heads side by side
        out, _ = attn(normed, diagonal, return_attention=True)
        torch.testing.assert_close(out, attn.proj(values), rtol=0, atol=1e-6)
        fused, _ = attn(normed, diagonal)
        torch.testing.assert_close(fused, attn.proj(values), rtol=0, atol=1e-6)


def test_a_bias_of_minus_infinity_off_the_diagonal_is_the_diagonal_mask():
    model, x = model_and_images()
    diagonal = torch.eye(T, dtype=torch.bool)
    bias = torch.full((T, T), float("-inf")).fill_diagonal_(0.0)
    with torch.no_grad():
        masked, masked_maps = model(x, return_attention=True, attn_bias=diagonal)
        biased, biased_maps = model(x, return_attention=True, attn_bias=bias)
        assert torch.equal(biased, masked) and torch.equal(biased_maps, masked_maps)
        assert torch.equal(model(x, attn_bias=bias), model(x, attn_bias=diagonal))


def test_a_bias_per_head_and_per_layer_reaches_the_right_maps_in_both_paths():
    model, x = model_and_images()
    bias = torch.zeros(H, T, T)
    bias[1] = torch.randn(T, T, generator=torch.Generator().manual_seed(3))
    per_layer = [None, None, bias, None]
    with torch.no_grad():
        plain, plain_maps = model(x, return_attention=True)
        biased, maps = model(x, return_attention=True, attn_bias=per_layer)
        torch.testing.assert_close(model(x, attn_bias=per_layer), biased, rtol=0, atol=1e-5)
    assert torch.equal(maps[:, :2], plain_maps[:, :2])
    assert torch.equal(maps[:, 2, 0], plain_maps[:, 2, 0])   # head 0 of layer 2 unbiased
    assert not torch.allclose(maps[:, 2, 1], plain_maps[:, 2, 1])
    assert not torch.allclose(biased, plain)


@pytest.mark.parametrize("bias, message", [
    (torch.zeros(T, T + 1), r"\(T, T\), \(H, T, T\) or \(B, H, T, T\)"),
    (torch.zeros(H + 1, T, T), "H = 4"),
    (torch.zeros(3, H, T, T), "B = 2"),
    (torch.zeros(T), "got shape"),
    (torch.zeros(T, T, dtype=torch.long), "boolean .* or floating"),
    ([torch.zeros(T, T)] * 3, "one attention bias per block"),
])
def test_a_bias_of_the_wrong_shape_or_kind_is_refused(bias, message):
    model, x = model_and_images()
    with pytest.raises(ValueError, match=message):
        model(x, attn_bias=bias)
