"""The site works offline: no page loads anything from another host.

Reads the built site in ``_build/html`` (``make test`` builds it first), or the
folder named by ``BOOK_SITE_HTML``, for example a build without execution:

    python -m tools.sitebuild /tmp/site && BOOK_SITE_HTML=/tmp/site/_build/html pytest tests/test_site_offline.py

The checker itself (``tools.sitecheck``) is tested on small sites made here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools import booksite, notebooks, sitecheck


@pytest.fixture(scope="module")
def site() -> Path:
    html_dir = sitecheck.site_dir()
    if not (html_dir / "index.html").is_file():
        pytest.fail(f"no built site in {html_dir}: run `make book` (or `make test`) first, "
                    f"or name a build with {sitecheck.SITE_VARIABLE}")
    return html_dir


def test_no_page_loads_anything_from_another_host(site):
    problems = sitecheck.problems(site)
    assert not problems, "pages that would not work offline:\n" + "\n".join(problems)


def test_math_is_typeset_by_the_mathjax_in_static(site):
    script = site / "_static" / booksite.MATHJAX_SCRIPT
    assert script.is_file(), f"{script} is missing"
    assert re.search(r'VERSION\s*=\s*"3\.', script.read_text(encoding="utf-8", errors="replace")), (
        f"{script.name} is not MathJax 3")
    with_math = [p for p in sitecheck.pages(site) if 'class="math' in p.read_text(encoding="utf-8")]
    assert with_math, "no page has math: the check below would prove nothing"
    for page in with_math:
        text = page.read_text(encoding="utf-8")
        assert re.search(r'<script[^>]*src="[./]*_static/mathjax/tex-mml-chtml\.js', text), (
            f"{page.relative_to(site)} has math but does not load _static/{booksite.MATHJAX_SCRIPT}")


def test_mathjax_finds_the_fonts_and_extensions_it_loads_on_demand(site):
    mathjax = site / "_static" / "mathjax"
    for part in ("output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff",
                 "input/tex/extensions/boldsymbol.js", "sre/mathmaps/en.json"):
        assert (mathjax / part).is_file(), f"_static/mathjax/{part} is missing"


def test_thebe_is_not_on_any_page(site):
    for page in sitecheck.pages(site):
        text = page.read_text(encoding="utf-8")
        assert "thebe" not in text.lower(), f"{page.relative_to(site)} still carries Thebe, which loads from a CDN"


def test_the_site_publishes_the_vitbias_wheel(site):
    wheel = site / "_static" / notebooks.wheel_name()
    assert wheel.is_file(), (f"{wheel} is missing: `make book` builds it with `make wheel` into "
                             f"{booksite.WHEEL_DIR}/, and the launched notebooks install it from there")


# The checker, on small sites.

def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


PAGE = """<!DOCTYPE html><html><head>{head}</head><body><p>text</p>
<a href="https://doi.org/10.1364/JOSAA.4.002379">a link out is fine</a>{body}</body></html>"""


def test_the_checker_passes_a_site_that_loads_only_its_own_files(tmp_path):
    site = write(tmp_path, {
        "index.html": PAGE.format(
            head='<link rel="stylesheet" href="_static/a.css?v=1"><script src="_static/a.js"></script>'
                 '<script>var x = {"ns": "http://www.w3.org/2000/svg"};</script>',
            body='<img src="_images/x.png"><a href="https://colab.research.google.com/github/o/r">launch</a>'),
        "_static/a.css": '@import "b.css"; .x { background: url("data:image/svg+xml;utf8,<svg '
                         "xmlns='http://www.w3.org/2000/svg'/>\"); }",
        "_static/b.css": "@font-face { src: url(fonts/f.woff2) format('woff2'); }",
        "_static/a.js": "// see https://example.org/docs\nfetch('data.json');",
        "_images/x.png": "png",
    })
    assert sitecheck.problems(site) == []


@pytest.mark.parametrize("head, body, expected", [
    ('<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"></script>', "", "<script src>"),
    ('<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Lato">', "", "<link rel=stylesheet>"),
    ('<link rel="preload" as="font" href="//fonts.gstatic.com/x.woff2">', "", "<link rel=preload>"),
    ("", '<img src="https://example.org/figure.png">', "<img src>"),
    ("", '<iframe src="https://www.youtube.com/embed/x"></iframe>', "<iframe src>"),
    ('<script>const THEBE_JS_URL = "https://unpkg.com/thebe@0.8.2/lib/index.js"</script>', "", "inline script"),
    ('<link rel="stylesheet" href="_static/remote.css">', "", "remote.css imports https://fonts.googleapis.com"),
    ('<link rel="stylesheet" href="_static/font.css">', "", "font.css loads //fonts.gstatic.com"),
    ('<script src="_static/loader.js"></script>', "", "loader.js fetches https://cdn.plot.ly"),
    ('<script src="_static/missing.js"></script>', "", "is not in the site"),
    ('<style>@import url("https://use.fontawesome.com/all.css");</style>', "", "inline style imports"),
])
def test_the_checker_fails_a_page_that_loads_from_another_host(tmp_path, head, body, expected):
    site = write(tmp_path, {
        "book/page.html": PAGE.format(head=head.replace('"_static', '"../_static'), body=body),
        "index.html": PAGE.format(head="", body=""),
        "_static/remote.css": '@import url("https://fonts.googleapis.com/css?family=Lato");',
        "_static/font.css": "@font-face { src: url(//fonts.gstatic.com/s/lato.woff2); }",
        "_static/loader.js": 's.src = "https://cdn.plot.ly/plotly-2.0.0.min.js";',
    })
    problems = sitecheck.problems(site)
    assert len(problems) == 1 and problems[0].startswith("book/page.html") and expected in problems[0], problems


def test_the_checker_ignores_only_the_mathjax_urls_it_names(tmp_path):
    quiet = 'r.url="https://cdn.jsdelivr.net/npm/speech-rule-engine@"+v+"/lib/mathmaps";'
    loud = 'loadScript("https://cdn.jsdelivr.net/npm/mathjax@3/es5/input/tex/extensions/color.js");'
    page = PAGE.format(head='<script src="_static/mathjax/tex-mml-chtml.js"></script>', body="")
    assert sitecheck.problems(write(tmp_path / "a", {"index.html": page,
                                                     "_static/mathjax/tex-mml-chtml.js": quiet})) == []
    assert len(sitecheck.problems(write(tmp_path / "b", {"index.html": page,
                                                         "_static/mathjax/tex-mml-chtml.js": loud}))) == 1
