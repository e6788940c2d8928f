"""The patch shuffle: what it moves, and the theorem that a ViT does not notice it."""

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from vitbias import geometry, permute
from vitbias.vit import ViT, ViTConfig


def test_a_fraction_of_the_grid_moves_exactly_that_many_patches():
    for fraction, moved in ((0.0, 0), (0.25, 4), (0.5, 8), (1.0, 16)):
        order = permute.patch_permutation((4, 4), fraction, seed=3)
        assert sorted(order) == list(range(16))
        assert int((order != np.arange(16)).sum()) == moved


def test_the_permutation_is_fixed_by_its_seed_and_differs_across_seeds():
    assert np.array_equal(permute.patch_permutation((4, 4), 1.0, 7), permute.patch_permutation((4, 4), 1.0, 7))
    assert not np.array_equal(permute.patch_permutation((4, 4), 1.0, 7), permute.patch_permutation((4, 4), 1.0, 8))


def test_shuffled_images_keep_every_patch_intact_at_its_new_place():
    x = np.arange(2 * 3 * 8 * 12).reshape(2, 3, 8, 12)
    order = permute.patch_permutation((2, 3), 1.0, seed=0)
    moved = permute.permute_patches(x, order, 4)
    np.testing.assert_array_equal(geometry.patchify(moved, 4), geometry.patchify(x, 4)[:, order])
    inverse = np.argsort(order)
    np.testing.assert_array_equal(permute.permute_patches(moved, inverse, 4), x)
    t = torch.as_tensor(x)
    assert torch.equal(permute.permute_patches(t, order, 4), torch.as_tensor(moved))


@pytest.mark.parametrize("bad, match", [
    (dict(grid=(4, 4), fraction=1.5), "fraction"),
    (dict(grid=(4, 4), fraction=1 / 16), "one patch"),
    (dict(grid=(0, 4), fraction=0.5), "grid"),
])
def test_bad_dials_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        permute.patch_permutation(**bad)


def test_a_wrong_order_is_refused():
    with pytest.raises(ValueError, match="permutation"):
        permute.permute_patches(np.zeros((1, 3, 8, 8)), [0, 0, 1, 2], 4)
    with pytest.raises(ValueError, match="permutation"):
        permute.permute_positions(torch.zeros(1, 5, 2), [0, 1, 2], n_prefix=1)


