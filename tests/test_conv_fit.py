"""Fitting a convolution by gradient descent, stated as properties."""

import numpy as np
import pytest
import torch

from vitbias import conv_fit as cf
from vitbias import geometry


def test_the_attention_layer_with_heads_on_the_offsets_computes_the_convolution():
    kernel = cf.target_kernel(3)
    layer = cf.PositionalAttention(*cf.CHANNELS, cf.KERNEL**2)
    offsets, taps = geometry.kernel_offsets(cf.KERNEL, 2), kernel.reshape(kernel.shape[0], kernel.shape[1], -1)
    with torch.no_grad():
        layer.centres.copy_(torch.as_tensor(offsets, dtype=torch.float32))
        layer.log_alpha.fill_(np.log(40.0))  # exp(-40) is below float32's rounding unit next to 1
        layer.values.copy_(taps.permute(2, 1, 0))
    X, _ = cf.examples(4, kernel, seed=0, noise=0.0)
    torch.testing.assert_close(layer(X), geometry.circular_conv(X, kernel), rtol=0, atol=1e-5)


def multi_head_construction(kernel, content: float = 0.0) -> cf.MultiHeadAttention:
    """The multi-head layer set to the construction: each head's bias peaked on its offset, content
    weights scaled by ``content`` (0: off)."""
    layer = cf.MultiHeadAttention(*cf.CHANNELS, cf.KERNEL**2)
    offsets, taps = geometry.kernel_offsets(cf.KERNEL, 2), kernel.reshape(kernel.shape[0], kernel.shape[1], -1)
    with torch.no_grad():
        layer.query.mul_(content)
        layer.key.mul_(content)
        layer.bias.zero_()
        for j, (r, c) in enumerate(offsets):
            layer.bias[j, (r % cf.GRID) * cf.GRID + c % cf.GRID] = 40.0
        layer.values.copy_(taps.permute(2, 1, 0))
    return layer


def test_the_multi_head_layer_with_its_content_off_and_each_bias_peaked_on_an_offset_computes_the_convolution():
    kernel = cf.target_kernel(3)
    layer = multi_head_construction(kernel)
    X, _ = cf.examples(4, kernel, seed=0, noise=0.0)
    torch.testing.assert_close(layer(X), geometry.circular_conv(X, kernel), rtol=0, atol=1e-5)
    centres, peaks = cf.head_peaks(layer)
    np.testing.assert_array_equal(centres, geometry.kernel_offsets(cf.KERNEL, 2))
    np.testing.assert_allclose(peaks, 1.0, atol=1e-6)
    assert cf.content_share(layer, kernel, seed=0) == pytest.approx(0.0, abs=1e-6)


def test_the_content_moves_the_heads_of_a_layer_whose_content_weights_are_on():
    kernel = cf.target_kernel(3)
    layer = cf.MultiHeadAttention(*cf.CHANNELS, cf.KERNEL**2)   # biases near zero: content decides
    assert cf.content_share(layer, kernel, seed=0) > 0.2
    with torch.no_grad():
        layer.query.zero_()
    assert cf.content_share(layer, kernel, seed=0) == pytest.approx(0.0, abs=1e-6)


def test_the_noise_floor_is_the_share_of_the_targets_that_is_noise():
    floor = cf.noise_floor(200, seed=1)
    assert floor == pytest.approx(cf.NOISE**2 / (1 + cf.NOISE**2), rel=0.1)


def test_a_fit_reports_its_error_on_its_own_training_set():
    one = cf.fit("multi-head", 1, seed=0)
    assert one.train_error < 0.05 < one.error          # one image: memorised, not learned
    assert one.content is not None and one.centres.shape == (cf.KERNEL**2, 2)
    many = cf.fit("convolution", 16, seed=0)
    assert many.train_error == pytest.approx(cf.noise_floor(16, seed=0), abs=0.05)


