"""The built site in a real browser: open every page in headless Chromium and fail on what a reader would see broken.

    python -m tools.sitetest [_build/html] [--screenshots DIR] [--page PATH ...]
    python -m tools.sitetest --install      # only install Chromium when it is missing

serves the site on 127.0.0.1 (a free port), opens each page in headless
Chromium, waits for MathJax to typeset and the interactive figures to draw,
and reports, page by page:

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
  page wider than the window; at the window's width, 1280 px;
- **link**: a link into the site to a file that is not there, or to an
  ``#anchor`` no element of the target page has (ids as the browser sees them,
  after the page's scripts ran);
- **load**: a page that did not open, answered an HTTP error, or never loaded.

Each page opens in a browser context of its own, as a reader's first page of
the site (no storage or cache left by the pages before it); a page that sends
the browser on (the site's ``index.html``) is judged where it lands. It writes
a screenshot of each page, the whole page cut at 12,000 pixels, to
``_build/site-test/<page>.png``, and exits 1 when anything failed, 2 when it
could not run (no built site, no Chromium).

Chromium is Debian's ``chromium`` package; when it is missing this installs
it with ``apt-get`` (through ``sudo`` when not root), saying so; an install
that fails is a failure, never a skip. The browser is driven over the
DevTools protocol on a pipe (``--remote-debugging-pipe``: JSON messages, each
ending in a NUL byte, written to its fd 3 and read from its fd 4), so this
needs only the standard library: no WebDriver, no chromedriver, no port.

Every ``.html`` page of the site is opened, ``genindex.html`` and
``search.html`` included (a reader reaches both from every page); not the
theme's templates under ``_static/`` nor the sources under ``_sources/``.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import functools
import http.server
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

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
KINDS = ("console", "image", "math", "figure", "duplicate", "print", "overflow", "link", "load")


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
# The DevTools protocol over a pipe.
# ---------------------------------------------------------------------------


class ProtocolError(RuntimeError):
    pass


class Browser:
    """Headless Chromium driven over ``--remote-debugging-pipe``.

    :meth:`call` sends a command and returns its result; events (messages
    without an id) are kept, by session, in :attr:`events` until taken.
    """

    def __init__(self, executable: str, window=WINDOW):
        self.profile = tempfile.mkdtemp(prefix="site-test-chromium-")
        # Our ends and Chromium's, all at fds >= 10, so that the shell can put Chromium's at 3 and 4.
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_chrome_r, from_chrome_w)]
        for fd in (to_chrome_r, from_chrome_w):
            os.close(fd)
        self._write_fd, self._read_fd = to_chrome_w, from_chrome_r
        flags = ["--headless", "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
                 f"--window-size={window[0]},{window[1]}", "--force-device-scale-factor=1", "--hide-scrollbars",
                 "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                 "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-extensions", "--disable-default-apps", "--mute-audio",
                 "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                 "--disable-backgrounding-occluded-windows", "--disable-features=Translate,MediaRouter",
                 "about:blank"]
        if os.geteuid() == 0:
            flags.insert(0, "--no-sandbox")   # Chromium refuses to run as root with its sandbox
        script = f'exec "$@" 3<&{high[0]} 4>&{high[1]} {high[0]}<&- {high[1]}>&-'
        self.process = subprocess.Popen(["bash", "-c", script, "chromium", executable, *flags],
                                        pass_fds=high, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)
        for fd in high:
            os.close(fd)
        self._pieces: list[bytes] = []
        self._next_id = 0
        self._responses: dict[int, dict] = {}
        self.events: dict[str | None, list[dict]] = {}
        try:
            self.version = self.call("Browser.getVersion", timeout=30)["product"]
        except Exception:
            self.close()
            raise

    def _read(self, timeout: float) -> bool:
        """Read what Chromium wrote within ``timeout`` seconds; False if nothing came."""
        ready, _, _ = select.select([self._read_fd], [], [], max(timeout, 0))
        if not ready:
            return False
        chunk = os.read(self._read_fd, 1 << 20)
        if not chunk:
            error = self.process.stderr.read().decode(errors="replace")[-3000:] if self.process.poll() is not None \
                else ""
            raise ProtocolError(f"Chromium closed the DevTools pipe (exit {self.process.poll()}):\n{error}")
        if b"\0" not in chunk:   # a long message (a screenshot) comes in many pieces: join them once
            self._pieces.append(chunk)
            return True
        *messages, rest = (b"".join(self._pieces) + chunk).split(b"\0")
        self._pieces = [rest]
        for raw in messages:
            message = json.loads(raw)
            if "id" in message:
                self._responses[message["id"]] = message
            else:
                self.events.setdefault(message.get("sessionId"), []).append(message)
        return True

    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 60):
        self._next_id += 1
        number = self._next_id
        message = {"id": number, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._write_fd, data):]
        deadline = time.monotonic() + timeout
        while number not in self._responses:
            if not self._read(deadline - time.monotonic()) and time.monotonic() >= deadline:
                raise ProtocolError(f"{method}: no answer from Chromium in {timeout:.0f} s")
        response = self._responses.pop(number)
        if "error" in response:
            raise ProtocolError(f"{method}: {response['error'].get('message')} {response['error'].get('data', '')}")
        return response.get("result", {})

    def wait_event(self, session: str | None, method: str, timeout: float) -> dict | None:
        """The first event ``method`` of ``session`` (kept in :attr:`events`), waiting up to ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            events = self.events.get(session, [])
            for i, event in enumerate(events):
                if event["method"] == method:
                    return events.pop(i)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._read(remaining)

    def drain(self, seconds: float = 0.0) -> None:
        """Take in every message that arrives within ``seconds``."""
        deadline = time.monotonic() + seconds
        while self._read(max(deadline - time.monotonic(), 0)):
            pass

    def evaluate(self, session: str, expression: str, timeout: float = 60):
        """The value of a JavaScript expression in the page (awaited when it is a promise)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                "returnByValue": True, "timeout": int(timeout * 1000)},
                           session, timeout=timeout + 10)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise ProtocolError(f"the check's own script failed in the page: "
                                f"{details.get('exception', {}).get('description') or details.get('text')}")
        return result["result"].get("value")

    def close(self) -> None:
        try:
            if self.process.poll() is None:
                try:
                    self.call("Browser.close", timeout=10)
                except (ProtocolError, OSError):
                    pass
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        finally:
            for fd in (self._write_fd, self._read_fd):
                try:
                    os.close(fd)
                except OSError:
                    pass
            if self.process.stderr:
                self.process.stderr.close()
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


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
    overflow: [...document.querySelectorAll(%(code_boxes)s)].filter(box => {
      if (!visible(box) || box.scrollWidth <= box.clientWidth + 1) return false;
      return ["auto", "scroll"].includes(getComputedStyle(box).overflowX);
    }).filter((box, i, boxes) => !boxes.some(other => other !== box && box.contains(other)))   // the innermost
      .map(box => {
        const lines = (box.innerText || "").split("\\n");
        const longest = lines.reduce((a, b) => b.length > a.length ? b : a, "");
        const where = box.closest(".cell_output") ? "a cell's output" : box.closest(".cell") ? "a code cell"
          : "a code block";
        return {where: where, scroll: box.scrollWidth, width: box.clientWidth, line: longest,
                chars: longest.length};
      }),
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


# What Runtime.evaluate answers when the document it ran in went away under it.
GONE = ("navigated", "context was destroyed", "Cannot find context")
NAVIGATIONS = ("Page.frameRequestedNavigation", "Page.frameStartedNavigating", "Page.frameStartedLoading",
               "Page.frameNavigated")


def _take_navigations(browser: Browser, session: str, frame: str) -> bool:
    """Whether the page's main frame started for another document since last asked (those events dropped)."""
    events = browser.events.get(session, [])
    navigations = [e for e in events if e["method"] in NAVIGATIONS
                   and (e["params"].get("frameId") or e["params"].get("frame", {}).get("id")) == frame]
    browser.events[session] = [e for e in events if e not in navigations]
    return bool(navigations)


