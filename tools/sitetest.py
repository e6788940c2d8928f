"""The built site in a real browser: the checks that open a page in headless Chromium and fail on what a reader
would see broken. pytest runs them, each page of the site a test of its own:

    python -m pytest tools/test_site_pages.py   # _build/html, or $BOOK_SITE_HTML
    python -m tools.sitetest --install          # only install Chromium when it is missing, and say which

The browser and its contexts are pytest-playwright's fixtures (``browser``,
``page``), launched as ``tools/conftest.py`` sets them up on the system's
Chromium (:func:`launch_args`, :func:`context_args`); here is what a test does
with a page it is handed. :class:`Site` serves the site on 127.0.0.1 (a free
port); :meth:`Site.check` opens a page in the tab it is given, waits for
MathJax to typeset and the interactive figures to draw, and judges it:

- **console**: an uncaught JavaScript exception, a ``console.error``, or an
  error the browser logs (a script, stylesheet or font that failed to load);
- **image**: an ``<img>`` that did not load (``naturalWidth == 0``);
- **math**: TeX left in the text (``\\(``, ``\\[``, ``$$``, ``$x^2$``, a
  ``\\command``) outside code, or a formula MathJax could not typeset;
- **figure**: an interactive figure (``<div class="vitbias-plotly">``, or any
  Plotly container) that plotly.js did not draw (no ``.main-svg`` inside), or
  drew more than once (more than one ``.plot-container`` inside);
- **duplicate**: a figure shown twice on screen: the static twin of an
  interactive figure (``<figure class="vitbias-print-figure">``, which
  ``tools/booksite.py`` writes) displayed, or one image file shown by two
  visible ``<img>``;
- **print**: in print media, the static twin of an interactive figure hidden,
  or the interactive figure shown (it cannot be drawn on paper);
- **overflow**: a horizontal scrollbar inside a visible code cell, its output
  or any other code block (content wider than the box that scrolls it), or a
  page wider than the window; at the window's width, 1280 px; then the same
  in every folded cell and solution, once opened (reported as "opened, ...");
- **access**: a violation of WCAG 2.1 level A or AA of impact "serious" or
  "critical", found by axe-core's rules of those levels (tags
  :data:`ACCESS_TAGS`) in the page as the reader first sees it: settled,
  nothing opened; each names the rule, the element (its selector, shortened)
  and, for a contrast, the two colours; at most :data:`ACCESS_ELEMENTS`
  elements a rule and page, the others counted;
- **keyboard**: an interactive figure with a slider that the keyboard cannot
  step: no ``#<id>-keys`` buttons after it (``vitbias.figures.interactive``
  writes them; the slider plotly.js draws takes no keyboard focus), or
  pressing Enter on its focused "Next step" (on the last step, "Previous
  step") leaves the slider where it was or says nothing to a screen reader;
- **link**: a link into the site to a file that is not there, or to an
  ``#anchor`` no element of the target page has (ids as the browser sees them,
  after the page's scripts ran);
- **load**: a page that did not open, answered an HTTP error, or never loaded.

Each page opens in a browser context of its own (pytest-playwright's
``page`` fixture, one to a test), as a reader's first page of the site (no
storage or cache left by the pages before it); a page that sends the browser
on (the site's ``index.html``) is judged where it lands. A screenshot of each
page, the whole page cut at 12,000 pixels, goes to
``_build/site-test/<page>.png``; a page's failures read as :func:`report`
writes them. No built site, no Chromium: the tests fail, never skip.

Chromium is Debian's ``chromium`` package; when it is missing this installs
it with ``apt-get`` (through ``sudo`` when not root), saying so; an install
that fails is a failure, never a skip. The browser is driven by Playwright
through pytest-playwright (both pinned in ``tools/requirements-site.txt``,
which ``make site-test`` installs into the book's environment) on that system
Chromium (``executable_path``): Playwright's own browser downloads are never
used. axe-core comes inside ``axe-playwright-python``, pinned there too, and
runs in the page itself.

Every ``.html`` page of the site is opened, ``genindex.html`` and
``search.html`` included (a reader reaches both from every page); not the
theme's templates under ``_static/`` nor the sources under ``_sources/``.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, ConsoleMessage, Page, Request
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tools import sitecheck

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "_build" / "site-test"
CHROMIUM_VARIABLE = "CHROMIUM"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
APT_PACKAGES = ("chromium",)
WINDOW = (1280, 900)
# Screenshots show the whole page, cut at this height (a long chapter is tens of thousands of pixels).
SCREENSHOT_MAX_HEIGHT = 12000
LOAD_TIMEOUT = 60.0     # seconds for a page's load event
SETTLE_TIMEOUT = 30.0   # seconds for MathJax, fonts, images and figures once it has loaded
MAX_REDIRECTS = 3       # a page that sends the browser on (index.html), followed this many times
KINDS = ("console", "image", "math", "figure", "duplicate", "print", "overflow", "access", "link", "load")
# Accessibility: axe-core's rules of WCAG 2.1 levels A and AA, and the impacts that fail a page.
ACCESS_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
ACCESS_IMPACTS = ("serious", "critical")
ACCESS_ELEMENTS = 5     # elements named for one rule on one page; the rest are counted
SELECTOR_MAX = 90       # characters of an element's selector kept (its end, which names the element)


class SiteTestError(RuntimeError):
    """The check could not run (no site, no browser): a failure of the target, not a skip."""


# ---------------------------------------------------------------------------
# Chromium: found, or installed from the system's package manager.
# ---------------------------------------------------------------------------


def find_chromium() -> str | None:
    """The Chromium executable: ``$CHROMIUM``, else the first of the usual names on the PATH."""
    if os.environ.get(CHROMIUM_VARIABLE):
        return os.environ[CHROMIUM_VARIABLE]
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def install_chromium(log=print) -> str:
    """Install Debian's ``chromium`` with apt-get; returns its path, or raises :class:`SiteTestError`."""
    if shutil.which("apt-get") is None:
        raise SiteTestError("Chromium is not installed and there is no apt-get to install it with: install "
                            f"Chromium, or set {CHROMIUM_VARIABLE} to its executable")
    prefix = []
    if os.geteuid() != 0:
        if shutil.which("sudo") is None:
            raise SiteTestError("Chromium is not installed, and installing it needs root (no sudo here): "
                                f"run `apt-get install -y --no-install-recommends {' '.join(APT_PACKAGES)}` as root")
        prefix = ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    commands = [[*prefix, "apt-get", "update"],
                [*prefix, "apt-get", "install", "-y", "--no-install-recommends", *APT_PACKAGES]]
    log("site-test: Chromium is not installed; installing Debian's package:", flush=True)
    started = time.monotonic()
    for command in commands:
        log("  $ " + " ".join(command), flush=True)
        done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if done.returncode != 0:
            raise SiteTestError(f"`{' '.join(command)}` failed (exit {done.returncode}):\n"
                                f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    found = find_chromium()
    if found is None:
        raise SiteTestError(f"apt-get installed {' '.join(APT_PACKAGES)}, yet no Chromium is on the PATH")
    version = subprocess.run([found, "--version"], capture_output=True, text=True).stdout.strip()
    log(f"site-test: installed {version or found} in {time.monotonic() - started:.0f} s", flush=True)
    return found


def ensure_chromium(log=print) -> str:
    """The Chromium executable, installed first when missing."""
    return find_chromium() or install_chromium(log)



# ---------------------------------------------------------------------------
# Chromium driven by Playwright: how pytest-playwright's fixtures launch it and open its contexts
# (tools/conftest.py).
# ---------------------------------------------------------------------------

# Headless Chromium as a reader's window: no scrollbars taking width from the page, nothing running in the
# background to slow a page down or to log errors of its own.
CHROMIUM_FLAGS = ("--hide-scrollbars", "--force-device-scale-factor=1", "--disable-gpu", "--disable-dev-shm-usage",
                  "--disable-quic", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-default-apps", "--disable-features=Translate,MediaRouter")


def launch_args(executable: str) -> dict:
    """The arguments of ``BrowserType.launch`` for headless Chromium, the system's ``executable``."""
    return {"executable_path": executable, "headless": True, "args": list(CHROMIUM_FLAGS), "timeout": 60_000}


def context_args() -> dict:
    """The arguments of ``Browser.new_context`` for a page's context: a reader's window, :data:`WINDOW`."""
    return {"viewport": {"width": WINDOW[0], "height": WINDOW[1]}, "device_scale_factor": 1}


def describe_browser(browser: Browser, executable: str) -> str:
    """Which browser, Playwright and axe-core judge the pages."""
    return (f"site-test: Chromium {browser.version} ({executable}) driven by Playwright "
            f"{importlib.metadata.version('playwright')} (pytest-playwright "
            f"{importlib.metadata.version('pytest-playwright')}), axe-core {axe_version()}")


# ---------------------------------------------------------------------------
# Serving the site.
# ---------------------------------------------------------------------------


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A tab closed while its request was answered (the browser's own /favicon.ico, say) is no failure.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Server:
    """``html_dir`` over HTTP on 127.0.0.1, a free port, in a thread."""

    def __init__(self, html_dir: Path):
        handler = functools.partial(_QuietHandler, directory=str(html_dir))
        self.httpd = _HTTPServer(("127.0.0.1", 0), handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---------------------------------------------------------------------------
# What is checked in each page.
# ---------------------------------------------------------------------------

# Awaited after the load event: MathJax's first typesetting, the fonts, every image, every Plotly figure.
SETTLE = """(async () => {
  const deadline = Date.now() + %(timeout)d;
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const until = async test => { while (!test() && Date.now() < deadline) await sleep(50); return Boolean(test()); };
  const notes = [];
  if (window.MathJax) {
    // The configuration object exists before MathJax itself; startup.promise once it has loaded.
    if (await until(() => window.MathJax.startup && window.MathJax.startup.promise)) {
      await Promise.race([window.MathJax.startup.promise, sleep(Math.max(deadline - Date.now(), 0))]);
    } else notes.push("MathJax did not start");
  }
  for (const img of document.images) if (img.loading === "lazy") img.loading = "eager";
  await Promise.race([Promise.all([...document.images].map(img => img.complete ? null : new Promise(r => {
    img.addEventListener("load", r, {once: true}); img.addEventListener("error", r, {once: true});
  }))), sleep(Math.max(deadline - Date.now(), 0))]);
  if (document.fonts) await Promise.race([document.fonts.ready, sleep(Math.max(deadline - Date.now(), 0))]);
  // Every figure drawn; or no plotly.js two seconds after the load event, when none will be.
  const figures = () => [...document.querySelectorAll(%(figures)s)];
  const given_up = Date.now() + 2000;
  await until(() => figures().every(f => f.querySelector(".main-svg")) || (!window.Plotly && Date.now() > given_up));
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return notes;
})()"""

# Elements whose text is not prose: code, scripts, and what MathJax wrote.
NOT_PROSE = ("pre, code, kbd, samp, tt, script, style, noscript, textarea, template, svg, math, "
             "mjx-container, mjx-assistive-mml, .MathJax, .highlight")
FIGURES = ".vitbias-plotly, .plotly-graph-div, .js-plotly-plot"
# The two versions of a figure (tools/booksite.py): the static one for print, the interactive one for the screen.
PRINT_FIGURE = "figure.vitbias-print-figure"
INTERACTIVE_FIGURE = "figure.vitbias-interactive-figure"
# Boxes that scroll code or its output sideways when it is wider than they are.
CODE_BOXES = "pre, div.highlight, .cell_input, .cell_output, .cell_output .output, .cell_output table, " \
             ".cell_output .pst-scrollable-table-container"

# Which version of each figure that has two (tools/booksite.py) the page shows, in the current media.
# Shown: laid out, and not inside a closed <details> (whose content keeps its boxes in Chromium).
SHOWN = """const visible = el => el.getClientRects().length > 0 && (!el.checkVisibility ||
    el.checkVisibility({visibilityProperty: true}));
  const shown = () => ({
    print: [...document.querySelectorAll(%(print_figure)s)].map(f => [f.id, visible(f)]),
    interactive: [...document.querySelectorAll(%(interactive_figure)s)].map(f => [f.id, visible(f),
      (f.querySelector("figcaption") || {}).innerText || "",
      (f.querySelector(".vitbias-alt") || {}).textContent || ""]),
  });"""

# The code boxes that scroll sideways, the innermost of each nest, each marked so that a later scan
# (once the folded cells are opened) reports only new ones; ``folded`` prefixes where it is.
OVERFLOW = """(folded => [...document.querySelectorAll(%(code_boxes)s)].filter(box => {
      if (box.dataset.vitbiasOverflow || !visible(box) || box.scrollWidth <= box.clientWidth + 1) return false;
      // once opened, an interactive figure is left out: the first scan saw it as drawn, and the
      // screenshot in between may have made it draw itself again at another width
      if (folded && box.querySelector(%(figures)s)) return false;
      return ["auto", "scroll"].includes(getComputedStyle(box).overflowX);
    }).filter((box, i, boxes) => !boxes.some(other => other !== box && box.contains(other)))   // the innermost
      .map(box => {
        box.dataset.vitbiasOverflow = "1";
        const lines = (box.innerText || "").split("\\n");
        const longest = lines.reduce((a, b) => b.length > a.length ? b : a, "");
        const where = box.closest(".cell_output") ? "a cell's output" : box.closest(".cell") ? "a code cell"
          : "a code block";
        return {where: folded + where, scroll: box.scrollWidth, width: box.clientWidth, line: longest,
                chars: longest.length};
      }))"""

# Every folded cell and solution opened (hidden inputs and sphinx-togglebutton's dropdowns are <details>),
# then the code boxes scanned again: a reader who opens one must not meet a sideways scrollbar either.
OPENED_OVERFLOW = """(async () => {
  %(shown)s
  for (const folded of document.querySelectorAll("details")) folded.open = true;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return %(overflow)s("opened, ");
})()"""

# What the page looks like once settled: read in the page, judged in Python.
INSPECT = """(() => {
  if (document.readyState !== "complete" || !document.body) return null;   // on its way to another page
  %(shown)s
  const text = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, parent = node.parentElement;
    if (!parent || parent.closest(%(not_prose)s) || !node.data.trim()) continue;
    text.push(node.data);
  }
  const describe = el => el.id ? "#" + el.id : "<" + el.tagName.toLowerCase() + " class=\\"" + el.className + "\\">";
  return {
    url: location.href,
    status: (performance.getEntriesByType("navigation")[0] || {}).responseStatus || 0,
    text: text,
    images: [...document.images].map(img => ({
      src: img.getAttribute("src") || "", url: img.currentSrc || img.src || "", complete: img.complete,
      width: img.naturalWidth, alt: img.alt || ""})),
    math_errors: (() => {
      // From MathJax's own list of what it typeset: an error node (a TeX error, shown as its source by the
      // noerrors extension), or a command it does not know (shown as its name by noundefined).
      const found = [], doc = window.MathJax && MathJax.startup && MathJax.startup.document;
      for (const item of (doc && doc.math) || []) {
        if (item.root && item.root.walkTree) item.root.walkTree(node => {
          if (node.isKind("merror")) {
            found.push(item.math.trim() + ": " + (node.attributes.get("data-mjx-error") || "a TeX error"));
          } else if (node.isKind("mtext") && node.getText && /^\\\\[A-Za-z]+$/.test(node.getText())) {
            found.push(item.math.trim() + ": undefined command " + node.getText());
          }
        });
      }
      return found;
    })(),
    figures: [...document.querySelectorAll(%(figures)s)]
      .filter(f => !f.querySelector(".main-svg") && !f.parentElement.closest(%(figures)s)).map(describe),
    drawn_twice: [...document.querySelectorAll(%(figures)s)]
      .filter(f => !f.parentElement.closest(%(figures)s) && f.querySelectorAll(".plot-container").length > 1)
      .map(f => [describe(f), f.querySelectorAll(".plot-container").length]),
    shown: shown(),
    repeated_images: (() => {
      const seen = {};
      for (const img of document.images) {
        if (!visible(img) || !img.currentSrc) continue;
        seen[img.currentSrc] = (seen[img.currentSrc] || []).concat([img.getAttribute("src")]);
      }
      return Object.values(seen).filter(srcs => srcs.length > 1).map(srcs => [srcs[0], srcs.length]);
    })(),
    overflow: %(overflow)s(""),
    page_width: [document.documentElement.scrollWidth, window.innerWidth],
    links: [...document.querySelectorAll("a[href], area[href]")].map(a => ({
      href: a.getAttribute("href"), url: a.href})),
    ids: [...document.querySelectorAll("[id]")].map(el => el.id)
      .concat([...document.querySelectorAll("a[name]")].map(a => a.name)),
    height: Math.max(document.documentElement.scrollHeight, document.body.scrollHeight),
  };
})()"""

# TeX a reader should never see: delimiters, display dollars, inline dollars around TeX, commands.
RAW_TEX = re.compile(
    r"\\\(|\\\)|\\\[|\\\]"                                   # \( \) \[ \]
    r"|\$\$"                                                 # $$
    r"|(?<![\w$])\$[^$\s][^$\n]{0,200}?[\\^_{}][^$\n]{0,200}?(?<!\s)\$(?![\w$])"   # $x^2$, $\alpha$
    r"|\\(?:begin|end)\{"                                    # \begin{align}
    r"|\\[A-Za-z]{2,}(?![A-Za-z])"                            # \frac, \mathbf, \alpha
)


@dataclass
class Failure:
    page: str
    kind: str
    detail: str

    def __str__(self):
        return f"{self.page}: [{self.kind}] {self.detail}"


@dataclass
class PageResult:
    page: str
    failures: list[Failure] = field(default_factory=list)
    links: list[dict] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    # Each interactive figure that took a static one's place: [id, shown, caption, alt text] on screen.
    figures: list = field(default_factory=list)
    screenshot: Path | None = None
    seconds: float = 0.0


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


# What evaluating a script raises when the document it ran in went away under it (the page sent the browser on).
GONE = ("navigat", "context was destroyed", "Cannot find context")


@dataclass
class PageEvents:
    """What a tab reports while it is open: console messages, uncaught exceptions, its main frame's comings
    and goings (navigations started or committed, load events)."""

    messages: list[ConsoleMessage] = field(default_factory=list)
    exceptions: list[PlaywrightError] = field(default_factory=list)
    navigations: int = 0
    loads: int = 0

    @classmethod
    def watch(cls, tab: Page) -> PageEvents:
        events = cls()
        tab.on("console", events._logged)
        tab.on("pageerror", events._raised)
        tab.on("load", events._loaded)
        tab.on("request", lambda request: events._requested(tab, request))
        tab.on("framenavigated", lambda frame: events._navigated(frame is tab.main_frame))
        return events

    # Bound methods, not list.append: Playwright marks each handler it is given with an attribute.
    def _logged(self, message: ConsoleMessage) -> None:
        self.messages.append(message)

    def _raised(self, error: PlaywrightError) -> None:
        self.exceptions.append(error)

    def _loaded(self, _tab: Page) -> None:
        self.loads += 1

    def _requested(self, tab: Page, request: Request) -> None:
        self._navigated(request.is_navigation_request() and request.frame is tab.main_frame)

    def _navigated(self, main_frame: bool) -> None:
        self.navigations += main_frame


def _console_failures(page: str, events: PageEvents, origin: str = "", quiet_urls=()) -> list[Failure]:
    """The errors a page reported: uncaught exceptions, ``console.error`` and failed asserts of its scripts, and
    errors the browser logged, but for a failed load of a URL in ``quiet_urls`` (reported otherwise, as a broken
    image) and of ``/favicon.ico``, which the browser asks for by itself."""
    found = [Failure(page, "console", f"uncaught exception: {_short(error.stack or error.message, 300)}")
             for error in events.exceptions]
    quiet = {*quiet_urls, f"{origin}/favicon.ico"}
    for message in events.messages:
        if message.type not in ("error", "assert"):
            continue
        url = message.location.get("url", "")
        if message.args:   # a script's console.error() or console.assert(); what the browser logs has no arguments
            found.append(Failure(page, "console", f"console.{message.type}: {_short(message.text, 300)}"))
        elif url not in quiet:
            where = f" ({url})" if url else ""
            found.append(Failure(page, "console", f"browser error: {_short(message.text, 300)}{where}"))
    return found


def _settle_script() -> str:
    return SETTLE % {"timeout": SETTLE_TIMEOUT * 1000, "figures": json.dumps(FIGURES)}


def _shown_script() -> str:
    return SHOWN % {"print_figure": json.dumps(PRINT_FIGURE), "interactive_figure": json.dumps(INTERACTIVE_FIGURE)}


def _overflow_script() -> str:
    return OVERFLOW % {"code_boxes": json.dumps(CODE_BOXES), "figures": json.dumps(FIGURES)}


def _inspect_script() -> str:
    return INSPECT % {"not_prose": json.dumps(NOT_PROSE), "figures": json.dumps(FIGURES),
                      "overflow": _overflow_script(), "shown": _shown_script()}


def _opened_overflow(tab: Page) -> list[dict]:
    """The code boxes that scroll sideways once every folded cell and solution is opened, and did not before."""
    return tab.evaluate(OPENED_OVERFLOW % {"shown": _shown_script(), "overflow": _overflow_script()})


def _in_print(tab: Page) -> dict:
    """Which version of each figure with two the page shows in print media (the screen's is restored after)."""
    tab.emulate_media(media="print")
    try:
        return tab.evaluate(f"(() => {{ {_shown_script()}\n  return shown(); }})()")
    finally:
        tab.emulate_media(media="null")


def _read_settled(tab: Page) -> tuple[dict | None, list[str]]:
    """What the page shows once MathJax, its images and figures are done, with the notes of that wait; ``None``
    when the document is not loaded, or went away while it was read."""
    try:
        notes = tab.evaluate(_settle_script())
        state = tab.evaluate(_inspect_script())
        if state is not None:
            state["print"] = _in_print(tab)
    except PlaywrightError as error:
        if not any(words in error.message for words in GONE):
            raise
        return None, []
    return state, notes


def _wait_for_load(tab: Page, events: PageEvents, loads_seen: int) -> bool:
    """Whether the main frame fired a load event after the first ``loads_seen``, waiting for one if need be."""
    if events.loads > loads_seen:
        return True
    try:
        tab.wait_for_event("load", timeout=LOAD_TIMEOUT * 1000)
    except PlaywrightTimeoutError:
        return False
    return True


def _open_settled(tab: Page, events: PageEvents, url: str, result: PageResult) -> tuple[dict | None, list[str]]:
    """Open ``url`` and read the page once it settled; ``None``, with a load failure in ``result``, when it could
    not be read.

    A page that sends the browser on while it is read (a ``<meta http-equiv="refresh">``, as the site's
    ``index.html`` has) is read again where it went, once that has loaded.
    """
    def fail(detail: str) -> tuple[None, list[str]]:
        result.failures.append(Failure(result.page, "load", detail))
        return None, []

    try:
        tab.goto(url, wait_until="load", timeout=LOAD_TIMEOUT * 1000)
    except PlaywrightTimeoutError:
        return fail(f"no load event within {LOAD_TIMEOUT:.0f} s")
    except PlaywrightError as error:
        return fail(f"the page did not open: {_short(error.message.splitlines()[0], 300)}")
    for _ in range(MAX_REDIRECTS + 1):
        loads_seen, events.navigations = events.loads, 0
        state, notes = _read_settled(tab)
        if state is not None and not events.navigations:
            return state, notes
        if not _wait_for_load(tab, events, loads_seen):
            return fail(f"no load event within {LOAD_TIMEOUT:.0f} s")
    return fail(f"still going on to other pages after {MAX_REDIRECTS + 1} loads")


def _snippet(text: str, start: int, end: int, around: int = 30) -> str:
    return _short(("…" if start > around else "") + text[max(start - around, 0):end + around]
                  + ("…" if end + around < len(text) else ""), 120)


def _tex_failures(page: str, texts: list[str]) -> list[Failure]:
    found, seen = [], set()
    for text in texts:
        for match in RAW_TEX.finditer(text):
            snippet = _snippet(text, match.start(), match.end())
            if snippet not in seen:
                seen.add(snippet)
                found.append(Failure(page, "math", f"raw TeX {match.group(0)} in the text: “{snippet}”"))
    return found


def _figure_failures(page: str, screen: dict, paper: dict, repeated_images: list) -> list[Failure]:
    """A figure shown twice on screen, or the wrong version of one on paper."""
    found = []
    for name, shown in screen["print"]:
        if shown:
            found.append(Failure(page, "duplicate", f"#{name}, the static twin of an interactive figure, is shown "
                                                    "on screen as well as the interactive figure"))
    for name, shown, _, _ in screen["interactive"]:
        if not shown:
            found.append(Failure(page, "figure", f"interactive figure #{name} is hidden on screen"))
    for src, times in repeated_images:
        found.append(Failure(page, "duplicate", f"<img src={src!r}> is shown {times} times"))
    for name, shown in paper["print"]:
        if not shown:
            found.append(Failure(page, "print", f"#{name}, the static version of an interactive figure, is hidden "
                                                "in print"))
    for name, shown, _, _ in paper["interactive"]:
        if shown:
            found.append(Failure(page, "print", f"interactive figure #{name} is shown in print, where it cannot "
                                                "be drawn"))
    return found


def _overflow_failures(page: str, boxes: list[dict], page_width: list[int]) -> list[Failure]:
    found = [Failure(page, "overflow", f"{box['where']} scrolls sideways ({box['scroll']} px in {box['width']} px): "
                                       f"its longest line has {box['chars']} characters: {_short(box['line'], 80)!r}")
             for box in boxes]
    if page_width[0] > page_width[1]:
        found.append(Failure(page, "overflow", f"the page is {page_width[0]} px wide in a {page_width[1]} px window"))
    return found



def _image_failures(page: str, images: list[dict]) -> tuple[list[Failure], list[str]]:
    """The images that did not load, and their URLs (whose failed loads the console need not report again)."""
    found, broken = [], []
    for image in images:
        if not image["complete"]:
            broken.append(image["url"])
            found.append(Failure(page, "image", f"<img src={image['src']!r}> did not finish loading "
                                                f"within {SETTLE_TIMEOUT:.0f} s"))
        elif image["width"] == 0:
            broken.append(image["url"])
            alt = f" (alt {_short(image['alt'], 60)!r})" if image["alt"] else ""
            found.append(Failure(page, "image", f"<img src={image['src']!r}> did not load{alt}"))
    return found, broken


# ---------------------------------------------------------------------------
# Accessibility: axe-core in the page.
# ---------------------------------------------------------------------------


def axe_version() -> str:
    """The version of the axe-core that ``axe-playwright-python`` ships (its script's first comment)."""
    match = re.search(r"axe v(\d[\w.-]*)", Axe().axe_script[:300])
    return match.group(1) if match else "of unknown version"


def _axe_violations(tab: Page) -> list[dict]:
    """axe-core's violations of its rules tagged :data:`ACCESS_TAGS` in the page as it is now, of any impact.

    As every other check, it reads the page's own document and not the frames
    in it (for each of those, axe would wait for an axe of the frame's own).
    """
    options = {"runOnly": {"type": "tag", "values": list(ACCESS_TAGS)}, "resultTypes": ["violations"],
               "iframes": False}
    return Axe().run(tab, options=options).response["violations"]


def _selector(target: list) -> str:
    """axe's target of an element as one selector, cut to its last :data:`SELECTOR_MAX` characters.

    A target is a list of selectors, one for each document it goes into (a
    frame, a shadow root, which is a list of its own); they are joined by ``>>>``.
    """
    parts = [part if isinstance(part, str) else " >>> ".join(part) for part in target]
    text = " ".join(" >>> ".join(parts).split())
    return text if len(text) <= SELECTOR_MAX else "…" + text[-(SELECTOR_MAX - 1):]


def _contrast(node: dict) -> str:
    """The colours of an element whose text has too little contrast, as axe measured them; else ``""``."""
    for check in node.get("any", []) + node.get("all", []):
        data = check.get("data")
        if isinstance(data, dict) and data.get("contrastRatio") and data.get("fgColor"):
            return (f"; contrast {data['contrastRatio']}:1 where {data.get('expectedContrastRatio', '4.5:1')} "
                    f"is needed ({data['fgColor']} on {data.get('bgColor', 'its background')})")
    return ""


def _violation_failures(page: str, violations: list[dict]) -> list[Failure]:
    """A failure for each element of a violation of impact :data:`ACCESS_IMPACTS`: at most
    :data:`ACCESS_ELEMENTS` for a rule, then one that counts the others."""
    found = []
    for violation in violations:
        rule = violation["id"]
        impacts = [(node, node.get("impact") or violation["impact"]) for node in violation["nodes"]]
        failing = [(node, impact) for node, impact in impacts if impact in ACCESS_IMPACTS]
        for node, impact in failing[:ACCESS_ELEMENTS]:
            found.append(Failure(page, "access", f"{rule} ({impact}): {violation['help']}: "
                                                 f"{_selector(node['target'])}{_contrast(node)}"))
        if len(failing) > ACCESS_ELEMENTS:
            found.append(Failure(page, "access", f"{rule}: {len(failing) - ACCESS_ELEMENTS} more elements"))
    return found


def _access_failures(page: str, tab: Page, events: PageEvents) -> list[Failure]:
    """The page's violations of WCAG 2.1 A and AA that fail it; axe-core failing to run is one too.

    The errors the browser logs while axe-core runs are axe-core's, not the
    page's, and are dropped from ``events``: to read the stylesheets, it
    fetches each ``@import`` at its URL resolved against the page rather than
    against the sheet that imports it (axe-core issue 5268), which the theme's
    ``@import "../basic.css"`` turns into a 404. What the page's own scripts
    log meanwhile is kept.
    """
    logged = len(events.messages)
    try:
        violations = _axe_violations(tab)
    except PlaywrightError as error:
        return [Failure(page, "access", f"axe-core did not run: {_short(error.message, 300)}")]
    finally:
        events.messages[logged:] = [message for message in events.messages[logged:] if message.args]
    return _violation_failures(page, violations)


# Each drawn Plotly figure with a slider of two or more steps: its id and where its slider stands.
SLIDERS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((div, index) => {
  const slider = div.layout && div.layout.sliders && div.layout.sliders[0];
  const steps = slider && slider.steps ? slider.steps.length : 0;
  return {id: div.id, index: index, steps: steps, active: slider ? (slider.active || 0) : 0};
}).filter(figure => figure.steps > 1)"""
STEP_WAIT_MS = 3000


def _keyboard_failures(page: str, tab: Page) -> list[Failure]:
    """Each slider figure stepped once from the keyboard: a focused button, Enter, the slider moved and
    the step said (``aria-live``); a figure without those buttons fails."""
    found = []
    for figure in tab.evaluate(SLIDERS):
        name = figure["id"] or f"number {figure['index'] + 1}"
        step = -1 if figure["active"] == figure["steps"] - 1 else 1
        button = tab.locator(f"[id='{figure['id']}-keys'] button[data-step='{step}']") if figure["id"] else None
        if button is None or button.count() != 1:
            found.append(Failure(page, "keyboard", f"interactive figure {name} has a slider and no buttons "
                                                   "(#<id>-keys) that step it from the keyboard"))
            continue
        button.focus()
        tab.keyboard.press("Enter")
        expected = figure["active"] + step
        try:
            tab.wait_for_function("([id, expected]) => { const div = document.getElementById(id); "
                                  "return div.layout.sliders[0].active === expected && "
                                  "document.getElementById(id + '-keys').querySelector('[aria-live]')"
                                  ".textContent.trim() !== ''; }",
                                  arg=[figure["id"], expected], timeout=STEP_WAIT_MS)
        except PlaywrightError:
            found.append(Failure(page, "keyboard", f"interactive figure {name}: Enter on its focused step "
                                                   f"button did not move the slider to step {expected + 1} "
                                                   "and say so"))
    return found


def _page_failures(page: str, state: dict, notes: list[str], events: PageEvents, origin: str) -> list[Failure]:
    """Everything wrong with a settled page, from what :data:`INSPECT` read in it and what it reported."""
    found = []
    if state["status"] >= 400:
        found.append(Failure(page, "load", f"{state['url']} answered HTTP {state['status']}"))
    found += [Failure(page, "math", note) for note in notes]
    images, broken = _image_failures(page, state["images"])
    found += images
    found += _console_failures(page, events, origin, broken)
    found += _tex_failures(page, state["text"])
    found += [Failure(page, "math", f"MathJax could not typeset a formula: {_short(text)}")
              for text in state["math_errors"]]
    found += [Failure(page, "figure", f"interactive figure {name} was not drawn (no .main-svg: "
                                      "plotly.js missing, or its script failed)")
              for name in state["figures"]]
    found += [Failure(page, "figure", f"interactive figure {name} was drawn {times} times over")
              for name, times in state["drawn_twice"]]
    found += _figure_failures(page, state["shown"], state["print"], state["repeated_images"])
    found += _overflow_failures(page, state["overflow"], state["page_width"])
    return found


def inspect_page(tab: Page, url: str, page: str, screenshot: Path | None) -> PageResult:
    """Open ``url`` in ``tab``, let it settle, write its screenshot, and judge what it shows: as it first
    shows it (accessibility included), then with every folded cell and solution opened.

    ``tab`` is a new tab in a browser context of its own (no storage, no
    cache; pytest-playwright's ``page`` fixture), as for a reader whose first
    page of the site it is, whatever was opened before; whoever handed it in
    closes its context.
    """
    started = time.monotonic()
    result = PageResult(page)
    try:
        events = PageEvents.watch(tab)
        state, notes = _open_settled(tab, events, url, result)
        if state is None:
            result.failures += _console_failures(page, events)
            return result
        # As the reader first meets the page: before the screenshot, whose capture of the whole page can
        # make the interactive figures draw themselves again at another width, and before anything is opened.
        access = _access_failures(page, tab, events)
        if screenshot is not None:
            result.screenshot = _screenshot(tab, state["height"], screenshot)
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        result.failures += _page_failures(page, state, notes, events, origin) + access
        result.failures += _keyboard_failures(page, tab)
        result.failures += _overflow_failures(page, _opened_overflow(tab), [0, 0])
        result.figures = state["shown"]["interactive"]
        result.links, result.ids = state["links"], set(state["ids"])
    finally:
        result.seconds = time.monotonic() - started
    return result


def _screenshot(tab: Page, height: int, path: Path) -> Path:
    """The whole page, at the window's width, cut at :data:`SCREENSHOT_MAX_HEIGHT`, as a PNG at ``path``."""
    height = max(min(int(height), SCREENSHOT_MAX_HEIGHT), WINDOW[1])
    path.parent.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=path, type="png", full_page=True, timeout=120_000,
                   clip={"x": 0, "y": 0, "width": WINDOW[0], "height": height})
    return path


# ---------------------------------------------------------------------------
# Links between pages, once every page has been seen.
# ---------------------------------------------------------------------------


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value and (name == "id" or (tag == "a" and name == "name")):
                self.ids.add(value)


def _static_ids(path: Path) -> set[str]:
    parser = _Ids()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser.ids


def link_failures(html_dir: Path, origin: str, results: dict[str, PageResult]) -> list[Failure]:
    """Every link into the site whose file is missing, or whose ``#anchor`` its target page lacks.

    The ids of a page that was opened are those the browser saw; of any other
    page of the site, those of its HTML.
    """
    html_dir = html_dir.resolve()
    found, static_ids = [], {}
    for page, result in results.items():
        reported = set()
        for link in result.links:
            url = urlsplit(link["url"])
            if f"{url.scheme}://{url.netloc}" != origin:
                continue   # another host (or mailto:, javascript:): not this check's business
            path = unquote(url.path).lstrip("/")
            target = html_dir / path
            if not path or path.endswith("/") or target.is_dir():
                target, path = target / "index.html", (path.rstrip("/") + "/index.html").lstrip("/")
            problem = None
            if not target.is_file():
                problem = f"link {link['href']!r}: {path} is not in the site"
            elif url.fragment and target.suffix == ".html":
                anchor = unquote(url.fragment)
                if anchor == "top" or anchor.startswith(":~:"):
                    continue   # the top of the page (HTML), a text fragment
                if path in results:
                    ids = results[path].ids
                else:
                    ids = static_ids.setdefault(path, _static_ids(target))
                if anchor not in ids:
                    problem = f"link {link['href']!r}: {path} has no element with id {anchor!r}"
            if problem and problem not in reported:
                reported.add(problem)
                found.append(Failure(page, "link", problem))
    return found


# ---------------------------------------------------------------------------
# The whole site.
# ---------------------------------------------------------------------------


def site_pages(html_dir: Path) -> list[str]:
    """Every page of the site, as a path relative to ``html_dir``."""
    return [p.relative_to(html_dir).as_posix() for p in sitecheck.pages(html_dir)]


class Site:
    """The site in ``html_dir`` served on 127.0.0.1, and what each of its pages showed once opened.

    ``with Site(html_dir) as site: site.check(tab, "index.html")``, ``tab``
    a new tab in a context of its own; what each page showed is kept in
    :attr:`results`, for :meth:`link_failures` once the pages were opened.
    """

    def __init__(self, html_dir: Path, screenshots: Path | None = SCREENSHOTS):
        self.html_dir = Path(html_dir).resolve()
        self.screenshots = None if screenshots is None else Path(screenshots)
        self.results: dict[str, PageResult] = {}

    def __enter__(self) -> Site:
        self.server = Server(self.html_dir)
        return self

    def __exit__(self, *exc) -> None:
        self.server.close()

    def check(self, tab: Page, page: str) -> PageResult:
        """Open ``page`` (a path relative to the site) in ``tab``, judge it and write its screenshot."""
        if not (self.html_dir / page).is_file():
            raise SiteTestError(f"no such page in {self.html_dir}: {page}")
        shot = None if self.screenshots is None else self.screenshots / Path(page).with_suffix(".png")
        self.results[page] = inspect_page(tab, f"{self.server.origin}/{page}", page, shot)
        return self.results[page]

    def link_failures(self) -> list[Failure]:
        """The broken links and anchors of the pages opened so far."""
        return link_failures(self.html_dir, self.server.origin, self.results)


def report(failures: list[Failure], pages: int, seconds: float, screenshots: Path | None) -> str:
    """The failures of ``pages`` pages by kind, one that several pages share listed once, with its pages."""
    lines = []
    if failures:
        lines.append(f"site-test: {len(failures)} failures on "
                     f"{len({f.page for f in failures})} of {pages} pages:")
        for kind in KINDS:
            of_kind = [f for f in failures if f.kind == kind]
            if of_kind:
                lines.append(f"  {kind} ({len(of_kind)}):")
                # The same failure on several pages (a theme's script, say) is listed once, with its pages.
                pages_of: dict[str, list[str]] = {}
                for f in of_kind:
                    pages_of.setdefault(f.detail, []).append(f.page)
                for detail, where in pages_of.items():
                    if len(where) == 1:
                        lines.append(f"    {where[0]}: {detail}")
                    else:
                        lines.append(f"    {len(where)} pages: {detail}")
                        lines.append(f"      on {', '.join(where)}")
    else:
        lines.append(f"site-test: all {pages} pages passed (console, images, math, figures, duplicates, "
                     f"print, overflow, accessibility, links)")
    lines.append(f"site-test: {seconds:.0f} s" + (f"; screenshots in {screenshots}" if screenshots else ""))
    return "\n".join(lines)


def main(argv=None) -> int:
    """``--install``: Chromium installed when it is missing, and named. The pages are checked by pytest only."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--install", action="store_true", required=True,
                        help="install Chromium if it is missing, and say which it is")
    parser.parse_args(argv)
    try:
        executable = ensure_chromium()
    except SiteTestError as error:
        print(f"site-test: {error}")
        return 2
    version = subprocess.run([executable, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"site-test: Chromium is {executable} ({version or 'its --version printed nothing'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
