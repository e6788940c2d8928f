"""The book's promises: no typed numbers, no drifted numbers, no stale references.

These tests read the build in ``_build/`` (``make test`` builds it first) and
the committed reference in ``tests/reference/<profile>/``.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from tools import booktools
from tools.prose_lint import lint, repeated_in_sections
from vitbias.profile import current_profile

CHAPTERS = booktools.chapters()
NOTEBOOKS = booktools.notebook_chapters()


def ids(paths):
    return [p.stem for p in paths]


@pytest.fixture(scope="session")
def fresh_build():
    """The build must exist and match the current code and profile."""
    if not booktools.CHAPTER_KEYS.exists():
        pytest.fail("no build found in _build/: run `make book` (or `make test`) first")
    stale = booktools.stale_chapters()
    if stale:
        pytest.fail(f"_build/ holds {stale} made from other code, requirements or profile: run `make book`")
    return booktools.BUILD


@pytest.mark.parametrize("chapter", CHAPTERS, ids=ids(CHAPTERS))
def test_prose_has_no_hand_typed_decimals_or_percentages(chapter):
    problems = lint(chapter)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("chapter", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_glued_values_match_the_reference_within_tolerance(chapter, fresh_build):
    values_path, _ = booktools.reference_paths(chapter)
    assert values_path.exists(), f"no reference {values_path}: run `make reference`"
    reference = json.loads(values_path.read_text())["values"]
    glue_path = booktools.EXECUTED / f"{chapter.stem}.glue.json"
    built = booktools.read_glue(glue_path) if glue_path.exists() else {}
    problems = [f"{name}: glued but not in the reference (run `make reference`)"
                for name in sorted(set(built) - set(reference))]
    problems += [f"{name}: in the reference but no longer glued"
                 for name in sorted(set(reference) - set(built))]
    for name in sorted(set(built) & set(reference)):
        message = booktools.drift(name, reference[name], built[name]["value"])
        if message:
            problems.append(message)
    from tests import conftest  # the drift report, written at the end of the run

    conftest.save_drift_part({"chapter": chapter.stem, "check": "make test: the build", "values":
                              booktools.chapter_findings(chapter.stem, {n: e["value"] for n, e in built.items()})})
    assert not problems, f"{chapter.name}: numbers drifted:\n" + "\n".join(problems)


@pytest.mark.parametrize("chapter", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_reference_is_not_stale(chapter):
    values_path, notebook_path = booktools.reference_paths(chapter)
    current = booktools.code_hash(chapter)
    assert notebook_path.exists(), f"no reference notebook {notebook_path}: run `make reference`"
    recorded = nbformat.read(notebook_path, as_version=4).metadata.get("vitbias", {})
    assert recorded.get("code_sha256") == current, (
        f"{notebook_path.name} was executed from older code cells of {chapter.name}: run `make reference`")
    assert json.loads(values_path.read_text()).get("code_sha256") == current, (
        f"{values_path.name} was recorded from older code cells of {chapter.name}: run `make reference`")


def test_every_glued_number_declares_a_tolerance(fresh_build):
    for glue_path in booktools.EXECUTED.glob("*.glue.json"):
        raw = json.loads(glue_path.read_text())
        numbers = [name for name, out in raw.items()
                   if not name.endswith(booktools.TOLERANCE_SUFFIX)
                   and not out["data"]["text/plain"].startswith(("'", '"'))]  # a string's repr
        missing = [n for n in numbers if n + booktools.TOLERANCE_SUFFIX not in raw]
        assert not missing, f"{glue_path.name}: glued without vitbias.book.glue: {missing}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=ids(CHAPTERS))
def test_every_chapter_is_rendered_without_unresolved_glue(chapter, fresh_build):
    html = fresh_build / "html" / "book" / f"{chapter.stem}.html"
    assert html.exists(), f"{chapter.name} is not in the built site (is it in _toc.yml?)"
    text = html.read_text(encoding="utf-8")
    for marker in ("glue:text", "Traceback (most recent call last)", "could not find"):
        assert marker not in text, f"{html.name} contains {marker!r}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=ids(CHAPTERS))
def test_no_section_hedges_with_the_seeds_spread_more_than_once(chapter, fresh_build):
    html = (fresh_build / "html" / "book" / f"{chapter.stem}.html").read_text(encoding="utf-8")
    assert not repeated_in_sections(html), (f"{chapter.name}: sections naming the seeds' spread more than once "
                                            f"(say how far apart instead): {repeated_in_sections(html)}")


def test_drift_check_names_the_value_and_both_numbers():
    expected = {"value": 121.89, "rel": 1e-9, "abs": 0.0}
    assert booktools.drift("toy_crossover_rows", expected, 121.89) is None
    message = booktools.drift("toy_crossover_rows", expected, 150.0)
    assert "toy_crossover_rows" in message and "121.89" in message and "150.0" in message
    assert "exact math" in message
    band = {"value": 100.0, "rel": 0.02, "abs": 0.0, "why": "training noise over seeds"}
    assert booktools.drift("acc", band, 101.9) is None
    assert "training noise over seeds" in booktools.drift("acc", band, 102.1)
    timing = {"value": 14.2, "unchecked": True, "why": "wall-clock time"}
    assert booktools.drift("t", timing, 184.0) is None


def test_a_fixed_string_must_match_exactly_and_a_verdict_is_shown_but_not_compared(tmp_path):
    assert "must match exactly" in booktools.drift("name", {"value": "generated shapes"}, "CIFAR-10")
    glue_file = tmp_path / "page.glue.json"
    glue_file.write_text(json.dumps({
        "fixed": {"data": {"text/plain": "'generated shapes'"}},
        "chosen": {"data": {"text/plain": "'the CNN keeps more'"}},
        "chosen.tol": {"data": {"text/plain": repr({"unchecked": True, "why": "chosen from trained results"})}},
    }))
    manifest = booktools.read_glue(glue_file)
    assert manifest["fixed"] == {"value": "generated shapes"}
    assert manifest["chosen"]["unchecked"] is True
    assert booktools.drift("chosen", manifest["chosen"], "the ViT keeps more") is None
    assert booktools.drift("fixed", manifest["fixed"], "CIFAR-10") is not None


def _cell_comparer(notebook: Path):
    """An object that borrows nbval's own output comparison, as nbval ships it."""
    from types import SimpleNamespace

    from nbval.plugin import IPyNbCell, nocolors

    class Cell:
        compare_outputs = IPyNbCell.compare_outputs
        colors = nocolors
        parent = SimpleNamespace(path=notebook, skip_compare=(  # nbval's own list
            "metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
            "image/png", "image/jpeg"))

        def sanitize(self, text):
            return text

        def format_output_compare(self, key, left, right):
            self.mismatch = key

    return Cell()


