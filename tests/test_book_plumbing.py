"""vitbias.book and vitbias.profile: glue values and the profile switch."""

import numpy as np
import pytest

from vitbias import book, profile, scaling


def test_plain_turns_numpy_scalars_into_python_numbers():
    assert type(book.plain(np.float64(0.5))) is float
    assert type(book.plain(np.int64(3))) is int
    assert book.plain("x") == "x"


@pytest.mark.parametrize("bad", [np.array([1.0, 2.0]), float("nan"), True, None, [1]])
def test_plain_rejects_what_prose_cannot_show(bad):
    with pytest.raises(ValueError):
        book.plain(bad)


def test_glue_rejects_negative_tolerances_and_bad_names():
    with pytest.raises(ValueError, match="non-negative"):
        book.glue("x", 1.0, rel=-1)
    with pytest.raises(ValueError, match="invalid glue name"):
        book.glue("has space", 1.0)


def test_profile_defaults_to_quick_and_rejects_unknown_names(monkeypatch):
    monkeypatch.delenv("VITBIAS_PROFILE", raising=False)
    assert profile.current_profile() == "quick"
    monkeypatch.setenv("VITBIAS_PROFILE", "full")
    assert profile.current_profile() == "full"
    monkeypatch.setenv("VITBIAS_PROFILE", "fast")
    with pytest.raises(ValueError, match="VITBIAS_PROFILE"):
        profile.current_profile()


def test_the_build_note_names_the_profile_device_and_versions(monkeypatch):
    import torch

    monkeypatch.setenv("VITBIAS_PROFILE", "quick")
    text = book.build_note().data
    assert "`quick` profile" in text
    assert torch.__version__ in text and np.__version__ in text


def test_a_tolerance_wider_than_exact_math_needs_a_reason():
    with pytest.raises(ValueError, match="needs a reason"):
        book.glue("acc", 0.5, abs=0.05)
    with pytest.raises(ValueError, match="needs a reason"):
        book.glue("err", 1e-4, rel=1e-6, why="  ")


def test_rounding_noise_is_glued_as_a_bound_and_fails_above_it():
    with pytest.raises(ValueError, match=r"not within \[0, 1e-05\]"):
        book.glue_rounding("diff", 2e-5, 1e-5, why="float32 rounding")
    with pytest.raises(ValueError, match="not within"):
        book.glue_rounding("diff", -1e-7, 1e-5, why="float32 rounding")


def test_the_build_record_names_the_cpu_kernels():
    import torch

    assert book.build_record()["CPU kernels"] == torch.backends.cpu.get_cpu_capability()


def test_glue_returns_nothing_so_a_cell_ending_in_it_prints_no_digits():
    assert book.glue("toy_example", 0.1234567891) is None
    assert book.glue_rounding("toy_noise", 2e-7, 1e-5, why="float32 rounding") is None


def test_a_timing_is_glued_unchecked_and_needs_a_reason():
    with pytest.raises(ValueError, match="needs a reason"):
        book.glue_timing("t", 12.5, why="")
    with pytest.raises(ValueError, match="a number"):
        book.glue_timing("t", "12 ms", why="wall clock")


def test_a_verdict_is_a_sentence_glued_unchecked_with_the_reason(monkeypatch):
    import myst_nb

    seen = {}
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=False: seen.__setitem__(name, value))
    assert book.glue_verdict("x_text", "the CNN keeps more") is None
    assert seen["x_text"] == "the CNN keeps more"
    assert seen["x_text.tol"] == {"unchecked": True, "why": book.VERDICT_WHY}
    with pytest.raises(ValueError, match="a sentence"):
        book.glue_verdict("x_text", 0.3)
    with pytest.raises(ValueError, match="invalid glue name"):
        book.glue_verdict("x text", "a sentence")


@pytest.fixture
def glued(monkeypatch):
    import myst_nb

    seen = {}
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=False: seen.__setitem__(name, value))
    return seen


