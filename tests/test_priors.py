"""The routes that put the convolution's prior back into a ViT, each checked where its definition is exact."""

import numpy as np
import pytest
import torch

from vitbias import cost, geometry, masks, models, priors, profile, runs, train, vit

SMALL = vit.ViTConfig(img_size=16, patch_size=4, num_classes=5, embed_dim=16, depth=2, num_heads=4, pool="mean")


def route_model(dtype=torch.float32, **routes):
    torch.manual_seed(0)
    return priors.RouteViT(SMALL, **routes).to(dtype).eval()


def test_hard_locality_puts_no_weight_outside_the_window():
    model = route_model(local_radius=1)
    assert model.config.num_prefix_tokens == 0                                    # the unread [CLS] dropped
    _, maps = model(torch.randn(2, 3, 16, 16), return_attention=True)            # (B, L, H, T, T)
    allowed = torch.as_tensor(masks.grid_local_mask(4, 4, 1, n_prefix=0))
    assert torch.all(maps[..., ~allowed] == 0)
    assert torch.all(maps[..., allowed] > 0)


def test_under_hard_locality_a_patch_two_blocks_away_cannot_move_a_patch_outside_its_reach():
    # radius 1, two blocks: patch (0, 0) reads at most (2, 2) away; a change at (3, 3) must not reach it
    for pool in ("mean", "cls"):
        torch.manual_seed(0)
        model = priors.RouteViT(SMALL.replace(pool=pool), local_radius=1).double().eval()
        x = torch.randn(1, 3, 16, 16, dtype=torch.float64)
        y = x.clone()
        y[..., 12:, 12:] += 1.0                                                   # patch (3, 3) only
        p = model.config.num_prefix_tokens
        tokens = [model.encode(image, None, False)[0][0, p] for image in (x, y)]  # patch (0, 0), (d,)
        torch.testing.assert_close(tokens[0], tokens[1], rtol=0, atol=0)


def test_with_cls_read_hard_locality_lets_cls_see_every_patch_and_no_patch_see_cls():
    mask = priors.without_relay(masks.grid_local_mask(4, 4, 1, n_prefix=1), 1)
    assert mask[0].all() and not mask[1:, 0].any()
    np.testing.assert_array_equal(mask[1:, 1:], masks.grid_local_mask(4, 4, 1, n_prefix=0))


def test_relative_bias_makes_the_model_invariant_to_every_whole_patch_circular_shift():
    model = route_model(torch.float64, relative_bias=True)
    with torch.no_grad():
        model.relative_table.normal_()                     # a trained-looking table, not zeros
    x = torch.randn(2, 3, 16, 16, dtype=torch.float64)
    logits = model(x)
    for shift in [(0, 4), (4, 0), (8, 12), (12, 4)]:
        moved = model(geometry.shift(x, shift))
        torch.testing.assert_close(moved, logits, rtol=0, atol=1e-12)


def test_the_plain_vit_with_its_position_table_is_not_shift_invariant():
    torch.manual_seed(0)
    model = vit.ViT(SMALL).double().eval()
    with torch.no_grad():
        model.pos_embed.normal_()
    x = torch.randn(2, 3, 16, 16, dtype=torch.float64)
    assert (model(geometry.shift(x, (0, 4))) - model(x)).abs().max() > 1e-6  # against 1e-12 with relative bias


def test_a_shift_that_is_not_a_whole_patch_breaks_the_relative_bias_models_invariance():
    model = route_model(torch.float64, relative_bias=True)
    x = torch.randn(2, 3, 16, 16, dtype=torch.float64)
    assert (model(geometry.shift(x, (0, 1))) - model(x)).abs().max() > 1e-6


def test_the_relative_bias_route_drops_the_absolute_position_table():
    assert route_model(relative_bias=True).pos_embed is None
    assert route_model(local_radius=1).pos_embed is not None


def gated_pair(gate: float):
    """A gated attention and a plain one with the same q, k, v and output weights."""
    torch.manual_seed(0)
    gated = priors.GatedAttention(16, 4, (4, 4), n_prefix=1, gate=gate).double()
    plain = vit.Attention(16, 4).double()
    plain.load_state_dict({k: v for k, v in gated.state_dict().items() if k in plain.state_dict()})
    return gated, plain


def test_a_closed_gate_is_plain_content_attention():
    gated, plain = gated_pair(gate=-float("inf"))
    x = torch.randn(2, 17, 16, dtype=torch.float64)
    _, mixed = gated(x, return_attention=True)
    _, content = plain(x, return_attention=True)
    torch.testing.assert_close(mixed, content, rtol=0, atol=1e-15)


