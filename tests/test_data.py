"""The generated shapes and the CIFAR-10 reader, stated as properties."""

import pickle

import numpy as np
import pytest

from vitbias import data


def test_a_seed_fixes_every_image_and_label():
    a, b = data.shapes(1200, seed=3), data.shapes(1200, seed=3)
    np.testing.assert_array_equal(a.images, b.images)
    np.testing.assert_array_equal(a.labels, b.labels)
    c = data.shapes(1200, seed=4)
    assert not np.array_equal(a.images, c.images)


def test_smaller_sets_are_the_first_images_of_larger_ones():
    small, large = data.shapes(700, seed=1), data.shapes(2500, seed=1)
    np.testing.assert_array_equal(small.images, large.images[:700])
    np.testing.assert_array_equal(small.labels, large.head(700).labels)


def test_classes_are_balanced_in_every_block():
    for n in (1000, 3000):
        counts = np.bincount(data.shapes(n, seed=0).labels, minlength=10)
        assert counts.tolist() == [n // 10] * 10


def test_train_and_test_streams_share_no_image():
    train, test = data.shapes(1000, seed=0), data.shapes(1000, seed=0, split="test")
    flat = {image.tobytes() for image in train.images}
    assert not any(image.tobytes() in flat for image in test.images)


def test_texture_modes_control_the_texture_cue():
    none = data.shapes(1000, seed=2, texture="none")
    random = data.shapes(1000, seed=2, texture="random")
    predictive = data.shapes(1000, seed=2, texture="predictive")
    assert np.all(none.textures == data.TEXTURE_NAMES.index("plain"))
    np.testing.assert_array_equal(predictive.textures, predictive.labels)
    # random textures carry no information: each class wears many textures, near uniformly
    for k in range(10):
        assert len(np.unique(random.textures[random.labels == k])) >= 8
    # the modes share outlines and poses: only the inside of the objects differs
    np.testing.assert_array_equal(none.labels, random.labels)
    differ = np.any(none.images != random.images, axis=(1, 2, 3))
    assert differ.mean() > 0.8 and not differ[random.textures == data.TEXTURE_NAMES.index("plain")].any()


def test_outline_and_texture_are_drawn_independently():
    def draw(outline, texture):
        return data.render(np.array([outline]), np.array([texture]), np.random.default_rng(5))[0]

    base = draw(0, 0)
    other_texture, other_outline = draw(0, 4), draw(3, 0)
    changed_by_texture = np.any(base != other_texture, axis=0)
    changed_by_outline = np.any(base != other_outline, axis=0)
    assert changed_by_texture.any() and changed_by_outline.any()
    # a texture change touches only pixels inside the disk, a small part of the image
    assert changed_by_texture.mean() < 0.3


def test_cue_conflict_gives_every_image_another_class_texture():
    conflict = data.cue_conflict(500, seed=0)
    assert conflict.images.shape == (500, 3, 32, 32)
    assert np.all(conflict.labels != conflict.textures)
    assert np.bincount(conflict.labels, minlength=10).tolist() == [50] * 10
    assert set(np.unique(conflict.textures)) == set(range(10))


def test_other_classes_are_different_outlines():
    other = data.shapes(100, seed=0, classes="other")
    assert set(other.classes).isdisjoint(data.SHAPE_CLASSES) and len(other.classes) == 10


def test_an_object_in_a_band_never_reaches_the_quarter_of_columns_outside_it():
    n = 3000
    outlines = np.random.default_rng(0).integers(0, len(data.SHAPE_CLASSES), n)
    quarter = data.SIZE // 4
    for region, outside in (("left", slice(data.SIZE - quarter, None)), ("right", slice(0, quarter))):
        half, centre, angle = data.object_pose(n, np.random.default_rng(1), region=region)
        mask = data.object_mask(outlines, half, centre, angle)
        assert not mask[:, :, outside].any()
        assert mask.sum(axis=(1, 2)).min() > 0
    # without a band the objects reach every column
    half, centre, angle = data.object_pose(n, np.random.default_rng(1))
    assert data.object_mask(outlines, half, centre, angle).any(axis=(0, 1)).all()


def test_the_two_bands_are_mirror_images_drawn_from_the_same_numbers():
    half = np.random.default_rng(0).uniform(6.0, 10.0, 5000)
    left = data.object_centres(half, data.SIZE, np.random.default_rng(1), "left")
    right = data.object_centres(half, data.SIZE, np.random.default_rng(1), "right")
    anywhere = data.object_centres(half, data.SIZE, np.random.default_rng(1))
    np.testing.assert_allclose(right[:, 0] - left[:, 0], data.SIZE / 4, atol=1e-9)
    np.testing.assert_array_equal(left[:, 1], anywhere[:, 1])
    reach = data.reach(half, 10.0)
    assert np.all(left[:, 0] - reach >= 0) and np.all(left[:, 0] + reach <= 0.75 * data.SIZE + 1e-9)


def test_the_reach_of_a_turned_object_is_the_half_width_of_a_turned_square():
    assert data.reach(np.array([1.0]), 0.0)[0] == 1.0
    np.testing.assert_allclose(data.reach(np.array([2.0]), 45.0), [2 * np.sqrt(2)])


def test_a_region_moves_the_objects_and_leaves_labels_and_textures():
    plain, left, right = (data.shapes(1000, seed=2, texture="random", region=r) for r in (None, "left", "right"))
    np.testing.assert_array_equal(plain.labels, left.labels)
    np.testing.assert_array_equal(left.textures, right.textures)
    assert np.any(left.images != right.images, axis=(1, 2, 3)).all()
    train, test = data.load({"name": "shapes", "train": 3, "test": 2, "region": "left"})
    np.testing.assert_array_equal(train.images, data.shapes(3, region="left").images)
    assert train.images.shape == (3, 3, 32, 32) and test.images.shape == (2, 3, 32, 32)


@pytest.mark.parametrize("call, match", [
    (lambda: data.shapes(0), "positive integer"),
    (lambda: data.shapes(10, region="top"), "region must be"),
    (lambda: data.object_centres(np.ones(2), 32, np.random.default_rng(0), "middle"), "region must be"),
    (lambda: data.object_centres(np.full(2, 13.0), 32, np.random.default_rng(0), "left"), "does not fit"),
    (lambda: data.shapes(10, texture="stripes"), "texture must be"),
    (lambda: data.shapes(10, classes="all"), "classes must be"),
    (lambda: data.shapes(10, split="val"), "split must be"),
    (lambda: data.render([0, 1], [0], np.random.default_rng(0)), "equal length"),
    (lambda: data.render([12], [0], np.random.default_rng(0)), "outline indices"),
    (lambda: data.render([0], [0], np.random.default_rng(0), scale=(6, 20)), "scale"),
    (lambda: data.load({"name": "mnist", "train": 1, "test": 1}), "unknown dataset"),
    (lambda: data.load({"name": "shapes", "train": 0, "test": 1}), "positive integers"),
    (lambda: data.load({"name": "shapes", "train": 5, "test": 1, "colour": 1}), "unknown shapes options"),
    (lambda: data.ImageSet(np.zeros((2, 3, 4, 4)), np.zeros(2), (), (0,) * 3, (1,) * 3), "uint8"),
])
def test_bad_input_is_rejected(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------------------
# CIFAR-10, read from a small folder in the standard on-disk format.
# ---------------------------------------------------------------------------

def write_fake_cifar(root, per_batch=4, test=3):
    folder = root / data.CIFAR_FOLDER
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    batches = {}
    for name, n in [(f"data_batch_{i}", per_batch) for i in range(1, 6)] + [("test_batch", test)]:
        pixels = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
        labels = rng.integers(0, 10, n).tolist()
        with open(folder / name, "wb") as handle:
            pickle.dump({b"data": pixels, b"labels": labels, b"batch_label": name.encode()}, handle)
        batches[name] = (pixels, labels)
    names = [b"airplane", b"automobile", b"bird", b"cat", b"deer", b"dog", b"frog", b"horse", b"ship", b"truck"]
    with open(folder / "batches.meta", "wb") as handle:
        pickle.dump({b"label_names": names, b"num_vis": 3072}, handle)
    return folder, batches


def test_cifar10_reads_the_python_batches(tmp_path, monkeypatch):
    folder, batches = write_fake_cifar(tmp_path)
    monkeypatch.setenv(data.DATA_VARIABLE, str(tmp_path))
    train, test = data.cifar10("train"), data.cifar10("test")
    assert train.images.shape == (20, 3, 32, 32) and test.images.shape == (3, 3, 32, 32)
    assert train.classes[0] == "airplane" and train.classes[-1] == "truck"
    pixels, labels = batches["data_batch_2"]
    # row layout: 1024 red values, then green, then blue, each row by row
    assert train.images[4, 1, 2, 5] == pixels[0, 1024 + 2 * 32 + 5]
    assert train.labels[4:8].tolist() == labels
    np.testing.assert_array_equal(test.images.reshape(3, -1), batches["test_batch"][0])


def test_cifar10_subsets_are_nested_and_seeded(tmp_path, monkeypatch):
    write_fake_cifar(tmp_path)
    monkeypatch.setenv(data.DATA_VARIABLE, str(tmp_path))
    small, test = data.load({"name": "cifar10", "train": 5, "test": 2, "seed": 0})
    large, _ = data.load({"name": "cifar10", "train": 12, "test": 2, "seed": 0})
    np.testing.assert_array_equal(small.images, large.images[:5])
    assert len(test) == 2
    with pytest.raises(ValueError, match="CIFAR-10 has 20 training"):
        data.load({"name": "cifar10", "train": 21, "test": 2, "seed": 0})


def test_missing_cifar10_names_the_variable_the_folder_and_the_download(tmp_path, monkeypatch):
    monkeypatch.delenv(data.DATA_VARIABLE, raising=False)
    with pytest.raises(FileNotFoundError, match=data.DATA_VARIABLE):
        data.cifar10()
    monkeypatch.setenv(data.DATA_VARIABLE, str(tmp_path))
    with pytest.raises(FileNotFoundError) as error:
        data.cifar10()
    message = str(error.value)
    assert str(tmp_path / data.CIFAR_FOLDER) in message
    assert "data_batch_1" in message and data.CIFAR_URL in message


def test_a_set_drawn_on_several_cores_or_read_from_memory_is_the_set_drawn_anew(monkeypatch):
    fresh = data.shapes(2500, 5, texture="random")
    data._KEPT.clear()
    monkeypatch.setattr(data, "PARALLEL_BLOCKS", 2)
    monkeypatch.setattr(data, "_cores", lambda: 3)
    parallel = data.shapes(2500, 5, texture="random")
    smaller = data.shapes(1200, 5, texture="random")  # read from the kept set
    for field in ("images", "labels", "textures"):
        np.testing.assert_array_equal(getattr(parallel, field), getattr(fresh, field))
        np.testing.assert_array_equal(getattr(smaller, field), getattr(fresh, field)[:1200])
    smaller.images[:] = 0  # a caller's writes do not reach the kept set
    np.testing.assert_array_equal(data.shapes(1200, 5, texture="random").images, fresh.images[:1200])