@pytest.fixture
def one_thread():
    """Tensors this small only lose time to a second thread (and a lot of it on a busy machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


CONFIG = ViTConfig(img_size=16, patch_size=4, in_chans=3, embed_dim=16, depth=2, num_heads=2,
                   mlp_ratio=2.0, num_classes=5)


def _pair(config: ViTConfig, order):
    """A float64 ViT and its twin for shuffled images: same weights, position table permuted alike."""
    torch.manual_seed(0)
    model = ViT(config).double()
    twin = copy.deepcopy(model)
    with torch.no_grad():
        twin.pos_embed.copy_(permute.permute_positions(model.pos_embed, order, config.num_prefix_tokens))
    return model, twin


@pytest.mark.parametrize("pool", ["cls", "mean"])
def test_a_vit_with_its_positions_permuted_alike_computes_the_same_function_on_shuffled_images(pool, one_thread):
    config = CONFIG.replace(class_token=pool == "cls", pool=pool)
    order = permute.patch_permutation((4, 4), 1.0, seed=1)
    model, twin = _pair(config, order)
    x = torch.randn(6, 3, 16, 16, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(twin(permute.permute_patches(x, order, 4)), model(x), rtol=0, atol=1e-12)


def test_training_on_shuffled_images_follows_the_same_trajectory(one_thread):
    """Fifty AdamW steps in float64: the losses agree to rounding, and the twin's
    position table stays the permuted table of the original's."""
    order = permute.patch_permutation((4, 4), 1.0, seed=2)
    model, twin = _pair(CONFIG, order)
    generator = torch.Generator().manual_seed(0)
    images = torch.randn(64, 3, 16, 16, generator=generator, dtype=torch.float64)
    labels = torch.randint(0, 5, (64,), generator=generator)
    shuffled = permute.permute_patches(images, order, 4)
    optimisers = [torch.optim.AdamW(m.parameters(), lr=3e-3) for m in (model, twin)]
    gaps, first = [], None
    for step in range(50):
        batch = torch.arange(16) + 16 * (step % 4)
        losses = []
        for m, opt, x in zip((model, twin), optimisers, (images, shuffled)):
            loss = F.cross_entropy(m(x[batch]), labels[batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        gaps.append(abs(losses[0] - losses[1]))
        first = first if step else losses[0]
    assert max(gaps) < 1e-10
    assert losses[0] < 0.8 * first  # it did learn: the trajectory is not a trivial one
    torch.testing.assert_close(twin.pos_embed, permute.permute_positions(model.pos_embed, order, 1),
                               rtol=0, atol=1e-10)


def test_a_convolution_does_notice_the_shuffle():
    """The same 3 x 3 convolution on shuffled images is not the shuffled output: locality broke."""
    order = permute.patch_permutation((4, 4), 1.0, seed=1)
    x = torch.randn(1, 3, 16, 16, dtype=torch.float64)
    conv = torch.nn.Conv2d(3, 4, 3, padding=1).double()
    with torch.no_grad():
        gap = (conv(permute.permute_patches(x, order, 4)) - permute.permute_patches(conv(x), order, 4)).abs().max()
    assert gap > 0.1


def test_the_trainer_keeps_the_theorem_with_augmentation_before_the_shuffle(one_thread):
    """The book's trainer, crop and flip on: a float64 ViT on images and its twin on shuffled images."""
    from vitbias import data, train, twins

    images = data.shapes(48, seed=0)
    order = permute.patch_permutation((4, 4), 1.0, seed=0)
    spec = {"kind": "vit", "img_size": 32, "patch_size": 8, "embed_dim": 16, "depth": 1, "num_heads": 2}
    recipe = train.TrainConfig(steps=12, batch_size=16, lr=3e-3, weight_decay=0.05, schedule="cosine",
                              augment=True, seed=0)
    losses, drift = twins.twin_trainings(spec, images, recipe, order, 8)
    assert losses.shape == (2, 12)
    assert np.abs(losses[0] - losses[1]).max() < 1e-10 and drift < 1e-10
    assert losses[0, -3:].mean() < losses[0, :3].mean()
    with pytest.raises(ValueError, match="patches"):
        twins.twin_trainings(spec, images, recipe, order, 4)
    with pytest.raises(ValueError, match="ViT"):
        twins.twin_trainings({"kind": "cnn"}, images, recipe, order, 8)


# --- scrambles: patch orders, pixel orders, worlds --------------------------------------------------------

def _random_orders(rng, grid=4, patch=8):
    return rng.permutation(grid * grid), rng.permutation(patch * patch)


def test_a_scramble_moves_whole_patches_and_the_same_pixels_inside_every_patch():
    from vitbias.geometry import patchify

    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 32, 32))
    patch_order, pixel_order = _random_orders(rng)
    out = patchify(permute.scramble(x, 8, patch_order, pixel_order), 8).reshape(2, 16, 3, 64)
    original = patchify(x, 8).reshape(2, 16, 3, 64)
    assert np.array_equal(out, original[:, patch_order][..., pixel_order])
    assert np.array_equal(permute.scramble(x, 8, patch_order), permute.permute_patches(x, patch_order, 8))
    assert np.array_equal(permute.scramble(x, 8), x)
    t = torch.as_tensor(x)
    assert torch.equal(permute.scramble(t, 8, patch_order, pixel_order),
                       torch.as_tensor(permute.scramble(x, 8, patch_order, pixel_order)))


@pytest.mark.parametrize("pool, class_token", [("mean", True), ("cls", True), ("mean", False)])
def test_a_vit_absorbs_every_patch_and_pixel_order_exactly(pool, class_token):
    rng = np.random.default_rng(1)
    config = ViTConfig(img_size=32, patch_size=8, num_classes=10, embed_dim=16, depth=2, num_heads=2,
                           pool=pool, class_token=class_token)
    torch.manual_seed(0)
    model = ViT(config).double().eval()
    x = torch.as_tensor(rng.normal(size=(3, 3, 32, 32)))
    for _ in range(3):
        patch_order, pixel_order = _random_orders(rng)
        twin = permute.absorb(model, patch_order, pixel_order)
        gap = (twin(permute.scramble(x, 8, patch_order, pixel_order)) - model(x)).abs().max()
        assert gap < 1e-12


def test_a_different_pixel_order_in_every_patch_or_one_over_all_pixels_is_not_absorbed():
    torch.manual_seed(0)
    model = ViT(ViTConfig(img_size=32, patch_size=8, num_classes=10, embed_dim=16, depth=2,
                          num_heads=2)).double().eval()
    x = torch.as_tensor(np.random.default_rng(2).normal(size=(3, 3, 32, 32)))
    for control in ("per_patch", "global"):
        world = {"patch": 8, "shuffle_patches": False, "block": 0, "control": control, "seed": 0}
        moved = permute.rearrange(x, permute.world_index(world, 32))
        # the best a ViT can do by absorbing: the identity orders (it has no per-patch weights)
        assert (model(moved) - model(x)).abs().max() > 1e-3


