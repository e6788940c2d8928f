"""Launch buttons: with ``BOOK_REPOSITORY_URL`` set, every notebook chapter opens in
Colab and in Binder at its own notebook; without it, no page has a launch link.

Both builds are of the book's own configuration without executing a chapter
(``tools.sitebuild``), into a temporary folder: a few seconds each.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tools import booksite, notebooks, sitebuild, sitecheck

PLACEHOLDER = "https://github.com/placeholder-owner/placeholder-book"
BRANCH = "placeholder-branch"
CHAPTERS = notebooks.notebook_chapters()
LAUNCH_HOSTS = ("colab.research.google.com", "mybinder.org")


def hrefs(page: Path) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="([^"]*)"', page.read_text(encoding="utf-8"))]


@pytest.fixture(scope="module")
def with_repository(tmp_path_factory):
    return sitebuild.build(tmp_path_factory.mktemp("launch"), PLACEHOLDER, BRANCH)


@pytest.fixture(scope="module")
def without_repository(tmp_path_factory):
    return sitebuild.build(tmp_path_factory.mktemp("no-launch"))


def test_every_notebook_chapter_is_in_the_table_of_contents():
    toc = (notebooks.ROOT / "_toc.yml").read_text()
    assert CHAPTERS, "no notebook chapter found in book/"
    missing = [c.stem for c in CHAPTERS if f"book/{c.stem}" not in toc]
    assert not missing, f"notebook chapters missing from _toc.yml: {missing}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_links_to_colab_and_binder_with_its_notebook(with_repository, chapter):
    page = with_repository / "book" / f"{chapter.stem}.html"
    assert page.is_file(), f"{page} was not built"
    links = hrefs(page)
    notebook = f"notebooks/{chapter.stem}.ipynb"
    colab = ("https://colab.research.google.com/github/placeholder-owner/placeholder-book/blob/"
             f"{BRANCH}/{notebook}")
    binder = f"https://mybinder.org/v2/gh/placeholder-owner/placeholder-book/{BRANCH}?urlpath=lab/tree/{notebook}"
    assert colab in links, f"{page.name} has no Colab link to {notebook}; its launch links: " + \
        str([h for h in links if any(host in h for host in LAUNCH_HOSTS)])
    assert binder in links, f"{page.name} has no Binder link to {notebook}"
    others = [h for h in links if any(host in h for host in LAUNCH_HOSTS) and h not in (colab, binder)]
    assert not others, f"{page.name} has launch links to other notebooks: {others}"


def test_pages_that_are_not_notebooks_have_no_launch_link(with_repository):
    chapters = {c.stem for c in CHAPTERS}
    pages = [p for p in with_repository.rglob("*.html")
             if "_static" not in p.parts and p.stem not in chapters]
    assert pages, "no page other than the notebook chapters was built"
    for page in pages:
        launch = [h for h in hrefs(page) if any(host in h for host in LAUNCH_HOSTS)]
        assert not launch, f"{page.relative_to(with_repository)} is not a notebook but links to {launch}"


def test_without_the_setting_no_page_has_a_launch_link(without_repository):
    pages = [p for p in without_repository.rglob("*.html") if "_static" not in p.parts]
    assert len(pages) > len(CHAPTERS)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        launch = [h for h in hrefs(page) if any(host in h for host in LAUNCH_HOSTS)]
        assert not launch, f"{page.relative_to(without_repository)} links to {launch} without BOOK_REPOSITORY_URL"
        assert "launch-buttons" not in text, f"{page.name} shows a launch menu without BOOK_REPOSITORY_URL"


def test_the_buttons_open_the_files_that_make_notebooks_writes(tmp_path):
    chapter = CHAPTERS[0]
    written = notebooks.convert(chapter, tmp_path / booksite.NOTEBOOKS)
    assert written.relative_to(tmp_path).as_posix() == booksite.notebook_path(f"book/{chapter.stem}")
    assert notebooks.OUT == notebooks.ROOT / booksite.NOTEBOOKS


def test_the_setting_is_read_from_the_environment():
    assert booksite.repository_settings({}) == ("", "main")
    assert booksite.repository_settings({"BOOK_REPOSITORY_URL": PLACEHOLDER + ".git/", "BOOK_BRANCH": "pages"}) == (
        PLACEHOLDER, "pages")


@pytest.mark.parametrize("url", ["https://gitlab.com/owner/book", "github.com/owner/book",
                                 "https://github.com/owner", "https://github.com/owner/book/tree/main"])
def test_a_repository_colab_cannot_open_is_refused(url):
    with pytest.raises(ValueError, match="GitHub repository URL"):
        booksite.repository_settings({"BOOK_REPOSITORY_URL": url})


def test_pages_with_launch_buttons_still_load_nothing_from_another_host(with_repository):
    problems = sitecheck.problems(with_repository)
    assert not problems, "\n".join(problems)