def test_a_trained_mean_is_glued_with_the_band_of_its_seeds_and_its_reason(glued):
    assert book.glue_trained("x_acc", [0.70, 0.72, 0.74], 0.07, what="test accuracy") == pytest.approx(0.72)
    assert glued["x_acc"] == pytest.approx(0.72)
    assert glued["x_acc.tol"]["abs"] == book.band(0.07, 3) == pytest.approx(np.ceil(4700 * 0.07 / np.sqrt(3)) / 1000)
    assert "3 seeds" in glued["x_acc.tol"]["why"] and "test accuracy" in glued["x_acc.tol"]["why"]
    book.glue_trained("x_one", 0.5, 0.07, what="one run")
    assert glued["x_one.tol"]["abs"] == book.band(0.07, 1) == pytest.approx(0.33)


def test_seeds_that_spread_wider_than_honest_seeds_would_once_in_a_thousand_builds_refuse_the_band(glued):
    with pytest.raises(ValueError, match="measure the spread again"):
        book.glue_trained("x_acc", [0.5, 0.7, 0.9], 0.07, what="test accuracy")
    book.glue_trained("x_acc", [0.6, 0.7, 0.8], 0.04, what="test accuracy")  # sd 0.1, 2.5 x: within the limit
    with pytest.raises(ValueError, match="measure the spread again"):
        book.glue_trained("x_acc", [0.6, 0.7, 0.8], 0.035, what="test accuracy")  # 2.86 x


def test_the_spread_limit_is_the_chi_square_quantile_of_the_sample_sd():
    from scipy import stats

    assert book.spread_limit(1.0, 3) == pytest.approx(np.sqrt(-2 * np.log(book.SPREAD_FALSE_ALARM) / 2))
    rng = np.random.default_rng(0)
    sds = rng.normal(size=(200_000, 3)).std(axis=1, ddof=1)
    assert np.mean(sds > book.spread_limit(1.0, 3)) == pytest.approx(book.SPREAD_FALSE_ALARM, abs=3e-4)
    assert book.spread_limit(2.0, 6) == pytest.approx(2 * np.sqrt(stats.chi2.ppf(0.999, 5) / 5))
    with pytest.raises(ValueError, match="n >= 2"):
        book.spread_limit(1.0, 1)
    with pytest.raises(ValueError, match="positive"):
        book.band(0.0, 3)
    with pytest.raises(ValueError, match="finite"):
        book.glue_trained("x_acc", [0.5, float("nan")], 0.07, what="test accuracy")


def test_against_a_measured_sd_the_spread_limit_is_the_f_quantile_of_the_two_sample_variances():
    from scipy import stats

    assert book.spread_limit(1.0, 3, measured_from=6) == pytest.approx(np.sqrt(stats.f.ppf(0.999, 2, 5)))
    # honest builds: the sd measured from six runs, the build's from three, all of one true sd
    rng = np.random.default_rng(1)
    measured = rng.normal(size=(200_000, 6)).std(axis=1, ddof=1)
    build = rng.normal(size=(200_000, 3)).std(axis=1, ddof=1)
    limits = np.array([book.spread_limit(m, 3, measured_from=6) for m in measured[:2000]])
    assert np.mean(build[:2000] > limits) < 0.01
    assert np.mean(build / measured > book.spread_limit(1.0, 3, measured_from=6)) == \
        pytest.approx(book.SPREAD_FALSE_ALARM, abs=3e-4)
    # taken as known, the same measured sds refuse honest builds far more often than one in a thousand
    assert np.mean(build / measured > book.spread_limit(1.0, 3)) > 10 * book.SPREAD_FALSE_ALARM
    with pytest.raises(ValueError, match="two or more runs"):
        book.spread_limit(1.0, 3, measured_from=1)


def test_a_measured_sd_refuses_a_spread_only_beyond_what_its_own_runs_allow(glued):
    from vitbias.recorded import KindSD

    seeds = [0.528, 0.521, 0.571]  # sd 0.027: three seeds of a probe on one CPU
    measured = KindSD(0.01, "x", "probe", kernel_sets=2)  # 0.01 from three seeds on two kernel sets
    assert book.glue_trained("x_probe", seeds, measured, what="a probe") == pytest.approx(np.mean(seeds))
    with pytest.raises(ValueError, match="measured from 6 runs"):
        book.glue_trained("x_probe", [0.45, 0.55, 0.65], measured, what="a probe")  # sd 0.1: ten times
    with pytest.raises(ValueError, match="measure the spread again"):
        book.glue_trained("x_probe", seeds, 0.01, what="a probe")  # the same sd taken as known
    with pytest.raises(ValueError, match="kernel_sets"):
        KindSD(0.01, "x", "probe", kernel_sets=0)


