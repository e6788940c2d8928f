"""What the workflows run besides make (``tools/ci.py``): the drift report as annotations on the files
a maintainer would edit, and the check that the published branch holds a notebook per chapter."""

from __future__ import annotations

import json

import pytest

from tools import booktools, ci
from tools.notebooks import notebook_chapters

REPOSITORY = {"BOOK_REPOSITORY_URL": "https://github.com/owner/book", "BOOK_BRANCH": "notebooks"}


@pytest.fixture
def checkout(tmp_path):
    """A checkout with one reference file and one chapter, as the drift report names them."""
    reference = tmp_path / "tests" / "reference" / "quick" / "page.json"
    reference.parent.mkdir(parents=True)
    reference.write_text(json.dumps({"values": {"page_a": {"value": 1.0}, "page_rows": {"value": 121.9}}},
                                    indent=1, sort_keys=True) + "\n")
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "page.md").write_text("# Page\n\n```{code-cell} ipython3\nassert rows > 100\n```\n")
    return tmp_path


def drift_of(row=None, cell=None):
    return [{"chapter": "page", "check": "make test: the build", "reference": "tests/reference/quick/page.json",
             "values": [row] if row else [], "cells": [cell] if cell else []}]


def test_the_annotations_read_the_json_that_the_drift_report_writes_beside_it():
    assert ci.DRIFT_DATA == booktools.DRIFT_REPORT.with_suffix(".json")


def test_a_drifted_value_is_annotated_on_its_line_of_the_reference_file(checkout):
    row = {"name": "page_rows", "reference": "121.9", "found": "105.0", "difference": "16.9",
           "tolerance": "1.22e-07", "reason": "exact math"}
    [command] = ci.annotations(drift_of(row), checkout)
    line = (checkout / "tests/reference/quick/page.json").read_text().splitlines().index('  "page_rows": {') + 1
    assert command.startswith(f"::error file=tests/reference/quick/page.json,line={line},title=page%3A page_rows")
    assert command.endswith("::reference 121.9, found 105.0 (|difference| 16.9 > tolerance 1.22e-07: exact math)")


def test_a_value_missing_from_the_reference_is_annotated_on_the_reference_file_without_a_line(checkout):
    row = {"name": "page_new", "reference": "", "found": "3", "difference": "", "tolerance": "",
           "reason": "glued but not in the reference (run `make reference`)"}
    [command] = ci.annotations(drift_of(row), checkout)
    assert command.startswith("::error file=tests/reference/quick/page.json,title=")
    assert command.endswith("::found 3 (glued but not in the reference (run `make reference`))")


def test_a_failed_cell_is_annotated_where_its_code_starts_in_the_chapter(checkout):
    cell = {"cell": "code cell 1 of `book/page.md`", "error": "AssertionError: rows 90\nnot > 100",
            "source": "\nassert rows > 100"}
    [command] = ci.annotations(drift_of(cell=cell), checkout)
    assert command.startswith("::error file=book/page.md,line=4,")
    assert command.endswith("::AssertionError: rows 90%0Anot > 100")


def test_the_drifted_chapters_are_named_once_each():
    checks = drift_of() + drift_of() + [{**drift_of()[0], "chapter": "other"}]
    assert ci.drifted_chapters(checks) == ["other", "page"]


def write_notebooks(folder, chapters, install):
    folder.mkdir(exist_ok=True)
    for chapter in chapters:
        cell = {"cell_type": "code", "source": install.splitlines(keepends=True), "metadata": {}, "outputs": []}
        (folder / f"{chapter}.ipynb").write_text(json.dumps({"cells": [cell], "nbformat": 4}))


def toc_notebooks():
    notebooks = {path.stem for path in notebook_chapters()}
    return [stem for stem in (file.rsplit("/", 1)[-1] for file in ci.toc_files()) if stem in notebooks]


def test_the_table_of_contents_lists_the_notebook_chapters():
    assert {"bias-toy", "crossover", "lab", "exercises"} <= set(toc_notebooks())
    assert "intro" not in toc_notebooks()  # a page without a kernel has no notebook


def test_the_notebooks_that_make_notebooks_writes_for_the_published_branch_pass_the_check(tmp_path):
    from tools.notebooks import install_source

    write_notebooks(tmp_path / "nb", toc_notebooks(), install_source("https://github.com/owner/book", "notebooks"))
    assert ci.notebook_problems(tmp_path / "nb", REPOSITORY) == ([], [])


def test_a_chapter_of_the_table_of_contents_without_its_notebook_fails_the_check(tmp_path):
    write_notebooks(tmp_path / "nb", toc_notebooks()[1:], "git+https://github.com/owner/book@notebooks")
    problems, _ = ci.notebook_problems(tmp_path / "nb", REPOSITORY)
    assert problems == [f"{tmp_path / 'nb' / toc_notebooks()[0]}.ipynb: missing "
                        f"(the chapter {toc_notebooks()[0]} is in _toc.yml)"]


def test_a_notebook_installing_from_another_branch_fails_the_check(tmp_path):
    write_notebooks(tmp_path / "nb", toc_notebooks(), "git+https://github.com/owner/book@main")
    problems, _ = ci.notebook_problems(tmp_path / "nb", REPOSITORY)
    assert len(problems) == len(toc_notebooks()) and "at notebooks" in problems[0]


def test_a_notebook_of_no_chapter_in_the_table_of_contents_is_noted(tmp_path):
    write_notebooks(tmp_path / "nb", [*toc_notebooks(), "draft"], "git+https://github.com/owner/book@notebooks")
    assert ci.notebook_problems(tmp_path / "nb", REPOSITORY) == ([], [f"{tmp_path / 'nb' / 'draft.ipynb'}: "
                                                                      "no chapter of _toc.yml"])


def test_the_table_of_contents_is_read_through_parts_and_sections(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text("format: jb-book\nroot: book/intro\nparts:\n  - caption: One\n    chapters:\n"
                   "      - file: book/a\n        sections:\n          - file: book/b\n")
    assert ci.toc_files(toc) == ["book/intro", "book/a", "book/b"]