def _console_failures(page: str, events: list[dict], origin: str = "", quiet_urls=()) -> list[Failure]:
    """The errors among a page's events, but for a failed load of a URL in ``quiet_urls`` (reported
    otherwise, as a broken image) and of ``/favicon.ico``, which the browser asks for by itself."""
    found = []
    quiet = {*quiet_urls, f"{origin}/favicon.ico"}
    for event in events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            message = details.get("exception", {}).get("description") or details.get("text", "")
            where = f" ({details['url']}:{details.get('lineNumber', 0) + 1})" if details.get("url") else ""
            found.append(Failure(page, "console", f"uncaught exception: {_short(message, 300)}{where}"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = [a.get("value", a.get("description", a.get("type"))) for a in params.get("args", [])]
            found.append(Failure(page, "console", f"console.{params['type']}: {_short(' '.join(map(str, args)), 300)}"))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            if entry.get("source") == "network" and entry.get("url") in quiet:
                continue
            url = f" ({entry['url']})" if entry.get("url") else ""
            found.append(Failure(page, "console", f"{entry.get('source', 'browser')} error: "
                                                  f"{_short(entry.get('text', ''), 300)}{url}"))
    return found


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


def _inspect_script() -> str:
    shown = SHOWN % {"print_figure": json.dumps(PRINT_FIGURE), "interactive_figure": json.dumps(INTERACTIVE_FIGURE)}
    return INSPECT % {"not_prose": json.dumps(NOT_PROSE), "figures": json.dumps(FIGURES),
                      "code_boxes": json.dumps(CODE_BOXES), "shown": shown}


def _in_print(browser: Browser, session: str) -> dict:
    """Which version of each figure with two the page shows in print media (the screen's is restored after)."""
    shown = SHOWN % {"print_figure": json.dumps(PRINT_FIGURE), "interactive_figure": json.dumps(INTERACTIVE_FIGURE)}
    browser.call("Emulation.setEmulatedMedia", {"media": "print"}, session)
    try:
        return browser.evaluate(session, f"(() => {{ {shown}\n  return shown(); }})()")
    finally:
        browser.call("Emulation.setEmulatedMedia", {"media": ""}, session)


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


def inspect_page(browser: Browser, url: str, page: str, screenshot: Path | None) -> PageResult:
    """Open ``url`` in a new tab, let it settle, judge what it shows, and write its screenshot.

    Each page opens in a browser context of its own (no storage, no cache), as
    for a reader whose first page of the site it is, whatever was opened before.
    """
    started = time.monotonic()
    result = PageResult(page)
    context = browser.call("Target.createBrowserContext")["browserContextId"]
    target = browser.call("Target.createTarget", {"url": "about:blank", "browserContextId": context})["targetId"]
    try:
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.call(f"{domain}.enable", session=session)
        browser.events.pop(session, None)   # about:blank's
        navigated = browser.call("Page.navigate", {"url": url}, session)
        if navigated.get("errorText"):
            result.failures.append(Failure(page, "load", f"the page did not open: {navigated['errorText']}"))
            return result
        frame = navigated["frameId"]
        state, notes = None, []
        for _ in range(MAX_REDIRECTS + 1):
            if browser.wait_event(session, "Page.loadEventFired", LOAD_TIMEOUT) is None:
                result.failures.append(Failure(page, "load", f"no load event within {LOAD_TIMEOUT:.0f} s"))
                break
            _take_navigations(browser, session, frame)
            try:
                notes = browser.evaluate(session, SETTLE % {"timeout": SETTLE_TIMEOUT * 1000,
                                                            "figures": json.dumps(FIGURES)},
                                         timeout=SETTLE_TIMEOUT + 10)
                state = browser.evaluate(session, _inspect_script())
                if state is not None:
                    state["print"] = _in_print(browser, session)
                browser.drain(0.05)
            except ProtocolError as error:
                if not any(words in str(error) for words in GONE):
                    raise
                state = None
            # Unless the page sent the browser on while it was read (a <meta http-equiv="refresh">, as the
            # site's index.html does): then judge the page it went to, once that has loaded.
            if state is not None and not _take_navigations(browser, session, frame):
                break
            state = None
        else:
            result.failures.append(Failure(page, "load", f"still going on to other pages after "
                                                         f"{MAX_REDIRECTS + 1} loads"))
        if state is None:
            result.failures += _console_failures(page, browser.events.pop(session, []))
            return result
        failures = result.failures
        if state["status"] >= 400:
            failures.append(Failure(page, "load", f"{state['url']} answered HTTP {state['status']}"))
        failures += [Failure(page, "math", note) for note in notes]
        broken = []
        for image in state["images"]:
            if not image["complete"]:
                broken.append(image["url"])
                failures.append(Failure(page, "image", f"<img src={image['src']!r}> did not finish loading "
                                                       f"within {SETTLE_TIMEOUT:.0f} s"))
            elif image["width"] == 0:
                broken.append(image["url"])
                alt = f" (alt {_short(image['alt'], 60)!r})" if image["alt"] else ""
                failures.append(Failure(page, "image", f"<img src={image['src']!r}> did not load{alt}"))
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        failures += _console_failures(page, browser.events.pop(session, []), origin, broken)
        failures += _tex_failures(page, state["text"])
        failures += [Failure(page, "math", f"MathJax could not typeset a formula: {_short(text)}")
                     for text in state["math_errors"]]
        failures += [Failure(page, "figure", f"interactive figure {name} was not drawn (no .main-svg: "
                                             "plotly.js missing, or its script failed)")
                     for name in state["figures"]]
        failures += [Failure(page, "figure", f"interactive figure {name} was drawn {times} times over")
                     for name, times in state["drawn_twice"]]
        failures += _figure_failures(page, state["shown"], state["print"], state["repeated_images"])
        failures += _overflow_failures(page, state["overflow"], state["page_width"])
        result.figures = state["shown"]["interactive"]
        result.links, result.ids = state["links"], set(state["ids"])
        if screenshot is not None:
            result.screenshot = _screenshot(browser, session, state["height"], screenshot)
    finally:
        browser.call("Target.closeTarget", {"targetId": target})
        browser.call("Target.disposeBrowserContext", {"browserContextId": context})
        result.seconds = time.monotonic() - started
    return result


def _screenshot(browser: Browser, session: str, height: int, path: Path) -> Path:
    height = max(min(int(height), SCREENSHOT_MAX_HEIGHT), WINDOW[1])
    shot = browser.call("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": WINDOW[0], "height": height, "scale": 1}}, session, timeout=120)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))
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


