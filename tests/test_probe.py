"""The linear probe on frozen features."""

import numpy as np
import pytest
import torch

from vitbias import data, models, probe, profile

SMALL = data.shapes(40, seed=0)


def test_features_have_one_row_per_image_and_the_head_width():
    torch.manual_seed(0)
    vit = models.build({"kind": "vit", "patch_size": 8, "embed_dim": 32, "depth": 1, "num_heads": 2})
    feats = probe.extract_features(vit, SMALL, batch_size=16, device="cpu")
    assert feats.shape == (40, 32)
    # the batch size is an implementation detail
    np.testing.assert_allclose(feats, probe.extract_features(vit, SMALL, batch_size=40, device="cpu"),
                               rtol=1e-5, atol=1e-6)


def test_resizing_feeds_a_network_made_for_another_resolution():
    torch.manual_seed(0)
    vit64 = models.tiny_vit(img_size=64, patch_size=16, embed_dim=32, depth=1, num_heads=2)
    feats = probe.extract_features(vit64, SMALL.head(4), image_size=64, mean=(0.5,) * 3,
                                   std=(0.5,) * 3, device="cpu")
    assert feats.shape == (4, 32)


def test_the_probe_is_perfect_on_separable_features_and_at_chance_on_noise():
    rng = np.random.default_rng(0)
    labels = np.arange(400) % 4
    centres = 10 * rng.standard_normal((4, 8))
    feats = centres[labels] + rng.standard_normal((400, 8))
    assert probe.linear_probe(feats[:200], labels[:200], feats[200:], labels[200:]) == 1.0
    noise = rng.standard_normal((400, 8))
    assert probe.linear_probe(noise[:200], labels[:200], noise[200:], labels[200:]) < 0.45


def test_mismatched_features_are_rejected():
    with pytest.raises(ValueError, match="same D"):
        probe.linear_probe(np.zeros((4, 3)), np.zeros(4), np.zeros((4, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="one label per"):
        probe.linear_probe(np.zeros((4, 3)), np.zeros(3), np.zeros((4, 3)), np.zeros(4))


def test_the_full_profile_without_cached_weights_says_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=models.HUB_REPO):
        probe.prior_bought_elsewhere(profile.budget("full"))


def test_the_full_profiles_random_twin_is_our_vit_with_the_tensors_timm_draws_after_the_seed(monkeypatch):
    import timm

    from vitbias import vit

    budget = profile.budget("full")

    def stand_in(num_classes=0):   # the cached ImageNet-21k weights, replaced by random ones
        model = vit.from_timm(timm.create_model("vit_tiny_patch16_224", pretrained=False,
                                                num_classes=num_classes))
        model.pretrained_cfg = {"mean": (0.5,) * 3, "std": (0.5,) * 3}
        return model

    monkeypatch.setattr(models, "pretrained_vit_tiny", stand_in)
    pretrained, random, options = probe.prior_bought_elsewhere(budget)
    assert isinstance(random, vit.ViT) and random.config == pretrained.config
    torch.manual_seed(budget.seeds[0])
    theirs = timm.create_model(budget.pretrain["timm"], pretrained=False, num_classes=0)
    torch.testing.assert_close(random.state_dict(), theirs.state_dict(), rtol=0, atol=0)
    assert options == {"image_size": budget.pretrain["image_size"], "mean": (0.5,) * 3, "std": (0.5,) * 3}


def test_unknown_profiles_have_no_budget():
    with pytest.raises(ValueError, match="no budget"):
        profile.budget("huge")
