"""The teaching ViT, stated as properties, and checked against timm's VisionTransformer."""

import pytest
import torch
from timm.models.vision_transformer import VisionTransformer

from vitbias import patches, vit

CONFIGS = {
    "ViT-Ti/16": vit.VIT_TI_16,
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


def test_attention_rows_are_probability_distributions_and_asking_for_them_changes_nothing():
    model = vit.ViT(vit.TINY_VIT).eval()
    x = images_for(vit.TINY_VIT)
    with torch.no_grad():
        logits, maps = model(x, return_attention=True)
        assert torch.equal(logits, model(x))
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