def test_a_comparison_glues_the_words_of_the_outcome_welchs_test_chooses(glued):
    high, low = [0.90, 0.91, 0.92], [0.50, 0.52, 0.51]
    assert book.glue_compared("c", high, low, more="above", less="below", same="level with") == "more"
    assert glued["c"] == "above" and glued["c.tol"]["unchecked"]
    assert book.glue_compared("c", low, high, more="above", less="below", same="level with") == "less"
    assert glued["c"] == "below"
    # 2.1 standard errors: what a z test at 2 resolved, Welch's t with 2 degrees of freedom does not
    assert book.glue_compared("c", [1.0, 2.0, 3.0], 2.0 + 2.1 / np.sqrt(3), more="a", less="b", same="c") == "same"


def test_a_paired_comparison_uses_the_paired_test_and_resolves_what_welchs_cannot(glued):
    other = np.array([0.40, 0.60, 0.80])
    own = other + np.array([0.019, 0.020, 0.021])  # every seed 0.02 better, seeds far apart
    assert book.glue_compared("p", own, other, more="above", less="below", same="level") == "same"
    assert book.glue_compared("p", own, other, more="above", less="below", same="level", paired=True) == "more"
    assert glued["p"] == "above"


def test_a_sentence_too_close_to_tell_carries_how_far_apart_and_what_the_seeds_resolve(glued):
    from scipy import stats

    first, second = [1.0, 2.0, 3.0], 2.5
    same = "{apart:.2f} apart, less than {seeds} seeds resolve ({resolvable:.2f})"
    assert book.glue_compared("n", first, second, more="a", less="b", same=same) == "same"
    # one-sample t: se = 1 / sqrt(3), two degrees of freedom
    assert glued["n"] == f"0.50 apart, less than three seeds resolve ({stats.t.isf(0.025, 2) / np.sqrt(3):.2f})"
    # shifted by exactly that much, the test resolves the difference (and one hair less, it does not)
    edge = book.compared_numbers(first, second)["resolvable"]
    assert book.compare(np.array(first) + 0.5 + edge * 1.001, second) == "more"
    assert book.compare(np.array(first) + 0.5 + edge * 0.999, second) == "same"


def test_a_sentence_with_a_field_the_comparison_does_not_know_is_refused(glued):
    with pytest.raises(ValueError, match="field other than"):
        book.glue_compared("n", [1.0, 2.0, 3.0], 2.5, more="a", less="b", same="{spread:.2f} apart")


def test_an_equality_a_theorem_guarantees_is_glued_as_shown_or_not_shown_never_as_a_difference(glued):
    a = [0.70, 0.71, 0.72]
    assert book.glue_equivalent("e", a, [0.705, 0.71, 0.715], 0.05, contrast=0.2, equal="the same",
                                unresolved="not shown")
    assert glued["e"] == "the same"
    assert not book.glue_equivalent("e", a, [0.60, 0.65, 0.70], 0.05, contrast=0.2, equal="the same",
                                    unresolved="not shown within {shown:.3f}")
    assert glued["e"] == f"not shown within {scaling.smallest_equivalence_margin(a, [0.60, 0.65, 0.70]):.3f}"


def test_an_equivalence_margin_wider_than_half_the_contrasted_effect_is_refused(glued):
    a = [0.70, 0.71, 0.72]
    with pytest.raises(ValueError, match="wider than half the effect"):
        book.glue_equivalent("e", a, a, 0.051, contrast=0.1, equal="the same", unresolved="not shown")
    with pytest.raises(ValueError, match="contrasted effect must be positive"):
        book.glue_equivalent("e", a, a, 0.05, contrast=-0.1, equal="the same", unresolved="not shown")


