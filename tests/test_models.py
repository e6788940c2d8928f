"""The small CNN, the TinyViT and the offline pretrained weights."""

import pytest
import torch
from timm.models.vision_transformer import VisionTransformer

from vitbias import geometry, models, profile


@pytest.mark.parametrize("name", profile.BUDGETS)
def test_budget_models_have_the_sizes_the_book_states(name):
    budget = profile.budget(name)
    cnn, vit = models.build(budget.cnn), models.build(budget.vit)
    assert 250_000 <= geometry.parameter_count(cnn) <= 350_000  # "about 0.3M"
    assert geometry.parameter_count(vit) <= 600_000
    assert isinstance(vit, VisionTransformer)
    x = torch.randn(2, 3, 32, 32)
    assert cnn(x).shape == vit(x).shape == (2, 10)


def test_features_are_what_the_head_reads():
    torch.manual_seed(0)
    x = torch.randn(3, 3, 32, 32)
    for spec in ({"kind": "cnn"}, {"kind": "vit", "global_pool": "avg"}, {"kind": "vit"}):
        model = models.build(spec).eval()
        with torch.no_grad():
            torch.testing.assert_close(model.head(models.features(model, x)), model(x))


def test_parameter_count_matches_a_hand_count_for_the_cnn():
    cnn = models.SmallCNN(channels=(4, 8), depth=(1, 1), num_classes=3)
    by_hand = (3 * 4 * 9 + 2 * 4) + (4 * 8 * 9 + 2 * 8) + (8 * 3 + 3)
    assert geometry.parameter_count(cnn) == by_hand


@pytest.mark.parametrize("spec, match", [
    ({"kind": "mlp"}, "unknown model kind"),
    ({"kind": "vit", "patch_size": 5}, "patch_size must divide"),
    ({"kind": "vit", "embed_dim": 50, "num_heads": 4}, "num_heads must divide"),
    ({"kind": "cnn", "channels": [8, 16], "depth": [1]}, "equally long"),
])
def test_bad_model_specifications_are_rejected(spec, match):
    with pytest.raises(ValueError, match=match):
        models.build(spec)


def test_missing_pretrained_weights_name_the_model_and_the_folder(tmp_path):
    with pytest.raises(FileNotFoundError) as error:
        models.pretrained_vit_tiny(cache=tmp_path)
    assert models.HUB_REPO in str(error.value) and str(tmp_path) in str(error.value)


def test_pretrained_weights_load_from_the_local_cache_only(tmp_path):
    import timm
    from safetensors.torch import save_file

    torch.manual_seed(0)
    source = timm.create_model(models.PRETRAINED_VIT_TINY, pretrained=False, num_classes=0)
    snapshot = tmp_path / ("models--" + models.HUB_REPO.replace("/", "--"))
    (snapshot / "refs").mkdir(parents=True)
    (snapshot / "refs" / "main").write_text("abc123")
    (snapshot / "snapshots" / "abc123").mkdir(parents=True)
    save_file({k: v.contiguous() for k, v in source.state_dict().items()},
              snapshot / "snapshots" / "abc123" / "model.safetensors")
    loaded = models.pretrained_vit_tiny(num_classes=0, cache=tmp_path)
    torch.testing.assert_close(loaded.pos_embed, source.pos_embed, rtol=0, atol=0)
    torch.testing.assert_close(loaded.blocks[5].mlp.fc2.weight, source.blocks[5].mlp.fc2.weight, rtol=0, atol=0)
