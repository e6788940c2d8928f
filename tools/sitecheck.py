"""Does the built site load anything from another host? Read every page and what it loads.

    python -m tools.sitecheck [_build/html]

prints each problem and exits 1 if there is one. A page may link out (launch
buttons, DOIs); it may not *load* from another host: no external ``src=``, no
stylesheet, preload or icon ``<link>`` to another host, no external ``@import``
or ``url(...)`` in a stylesheet it loads (nor in those stylesheets' imports),
no inline script naming a URL, and no script it loads that fetches from a CDN.
Every local script and stylesheet a page loads must exist.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
SITE_VARIABLE = "BOOK_SITE_HTML"

# <link rel=...> values that make the browser fetch the target.
LOADING_RELS = {"stylesheet", "preload", "modulepreload", "prefetch", "icon", "shortcut", "apple-touch-icon",
                "manifest", "mask-icon", "preconnect", "dns-prefetch"}
# Attributes that load what they name, by tag.
LOADING_ATTRIBUTES = {
    "script": ("src",), "img": ("src", "srcset"), "iframe": ("src",), "frame": ("src",), "embed": ("src",),
    "source": ("src", "srcset"), "video": ("src", "poster"), "audio": ("src",), "track": ("src",),
    "object": ("data",), "input": ("src",), "image": ("href", "xlink:href"), "use": ("href", "xlink:href"),
}
# Hosts that serve scripts, styles and fonts to other sites.
CDN_HOSTS = (
    "cdn.jsdelivr.net", "unpkg.com", "cdnjs.cloudflare.com", "ajax.googleapis.com", "fonts.googleapis.com",
    "fonts.gstatic.com", "code.jquery.com", "stackpath.bootstrapcdn.com", "maxcdn.bootstrapcdn.com",
    "cdn.plot.ly", "use.fontawesome.com", "kit.fontawesome.com", "www.googletagmanager.com",
    "www.google-analytics.com", "polyfill.io", "cdn.skypack.dev", "esm.sh", "cdn.mathjax.org",
    "mybinder.org", "cdn.bokeh.org", "cdn.datatables.net",
)
# Names that look like URLs but are never fetched (XML namespaces).
NAMESPACE_HOSTS = ("www.w3.org",)
# URLs in vendored scripts that a browser never fetches, with the reason.
NOT_FETCHED = {
    "_static/mathjax/": (
        ("https://cdn.jsdelivr.net/npm/speech-rule-engine@",
         "speech-rule-engine's default for its maps: MathJax's a11y/sre sets window.SREfeature.json "
         "to its own [sre] path, _static/mathjax/sre/mathmaps, before the engine loads"),
        ("https://cdn.jsdelivr.net/npm/sre-mathmaps-ie@", "loaded for Internet Explorer only"),
        ("https://cdn.jsdelivr.net/npm/wicked-good-xpath@",
         "an XPath polyfill loaded only where document.evaluate is missing (Internet Explorer)"),
    ),
    "_static/plotly/": (
        ("https://cdn.plot.ly/un/",
         "the default topojsonURL, fetched only by geographic traces (scattergeo, choropleth), which no "
         "figure of the book uses (tests/test_interactive.py checks the trace types)"),
        ("https://cdn.jsdelivr.net/npm/@mapbox/maki@",
         "icons for map traces (scattermap), which no figure of the book uses"),
    ),
}

URL_IN_TEXT = re.compile(r"""(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}[^\s"'`)<>\\]*""")
CSS_URL = re.compile(r"""url\(\s*(['"]?)(.*?)\1\s*\)""", re.S)
CSS_IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?(['"]?)([^'")\s;]+)\1""")


def is_external(url: str) -> bool:
    url = url.strip()
    return url.startswith("//") or urlsplit(url).scheme in {"http", "https", "ftp", "ws", "wss"}


def host(url: str) -> str:
    url = url.strip()
    return urlsplit(url if not url.startswith("//") else "https:" + url).hostname or ""


class Page(HTMLParser):
    """What one page loads: URLs by kind, and the bodies of its inline scripts and styles."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.loads: list[tuple[str, str]] = []  # (what, url)
        self.inline_scripts: list[str] = []
        self.inline_styles: list[str] = []
        self._in = None

    def handle_starttag(self, tag, attrs):
        attrs = {k: (v or "") for k, v in attrs}
        for name in LOADING_ATTRIBUTES.get(tag, ()):
            if attrs.get(name):
                values = [part.strip().split()[0] for part in attrs[name].split(",") if part.strip()] \
                    if name == "srcset" else [attrs[name]]
                self.loads += [(f"<{tag} {name}>", v) for v in values]
        if tag == "link" and attrs.get("href"):
            rels = set(attrs.get("rel", "").lower().split())
            if rels & LOADING_RELS:
                self.loads.append((f"<link rel={attrs.get('rel')}>", attrs["href"]))
        if attrs.get("style"):
            self.inline_styles.append(attrs["style"])
        self._in = tag if tag in ("script", "style") and not attrs.get("src") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script" and data.strip():
            self.inline_scripts.append(data)
        elif self._in == "style" and data.strip():
            self.inline_styles.append(data)


def pages(html_dir: Path) -> list[Path]:
    """Every page of the site (not the theme's templates under _static/, nor _sources/)."""
    skip = {"_static", "_sources", "_images"}
    return sorted(p for p in html_dir.rglob("*.html") if not skip & set(p.relative_to(html_dir).parts))


def _local_file(html_dir: Path, page: Path, url: str) -> Path | None:
    path = unquote(urlsplit(url).path)
    if not path or urlsplit(url).scheme:
        return None
    return (html_dir / path.lstrip("/")) if path.startswith("/") else (page.parent / path).resolve()


def css_references(text: str) -> dict[str, bool]:
    """Every URL a stylesheet names, once each, mapped to whether it is an ``@import``."""
    found = {m.group(2).strip(): False for m in CSS_URL.finditer(text)}
    found.update({m.group(2).strip(): True for m in CSS_IMPORT.finditer(text)})
    return {url: imported for url, imported in found.items() if url and not url.startswith("data:")}


def _css_problems(html_dir: Path, css: Path, where: str, seen: set[Path]) -> list[str]:
    if css in seen:
        return []
    seen.add(css)
    text = css.read_text(encoding="utf-8", errors="replace")
    problems = []
    for url, imported in css_references(text).items():
        if is_external(url):
            problems.append(f"{where}: {css.relative_to(html_dir)} {'imports' if imported else 'loads'} {url}")
        elif imported:
            target = _local_file(html_dir, css, url)
            if target is not None and target.is_file():
                problems += _css_problems(html_dir, target, where, seen)
            else:
                problems.append(f"{where}: {css.relative_to(html_dir)} imports {url}, which is not in the site")
    return problems


def _text_urls(text: str) -> list[str]:
    return [u for u in URL_IN_TEXT.findall(text) if host(u) not in NAMESPACE_HOSTS]


def _script_problems(html_dir: Path, script: Path, where: str) -> list[str]:
    relative = script.relative_to(html_dir).as_posix()
    allowed = [prefix for folder, entries in NOT_FETCHED.items() if relative.startswith(folder)
               for prefix, _ in entries]
    text = script.read_text(encoding="utf-8", errors="replace")
    return [f"{where}: {relative} fetches {url} (a CDN)"
            for url in _text_urls(text)
            if host(url) in CDN_HOSTS and not any(url.startswith(prefix) for prefix in allowed)]


def problems(html_dir: Path) -> list[str]:
    """Every way a page of the site in ``html_dir`` would reach another host, or miss a file."""
    html_dir = Path(html_dir).resolve()
    found, checked_css, checked_js = [], set(), set()
    for page in pages(html_dir):
        where = page.relative_to(html_dir).as_posix()
        parsed = Page()
        parsed.feed(page.read_text(encoding="utf-8"))
        for what, url in parsed.loads:
            if url.startswith(("data:", "#")):
                continue
            if is_external(url):
                found.append(f"{where}: {what} loads {url} from another host")
                continue
            target = _local_file(html_dir, page, url)
            if target is None:
                continue
            if not target.is_file():
                found.append(f"{where}: {what} {url} is not in the site")
            elif target.suffix == ".css" and target not in checked_css:
                found += _css_problems(html_dir, target, where, checked_css)
            elif target.suffix in (".js", ".mjs") and target not in checked_js:
                checked_js.add(target)
                found += _script_problems(html_dir, target, where)
        for body in parsed.inline_scripts:
            found += [f"{where}: an inline script names {url}" for url in _text_urls(body)]
        for body in parsed.inline_styles:
            found += [f"{where}: an inline style {'imports' if imported else 'loads'} {url}"
                      for url, imported in css_references(body).items() if is_external(url)]
    return found


def site_dir() -> Path:
    """The built site the checks read: ``$BOOK_SITE_HTML``, else ``_build/html`` of the checkout."""
    import os

    return Path(os.environ.get(SITE_VARIABLE) or ROOT / "_build" / "html").resolve()


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    html_dir = Path(args[0]) if args else site_dir()
    if not (html_dir / "index.html").is_file():
        print(f"no built site in {html_dir}: run `make book` first")
        return 2
    found = problems(html_dir)
    print("\n".join(found) if found else f"{len(pages(html_dir))} pages load nothing from another host")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