def test_a_chapter_nbval_leaves_out_computes_on_both_kernel_sets_and_shows_nothing_unglued():
    import json
    from pathlib import Path

    from tests.conftest import CHECKS_BOTH_KERNELS_ITSELF, collect_ignore_glob
    from tools.booktools import REFERENCE, ROOT

    for chapter in CHECKS_BOTH_KERNELS_ITSELF:
        source = (ROOT / "book" / f"{chapter}.md").read_text()
        assert "fingerprints_on_other_kernels(" in source, f"{chapter} no longer runs the other kernel set"
        notebook = REFERENCE / profile.current_profile() / "notebooks" / f"{chapter}.ipynb"
        assert str(notebook) in collect_ignore_glob
        for cell in json.loads(Path(notebook).read_text())["cells"]:
            if cell["cell_type"] == "code" and cell.get("outputs"):
                assert "nbval-ignore-output" in cell["metadata"].get("tags", []), cell["source"]


def test_a_spread_table_shows_each_quantitys_mean_and_range_over_seeds_for_each_size():
    from vitbias.book import spread_table

    table = spread_table({"accuracy": {50: [0.1, 0.2, 0.3], 800: [0.5, 0.7, 0.6]}}, sizes=(50, 800))
    header, rule, row = table.splitlines()
    assert header == "| | 50 images | 800 images |"
    assert rule == "|---|---|---|"
    assert row == "| accuracy | 0.20 (0.10 to 0.30) | 0.60 (0.50 to 0.70) |"


@pytest.mark.parametrize("rows, sizes", [({}, (50,)), ({"a": {50: [1.0]}}, ()), ({"a": {50: [1.0]}}, (50, 800)),
                                         ({"a": {50: []}}, (50,)), ({"a": {50: [float("nan")]}}, (50,))])
def test_a_spread_table_refuses_missing_sizes_and_empty_or_non_finite_samples(rows, sizes):
    from vitbias.book import spread_table

    with pytest.raises(ValueError):
        spread_table(rows, sizes)


def test_a_counted_clause_agrees_in_number_and_names_what_it_counts():
    assert book.counted([], "route", "above the plain ViT") == "no route is above the plain ViT"
    assert book.counted(["conv stem"], "route", "above it") == "one route is above it (conv stem)"
    assert (book.counted(["a", "b"], "route", "below it") == "two routes are below it (a, b)")
    for bad in ([""], [3], ["x"] * 11):
        with pytest.raises(ValueError):
            book.counted(bad, "route", "above it")
    with pytest.raises(ValueError, match="noun"):
        book.counted(["a"], "", "above it")


def test_clauses_join_into_one_capitalised_sentence():
    assert book.sentence("no route is above it") == "No route is above it."
    assert book.sentence("a", "b", "c") == "A, b and c."
    with pytest.raises(ValueError, match="clauses"):
        book.sentence()
    with pytest.raises(ValueError, match="clauses"):
        book.sentence("a", " ")


def test_no_removed_cell_of_a_reference_notebook_shows_a_value_that_nbval_would_compare():
    """A cell the reader never sees (``remove-cell``) that ends in a call, such as ``glue_compared``
    or ``glue_equivalent``, shows the call's value; nbval would compare that text on the other
    kernels, where a verdict the page never checks (``glue_verdict``) may come out the other way.
    Such a cell ends in an assignment (``_ = glue_compared(...)``: a trailing ``;`` does not silence
    it there, since nbval runs cells without storing them in IPython's history, which is where
    IPython looks for the ``;``) or is tagged ``nbval-ignore-output``."""
    import json
    from pathlib import Path

    from vitbias.profile import current_profile

    folder = Path(__file__).resolve().parent / "reference" / current_profile() / "notebooks"
    shown = []
    for notebook in sorted(folder.glob("*.ipynb")):
        for number, cell in enumerate(json.loads(notebook.read_text(encoding="utf-8"))["cells"]):
            tags = cell.get("metadata", {}).get("tags", [])
            if cell["cell_type"] == "code" and "remove-cell" in tags and "nbval-ignore-output" not in tags:
                if any(out.get("output_type") == "execute_result" for out in cell.get("outputs", [])):
                    shown.append(f"{notebook.stem}: cell {number}")
    assert list(folder.glob("*.ipynb")) and shown == []
