"""The drift report: what a drift check found, readable without the log.

``make test`` and ``make chapter`` write ``_build/reports/drift.md``
(:func:`tools.booktools.write_drift_report`); CI shows it on the run's page.
These tests give it made-up findings; no build is needed.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tests import conftest
from tools import booktools
from vitbias.profile import current_profile


@pytest.fixture
def reference(tmp_path, monkeypatch):
    """The manifest of a chapter ``page``: an exact value, a trained band with its reason, a string."""
    monkeypatch.setattr(booktools, "REFERENCE", tmp_path / "reference")
    folder = tmp_path / "reference" / current_profile()
    folder.mkdir(parents=True)
    (folder / "page.json").write_text(json.dumps({"values": {
        "page_rows": {"value": 121.88888888888889, "rel": 1e-9, "abs": 0.0},
        "page_accuracy": {"value": 0.8, "rel": 0.0, "abs": 0.02, "why": "trained | over three seeds"},
        "page_data": {"value": "generated shapes"},
        "page_gone": {"value": 3.0, "rel": 1e-9, "abs": 0.0}}}))
    return folder / "page.json"


def report_of(tmp_path, checks):
    path = booktools.write_drift_report(checks, tmp_path / "reports" / "drift.md")
    return path.read_text(encoding="utf-8") if path else None


def test_each_drifted_value_is_reported_with_reference_found_tolerance_and_reason(reference, tmp_path):
    rows = booktools.chapter_findings("page", {"page_rows": 105.00000000000001, "page_accuracy": 0.85,
                                               "page_data": "generated shapes"})
    text = report_of(tmp_path, [{"chapter": "page", "check": "make test: the build", "values": rows}])
    assert "## page (make test: the build)" in text
    assert "| `page_rows` | 121.88888888888889 | 105.00000000000001 | 16.9 | 1.22e-07 | exact math |" in text
    assert "| `page_accuracy` | 0.8 | 0.85 | 0.05 | 0.02 | trained \\| over three seeds |" in text
    assert "page_data" not in text  # the same string


def test_values_within_their_tolerances_make_no_row(reference):
    assert booktools.chapter_findings("page", {"page_rows": 121.88888888888889, "page_accuracy": 0.81,
                                               "page_data": "generated shapes", "page_gone": 3.0}) == []


def test_a_changed_string_a_new_value_and_a_value_no_longer_glued_are_each_reported(reference):
    rows = {row["name"]: row for row in booktools.chapter_findings(
        "page", {"page_rows": 121.88888888888889, "page_accuracy": 0.8, "page_data": "CIFAR-10", "page_new": 1.0})}
    assert rows["page_data"]["found"] == "'CIFAR-10'" and rows["page_data"]["reason"] == "strings must match exactly"
    assert "not in the reference" in rows["page_new"]["reason"]
    assert rows["page_gone"]["reason"] == "in the reference but no longer glued"
    assert set(rows) == {"page_data", "page_new", "page_gone"}


def test_the_values_of_one_cell_do_not_count_the_chapters_other_values_as_no_longer_glued(reference):
    assert booktools.chapter_findings("page", {"page_rows": 121.88888888888889}, complete=False) == []


def test_the_report_names_the_reference_file_and_the_failed_cells_with_their_source(reference, tmp_path):
    cell = {"cell": "code cell 7 of `book/page.md`", "error": "AssertionError: the CNN no longer wins",
            "source": "assert cnn > vit, 'the CNN no longer wins'"}
    text = report_of(tmp_path, [{"chapter": "page", "check": "make chapter", "cells": [cell]}])
    assert f"Reference: `{reference.as_posix()}`" in text
    assert "- code cell 7 of `book/page.md`: `AssertionError: the CNN no longer wins`" in text
    assert "  ```python\n  assert cnn > vit, 'the CNN no longer wins'\n  ```" in text


def test_a_cell_source_holding_backticks_keeps_its_block_closed(tmp_path, reference):
    cell = {"cell": "code cell 1", "error": "AssertionError", "source": 'print("```")'}
    text = report_of(tmp_path, [{"chapter": "page", "check": "make chapter", "cells": [cell]}])
    assert "  ````python\n  print(\"```\")\n  ````" in text


def test_the_json_beside_the_report_holds_the_same_findings_for_the_annotations(reference, tmp_path):
    rows = booktools.chapter_findings("page", {"page_rows": 100.0})
    booktools.write_drift_report([{"chapter": "page", "check": "make chapter", "values": rows}],
                                 tmp_path / "drift.md")
    [check] = json.loads((tmp_path / "drift.json").read_text())
    assert check["chapter"] == "page" and check["reference"] == reference.as_posix()
    assert [row["name"] for row in check["values"]] == ["page_rows", "page_accuracy", "page_data", "page_gone"]


def test_checks_that_found_nothing_remove_an_earlier_report(reference, tmp_path):
    rows = booktools.chapter_findings("page", {"page_rows": 100.0}, complete=False)
    assert report_of(tmp_path, [{"chapter": "page", "check": "make chapter", "values": rows}])
    assert report_of(tmp_path, [{"chapter": "page", "check": "make chapter", "values": []}]) is None
    assert not (tmp_path / "reports" / "drift.md").exists() and not (tmp_path / "reports" / "drift.json").exists()


def test_a_failed_cell_of_a_chapter_is_the_one_the_error_quotes(tmp_path):
    front = ("---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
             "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n")
    page = tmp_path / "page.md"
    page.write_text(front + "Prose.\n\n```{code-cell} ipython3\nx = 1\n```\n\n"
                    "```{code-cell} ipython3\nassert x == 2, 'x moved'\n```\n")
    message = "An error occurred while executing the following cell:\n------------------\n" \
              "assert x == 2, 'x moved'\n------------------\n\nAssertionError: x moved"

    class CellExecutionError(Exception):
        ename, evalue = "AssertionError", "x moved"

    cell = booktools.failed_cell(page, CellExecutionError(message))
    assert cell == {"cell": "code cell 2 of `book/page.md`", "error": "AssertionError: x moved",
                    "source": "assert x == 2, 'x moved'"}


def test_the_findings_of_several_test_processes_merge_per_chapter_and_check(tmp_path):
    rows = [{"name": "a"}], [{"name": "b"}]
    nbval = "make test: nbval on the other kernels"
    conftest.save_drift_part({"chapter": "page", "check": nbval, "values": rows[0], "cells": []}, tmp_path)
    conftest.save_drift_part({"chapter": "page", "check": nbval, "values": rows[1], "cells": [{"cell": "3"}]},
                             tmp_path)
    conftest.save_drift_part({"chapter": "page", "check": "make test: the build", "values": []}, tmp_path)
    merged = {check["check"]: check for check in conftest.merged_drift_parts(tmp_path)}
    assert sorted(row["name"] for row in merged[nbval]["values"]) == ["a", "b"]
    assert merged[nbval]["cells"] == [{"cell": "3"}]
    assert merged["make test: the build"]["values"] == []


def test_an_nbval_cell_whose_assert_failed_is_named_with_its_notebook_and_source(tmp_path):
    notebook = booktools.REFERENCE / "quick" / "notebooks" / "page.ipynb"
    item = SimpleNamespace(parent=SimpleNamespace(path=notebook), cell_num=12,
                           cell=SimpleNamespace(source="assert gap < 0.1"))
    report = SimpleNamespace(passed=False, longrepr="Traceback:\n\x1b[0;31mAssertionError\x1b[0m: gap 0.3\n")
    assert conftest.failed_assert(item, report) == {
        "cell": "cell 12 of `tests/reference/quick/notebooks/page.ipynb`", "error": "AssertionError: gap 0.3",
        "source": "assert gap < 0.1"}
    other = SimpleNamespace(passed=False, longrepr="Cell outputs differ")
    assert conftest.failed_assert(item, other) is None


@pytest.fixture
def chapter(tmp_path, monkeypatch, reference):
    """A chapter ``page`` in a book of its own, whose execution ``make chapter`` is given, and its drift report."""
    book = tmp_path / "book"
    book.mkdir()
    (book / "page.md").write_text(
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n# Page\n\n"
        "```{code-cell} ipython3\nrows = 105.0\n```\n\n```{code-cell} ipython3\nassert rows > 110, 'rows fell'\n```\n")
    monkeypatch.setattr(booktools, "BOOK", book)
    monkeypatch.setattr(booktools, "DRIFT_REPORT", tmp_path / "reports" / "drift.md")
    return booktools.DRIFT_REPORT


def glue_output(name, value):
    prefix = "application/papermill.record/"
    return {"output_type": "display_data", "metadata": {"scrapbook": {"name": name, "mime_prefix": prefix}},
            "data": {prefix + "text/plain": repr(value)}}


def test_make_chapter_writes_the_drift_report_of_the_values_it_found(chapter, monkeypatch):
    import nbformat

    cell = nbformat.v4.new_code_cell("glue('page_rows', rows)")
    cell.outputs = [nbformat.from_dict(glue_output("page_rows", 105.0))]
    monkeypatch.setattr(booktools, "execute_chapter", lambda path: nbformat.v4.new_notebook(cells=[cell]))
    problems = booktools.check_chapter("page")
    assert any(problem.startswith("page_rows: expected 121.88888888888889, found 105.0") for problem in problems)
    text = chapter.read_text()
    assert "## page (make chapter)" in text and "| `page_rows` | 121.88888888888889 | 105.0 |" in text
    assert "| `page_gone` | 3.0 |" in text  # in the reference, no longer glued


def test_make_chapter_names_the_cell_whose_assert_failed_and_fails_as_before(chapter, monkeypatch):
    from nbclient.exceptions import CellExecutionError

    def failing(path):
        raise CellExecutionError("An error occurred while executing the following cell:\n------------------\n"
                                 "assert rows > 110, 'rows fell'\n------------------\n", "AssertionError", "rows fell")

    monkeypatch.setattr(booktools, "execute_chapter", failing)
    with pytest.raises(CellExecutionError):
        booktools.check_chapter("page")
    text = chapter.read_text()
    assert "- code cell 2 of `book/page.md`: `AssertionError: rows fell`" in text
    assert "assert rows > 110, 'rows fell'" in text
