"""The attention-conv chapter's evidence (``vitbias.chapters.attention_conv``), on made-up fits and runs."""

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from vitbias import attention_conv as ac
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
    """The evidence of the two fit sections, on ``fits`` keyed and shaped as the page does it."""
    found = Evidence("attention-conv")
    keyed = chapter.by_key(fits)
    chapter.fitted_layers(found, errors_of(keyed), positional_heads(keyed))
    chapter.multi_head_layer(found, keyed)
    return found


def errors_of(keyed) -> dict:
    """``{layer: (sizes, seeds)}``: the relative test errors of ``keyed``'s fits."""
    return {name: np.array([[keyed[name, n, s].error for s in chapter.SEEDS] for n in chapter.SIZES])
            for name in conv_fit.LAYERS}


def positional_heads(keyed) -> list:
    """The positional layer's fits at the largest size, one per seed."""
    return [keyed["attention", chapter.SIZES[-1], s] for s in chapter.SEEDS]


def head_weights(n=32, alphas=(2.0, 10.0)) -> dict:
    """``{alpha: (n,)}``: the query at position 0's weights, of a head aimed at offset +1."""
    return {alpha: ac.positional_attention((n,), targets=[[1]], alpha=alpha)[0, 0] for alpha in alphas}


def run_1d(n=32):
    """The construction against a three-tap kernel, drawn with the page's seed."""
    generator = torch.Generator().manual_seed(0)
    signal = torch.randn(1, 1, n, generator=generator, dtype=torch.float64)
    taps = torch.randn(1, 1, 3, generator=generator, dtype=torch.float64)
    return ac.convergence(signal, taps, alphas=np.arange(2, 121) / 4)


def run_2d():
    """The construction against a 3 x 3 kernel with a bias, drawn with the page's seed."""
    generator = torch.Generator().manual_seed(1)
    image = torch.randn(2, 3, 16, 16, generator=generator, dtype=torch.float64)
    kernel = torch.randn(4, 3, 3, 3, generator=generator, dtype=torch.float64)
    bias = torch.randn(4, generator=generator, dtype=torch.float64)
    return ac.convergence(image, kernel, alphas=[1, 2, 5, 10, 20], bias=bias)


