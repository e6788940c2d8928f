"""The trainer: it learns, it repeats itself, and its pieces do what they say."""

import math

import numpy as np
import pytest
import torch

from vitbias import data, models, train, vit

TINY = data.shapes(256, seed=0)
# The trainer has no recipe of its own; these tests train with this one.
RECIPE = {"lr": 1e-3, "weight_decay": 0.05, "schedule": "cosine", "augment": True}


def fit(spec, seed=0, steps=40, **recipe):
    torch.manual_seed(seed)
    model = models.build(spec)
    config = train.TrainConfig(steps=steps, batch_size=32, **{**RECIPE, "lr": 3e-3, "seed": seed, **recipe})
    history = train.train(model, TINY, config, device="cpu")
    return model, history


def test_the_loss_decreases_on_a_tiny_run():
    _, history = fit({"kind": "cnn"}, steps=60, warmup=5)
    assert history.losses.shape == (60,)
    assert history.losses[-10:].mean() < 0.7 * history.losses[:10].mean()
    assert history.device == "cpu" and history.images_per_second > 0


def test_the_same_seed_gives_the_same_losses_and_accuracy():
    spec = {"kind": "vit", "patch_size": 8, "embed_dim": 32, "depth": 1, "num_heads": 2}
    first, a = fit(spec, seed=1, steps=15)
    second, b = fit(spec, seed=1, steps=15)
    np.testing.assert_array_equal(a.losses, b.losses)
    assert train.evaluate(first, TINY, "cpu") == train.evaluate(second, TINY, "cpu")
    _, c = fit(spec, seed=2, steps=15)
    assert not np.array_equal(a.losses, c.losses)


def test_the_schedule_warms_up_linearly_then_follows_a_cosine_to_zero():
    config = train.TrainConfig(steps=110, batch_size=1, warmup=10, **RECIPE)
    factors = [train.learning_rate_factor(step, config) for step in range(110)]
    assert factors[:10] == pytest.approx([(s + 1) / 10 for s in range(10)])
    assert factors[10] == 1.0
    assert factors[60] == pytest.approx(0.5)
    assert factors[-1] == pytest.approx(0.5 * (1 + math.cos(math.pi * 99 / 100)))
    flat = train.TrainConfig(steps=20, batch_size=1, warmup=5, **{**RECIPE, "schedule": "constant"})
    assert [train.learning_rate_factor(s, flat) for s in range(5, 20)] == [1.0] * 15


def test_crop_and_flip_cut_each_image_from_its_padded_copy():
    x = torch.arange(2 * 3 * 6 * 6, dtype=torch.float32).view(2, 3, 6, 6)
    out = train.random_crop_flip(x, torch.Generator().manual_seed(0), pad=2)
    generator = torch.Generator().manual_seed(0)  # the same draws, replayed
    offsets = torch.randint(0, 5, (2, 2), generator=generator)
    flips = torch.rand(2, generator=generator) < 0.5
    padded = torch.nn.functional.pad(x, (2, 2, 2, 2))
    for i in range(2):
        crop = padded[i, :, offsets[0, i]:offsets[0, i] + 6, offsets[1, i]:offsets[1, i] + 6]
        torch.testing.assert_close(out[i], crop.flip(-1) if flips[i] else crop, rtol=0, atol=0)