def check_site(html_dir: Path, pages: list[str] | None = None, screenshots: Path | None = SCREENSHOTS,
               chromium: str | None = None, log=print) -> tuple[list[Failure], dict[str, PageResult]]:
    """Open ``pages`` (paths relative to ``html_dir``; default every page) and return what failed."""
    html_dir = Path(html_dir).resolve()
    if pages is None:
        pages = [p.relative_to(html_dir).as_posix() for p in sitecheck.pages(html_dir)]
    missing = [p for p in pages if not (html_dir / p).is_file()]
    if missing:
        raise SiteTestError(f"no such page in {html_dir}: {', '.join(missing)}")
    executable = chromium or ensure_chromium(log)
    results: dict[str, PageResult] = {}
    with Server(html_dir) as server, Browser(executable) as browser:
        log(f"site-test: {browser.version}, {len(pages)} pages of {html_dir} served at {server.origin}", flush=True)
        for page in pages:
            shot = None if screenshots is None else Path(screenshots) / Path(page).with_suffix(".png")
            results[page] = inspect_page(browser, f"{server.origin}/{page}", page, shot)
            status = "ok" if not results[page].failures else f"{len(results[page].failures)} failures"
            log(f"  {page} ({results[page].seconds:.1f} s): {status}", flush=True)
        failures = [f for result in results.values() for f in result.failures]
        broken_links = link_failures(html_dir, server.origin, results)
        log(f"  links between the pages: {'ok' if not broken_links else f'{len(broken_links)} broken'}", flush=True)
        failures += broken_links
    return failures, results


