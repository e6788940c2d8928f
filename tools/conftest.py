"""The browser of the site's tests (``test_site_pages.py``, ``test_sitetest.py``): pytest-playwright's fixtures
on the system's Chromium.

pytest-playwright launches one Chromium for the session (``browser``) and
opens a browser context of its own for each test (``context``, ``page``);
here it is told which Chromium and how: Debian's, found or installed by
:func:`tools.sitetest.ensure_chromium` (Playwright's own browser downloads are
never used), headless, with :data:`tools.sitetest.CHROMIUM_FLAGS`, each
context a reader's window of 1280 by 900 pixels. No Chromium, or one that
does not start, fails the tests that need it, never skips them.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Browser

from tools import sitetest


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    """The system's Chromium, installed first when it is missing."""
    try:
        return sitetest.ensure_chromium()
    except sitetest.SiteTestError as error:
        pytest.fail(f"site-test: {error}", pytrace=False)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict, chromium_executable: str) -> dict:
    """pytest-playwright's launch arguments for the system's Chromium; its ``--headed`` and ``--slowmo`` still
    apply."""
    return {**sitetest.launch_args(chromium_executable), **browser_type_launch_args}


@pytest.fixture(scope="session")
def base_url() -> None:
    """None: each site is served on a free port and its pages opened by their whole URL. (In place of
    pytest-playwright's own, a method whose session scope pytest deprecates, warning on each run.)"""
    return None


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict) -> dict:
    """pytest-playwright's context arguments, with a reader's window (:func:`tools.sitetest.context_args`)."""
    return {**browser_context_args, **sitetest.context_args()}


@pytest.fixture(scope="session")
def browser(browser: Browser, chromium_executable: str) -> Browser:
    """pytest-playwright's browser, named once (in the first test's captured output)."""
    print(sitetest.describe_browser(browser, chromium_executable))
    return browser


@pytest.fixture(scope="session")
def check_in_own_context(browser: Browser, browser_context_args: dict) -> Callable[..., sitetest.PageResult]:
    """``check(site, page)``: a page judged in a browser context of its own, closed after, for a fixture or
    test that opens pages beyond its own ``page``."""
    def check(site: sitetest.Site, page: str) -> sitetest.PageResult:
        context = browser.new_context(**browser_context_args)
        try:
            return site.check(context.new_page(), page)
        finally:
            context.close()
    return check
