"""What a chapter found (``vitbias.evidence``): one policy for every kind of glued number, shared by
``vitbias.book``'s glue functions and the chapters' ``measure``."""

import numpy as np
import pytest

from vitbias import evidence
from vitbias.evidence import Evidence


def test_an_exact_number_carries_the_exact_math_tolerance_and_a_string_none():
    assert evidence.number("x", np.float64(0.5)) == [("x", 0.5), ("x.tol", {"rel": evidence.EXACT, "abs": 0.0})]
    assert evidence.number("s", "words") == [("s", "words")]


def test_a_tolerance_without_a_reason_is_refused():
    with pytest.raises(ValueError, match="needs a reason"):
        evidence.number("x", 1.0, abs=0.1)


def test_a_trained_mean_gets_the_band_of_its_seeds_and_a_wide_spread_is_refused():
    mean, entries = evidence.trained("acc", [0.5, 0.52, 0.54], 0.05, what="an accuracy")
    assert mean == pytest.approx(0.52)
    assert dict(entries)["acc.tol"]["abs"] == evidence.band(0.05, 3)
    with pytest.raises(ValueError, match="spread"):
        evidence.trained("acc", [0.1, 0.5, 0.9], 0.05, what="an accuracy")


def test_a_sum_over_seeds_moves_n_times_as_far_as_their_mean_and_whole_counts_stay_whole():
    total, entries = evidence.summed("heads", [9, 7, 8], 0.5, what="heads settled")
    assert total == 24 and isinstance(total, int) and dict(entries)["heads"] == 24
    assert dict(entries)["heads.tol"]["abs"] == 3 * evidence.band(0.5, 3)
    _, entries = evidence.summed("heads", [0, 0, 0], 1e-4, what="heads that agreed in every seed")
    assert dict(entries)["heads.tol"]["abs"] == 1.0  # a count may still move by one
    total, _ = evidence.summed("weight", [0.25, 0.5], 0.1, what="a weight")
    assert total == pytest.approx(0.75) and isinstance(total, float)
    with pytest.raises(ValueError, match="spread"):
        evidence.summed("heads", [0, 9, 0], 0.5, what="heads settled")
    found = Evidence("a chapter")
    assert found.summed("heads", [9, 9, 9], 0.5, what="heads settled") == 27 and found["heads"] == 27


def test_evidence_keeps_entries_in_order_and_refuses_a_name_glued_twice():
    found = Evidence("a chapter")
    found.number("first", 1)
    found.verdict("second", "above it")
    assert found.names() == ["first", "second"] and found["first"] == 1 and "second" in found
    assert "first.tol" not in found
    with pytest.raises(ValueError, match="glued twice"):
        found.number("first", 2)
    with pytest.raises(KeyError):
        found["third"]


def test_evidence_keeps_what_a_comparison_found_under_its_name():
    found = Evidence("a chapter")
    outcome = found.compared("v", [0.9, 0.91, 0.92], [0.1, 0.12, 0.11], more="above", less="below",
                             same="level")
    assert outcome == "more" == found.outcomes["v"] and found["v"] == "above"
    assert found.entries["v.tol"]["unchecked"]


def test_a_claim_is_kept_as_a_boolean_once():
    found = Evidence("a chapter")
    found.claim("it holds", np.bool_(True))
    assert found.claims == {"it holds": True}
    with pytest.raises(ValueError, match="twice"):
        found.claim("it holds", False)


def test_glue_evidence_stores_every_entry_and_refuses_anything_else(monkeypatch):
    from vitbias import book

    stored = []
    monkeypatch.setattr(book, "_store", lambda name, value: stored.append((name, value)))
    found = Evidence("a chapter")
    found.number("x", 2)
    found.timing("t", 0.5, why="a wall-clock time")
    book.glue_evidence(found)
    assert stored == list(found.entries.items()) and len(stored) == 4
    with pytest.raises(ValueError, match="Evidence"):
        book.glue_evidence({"x": 2})
