"""vitbias.book and vitbias.profile: glue values and the profile switch."""

import numpy as np
import pytest

from vitbias import book, profile


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
