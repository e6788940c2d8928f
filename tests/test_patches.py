"""The patch embedding two ways, the jigsaw, and what a token keeps."""

import numpy as np
import pytest
import torch
from timm.layers import PatchEmbed

from vitbias import geometry, patches


def random_images(shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def test_the_linear_map_on_patches_and_the_strided_convolution_are_the_same_map():
    x = random_images((2, 3, 224, 224))
    conv = torch.nn.Conv2d(3, 768, 16, stride=16)
    with torch.no_grad():
        linear = patches.embed_linear(x, conv.weight, conv.bias)
        strided = patches.embed_conv(x, conv.weight, conv.bias)
        exact = [f(x.double(), conv.weight.double(), conv.bias.double())
                 for f in (patches.embed_linear, patches.embed_conv)]
    assert linear.shape == (2, 196, 768)
    assert (exact[0] - exact[1]).abs().max() <= 1e-12
    # float32: two orders of summing 768 products differ by rounding only, within
    # the classical bound D u sum_i |w_i x_i| for each output (u = 2^-24)
    magnitude = geometry.patchify(x, 16).abs() @ conv.weight.detach().reshape(768, -1).abs().T
    bound = 768 * 2.0**-24 * magnitude
    assert torch.all((linear - strided).abs() <= bound)


def test_the_linear_map_equals_timms_patch_embedding():
    embed = PatchEmbed(img_size=32, patch_size=4, in_chans=3, embed_dim=16)
    x = random_images((2, 3, 32, 32))
    with torch.no_grad():
        torch.testing.assert_close(patches.embed_linear(x, embed.proj.weight, embed.proj.bias),
                                   embed(x), rtol=0, atol=1e-6)


def test_a_jigsaw_reorders_the_patch_rows_and_nothing_else():
    x = random_images((2, 3, 8, 8))
    order = torch.tensor([3, 0, 2, 1])
    assert torch.equal(geometry.patchify(patches.jigsaw(x, 4, order), 4), geometry.patchify(x, 4)[:, order])


def test_the_pseudoinverse_gives_back_every_patch_when_the_embedding_is_invertible():
    rng = np.random.default_rng(0)
    P, E = rng.standard_normal((50, 12)), rng.standard_normal((12, 12))
    assert patches.pinv_reconstruction_error(P, E) < 1e-10


def test_a_random_embedding_keeps_d_over_D_of_the_energy_on_average():
    # A random d-dimensional row space keeps a share d/D of any fixed vector's
    # energy in expectation, so the relative error is about sqrt(1 - d/D).
    rng = np.random.default_rng(1)
    P = rng.standard_normal((400, 64)) @ rng.standard_normal((64, 64))  # correlated patches
    errors = [patches.pinv_reconstruction_error(P, rng.standard_normal((16, 64))) for _ in range(200)]
    assert np.mean(np.square(errors)) == pytest.approx(1 - 16 / 64, abs=0.02)


def test_no_embedding_of_a_given_rank_beats_the_best_linear_one():
    rng = np.random.default_rng(2)
    P = rng.standard_normal((300, 32)) * np.geomspace(3, 0.1, 32)
    best = patches.best_linear_error(P, 8)
    assert best == pytest.approx(patches.pinv_reconstruction_error(P, patches.best_linear_basis(P, 8)), abs=1e-12)
    for _ in range(20):
        assert patches.pinv_reconstruction_error(P, rng.standard_normal((8, 32))) >= best
    assert patches.best_linear_error(P, 32) < 1e-7 and patches.best_linear_error(P, 0) == pytest.approx(1.0)


def test_power_law_images_are_normalised_deterministic_and_have_the_requested_slope():
    a = patches.power_law_images(4, 64, exponent=1.0, seed=3)
    assert a.shape == (4, 3, 64, 64) and a.dtype == torch.float32
    assert torch.equal(a, patches.power_law_images(4, 64, exponent=1.0, seed=3))
    torch.testing.assert_close(a.mean(dim=(1, 2, 3)), torch.zeros(4), rtol=0, atol=1e-5)
    torch.testing.assert_close(a.std(dim=(1, 2, 3), unbiased=False), torch.ones(4), rtol=0, atol=1e-4)
    for exponent in (0.5, 1.0, 1.5):
        x = patches.power_law_images(32, 64, exponent=exponent, seed=4).numpy()
        amplitude = np.abs(np.fft.fft2(x)).mean(axis=(0, 1))
        f = np.hypot(*np.meshgrid(np.fft.fftfreq(64), np.fft.fftfreq(64), indexing="ij"))
        band = (f > 0.02) & (f < 0.4)
        slope = np.polyfit(np.log(f[band]), np.log(amplitude[band]), 1)[0]
        assert slope == pytest.approx(-exponent, abs=0.05)


def test_bad_inputs_raise_value_errors():
    x = random_images((1, 3, 8, 8))
    with pytest.raises(ValueError, match="permutation"):
        patches.jigsaw(x, 4, [0, 0, 1, 2])
    with pytest.raises(ValueError, match="does not fit"):
        patches.embed_linear(x, torch.zeros(5, 1, 4, 4), torch.zeros(5))
    with pytest.raises(ValueError, match="weight must be"):
        patches.pinv_reconstruction_error(np.ones((4, 6)), np.ones((2, 5)))
    with pytest.raises(ValueError, match="shapes differ"):
        patches.relative_error(np.ones((4, 6)), np.ones((4, 5)))
    with pytest.raises(ValueError, match="rank"):
        patches.best_linear_error(np.ones((4, 6)), 7)
    with pytest.raises(ValueError, match="exponent"):
        patches.power_law_images(1, 8, exponent=-1.0)