def report(failures: list[Failure], pages: int, seconds: float, screenshots: Path | None) -> str:
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
                     f"print, overflow, links)")
    lines.append(f"site-test: {seconds:.0f} s" + (f"; screenshots in {screenshots}" if screenshots else ""))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("html", nargs="?", type=Path, help="the built site (default $BOOK_SITE_HTML or _build/html)")
    parser.add_argument("--screenshots", type=Path, default=SCREENSHOTS, help="where the screenshots go")
    parser.add_argument("--page", action="append", help="check only this page (a path relative to the site)")
    parser.add_argument("--install", action="store_true", help="only install Chromium if it is missing, and say which")
    args = parser.parse_args(argv)
    if args.install:
        try:
            executable = ensure_chromium()
        except SiteTestError as error:
            print(f"site-test: {error}")
            return 2
        version = subprocess.run([executable, "--version"], capture_output=True, text=True).stdout.strip()
        print(f"site-test: Chromium is {executable} ({version or 'its --version printed nothing'})")
        return 0
    html_dir = (args.html or sitecheck.site_dir()).resolve()
    if not (html_dir / "index.html").is_file():
        print(f"site-test: no built site in {html_dir}: run `make book` first")
        return 2
    if args.screenshots.is_dir() and not args.page:
        for old in args.screenshots.rglob("*.png"):   # a page that is gone leaves no stale picture
            old.unlink()
    started = time.monotonic()
    try:
        failures, results = check_site(html_dir, args.page, args.screenshots)
    except (SiteTestError, ProtocolError) as error:
        print(f"site-test: {error}")
        return 2
    print(report(failures, len(results), time.monotonic() - started, args.screenshots))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
