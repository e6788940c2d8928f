"""The attention-conv chapter's evidence (``vitbias.chapters.attention_conv``), on made-up fits and runs."""

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from vitbias import conv_fit, geometry
from vitbias.chapters import attention_conv as chapter
from vitbias.evidence import Evidence

PAGE = Path(__file__).parent.parent / "book" / "attention-conv.md"
VIT_B = {"num_heads": 12, "head_dim": 64, "embed_dim": 768}
FLOORS = {s: conv_fit.noise_floor(chapter.SIZES[-1], s) for s in chapter.SEEDS}


# The tensors here are small: one thread is faster than several contending for them.
pytestmark = pytest.mark.usefixtures("one_thread")


def made_up_fits(conv_error=lambda n, s: 0.1 / n + 1e-4 * s, content=lambda n, s: 0.5 / n + 1e-4 * s,
                 train_off_floor=0.01, centres=None):
    """Every layer at every size and seed: errors falling with ``n``, training errors ``train_off_floor``
    above the noise floor at the largest size, positional heads on ``centres`` (the kernel offsets)."""
    offsets = geometry.kernel_offsets(conv_fit.KERNEL, dim=2).astype(float)
    centres = offsets if centres is None else centres
    fits = []
    for name in conv_fit.LAYERS:
        for n in chapter.SIZES:
            for s in chapter.SEEDS:
                train = FLOORS[s] + train_off_floor if n == chapter.SIZES[-1] else 0.01
                fits.append(SimpleNamespace(
                    layer=name, n=n, seed=s, error=conv_error(n, s) * (1.5 if name == "attention" else 1.0),
                    train_error=train, centres=centres, alphas=np.full(len(centres), 20.0),
                    peaks=np.full(len(centres), 0.9), content=content(n, s)))
    return fits


def fitted(fits) -> Evidence:
    found = Evidence("attention-conv")
    keyed = chapter.by_key(fits)
    chapter._fitted(found, keyed)
    chapter._multi_head(found, keyed)
    return found


def test_every_claim_the_page_asserts_is_one_measure_makes_and_backs(monkeypatch):
    # ViT-B's shape as timm builds it, without importing timm
    monkeypatch.setattr(chapter.ac, "timm_attention_shape", lambda name: dict(VIT_B, depth=12))
    asserted = set(re.findall(r'assert evidence\.claims\["([^"]+)"\]', PAGE.read_text()))
    found = chapter.measure(32, (2.0, 10.0), made_up_fits())
    assert asserted == set(found.claims)
    assert all(found.claims.values()), [name for name, holds in found.claims.items() if not holds]


def test_the_head_weights_are_the_softmax_of_minus_alpha_times_the_squared_distance_to_the_target():
    found = Evidence("attention-conv")
    chapter._one_head(found, 32, (2.0, 10.0))
    offsets = (np.arange(32) + 16) % 32 - 16                     # the circular offsets of the keys
    for alpha, name in ((2.0, "aconv_p_target_soft"), (10.0, "aconv_p_target_sharp")):
        assert found[name] == pytest.approx(1 / np.exp(-alpha * (offsets - 1) ** 2).sum(), rel=1e-12)
    assert found["aconv_alpha_soft"] == 2 and found["aconv_n"] == 32


def test_the_encoding_has_one_number_more_per_offset_than_the_grid_has_dimensions():
    found = Evidence("attention-conv")
    chapter._encoding(found)
    assert (found["aconv_encoding_1d"], found["aconv_encoding_2d"]) == (2, 3)


def test_drawing_the_pages_random_inputs_leaves_the_global_generator_as_it_was():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    mha, offsets = chapter.attention_and_convolution_differences()
    assert torch.equal(torch.rand(3), expected)
    assert 0 <= mha < chapter.MHA_BOUND and offsets < chapter.OFFSET_SUM_AGREES


def test_an_error_that_rises_once_breaks_the_claim_that_it_falls_at_every_step():
    run = chapter.convergence_1d(32)
    found = Evidence("attention-conv")
    chapter._convergence(found, run)
    assert found.claims["the error falls at every step of alpha and stays under the bound"]
    error64 = run.error64.copy()
    error64[10] = error64[9] * 1.01
    bumped = Evidence("attention-conv")
    chapter._convergence(bumped, dataclasses.replace(run, error64=error64))
    assert not bumped.claims["the error falls at every step of alpha and stays under the bound"]


def test_a_value_at_an_alpha_the_run_lacks_is_refused():
    run = SimpleNamespace(alphas=np.array([1.0, 2.0]))
    assert chapter.at(2, run, np.array([5.0, 6.0])) == 6.0
    with pytest.raises(ValueError, match="no alpha = 3"):
        chapter.at(3, run, np.array([5.0, 6.0]))


def test_vit_b_holds_a_3_by_3_convolution_with_64_of_its_768_channels():
    found = Evidence("attention-conv")
    chapter._vit_b(found, VIT_B)
    names = ("k", "channels", "spare_heads", "full_heads", "full_over_heads", "width_over_channels")
    assert [found[f"aconv_vitb_{name}"] for name in names] == [3, 64, 3, 108, 9, 12]
    assert all(found.claims.values())


def test_a_layer_whose_ratios_are_not_whole_numbers_is_refused():
    with pytest.raises(ValueError, match="whole numbers"):
        chapter._vit_b(Evidence("attention-conv"), dict(VIT_B, num_heads=10))


def test_heads_on_every_offset_in_every_seed_read_as_the_construction():
    found = fitted(made_up_fits())
    assert found["aconv_fit_reading_text"] == chapter.READING["construction"]
    assert found["aconv_fit_settled_text"] == "in at least one seed the nine heads settled on the nine offsets"
    assert found["aconv_fit_settled_total"] == conv_fit.KERNEL**2 * len(chapter.SEEDS)
    assert found["aconv_fit_mult_grid_text"] == "in every seed the biases found the whole grid"
    assert found["aconv_fit_conv_large"] == pytest.approx(0.1 / 64 + 1e-4, rel=1e-12)


def test_heads_that_never_settle_read_by_the_paired_test_of_the_errors():
    away = geometry.kernel_offsets(conv_fit.KERNEL, dim=2).astype(float) + 0.5
    found = fitted(made_up_fits(centres=away))
    assert found["aconv_fit_settled_text"] == "in no seed did the nine heads settle on the nine offsets"
    assert found["aconv_fit_reading_text"] == chapter.READING["worse"]        # 1.5 times the convolution's
    assert found["aconv_fit_mult_grid_text"] == "the biases found the grid only in part"


def test_the_claims_of_the_fits_turn_false_when_the_made_up_numbers_say_otherwise():
    rising = fitted(made_up_fits(conv_error=lambda n, s: 0.01 * np.log(n + 1) + 1e-4 * s))
    assert not rising.claims["the convolution's error falls as the images grow, on average over the seeds"]
    growing = fitted(made_up_fits(content=lambda n, s: 0.01 * n + 1e-3 * s))
    assert not growing.claims["the content's pull is less at the largest size than at the smallest, in every seed"]
    assert growing["aconv_fit_content_text"] == chapter.CONTENT_TEXT["more"]
    assert fitted(made_up_fits())["aconv_fit_content_text"] == chapter.CONTENT_TEXT["less"]
    above = fitted(made_up_fits(train_off_floor=0.04))
    assert not above.claims["at the largest size every layer fits its training set as far as the noise allows"]


def test_a_sweep_missing_a_fit_is_refused():
    fits = made_up_fits()
    with pytest.raises(ValueError, match="lacks the fits"):
        chapter.by_key(fits[1:])
