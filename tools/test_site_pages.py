"""Every page of the built site in headless Chromium, each page its own test (the checks: :mod:`tools.sitetest`).

    python -m pytest tools/test_site_pages.py          # _build/html, or $BOOK_SITE_HTML
    python -m pytest tools/test_site_pages.py -k ch02   # some of the pages

`make site-test` runs it beside the checker's own test (``tools/test_sitetest.py``);
`make test` and `make unit` do not collect it (``pytest tests exercises``).
The browser is pytest-playwright's, on the system's Chromium (``tools/conftest.py``):
one Chromium serves the whole session, and each page's test opens its page
in a browser context of its own (the ``page`` fixture); it fails with the
lines :func:`tools.sitetest.report` writes for it, and the page's screenshot
goes to ``_build/site-test/<page>.png`` (or ``$BOOK_SITE_SCREENSHOTS``). The
links and anchors between the pages are a test of their own, run last, on
what the browser saw of every page. No built site is a failure, never a skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools import sitecheck, sitetest

SITE = sitecheck.site_dir()
SCREENSHOTS = Path(os.environ.get("BOOK_SITE_SCREENSHOTS") or sitetest.SCREENSHOTS)
PAGES = sitetest.site_pages(SITE) if SITE.is_dir() else []
# With no site, the page every built site has, whose test then fails for want of it (an empty set would skip).
TESTED_PAGES = PAGES or ["index.html"]


def _remove_stale_screenshots(screenshots: Path, pages: list[str]) -> None:
    """A page that is gone from the site leaves no picture of it behind."""
    kept = {Path(page).with_suffix(".png") for page in pages}
    for old in screenshots.rglob("*.png") if screenshots.is_dir() else ():
        if old.relative_to(screenshots) not in kept:
            old.unlink()


@pytest.fixture(scope="session")
def site():
    """The built site, served; what the browser saw of each page opened is kept in its ``results``."""
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no built site in {SITE}: run `make book` first", pytrace=False)
    _remove_stale_screenshots(SCREENSHOTS, PAGES)
    with sitetest.Site(SITE, SCREENSHOTS) as served:
        print(f"site-test: {len(PAGES)} pages of {SITE}, served at {served.server.origin}")
        yield served


def test_the_site_is_built():
    assert (SITE / "index.html").is_file(), f"no built site in {SITE}: run `make book` first"


@pytest.mark.parametrize("path", TESTED_PAGES)
def test_page(site, page, path):
    result = site.check(page, path)
    if result.failures:
        pytest.fail(sitetest.report(result.failures, 1, result.seconds, result.screenshot), pytrace=False)


def test_links_and_anchors_between_the_pages(site, check_in_own_context):
    """Every link into the site, of every page, to a file that is there and an anchor its page has.

    The pages the run did not open already (a run of some of them) are opened here.
    """
    for path in PAGES:
        if path not in site.results:
            check_in_own_context(site, path)
    failures = site.link_failures()
    if failures:
        pytest.fail(sitetest.report(failures, len(PAGES), 0, None), pytrace=False)
