"""The build's execution step: the chapters to execute run side by side into the cache the build reads."""

from pathlib import Path

import yaml
from jupyter_cache import get_cache
from myst_nb.core.read import read_myst_markdown_notebook
from myst_parser.config.main import MdParserConfig

from tools import booktools

FRONT = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""


def chapter(folder: Path, name: str, code: str) -> Path:
    path = folder / f"{name}.md"
    path.write_text(FRONT + f"\n# {name}\n\nSome prose with $x$ in it.\n\n```{{code-cell}} ipython3\n"
                    ":tags: [hide-input]\n\n" + code + "\n```\n", encoding="utf-8")
    return path


def as_the_build_reads_it(path: Path):
    """The notebook myst-nb makes of ``path`` with the book's MyST extensions (``_config.yml``)."""
    config = yaml.safe_load((booktools.ROOT / "_config.yml").read_text())
    extensions = config["parse"]["myst_enable_extensions"]
    return read_myst_markdown_notebook(path.read_text(), config=MdParserConfig(enable_extensions=set(extensions)),
                                       add_source_map=True, path=path)


def test_the_chapters_to_execute_run_side_by_side_into_the_cache_the_build_reads_and_only_once(
        tmp_path, monkeypatch):
    book = tmp_path / "book"
    book.mkdir()
    pages = [chapter(book, "first", "import os\nprint(os.environ['OMP_NUM_THREADS'])"),
             chapter(book, "second", "print(sum(range(10)))")]
    cache = tmp_path / "cache"
    monkeypatch.setattr(booktools, "notebook_chapters", lambda: pages)
    monkeypatch.setattr(booktools, "CHAPTER_SECONDS", tmp_path / "seconds.json")
    monkeypatch.setattr(booktools.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)

    executed, failed = booktools.execute_chapters(workers=2, cache_folder=cache)
    assert sorted(executed) == ["first", "second"] and failed == []
    assert booktools.unexecuted_chapters(cache) == []
    stored = get_cache(str(cache))
    for page in pages:  # what the build looks up is there: it will not execute the chapter again
        record = stored.match_cache_notebook(as_the_build_reads_it(page))
        assert record.data["execution_seconds"] > 0
    _, merged = stored.merge_match_into_notebook(as_the_build_reads_it(pages[0]))
    code = [c for c in merged.cells if c.cell_type == "code"][0]
    assert code.outputs[0]["text"].strip() == "1"  # two cores, two kernels: one thread each

    assert booktools.execute_chapters(workers=2, cache_folder=cache) == ([], [])


def test_a_chapter_that_fails_is_reported_with_its_traceback_and_not_cached(tmp_path, monkeypatch, capsys):
    book = tmp_path / "book"
    book.mkdir()
    pages = [chapter(book, "broken", "raise ValueError('a broken cell')"), chapter(book, "fine", "1 + 1")]
    cache = tmp_path / "cache"
    monkeypatch.setattr(booktools, "notebook_chapters", lambda: pages)
    monkeypatch.setattr(booktools, "CHAPTER_SECONDS", tmp_path / "seconds.json")

    executed, failed = booktools.execute_chapters(workers=2, cache_folder=cache)
    assert executed == ["fine"] and failed == ["broken"]
    assert "a broken cell" in capsys.readouterr().err
    assert [p.stem for p in booktools.unexecuted_chapters(cache)] == ["broken"]


def test_the_longest_chapter_of_the_last_build_is_executed_first(tmp_path, monkeypatch):
    book = tmp_path / "book"
    book.mkdir()
    pages = [chapter(book, name, "1") for name in ("quick", "slow", "new")]
    monkeypatch.setattr(booktools, "notebook_chapters", lambda: pages)
    seconds = tmp_path / "seconds.json"
    seconds.write_text('{"quick": 3.0, "slow": 90.0}')
    monkeypatch.setattr(booktools, "CHAPTER_SECONDS", seconds)

    executed, _ = booktools.execute_chapters(workers=1, cache_folder=tmp_path / "cache")
    assert executed == ["new", "slow", "quick"]  # a chapter never timed may be the longest


def test_a_stale_chapter_leaves_the_cache_even_when_it_was_executed_in_another_checkout(tmp_path, monkeypatch):
    elsewhere, book = tmp_path / "elsewhere" / "book", tmp_path / "book"
    elsewhere.mkdir(parents=True)
    book.mkdir()
    executed_there = [chapter(elsewhere, "first", "1 + 1"), chapter(elsewhere, "second", "2 + 2")]
    here = [chapter(book, "first", "1 + 1"), chapter(book, "second", "2 + 2")]
    cache = tmp_path / "build" / ".jupyter_cache"
    monkeypatch.setattr(booktools, "CHAPTER_SECONDS", tmp_path / "seconds.json")
    monkeypatch.setattr(booktools, "notebook_chapters", lambda: executed_there)
    booktools.execute_chapters(workers=1, cache_folder=cache)
    monkeypatch.setattr(booktools, "notebook_chapters", lambda: here)
    assert booktools.unexecuted_chapters(cache) == []  # the cells match: the build would read them

    monkeypatch.setattr(booktools, "BOOK", book)
    monkeypatch.setattr(booktools, "BUILD", tmp_path / "build")
    monkeypatch.setattr(booktools, "stale_chapters", lambda profile_name=None: ["first"])
    assert booktools.invalidate() == ["first"]
    assert [p.stem for p in booktools.unexecuted_chapters(cache)] == ["first"]