def _glue_output(name, text):
    prefix = "application/papermill.record/"
    return nbformat.from_dict({"output_type": "display_data",
                               "metadata": {"scrapbook": {"name": name, "mime_prefix": prefix}},
                               "data": {prefix + "text/plain": text}})


def _stream(text):
    return nbformat.from_dict({"output_type": "stream", "name": "stdout", "text": text})


@pytest.fixture
def manifest(tmp_path, monkeypatch):
    """A reference manifest for a chapter ``page``: one exact value, one rounding bound."""
    monkeypatch.setattr(booktools, "REFERENCE", tmp_path)
    folder = tmp_path / current_profile()
    folder.mkdir()
    (folder / "page.json").write_text(json.dumps({"values": {
        "page_sigma": {"value": 0.5, "rel": 1e-9, "abs": 0.0},
        "page_float32_gap": {"value": 3.576278e-07, "rel": 0.0, "abs": 1e-5, "why": "float32 rounding"}}}))
    return folder / "notebooks" / "page.ipynb"


@pytest.fixture
def glue_log(tmp_path, monkeypatch):
    """The glue log of a re-executed notebook: ``vitbias.book.glue`` writes there and displays nothing."""
    import myst_nb

    from vitbias.book import GLUE_LOG_VARIABLE

    def displayed(*args, **kwargs):
        raise AssertionError("a glued value was displayed while a glue log was set")

    log = tmp_path / "glued.jsonl"
    monkeypatch.setenv(GLUE_LOG_VARIABLE, str(log))
    monkeypatch.setattr(myst_nb, "glue", displayed)
    return log


def test_under_a_glue_log_glue_writes_each_value_and_its_tolerance_and_displays_nothing(glue_log):
    from vitbias.book import glue, glue_rounding, glue_verdict

    glue("page_sigma", 0.5)
    glue_rounding("page_float32_gap", 2.384185e-07, 1e-5, why="float32 rounding")
    glue_verdict("page_winner", "the CNN")
    names = [name for name, _ in booktools.read_glue_log(glue_log)]
    assert names == ["page_sigma", "page_sigma.tol", "page_float32_gap", "page_float32_gap.tol",
                     "page_winner", "page_winner.tol"]
    assert booktools.read_glue_log(glue_log)[2] == ("page_float32_gap", 2.384185e-07)


def test_nbval_compares_printed_outputs_as_text_and_glued_values_with_the_manifest(manifest, glue_log):
    from tests import conftest
    from vitbias.book import glue_rounding

    glue_rounding("page_float32_gap", 2.384185e-07, 1e-5, why="float32 rounding")  # rounded elsewhere
    assert conftest.glue_drift(manifest, glue_log) == []
    assert not glue_log.exists()                       # each cell's values are checked once
    cell = _cell_comparer(manifest)
    printed = [_stream("shape (1, 196, 768)\n")]
    assert cell.compare_outputs([_stream("shape (1, 196, 768)\n")], printed)
    assert not cell.compare_outputs([_stream("shape (1, 197, 768)\n")], printed)
    assert cell.mismatch == "stdout"