def head_maps(alphas=(0.5, 2.0, 8.0), grid=(7, 7)) -> np.ndarray:
    """``(alphas, 9, *grid)``: the nine offset heads' attention from the grid's centre pixel."""
    offsets = geometry.kernel_offsets(3, dim=2)
    centre = np.ravel_multi_index(tuple(side // 2 for side in grid), grid)
    return np.stack([ac.positional_attention(grid, offsets, a)[:, centre].reshape(9, *grid).numpy()
                     for a in alphas])


def page_results(fits) -> dict:
    """:func:`measure`'s keywords, computed as the page computes them (ViT-B's shape given, not read
    from timm; the two sums' differences made up within their bounds)."""
    run = run_1d()
    u = ac.FLOAT32_ROUNDING_UNIT
    k, channels = ac.largest_kernel(VIT_B["num_heads"], VIT_B["head_dim"], VIT_B["embed_dim"])
    keyed = chapter.by_key(fits)
    return dict(weights=head_weights(), mha_difference=1e-15, offset_difference=1e-15, run=run,
                alpha_star={d: ac.alpha_where_leak_is(u, dim=d) for d in (1, 2)},
                alpha_exact=ac.first_exact_lookup((32,), k=3, alphas=np.arange(1000, 2501, 5) / 100),
                head_maps=head_maps(), figure_alphas=(0.5, 2.0, 8.0), run_2d=run_2d(), vit_b=VIT_B,
                k=k, channels=channels, keyed=keyed, errors=errors_of(keyed), heads=positional_heads(keyed),
                full=ac.heads_for_conv(k, VIT_B["embed_dim"], VIT_B["embed_dim"], VIT_B["head_dim"]))


def test_every_claim_the_page_asserts_is_one_measure_makes_and_backs():
    asserted = set(re.findall(r'assert evidence\.claims\["([^"]+)"\]', PAGE.read_text()))
    found = chapter.measure(**page_results(made_up_fits()))
    assert asserted == set(found.claims)
    assert all(found.claims.values()), [name for name, holds in found.claims.items() if not holds]


def test_the_page_calls_every_section_function_measure_calls():
    calls = set(re.findall(r"^chapter\.(\w+)\(evidence", PAGE.read_text(), flags=re.MULTILINE))
    sections = set(re.findall(r"^    (\w+)\(evidence", Path(chapter.__file__).read_text(), flags=re.MULTILINE))
    assert calls == sections and len(sections) == 10


def test_the_head_weights_are_the_softmax_of_minus_alpha_times_the_squared_distance_to_the_target():
    found = Evidence("attention-conv")
    chapter.one_head(found, head_weights())
    offsets = (np.arange(32) + 16) % 32 - 16                     # the circular offsets of the keys
    for alpha, name in ((2.0, "aconv_p_target_soft"), (10.0, "aconv_p_target_sharp")):
        assert found[name] == pytest.approx(1 / np.exp(-alpha * (offsets - 1) ** 2).sum(), rel=1e-12)
    assert found["aconv_alpha_soft"] == 2 and found["aconv_n"] == 32


def test_a_head_given_at_one_alpha_only_is_refused():
    with pytest.raises(ValueError, match="two positive alphas"):
        chapter.one_head(Evidence("attention-conv"), head_weights(alphas=(2.0,)))


def test_the_encoding_has_one_number_more_per_offset_than_the_grid_has_dimensions():
    found = Evidence("attention-conv")
    chapter.encoding_sizes(found)
    assert (found["aconv_encoding_1d"], found["aconv_encoding_2d"]) == (2, 3)


def test_an_offset_sum_off_by_more_than_rounding_breaks_its_claim_and_an_attention_sum_is_refused():
    found = Evidence("attention-conv")
    chapter.two_sums(found, torch.tensor(1e-15, dtype=torch.float64), 1e-9)
    assert found["aconv_mha_difference"] == 1e-15
    assert not found.claims["the sum over offsets is PyTorch's circular convolution"]
    with pytest.raises(ValueError, match="rounding noise"):
        chapter.two_sums(Evidence("attention-conv"), 1e-9, 0.0)


def test_an_error_that_rises_once_breaks_the_claim_that_it_falls_at_every_step():
    run = run_1d()
    found = Evidence("attention-conv")
    chapter.convergence_on_a_line(found, run)
    assert found.claims["the error falls at every step of alpha and stays under the bound"]
    error64 = run.error64.copy()
    error64[10] = error64[9] * 1.01
    bumped = Evidence("attention-conv")
    chapter.convergence_on_a_line(bumped, dataclasses.replace(run, error64=error64))
    assert not bumped.claims["the error falls at every step of alpha and stays under the bound"]


def test_heads_that_never_sharpen_break_the_claims_of_the_figure_and_a_map_of_eight_heads_is_refused():
    found = Evidence("attention-conv")
    chapter.nine_heads(found, head_maps(alphas=(0.5, 0.5, 0.5)), (0.5, 0.5, 0.5))
    assert found["aconv_fig_alpha_high"] == 0.5
    assert not found.claims["every head's target weight rises with alpha"]
    with pytest.raises(ValueError, match="head_maps must be"):
        chapter.nine_heads(Evidence("attention-conv"), head_maps()[:, :8], (0.5, 2.0, 8.0))


def test_a_value_at_an_alpha_the_run_lacks_is_refused():
    run = SimpleNamespace(alphas=np.array([1.0, 2.0]))
    assert chapter.at(2, run, np.array([5.0, 6.0])) == 6.0
    with pytest.raises(ValueError, match="no alpha = 3"):
        chapter.at(3, run, np.array([5.0, 6.0]))


def vit_b_layer(found: Evidence, vit_b: dict) -> None:
    """The ViT-B section on ``vit_b``, its kernel and heads computed as the page does."""
    k, channels = ac.largest_kernel(vit_b["num_heads"], vit_b["head_dim"], vit_b["embed_dim"])
    full = ac.heads_for_conv(k, vit_b["embed_dim"], vit_b["embed_dim"], vit_b["head_dim"])
    chapter.vit_b_layer(found, vit_b, k, channels, full)


def test_vit_b_holds_a_3_by_3_convolution_with_64_of_its_768_channels():
    found = Evidence("attention-conv")
    vit_b_layer(found, VIT_B)
    names = ("k", "channels", "spare_heads", "full_heads", "full_over_heads", "width_over_channels")
    assert [found[f"aconv_vitb_{name}"] for name in names] == [3, 64, 3, 108, 9, 12]
    assert all(found.claims.values())


def test_a_layer_whose_ratios_are_not_whole_numbers_is_refused():
    with pytest.raises(ValueError, match="whole numbers"):
        vit_b_layer(Evidence("attention-conv"), dict(VIT_B, num_heads=10))


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


def test_errors_of_other_sizes_than_the_sweeps_are_refused():
    keyed = chapter.by_key(made_up_fits())
    errors = {name: e[1:] for name, e in errors_of(keyed).items()}
    with pytest.raises(ValueError, match="errors must hold"):
        chapter.fitted_layers(Evidence("attention-conv"), errors, positional_heads(keyed))