def test_an_open_gate_gives_patch_queries_the_positional_weights_and_the_prefix_none():
    gated, _ = gated_pair(gate=float("inf"))
    _, weights = gated(torch.randn(2, 17, 16, dtype=torch.float64), return_attention=True)
    positional = gated.positional()                                             # (H, N_p, N_p)
    torch.testing.assert_close(weights[:, :, 1:, 1:], positional.expand(2, -1, -1, -1), rtol=0, atol=1e-15)
    assert torch.all(weights[:, :, 1:, 0] == 0)


def test_positional_heads_start_aimed_at_convits_offsets():
    np.testing.assert_array_equal(priors.convit_targets(4), [[-.5, -.5], [-.5, .5], [.5, -.5], [.5, .5]])
    np.testing.assert_array_equal(priors.convit_targets(9)[[0, 4, 8]], [[-1, -1], [0, 0], [1, 1]])
    gated, _ = gated_pair(gate=1.0)
    weights = gated.positional().detach()                                      # (H, 16, 16)
    query = 5                                                                   # patch (1, 1), interior
    for head, target in enumerate(priors.convit_targets(4)):
        best = weights[head, query].argmax().item()
        offset = np.array(divmod(best, 4)) - np.array(divmod(query, 4))
        assert np.abs(offset - target).max() == 0.5                            # one of the 4 nearest cells
    assert torch.sigmoid(gated.gate).detach().numpy() == pytest.approx(1 / (1 + np.exp(-1.0)))


def test_the_conv_stem_gives_the_patch_embeddings_token_layout():
    stem = priors.ConvStem(4, 3, 16)
    assert stem(torch.randn(2, 3, 16, 16)).shape == (2, 16, 16)
    with pytest.raises(ValueError, match="power of 2"):
        priors.ConvStem(6, 3, 16)


def test_the_distillation_token_has_its_own_head_in_training_and_the_mean_in_evaluation():
    model = route_model(distill=True)
    x = torch.randn(3, 3, 16, 16)
    model.train()
    logits, distilled = model(x)
    model.eval()
    torch.testing.assert_close(model(x), (logits + distilled) / 2)
    assert model.config.num_prefix_tokens == 2


def test_distillation_loss_is_the_mean_of_the_label_loss_and_the_teachers_label_loss():
    torch.manual_seed(0)
    logits, distilled = torch.randn(4, 5), torch.randn(4, 5)
    labels = torch.tensor([0, 1, 2, 3])
    teacher = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 16 * 16, 5))
    x = torch.randn(4, 3, 16, 16)
    taught = teacher(x).argmax(1)
    expected = 0.5 * torch.nn.functional.cross_entropy(logits, labels) + \
        0.5 * torch.nn.functional.cross_entropy(distilled, taught)
    torch.testing.assert_close(train._loss((logits, distilled), labels, teacher, x), expected)
    with pytest.raises(ValueError, match="distillation"):
        train._loss(logits, labels, teacher, x)


def test_a_distilled_run_names_the_cnn_of_the_same_size_seed_and_data_as_its_teacher():
    budget = profile.budget("quick")
    config = runs.experiment(budget, "vit", 125, 1, route={"distill": True})
    assert config["model"]["kind"] == "route" and config["model"]["distill"] is True
    assert config["train"]["teacher"] == runs.experiment(budget, "cnn", 125, 1)
    runs.check_config(config)
    assert runs.run_key(config) != runs.run_key(runs.experiment(budget, "vit", 125, 1))


@pytest.mark.parametrize("bad", [dict(gated=3), dict(gated=-1), dict(stem=1), dict(local_radius=-1),
                                 dict(local_radius=1.5)])
def test_bad_routes_are_refused(bad):
    with pytest.raises(ValueError):
        priors.RouteViT(SMALL, **bad)


def test_unknown_routes_and_routes_on_a_cnn_are_refused():
    budget = profile.budget("quick")
    with pytest.raises(ValueError, match="unknown routes"):
        models.build({**budget.vit, "kind": "route", "windows": 2})
    with pytest.raises(ValueError, match="route"):
        runs.experiment(budget, "cnn", 125, route={"stem": True})


def test_local_attention_costs_grow_linearly_with_the_patches_and_dense_attention_quadratically():
    d = 64
    local = [masks.local_attention_macs(g, g, 1, d, n_prefix=0) for g in (8, 16, 32)]
    dense = [cost.global_attention_macs(g * g, d) for g in (8, 16, 32)]
    assert local[0] == 2 * d * (3 * 8 - 2) ** 2          # per axis 3n - 2 pairs within distance 1
    assert [b / a for a, b in zip(local, local[1:])] == pytest.approx([4, 4], rel=0.1)
    assert [b / a for a, b in zip(dense, dense[1:])] == [16, 16]
    assert masks.local_attention_macs(4, 4, 3, d, n_prefix=0) == cost.global_attention_macs(16, d)