def test_a_notebook_cell_whose_glued_value_left_its_tolerance_fails_naming_it(manifest, glue_log, monkeypatch,
                                                                              tmp_path):
    from types import SimpleNamespace

    from tests import conftest
    from vitbias.book import glue

    monkeypatch.setattr(conftest, "GLUE_LOG", glue_log)
    monkeypatch.setattr(conftest, "DRIFT_PARTS", tmp_path / "parts")
    monkeypatch.setattr(conftest, "is_notebook_cell", lambda item: True)
    item = SimpleNamespace(parent=SimpleNamespace(path=manifest))

    def report_of_a_cell_that(glued):
        glue("page_sigma", glued)
        report = SimpleNamespace(passed=True, outcome="passed", longrepr=None)
        hook = conftest.pytest_runtest_makereport(item, SimpleNamespace(when="call"))
        next(hook)
        with pytest.raises(StopIteration):
            hook.send(SimpleNamespace(get_result=lambda: report))
        return report

    assert report_of_a_cell_that(0.5).outcome == "passed"
    failed = report_of_a_cell_that(0.45)
    assert failed.outcome == "failed" and "page_sigma: expected 0.5, found 0.45" in failed.longrepr
    [check] = conftest.merged_drift_parts(tmp_path / "parts")  # and the drift report will list it
    assert [(row["name"], row["reference"], row["found"]) for row in check["values"]] == [
        ("page_sigma", "0.5", "0.45")]


def test_the_reference_stores_neither_glued_values_nor_images():
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.outputs = [_glue_output("x", "1"),
                    nbformat.from_dict({"output_type": "display_data", "metadata": {},
                                        "data": {"image/png": "iVBOR", "text/plain": "<Figure>"}}),
                    _stream("hello\n")]
    nb = booktools.strip_for_reference(nbformat.v4.new_notebook(cells=[cell]))
    outputs = nb.cells[0].outputs
    assert [o["output_type"] for o in outputs] == ["display_data", "stream"]
    assert outputs[0]["data"] == {"text/plain": "<Figure>"}


def test_the_staleness_hash_reads_code_cells_and_ignores_prose(tmp_path):
    front = (
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n")
    page = tmp_path / "page.md"
    page.write_text(front + "# Title\n\nSome prose.\n\n```{code-cell} ipython3\nx = 1\n```\n")
    before = booktools.code_hash(page)
    page.write_text(front + "# Title\n\nOther prose.\n\n```{code-cell} ipython3\nx = 1\n```\n")
    assert booktools.code_hash(page) == before
    page.write_text(front + "# Title\n\nOther prose.\n\n```{code-cell} ipython3\nx = 2\n```\n")
    assert booktools.code_hash(page) != before


def test_a_chapter_depends_on_the_modules_it_imports_and_theirs_only():
    toy = booktools.chapter_dependencies(booktools.BOOK / "bias-toy.md")
    assert {"toy", "figures.toy", "figures.style"} <= set(toy)
    assert not {"runs", "train", "figures.crossover"} & set(toy)
    crossover = booktools.chapter_dependencies(booktools.BOOK / "crossover.md")
    assert {"runs", "train", "data", "models"} <= set(crossover)


def test_editing_a_module_makes_stale_exactly_the_chapters_that_import_it(monkeypatch, tmp_path):
    monkeypatch.setattr(booktools, "CHAPTER_KEYS", tmp_path / "keys.json")
    booktools.record_keys()
    assert booktools.stale_chapters() == []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes",
                        lambda path: real(path) + (b"# edited\n" if path.name == "handvit.py" else b""))
    assert booktools.stale_chapters() == ["patches"]


def test_editing_the_toy_module_re_executes_the_chapters_that_import_it_only(monkeypatch, tmp_path):
    # the bias-toy chapter, and the crossover chapter, which sets the toy's prediction beside its worlds
    monkeypatch.setattr(booktools, "CHAPTER_KEYS", tmp_path / "keys.json")
    booktools.record_keys()
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes",
                        lambda path: real(path) + (b"# edited\n" if path == booktools.PACKAGE / "toy.py" else b""))
    assert booktools.stale_chapters() == ["bias-toy", "crossover"]


def test_relative_imports_resolve_inside_sub_packages():
    assert booktools.imported_modules("from .. import toy\nfrom .style import canvas",
                                      current="figures.toy") == {"toy", "figures", "figures.style"}
    assert booktools.imported_modules("from vitbias.figures.toy import f\nimport numpy") == {
        "figures", "figures.toy"}
