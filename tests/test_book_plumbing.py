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
