"""The small CNN, the TinyViT (the one ViT, built as timm builds it) and the offline pretrained weights."""

import json

import numpy as np
import pytest
import torch
from timm.models.vision_transformer import VisionTransformer

from vitbias import data, geometry, models, profile, runs, train, vit


@pytest.mark.parametrize("name", profile.BUDGETS)
def test_budget_models_have_the_sizes_the_book_states(name):
    budget = profile.budget(name)
    cnn, vit = models.build(budget.cnn), models.build(budget.vit)
    # "The CNN is the smaller model: whatever it wins, it does not win by size."
    assert geometry.parameter_count(cnn) < geometry.parameter_count(vit) <= 600_000
    assert isinstance(vit, models.ViT)
    x = torch.randn(2, 3, 32, 32)
    assert cnn(x).shape == vit(x).shape == (2, 10)


def test_features_are_what_the_head_reads():
    torch.manual_seed(0)
    x = torch.randn(3, 3, 32, 32)
    for spec in ({"kind": "cnn"}, {"kind": "vit", "global_pool": "avg"}, {"kind": "vit", "global_pool": "token"}):
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
    ({"kind": "vit", "global_pool": "map"}, "global_pool must be one of"),
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
    assert isinstance(loaded, vit.ViT) and loaded.config == vit.VIT_TI_16.replace(num_classes=0)
    assert all(torch.equal(loaded.state_dict()[k], v) for k, v in source.state_dict().items())
    assert loaded.pretrained_cfg["mean"] == source.pretrained_cfg["mean"]
    x = torch.randn(2, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert torch.equal(loaded(x), source.eval()(x))  # the (B, 192) [CLS] features


# The models the budgets trained before they were built on vitbias.vit.ViT, written out by hand.
TIMM_BUDGET_KWARGS = {
    "quick": dict(img_size=32, patch_size=8, embed_dim=64, depth=4, num_heads=4, mlp_ratio=4.0,
                  global_pool="avg", num_classes=10),
    "full": dict(img_size=32, patch_size=4, embed_dim=96, depth=5, num_heads=3, mlp_ratio=4.0,
                 global_pool="token", num_classes=10),
}
TIMM_BUDGET_KWARGS["gpu"] = TIMM_BUDGET_KWARGS["quick"]  # the same world and models, at scale


@pytest.mark.parametrize("name", profile.BUDGETS)
def test_a_budget_vit_is_timms_vision_transformer_tensor_for_tensor_after_the_same_seed(name):
    torch.manual_seed(7)
    reference = VisionTransformer(**TIMM_BUDGET_KWARGS[name])
    torch.manual_seed(7)
    ours = models.build(profile.budget(name).vit)
    assert isinstance(ours, vit.ViT)
    theirs, mine = reference.state_dict(), ours.state_dict()
    assert list(mine) == list(theirs)
    assert all(torch.equal(mine[k], theirs[k]) for k in theirs)
    assert geometry.parameter_count(ours) == geometry.parameter_count(reference)
    x = torch.randn(4, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.equal(ours.eval()(x), reference.eval()(x))
        assert torch.equal(models.features(ours, x), models.features(reference, x))


def test_training_the_quick_vit_gives_the_losses_of_timms_model_bit_for_bit():
    budget = profile.budget("quick")
    images = data.shapes(256, seed=0)
    recipe = train.TrainConfig(**{**budget.train, "steps": 30, "warmup": 3})
    histories = []
    for build in (lambda: VisionTransformer(**TIMM_BUDGET_KWARGS["quick"]),
                  lambda: models.build(budget.vit)):
        torch.manual_seed(recipe.seed)
        model = build()
        histories.append(train.train(model, images, recipe, device="cpu").losses)
    np.testing.assert_array_equal(histories[1], histories[0])
    assert histories[0][-5:].mean() < histories[0][:5].mean()


def test_the_budget_vit_specifications_are_made_from_the_typed_configurations():
    assert profile.budget("quick").vit == models.vit_spec(vit.TINY_VIT_QUICK) == {
        "kind": "vit", "img_size": 32, "patch_size": 8, "embed_dim": 64, "depth": 4,
        "num_heads": 4, "mlp_ratio": 4.0, "global_pool": "avg"}
    assert profile.budget("full").vit == models.vit_spec(vit.TINY_VIT_FULL) == {
        "kind": "vit", "img_size": 32, "patch_size": 4, "embed_dim": 96, "depth": 5,
        "num_heads": 3, "mlp_ratio": 4.0, "global_pool": "token"}
    for config in (vit.TINY_VIT_QUICK, vit.TINY_VIT_FULL):
        assert models.build(models.vit_spec(config)).config == config
    assert models.tiny_vit().config == vit.TINY_VIT_QUICK


def test_a_run_configuration_records_its_model_steps_seed_and_shuffle():
    budget = profile.budget("quick")
    config = runs.experiment(budget, "vit", budget.train_sizes[-1], seed=2, permute=0.5)
    assert config["model"] == budget.vit
    assert config["train"]["steps"] == budget.steps(budget.train_sizes[-1])
    assert config["train"]["warmup"] == config["train"]["steps"] // 10
    assert config["train"]["seed"] == config["data"]["seed"] == 2
    assert config["data"]["test_seed"] == budget.dataset["seed"]
    assert config["data"]["permute"] == {"fraction": 0.5, "seed": budget.permutation_seed,
                                         "patch": budget.vit["patch_size"]}
    assert "permute" not in runs.experiment(budget, "cnn", budget.train_sizes[0])["data"]
    full = runs.experiment(profile.budget("full"), "vit", 5000, augment=False)
    assert json.dumps(full["model"]) == (
        '{"kind": "vit", "img_size": 32, "patch_size": 4, "embed_dim": 96, "depth": 5, '
        '"num_heads": 3, "mlp_ratio": 4.0, "global_pool": "token"}')


@pytest.mark.parametrize("changes", [dict(class_token=False, pool="mean"), dict(reg_tokens=1),
                                     dict(num_classes=7), dict(pos_embed=False)])
def test_a_vit_the_specification_cannot_state_is_refused(changes):
    with pytest.raises(ValueError, match="specification states only"):
        models.vit_spec(vit.TINY_VIT_QUICK.replace(**changes))
