"""The browser test's own test: on fixture pages, it fails each broken one for the reason it is broken.

Needs Chromium, so `make test` and `make unit` (``pytest tests exercises``)
do not collect it; `make site-test` runs it, before checking the built site.
Chromium is installed when it is missing (never skipped): the fixture below
calls :func:`tools.sitetest.check_site`, which installs it first.

The pages: ``tests/site/*.html`` (a clean page and its link target, a broken
image, math with no MathJax, a script error, broken links, an interactive
figure whose plotly.js never came, a page that sends the browser on to
another), and four written here: math typeset by the book's own MathJax, a
formula MathJax cannot typeset, one with a command it does not know, and an
interactive figure written by ``vitbias.figures.interactive`` and drawn by the
book's own plotly.js.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import plotly.graph_objects as go
import pytest

from tools import booksite, sitetest
from vitbias.figures import interactive

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "site"

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
{head}</head>
<body>
{body}
</body></html>
"""
# MathJax as Sphinx loads it on the book's pages.
MATHJAX = ('<script>window.MathJax = {"options": {"processHtmlClass": '
           '"tex2jax_process|mathjax_process|math|output_area"}}</script>\n'
           '<script defer="defer" src="_static/mathjax/tex-mml-chtml.js"></script>')
PLOTLY = '<script src="_static/plotly/plotly.min.js"></script>'
TYPESET = ('<p>Inline <span class="math notranslate nohighlight">\\(\\frac{x^2}{2} + \\alpha_i\\)</span>, '
           'and displayed:</p>\n<div class="math notranslate nohighlight">\n\\[\\sum_{i=1}^{n} W_{ij} x_j\\]\n</div>')
MATH_ERROR = '<p>A formula with an error: <span class="math notranslate nohighlight">\\(x^2^3\\)</span>.</p>'
UNDEFINED = '<p>An undefined command: <span class="math notranslate nohighlight">\\(\\nosuchmacro x\\)</span>.</p>'

# Each fixture page and the kinds of failure it must have (none: it must pass).
EXPECTED = {
    "index.html": set(),
    "target.html": set(),
    "broken-image.html": {"image"},
    "raw-math.html": {"math"},
    "console-error.html": {"console"},
    "broken-link.html": {"link"},
    "undrawn-figure.html": {"figure"},
    "redirect.html": set(),
    "typeset-math.html": set(),
    "math-error.html": {"math"},
    "undefined-macro.html": {"math"},
    "drawn-figure.html": set(),
}


def _figure_html() -> str:
    figure = go.Figure(go.Scatter(x=[0, 1, 2], y=[1, 3, 2]), layout={"title": "Three points"})
    return interactive.show(figure, "three-points", fallback="Three points (interactive on the web).").html()


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """Every fixture page checked in one browser: ``(failures by page, results, screenshot folder)``."""
    site = tmp_path_factory.mktemp("site")
    for path in FIXTURES.iterdir():
        shutil.copy(path, site / path.name)
    static = site / "_static"
    (static / "plotly").mkdir(parents=True)
    (static / "mathjax").symlink_to(booksite.mathjax_static_dir() / "mathjax", target_is_directory=True)
    (static / "plotly" / "plotly.min.js").symlink_to(booksite.plotly_script())
    written = {"typeset-math.html": ("Math MathJax typesets", MATHJAX, TYPESET),
               "math-error.html": ("A formula MathJax cannot typeset", MATHJAX, MATH_ERROR),
               "undefined-macro.html": ("An undefined command", MATHJAX, UNDEFINED),
               "drawn-figure.html": ("An interactive figure drawn", PLOTLY, _figure_html())}
    for name, (title, head, body) in written.items():
        (site / name).write_text(PAGE.format(title=title, head=head, body=body), encoding="utf-8")
    shots = tmp_path_factory.mktemp("screenshots")
    failures, results = sitetest.check_site(site, sorted(EXPECTED), shots)
    by_page = {page: [f for f in failures if f.page == page] for page in EXPECTED}
    return by_page, results, shots


def _kinds(failures) -> set[str]:
    return {f.kind for f in failures}


def _report(failures) -> str:
    return "\n".join(map(str, failures)) or "(no failure)"


@pytest.mark.parametrize("page", sorted(EXPECTED))
def test_each_page_fails_for_its_reason_and_no_other(checked, page):
    by_page, _, _ = checked
    assert _kinds(by_page[page]) == EXPECTED[page], f"{page}:\n{_report(by_page[page])}"


def test_a_broken_image_is_named(checked):
    (failure,) = checked[0]["broken-image.html"]   # one failure: not also its 404 in the console
    assert "missing.png" in failure.detail and "did not load" in failure.detail


def test_unrendered_math_is_quoted(checked):
    details = " ".join(f.detail for f in checked[0]["raw-math.html"])
    assert "raw TeX" in details and "\\(x^2\\)" in details


def test_a_formula_mathjax_cannot_typeset_is_reported(checked):
    assert any("MathJax could not typeset" in f.detail for f in checked[0]["math-error.html"]), \
        _report(checked[0]["math-error.html"])
    assert any("nosuchmacro" in f.detail for f in checked[0]["undefined-macro.html"]), \
        _report(checked[0]["undefined-macro.html"])


def test_an_exception_and_console_error_are_both_reported(checked):
    details = [f.detail for f in checked[0]["console-error.html"]]
    assert any("undefinedFunction is not defined" in d for d in details), details
    assert any(d.startswith("console.error: drawing failed") for d in details), details


def test_broken_links_and_anchors_are_reported_and_good_ones_are_not(checked):
    details = sorted(f.detail for f in checked[0]["broken-link.html"])
    assert len(details) == 2, details
    assert "nowhere.html is not in the site" in details[0]
    assert "target.html has no element with id 'not-there'" in details[1]


def test_an_undrawn_figure_is_named(checked):
    (failure,) = checked[0]["undrawn-figure.html"]
    assert "#undrawn" in failure.detail


def test_the_figure_and_the_math_were_really_drawn(checked):
    """What passed did so because it rendered: the checks ran on a page MathJax and plotly.js had finished."""
    _, results, _ = checked
    assert results["typeset-math.html"].ids, "the typeset page was not inspected"
    assert "three-points" in results["drawn-figure.html"].ids


def test_a_page_that_sends_the_browser_on_is_judged_where_it_lands(checked):
    _, results, _ = checked
    assert "later" in results["redirect.html"].ids, "redirect.html was judged before index.html had loaded"


def test_each_page_has_its_screenshot(checked):
    _, _, shots = checked
    for page in EXPECTED:
        shot = shots / Path(page).with_suffix(".png")
        assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"no screenshot of {page}"


def test_the_command_exits_1_on_a_broken_page_and_0_on_clean_ones(tmp_path, capsys):
    assert sitetest.main([str(FIXTURES), "--page", "broken-image.html", "--screenshots", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "broken-image.html: <img src='missing.png'> did not load" in out, out
    assert sitetest.main([str(FIXTURES), "--page", "index.html", "--page", "target.html",
                          "--screenshots", str(tmp_path)]) == 0


def test_no_site_is_a_failure_not_a_pass(tmp_path):
    assert sitetest.main([str(tmp_path)]) == 2