def test_evaluation_scores_a_constant_model_by_its_class_frequency():
    class Constant(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.one_hot(torch.full((len(x),), 3), 10).float()

    scores = train.evaluate(Constant(), TINY, "cpu")
    assert scores["accuracy"] == pytest.approx(np.mean(TINY.labels == 3))


@pytest.mark.parametrize("kwargs, match", [
    (dict(steps=0, batch_size=8), "steps"),
    (dict(steps=10, batch_size=2.5), "batch_size"),
    (dict(steps=10, batch_size=8, warmup=10), "warmup"),
    (dict(steps=10, batch_size=8, schedule="step"), "schedule"),
    (dict(steps=10, batch_size=8, lr=0.0), "lr"),
])
def test_bad_recipes_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        train.TrainConfig(**{**RECIPE, **kwargs})


@pytest.mark.parametrize("left_out", ["lr", "weight_decay", "schedule", "augment"])
def test_the_trainer_has_no_recipe_of_its_own(left_out):
    recipe = {key: value for key, value in RECIPE.items() if key != left_out}
    with pytest.raises(TypeError, match=left_out):
        train.TrainConfig(steps=10, batch_size=8, **recipe)


def test_every_run_warms_up_over_the_first_tenth_of_its_steps():
    assert [train.warmup_steps(s) for s in (1, 9, 10, 19, 2500, 5000)] == [0, 0, 1, 1, 250, 500]
    for bad in (0, -3, 2.5, "10"):
        with pytest.raises(ValueError, match="steps"):
            train.warmup_steps(bad)


def test_random_erasing_replaces_one_rectangle_within_the_area_bounds_with_noise():
    x = torch.zeros(400, 3, 32, 32)
    out = train.random_erase(x, 1.0, torch.Generator().manual_seed(0))
    erased = (out != 0).any(dim=1)  # (B, H, W)
    area = erased.float().mean(dim=(1, 2))
    assert torch.all(area > 0) and area.max() <= 1 / 3 + 0.02
    rows, cols = erased.any(dim=2), erased.any(dim=1)
    # one rectangle: the erased pixels are exactly the product of their rows and columns
    assert torch.equal(erased, rows[:, :, None] & cols[:, None, :])
    assert abs(float(out[erased[:, None].expand_as(out)].std()) - 1.0) < 0.05


def test_random_erasing_with_probability_zero_changes_nothing_and_a_half_erases_about_half():
    x = torch.randn(1000, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    assert torch.equal(train.random_erase(x, 0.0, torch.Generator().manual_seed(0)), x)
    changed = (train.random_erase(x, 0.5, torch.Generator().manual_seed(0)) != x).flatten(1).any(1)
    assert 0.45 < changed.float().mean() < 0.55


def test_a_recipe_with_erasing_trains_differently_and_repeats_itself():
    spec = {"kind": "cnn"}
    _, plain = fit(spec, seed=1, steps=10)
    _, erased = fit(spec, seed=1, steps=10, erase=0.5)
    _, again = fit(spec, seed=1, steps=10, erase=0.5)
    np.testing.assert_array_equal(erased.losses, again.losses)
    assert not np.array_equal(plain.losses, erased.losses)


@pytest.mark.parametrize("erase", [-0.1, 1.5, True, "0.2"])
def test_the_erasing_probability_must_be_a_probability(erase):
    with pytest.raises(ValueError, match="erase"):
        train.TrainConfig(steps=10, batch_size=8, erase=erase, **RECIPE)


def test_weight_decay_falls_on_weight_matrices_only_not_on_positions_prefix_tokens_norms_or_biases():
    from vitbias import models

    for spec in (models.vit_spec(vit.TINY_VIT_QUICK), {**models.vit_spec(vit.TINY_VIT_QUICK), "kind": "route",
                                                       "relative_bias": True, "distill": True, "gated": 1}):
        model = models.build(spec)
        decay, exempt = train.parameter_groups(model, 0.05)
        assert decay["weight_decay"] == 0.05 and exempt["weight_decay"] == 0.0
        names = {id(p): n for n, p in model.named_parameters()}
        exempt_names = {names[id(p)] for p in exempt["params"]}
        decayed_names = {names[id(p)] for p in decay["params"]}
        assert exempt_names | decayed_names == set(names.values()) and not exempt_names & decayed_names
        assert {"cls_token"} <= exempt_names and not any(n.endswith(".bias") for n in decayed_names)
        assert all(model.get_parameter(n).ndim >= 2 for n in decayed_names)
        assert {"blocks.0.attn.qkv.weight", "patch_embed.proj.weight", "head.weight"} <= decayed_names
        assert {"pos_embed", "reg_token", "relative_table"} & exempt_names
    cnn = models.build({"kind": "cnn", "channels": [8, 16], "depth": [1, 1]})
    decay, exempt = train.parameter_groups(cnn, 0.05)
    assert all(p.ndim == 4 or p.ndim == 2 for p in decay["params"]) and all(p.ndim == 1 for p in exempt["params"])


def test_a_decayed_parameter_shrinks_and_an_exempt_one_does_not_when_the_gradient_is_zero():
    model = torch.nn.Linear(3, 3)
    with torch.no_grad():
        model.weight.fill_(1.0), model.bias.fill_(1.0)
    decay, exempt = train.parameter_groups(model, 0.5)
    optimizer = torch.optim.AdamW([decay, exempt], lr=0.1)
    (0.0 * model(torch.ones(1, 3)).sum()).backward()
    optimizer.step()
    assert torch.allclose(model.weight, torch.full_like(model.weight, 1 - 0.1 * 0.5))
    assert torch.equal(model.bias, torch.ones_like(model.bias))


def layouts_seen(model):
    """Record, per forward pass, whether the first convolution read a channels-last input."""
    seen = []
    first = next(m for m in model.modules() if isinstance(m, torch.nn.Conv2d))
    first.register_forward_pre_hook(lambda module, args: seen.append(
        args[0].is_contiguous(memory_format=torch.channels_last) and not args[0].is_contiguous()))
    return seen


def test_on_a_cpu_the_cnn_computes_channels_last_and_leaves_in_the_default_layout():
    torch.manual_seed(0)
    model = models.build({"kind": "cnn", "channels": [4, 8], "depth": [1, 1]})
    seen = layouts_seen(model)
    train.train(model, TINY, train.TrainConfig(steps=3, batch_size=32, seed=0, **RECIPE), device="cpu")
    logits = train.predict(model, TINY, "cpu")
    assert seen and all(seen)  # every step and every prediction batch
    assert all(p.is_contiguous() for p in model.parameters())

    copy = models.build({"kind": "cnn", "channels": [4, 8], "depth": [1, 1]})
    copy.load_state_dict(model.state_dict())  # as the run cache reads it back
    np.testing.assert_array_equal(train.predict(copy, TINY, "cpu"), logits)


def test_on_a_cpu_the_vit_and_a_float64_cnn_keep_the_default_layout():
    torch.manual_seed(0)
    vit_model = models.build({"kind": "vit", "patch_size": 8, "embed_dim": 32, "depth": 1, "num_heads": 2})
    cnn64 = models.build({"kind": "cnn", "channels": [4, 8], "depth": [1, 1]}).double()
    for model in (vit_model, cnn64):
        seen = layouts_seen(model)
        train.train(model, TINY, train.TrainConfig(steps=2, batch_size=32, seed=0, **RECIPE), device="cpu")
        assert seen and not any(seen)


def test_a_cuda_device_computes_in_bf16_where_it_has_it(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert train.autocast_dtype("cuda") is torch.bfloat16


def test_a_cuda_device_without_bf16_computes_in_fp16_with_a_gradient_scaler(monkeypatch):
    # A T4: torch.cuda.is_bf16_supported() is False there.
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    reduced = train.autocast_dtype(torch.device("cuda"))
    assert reduced is torch.float16
    assert train.needs_scaler(reduced)


def test_the_cpu_trains_in_float32_with_no_autocast_and_no_scaler():
    assert train.autocast_dtype("cpu") is None
    assert not train.needs_scaler(None) and not train.needs_scaler(torch.bfloat16)
    assert not train._scaler(None).is_enabled()
    _, history = fit({"kind": "cnn"}, steps=3)
    assert history.precision == "float32" and history.device == "cpu"
