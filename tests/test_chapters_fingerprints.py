"""The fingerprints chapter's evidence (``vitbias.chapters.fingerprints``), on made-up fingerprints."""

import pytest

from vitbias import fingerprint, profile
from vitbias.chapters.fingerprints import measure

CHANGES = ("weight decay x 0.8", "learning rate x 0.95")


def fingerprints(shift=0.0):
    return {kind: {"loss": 2.0 + shift, "logit_0": 0.1 + shift} for kind in ("cnn", "vit")}


def moved_by(bounds):
    return {(kind, change): bounds for kind in ("cnn", "vit") for change in CHANGES}


def test_every_entry_of_every_kind_is_glued_within_the_rounding_bound():
    found = measure(profile.budget("quick"), fingerprints(), fingerprints(1e-7), moved_by(50.0))
    assert found["fp_vit_loss"] == 2.0 and found.entries["fp_vit_loss.tol"]["abs"] == fingerprint.BOUND
    assert found["fp_n_kinds"] == 2 and found["fp_kernel_gap"] == pytest.approx(1e-7)


def test_the_claim_that_every_change_is_seen_fails_when_one_moves_less_than_twice_the_bound():
    moved = moved_by(50.0)
    assert all(measure(profile.budget("quick"), fingerprints(), fingerprints(), moved).claims.values())
    moved["vit", "learning rate x 0.95"] = 1.5
    assert not all(measure(profile.budget("quick"), fingerprints(), fingerprints(), moved).claims.values())


def test_kernel_sets_further_apart_than_the_bound_fail_the_build():
    with pytest.raises(ValueError, match="rounding noise"):
        measure(profile.budget("quick"), fingerprints(), fingerprints(1e-3), moved_by(50.0))


def test_a_change_missing_from_moved_is_refused():
    moved = moved_by(50.0)
    del moved["cnn", "weight decay x 0.8"]
    with pytest.raises(ValueError, match="moved must hold"):
        measure(profile.budget("quick"), fingerprints(), fingerprints(), moved)