def test_the_targets_are_the_convolution_plus_noise_of_the_stated_size():
    kernel = cf.target_kernel()
    X, clean = cf.examples(200, kernel, seed=1, noise=0.0)
    _, noisy = cf.examples(200, kernel, seed=1)
    torch.testing.assert_close(clean, geometry.circular_conv(X, kernel))
    assert float((noisy - clean).std()) == pytest.approx(cf.NOISE, rel=0.05)
    assert float(clean.std()) == pytest.approx(1.0, rel=0.2)


def test_a_fit_is_fixed_by_its_seed():
    a, b = cf.fit("attention", 2, seed=4), cf.fit("attention", 2, seed=4)
    assert a.error == b.error
    np.testing.assert_array_equal(a.centres, b.centres)


def test_a_sweep_stored_in_a_folder_is_fitted_once_and_read_back_as_it_was_fitted(tmp_path, monkeypatch):
    fitted = cf.sweep((1,), (0,), folder=tmp_path)
    assert [(f.layer, f.n, f.seed) for f in fitted] == [(name, 1, 0) for name in cf.LAYERS]
    (entry,) = tmp_path.iterdir()
    assert entry.name == cf.sweep_key((1,), (0,)) and entry.name != cf.sweep_key((1,), (1,))

    def no_fitting(*args, **kwargs):
        raise AssertionError("a stored sweep was fitted again")

    monkeypatch.setattr(cf, "fit", no_fitting)
    read = cf.sweep((1,), (0,), folder=tmp_path)
    for a, b in zip(fitted, read):
        assert (a.layer, a.error, a.train_error, a.content) == (b.layer, b.error, b.train_error, b.content)
        for field in ("centres", "alphas", "peaks"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    with pytest.raises(AssertionError, match="fitted again"):
        cf.sweep((1,), (1,), folder=tmp_path)


def test_the_convolution_layer_learns_its_own_kernel_better_from_more_images():
    errors = [cf.fit("convolution", n, seed=0).error for n in (1, 16)]
    assert errors[1] < errors[0] / 4 and errors[1] < 0.02


def test_settled_offsets_pairs_each_offset_with_its_own_head():
    offsets = geometry.kernel_offsets(3, 2).astype(float)
    assert cf.settled_offsets(offsets[::-1]) == (9, 0.0)
    moved = offsets.copy()
    moved[4] += (0.3, 0.4)
    count, largest = cf.settled_offsets(moved)
    assert count == 8 and largest == pytest.approx(0.5)
    # two heads on one offset settle it once: the other offset stays open
    doubled = offsets.copy()
    doubled[0] = doubled[1]
    assert cf.settled_offsets(doubled)[0] == 8


def test_a_head_on_an_offset_with_a_large_sharpness_is_a_lookup_and_a_head_between_pixels_is_not():
    peaks = cf.peak_weights(np.array([[1.0, 0.0], [0.5, 0.0], [0.0, 0.0]]), np.array([40.0, 40.0, 0.01]))
    assert peaks[0] == pytest.approx(1.0, abs=1e-12)
    assert peaks[1] == pytest.approx(0.5, abs=1e-6)   # halfway between two pixels: half each
    assert peaks[2] < 2 / cf.GRID**2                  # a flat head: about 1 / N


@pytest.mark.parametrize("call, match", [
    (lambda: cf.peak_weights(np.zeros((2, 2)), np.array([1.0, -1.0])), "positive alphas"),
    (lambda: cf.make_layer("mlp"), "layer must be"),
    (lambda: cf.examples(0, cf.target_kernel(), 0), "positive integer"),
    (lambda: cf.examples(3, cf.target_kernel(), 0, noise=-1.0), "noise"),
    (lambda: cf.fit("convolution", 2, seed=-1), "seed"),
    (lambda: cf.settled_offsets(np.zeros((4, 2))), "centres must be"),
    (lambda: cf.sweep((), (0,)), "positive integer sizes"),
    (lambda: cf.sweep((0,), (0,)), "positive integer sizes"),
    (lambda: cf.sweep((1,), ()), "at least one seed"),
])
def test_bad_input_is_rejected(call, match):
    with pytest.raises(ValueError, match=match):
        call()