def test_a_block_pixel_order_keeps_every_pixel_inside_its_block():
    order = permute.block_pixel_order(8, 4, seed=0)
    rows, cols = np.divmod(np.arange(64), 8)
    assert np.array_equal(rows[order] // 4, rows // 4) and np.array_equal(cols[order] // 4, cols // 4)
    assert not np.array_equal(order, np.arange(64))
    assert np.array_equal(permute.block_pixel_order(8, 1), np.arange(64))


def test_the_worlds_of_the_ladder_are_absorbed_scrambles_and_the_controls_are_not():
    for block in (0, 2, 4, 8):
        world = {"patch": 8, "shuffle_patches": True, "block": block, "control": None, "seed": 0}
        index = permute.world_index(world, 32)
        patch_order = permute.patch_permutation((4, 4), 1.0, 0)
        pixel_order = permute.block_pixel_order(8, block, 1) if block else None
        assert np.array_equal(index, permute.scramble_index(32, 8, patch_order, pixel_order))
    per_patch = permute.world_index({"patch": 8, "shuffle_patches": False, "block": 0, "control": "per_patch",
                                     "seed": 0}, 32)
    assert np.array_equal(np.sort(per_patch), np.arange(1024))
    # a per-patch control keeps every pixel in its patch, but no single pixel order describes it
    spots = permute.scramble_index(32, 8).reshape(16, 64)
    assert all(set(per_patch[cells]) == set(cells) for cells in spots)


def test_a_world_is_applied_to_every_batch_after_augmentation_and_to_the_test_set_once(tmp_path):
    from vitbias import profile, runs

    budget = profile.budget("quick")
    world = {"patch": 8, "shuffle_patches": True, "block": 4, "control": None, "seed": 0}
    config = runs.experiment(budget, "cnn", 50, 0, world=world)
    train_set, test_set, move = runs.inputs({**config["data"], "test": 10})
    plain_train, plain_test, _ = runs.inputs({**runs.experiment(budget, "cnn", 50, 0)["data"], "test": 10})
    assert np.array_equal(train_set.images, plain_train.images)
    assert np.array_equal(test_set.images, permute.rearrange(plain_test.images, move["rearrange"]))
    with pytest.raises(ValueError, match="not both"):
        runs.experiment(budget, "vit", 50, 0, world=world, permute=1.0)


@pytest.mark.parametrize("call, match", [
    (lambda: permute.scramble(np.zeros((3, 32, 32)), 8, np.arange(15)), "permutation of the 16 patches"),
    (lambda: permute.scramble(np.zeros((3, 32, 32)), 8, None, np.arange(64)[::-1] % 63), "pixels"),
    (lambda: permute.scramble(np.zeros((3, 32, 32)), 6), "divide"),
    (lambda: permute.block_pixel_order(8, 3), "divide"),
    (lambda: permute.world_index({"patch": 8}, 32), "keys"),
    (lambda: permute.world_index({"patch": 8, "shuffle_patches": True, "block": 0, "control": "all",
                                  "seed": 0}, 32), "control"),
    (lambda: permute.absorb(torch.nn.Linear(2, 2), None, None), "ViT"),
])
def test_bad_scrambles_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_twin_trainings_with_a_pixel_order_follow_the_same_trajectory_in_float64(one_thread):
    """The theorem, extended: patches shuffled and pixels permuted inside every patch, through the trainer."""
    from vitbias import data, train, twins

    images = data.shapes(48, seed=0)
    rng = np.random.default_rng(3)
    order, pixel_order = rng.permutation(16), rng.permutation(64)
    spec = {"kind": "vit", "img_size": 32, "patch_size": 8, "embed_dim": 16, "depth": 1, "num_heads": 2}
    recipe = train.TrainConfig(steps=12, batch_size=16, lr=3e-3, weight_decay=0.05, schedule="cosine",
                              augment=True, seed=0)
    losses, drift = twins.twin_trainings(spec, images, recipe, order, 8, pixel_order=pixel_order)
    assert np.abs(losses[0] - losses[1]).max() < 1e-10 and drift < 1e-10
    # the original's trajectory is the same whichever scramble its twin absorbs
    model_losses = twins.twin_trainings(spec, images, recipe, order, 8)[0]
    assert np.abs(model_losses[0] - losses[0]).max() == 0.0
