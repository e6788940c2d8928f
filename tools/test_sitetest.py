"""The browser test's own test: on fixture pages, it fails each broken one for the reason it is broken.

Needs Chromium, Playwright and pytest-playwright (``tools/requirements-site.txt``),
so `make test` and `make unit` (``pytest tests exercises``) do not collect it;
`make site-test` runs it beside the check of the built site, page by page
(``tools/test_site_pages.py``, whose tests are tested here too). The browser
is the one those tests have, pytest-playwright's on the system's Chromium
(``tools/conftest.py``), which installs Chromium when it is missing (never
skipped); each fixture page opens in a browser context of its own.

The pages: ``tests/site/*.html`` (a clean page and its link target, a broken
image, math with no MathJax, a script error, broken links, an interactive
figure whose plotly.js never came, one drawn twice, the static twin of an
interactive figure shown beside it on screen, an interactive figure left on
the printed page, one image shown twice, a code cell wider than its column,
a page that sends the browser on to another, an image without alt text and a
paragraph of too little contrast), four written here: math typeset
by the book's own MathJax, a formula MathJax cannot typeset, one with a
command it does not know, and an interactive figure written by
``vitbias.figures.interactive`` and drawn by the book's own plotly.js; and a
small book built here by Jupyter Book with the book's own extension and
stylesheet, whose static figure has an interactive twin
(``tools/booksite.py``): on screen one figure, the interactive one, with the
static one's number, caption and alt text, in print the static one; an
interactive figure without a twin keeps its fallback sentence for screen
readers; and a link in an exercise and a bibliography's entry pass the
accessibility check as the book's stylesheet and extension leave them.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib
import nbformat
import plotly.graph_objects as go
import pytest
from docutils import nodes

from tools import booksite, sitetest
from vitbias.figures import interactive

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "site"

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
# MathJax shows a formula it cannot typeset in red on yellow, 3.7:1, too little contrast for text: in a
# darker red the page fails for its math alone.
LEGIBLE_ERROR = "<style>mjx-container mjx-merror { color: #a00000; }</style>"
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
    "twice-drawn-figure.html": {"figure"},
    "duplicate-figure.html": {"duplicate"},
    "print-figure.html": {"print"},
    "repeated-image.html": {"duplicate"},
    "wide-code.html": {"overflow"},
    "slider-figure.html": set(),
    "slider-without-keys.html": {"keyboard"},
    "missing-alt.html": {"access"},
    "low-contrast.html": {"access"},
    "twins/intro.html": set(),
    "twins/twins.html": set(),
}


def _figure_html() -> str:
    figure = go.Figure(go.Scatter(x=[0, 1, 2], y=[1, 3, 2]), layout={"title": "Three points"})
    return interactive.show(figure, "three-points", fallback="Three points (interactive on the web).").html()


def _slider_figure() -> go.Figure:
    """Three points moved by a slider of three steps (frames), as the book's slider figures are."""
    frames = [go.Frame(name=f"f{i}", data=[go.Scatter(x=[0, 1, 2], y=[i, i + 1, i])],
                       layout={"title": {"text": f"the middle point at {i + 1}"}}) for i in range(3)]
    steps = [{"label": str(i), "method": "animate", "args": [[f"f{i}"], {"mode": "immediate"}]} for i in range(3)]
    return go.Figure(go.Scatter(x=[0, 1, 2], y=[0, 1, 0]), frames=frames,
                     layout={"title": "Three points, moved", "sliders": [{"active": 0, "steps": steps,
                                                                          "currentvalue": {"prefix": "step "}}]})


def _slider_html(keys: bool) -> str:
    html = interactive.show(_slider_figure(), "slider", fallback="Three points moved (interactive on the web).").html()
    if not keys:  # the figure as plotly.js alone would leave it: no way through it from the keyboard
        html = re.sub(r'<div class="vitbias-plotly-keys".*?</div>\n', "", html, flags=re.S)
    return html


def build_twins(root: Path) -> Path:
    """A two-page book, built by Jupyter Book with the book's extension and stylesheet; its HTML folder.

    ``twins``: a static figure (``fig-points``, a PNG with a caption and alt
    text) in a cell tagged ``interactive-twin``, then the same figure drawn by
    ``vitbias.figures.interactive``, then an interactive figure with no static
    twin (``widget-lone``); ``intro`` refers to the figure from another page,
    in its text and in an exercise (whose box sphinx-exercise tints), and
    cites a paper, whose entry in its bibliography (a list of citations, as
    docutils writes one) links to the paper.
    """
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(3, 2))
    axes.plot([0, 1, 2], [1, 3, 2])
    png = base64.b64encode(interactive._png(figure)).decode("ascii")
    plt.close(figure)
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    static = nbformat.v4.new_code_cell("points()", outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})])
    static.metadata = {"tags": [booksite.TWIN_TAG],
                       "mystnb": {"figure": {"caption": "Three points, rising then falling.", "name": "fig-points"},
                                  "image": {"alt": "A line up from the first point and down to the third."}}}
    widget = interactive.show(go.Figure(go.Scatter(x=[0, 1, 2], y=[1, 3, 2])), "widget-points",
                              fallback="The figure (interactive on the web).")._repr_mimebundle_()
    lone = interactive.show(go.Figure(go.Bar(x=[0, 1, 2], y=[1, 3, 2])), "widget-lone",
                            fallback="Three bars, the middle one tallest.")._repr_mimebundle_()
    nb.cells = [nbformat.v4.new_markdown_cell("# Twins\n\nThree points ({numref}`fig-points`)."), static,
                nbformat.v4.new_markdown_cell("The same, to explore:"),
                nbformat.v4.new_code_cell("explore()", outputs=[nbformat.v4.new_output("display_data", data=widget)]),
                nbformat.v4.new_markdown_cell("And as bars, with no static twin:"),
                nbformat.v4.new_code_cell("bars()", outputs=[nbformat.v4.new_output("display_data", data=lone)])]
    nbformat.write(nb, root / "twins.ipynb")
    (root / "intro.md").write_text("# Intro\n\nThe figure of the next page is {numref}`fig-points`, drawn as in "
                                   "{cite}`point2020`.\n\n```{exercise}\n:label: ex-points\n\nWhich point of "
                                   "{numref}`fig-points` is the highest?\n```\n\n```{bibliography}\n```\n")
    (root / "references.bib").write_text("@article{point2020,\n  title = {Three points},\n  author = {Ada Point},\n"
                                         "  journal = {Journal of Points},\n  year = {2020},\n"
                                         "  doi = {10.1000/points}\n}\n")
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: twins\n")
    (root / "_config.yml").write_text(
        "title: Twins\nexecute:\n  execute_notebooks: 'off'\nbibtex_bibfiles: [references.bib]\n"
        f"sphinx:\n  extra_extensions: [sphinx_exercise]\n  local_extensions:\n    booksite: {ROOT / 'tools'}\n"
        "  config:\n    suppress_warnings: ['mystnb.unknown_mime_type']\n"
        "    html_context:\n      default_mode: auto\n")
    shutil.copytree(ROOT / "_static", root / "_static")
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    done = subprocess.run([str(jupyter_book), "build", str(root), "--builder", "html", "-W", "-q"],
                          capture_output=True, text=True, timeout=600,
                          env={k: v for k, v in os.environ.items() if k not in ("BOOK_REPOSITORY_URL", "BOOK_BRANCH")})
    html = root / "_build" / "html"
    assert done.returncode == 0 and (html / "twins.html").is_file(), done.stdout[-2000:] + done.stderr[-3000:]
    return html


@pytest.fixture(scope="module")
def checked(tmp_path_factory, check_in_own_context):
    """Every fixture page checked, each in a browser context of its own, then the links between them:
    ``(failures by page, results, screenshot folder)``."""
    site = tmp_path_factory.mktemp("site")
    for path in FIXTURES.iterdir():
        shutil.copy(path, site / path.name)
    shutil.copytree(build_twins(tmp_path_factory.mktemp("twins")), site / "twins")
    static = site / "_static"
    (static / "plotly").mkdir(parents=True)
    (static / "mathjax").symlink_to(booksite.mathjax_static_dir() / "mathjax", target_is_directory=True)
    (static / "plotly" / "plotly.min.js").symlink_to(booksite.plotly_script())
    written = {"typeset-math.html": ("Math MathJax typesets", MATHJAX, TYPESET),
               "math-error.html": ("A formula MathJax cannot typeset", MATHJAX + "\n" + LEGIBLE_ERROR, MATH_ERROR),
               "undefined-macro.html": ("An undefined command", MATHJAX, UNDEFINED),
               "drawn-figure.html": ("An interactive figure drawn", PLOTLY, _figure_html()),
               "slider-figure.html": ("A slider figure with its keys", PLOTLY, _slider_html(True)),
               "slider-without-keys.html": ("A slider figure without keys", PLOTLY, _slider_html(False))}
    for name, (title, head, body) in written.items():
        (site / name).write_text(PAGE.format(title=title, head=head, body=body), encoding="utf-8")
    shots = tmp_path_factory.mktemp("screenshots")
    with sitetest.Site(site, shots) as served:
        for page in sorted(EXPECTED):
            check_in_own_context(served, page)
        failures = [f for result in served.results.values() for f in result.failures] + served.link_failures()
    by_page = {page: [f for f in failures if f.page == page] for page in EXPECTED}
    return by_page, served.results, shots


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


def test_a_figure_drawn_twice_is_named(checked):
    (failure,) = checked[0]["twice-drawn-figure.html"]
    assert "#twice" in failure.detail and "2 times" in failure.detail, failure.detail


def test_a_static_twin_on_screen_and_an_interactive_figure_on_paper_are_named(checked):
    (failure,) = checked[0]["duplicate-figure.html"]
    assert "#fig-points-print" in failure.detail and "on screen" in failure.detail, failure.detail
    (failure,) = checked[0]["print-figure.html"]
    assert "#fig-points" in failure.detail and "in print" in failure.detail, failure.detail
    (failure,) = checked[0]["repeated-image.html"]
    assert "square.svg" in failure.detail and "2 times" in failure.detail, failure.detail


def test_code_wider_than_its_column_is_quoted_and_a_folded_cell_once_opened(checked):
    shown, opened = checked[0]["wide-code.html"]
    assert shown.detail.startswith("a code cell scrolls sideways") and "116 characters" in shown.detail, shown.detail
    assert "'interactive.show(interactive.pretraining_sets(" in shown.detail, shown.detail
    assert opened.detail.startswith("opened, a code cell scrolls sideways"), opened.detail
    assert "109 characters" in opened.detail and "distance_by_layer" in opened.detail, opened.detail


def test_an_image_without_alt_text_is_named_by_its_rule_and_selector(checked):
    (failure,) = checked[0]["missing-alt.html"]
    assert failure.detail.startswith("image-alt (critical): Images must have alternative text"), failure.detail
    assert failure.detail.endswith(": #no-alt"), failure.detail


def test_a_paragraph_of_low_contrast_is_named_with_its_colours(checked):
    (failure,) = checked[0]["low-contrast.html"]
    assert failure.detail.startswith("color-contrast (serious):") and "#faint" in failure.detail, failure.detail
    assert "contrast 2.32:1 where 4.5:1 is needed (#aaaaaa on #ffffff)" in failure.detail, failure.detail


def _violation(rule, *impacts, help="A rule"):
    return {"id": rule, "impact": max(impacts, key=("minor", "moderate", "serious", "critical").index),
            "help": help, "nodes": [{"impact": impact, "target": [f"#{rule}-{i}"], "any": [], "all": []}
                                    for i, impact in enumerate(impacts)]}


def test_only_serious_and_critical_violations_fail_a_page_and_past_five_elements_a_rule_they_are_counted():
    violations = [_violation("minor-rule", "minor", "moderate"), _violation("mixed", "moderate", "serious"),
                  _violation("many", *["critical"] * 8)]
    details = [f.detail for f in sitetest._violation_failures("p.html", violations)]
    assert details == ["mixed (serious): A rule: #mixed-1",
                       *[f"many (critical): A rule: #many-{i}" for i in range(sitetest.ACCESS_ELEMENTS)],
                       f"many: {8 - sitetest.ACCESS_ELEMENTS} more elements"]


def test_a_long_selector_keeps_its_end_which_names_the_element():
    long = "body > " + " > ".join(["div.container"] * 20) + " > p#the-one"
    short = sitetest._selector([long])
    assert len(short) == sitetest.SELECTOR_MAX and short.startswith("…") and short.endswith("p#the-one")
    assert sitetest._selector([["#host", "button.inside"]]) == "#host >>> button.inside"


def test_the_interactive_twin_stands_alone_with_the_static_figures_number_caption_and_alt(checked):
    """On screen one figure, the interactive one, in the static one's place as a reference's target."""
    _, results, _ = checked
    twins = results["twins/twins.html"]
    ((name, shown, caption, alt),) = twins.figures
    assert (name, shown) == ("fig-points", True)
    assert caption.startswith("Fig. 1 ") and "Three points, rising then falling." in caption, caption
    assert alt == "A line up from the first point and down to the third."
    assert {"fig-points", "fig-points-print", "widget-points"} <= twins.ids
    intro = [link["href"] for link in results["twins/intro.html"].links]
    assert "twins.html#fig-points" in intro, intro


def test_an_interactive_figure_without_a_twin_keeps_its_fallback_sentence_for_screen_readers(checked):
    _, results, _ = checked
    assert {"widget-lone", "widget-lone-alt"} <= results["twins/twins.html"].ids
    assert "widget-points-alt" in results["twins/twins.html"].ids   # the twin's alt text, given once


def _cell(*children, tags=()):
    return nodes.container("", *children, classes=["cell", *(f"tag_{t}" for t in tags)])


def _static_figure(name="fig-a"):
    figure = nodes.figure("", nodes.image(uri="a.png", alt="a picture"), nodes.caption("", "A caption."),
                          ids=[name])
    return _cell(nodes.container("", figure, classes=["cell_output"]), tags=[booksite.TWIN_TAG])


def _widget(name="widget-a", fallback=""):
    html = interactive.show(go.Figure(), name, fallback=fallback).html()
    return _cell(nodes.container("", nodes.raw("", html, format="html", classes=["output", "text_html"]),
                                 classes=["cell_output"]))


def test_twins_pair_in_the_doctree_and_a_static_figure_without_its_twin_stops_the_build():
    document = nodes.section("", _static_figure(), nodes.paragraph("", "Explore:"), _widget(), _widget("other"))
    numbers = {"figure": {"fig-a": (3,)}}
    assert booksite.pair_interactive_twins(document, numbers) == ["fig-a"]
    assert numbers["figure"]["fig-a-print"] == (3,)
    (static, interactive_figure) = list(document.findall(nodes.figure))
    assert static["ids"] == ["fig-a-print"] and booksite.PRINT_FIGURE in static["classes"]
    assert interactive_figure["ids"] == ["fig-a"] and booksite.INTERACTIVE_FIGURE in interactive_figure["classes"]
    assert "widget-a" in interactive_figure.astext() and "a picture" in interactive_figure.astext()
    assert interactive_figure.next_node(nodes.caption).astext() == "A caption."
    lonely = nodes.section("", _static_figure(), nodes.paragraph("", "No interactive figure follows."))
    with pytest.raises(ValueError, match="no interactive figure follows"):
        booksite.pair_interactive_twins(lonely)
    two = nodes.section("", _static_figure("fig-a"), _static_figure("fig-b"), _widget())
    with pytest.raises(ValueError, match="fig-a is tagged"):
        booksite.pair_interactive_twins(two)


def test_an_interactive_figure_without_a_twin_gets_its_fallback_sentence_as_its_text_alternative():
    document = nodes.section("", _static_figure(), _widget(), _widget("lone", "Bars &amp; <em>lines</em> (web)."))
    booksite.pair_interactive_twins(document)
    assert booksite.describe_lone_figures(document) == ["lone"]
    alts = [n.astext() for n in document.findall(nodes.raw) if booksite.ALT_CLASS in n.astext()]
    assert alts == ['<p class="vitbias-alt" id="widget-a-alt">a picture</p>',
                    '<p class="vitbias-alt" id="lone-alt">Bars &amp; lines (web).</p>'], alts


def test_each_entry_of_a_citation_list_is_an_item_of_the_list():
    body = ('<div role="list" class="citation-list">\n<div class="citation" id="cite-a" role="doc-biblioentry">\n'
            '<p>A paper. <a href="https://doi.org/10.1/a">doi:10.1/a</a>.</p></div>\n</div>\n'
            '<pre>role="doc-biblioentry"</pre>')
    fixed = booksite.list_citations_as_items(body)
    assert '<div class="citation" id="cite-a" role="listitem">' in fixed
    assert fixed.count("doc-biblioentry") == 1 and fixed.endswith('<pre>role="doc-biblioentry"</pre>')


def test_a_tagged_cell_that_was_not_executed_is_left_alone_and_one_without_a_figure_stops_the_build():
    unexecuted = nodes.section("", _cell(nodes.literal_block("", "figure()"), tags=[booksite.TWIN_TAG]))
    assert booksite.pair_interactive_twins(unexecuted) == []
    empty_output = _cell(nodes.container("", nodes.paragraph("", "text"), classes=["cell_output"]),
                         tags=[booksite.TWIN_TAG])
    with pytest.raises(ValueError, match="must show one figure"):
        booksite.pair_interactive_twins(nodes.section("", empty_output, _widget()))


def test_a_slider_the_keyboard_cannot_step_is_named_and_one_it_can_passes(checked):
    by_page, _, _ = checked
    assert [f.detail for f in by_page["slider-without-keys.html"]] == [
        "interactive figure slider has a slider and no buttons (#<id>-keys) that step it from the keyboard"]
    assert not by_page["slider-figure.html"]


def test_a_page_that_sends_the_browser_on_is_judged_where_it_lands(checked):
    _, results, _ = checked
    assert "later" in results["redirect.html"].ids, "redirect.html was judged before index.html had loaded"


def test_each_page_has_its_screenshot(checked):
    _, _, shots = checked
    for page in EXPECTED:
        shot = shots / Path(page).with_suffix(".png")
        assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"no screenshot of {page}"


def test_the_install_command_names_the_chromium_the_pages_are_checked_in(capsys):
    assert sitetest.main(["--install"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"site-test: Chromium is {sitetest.find_chromium()} ("), out


def _run_page_tests(site: Path, screenshots: Path, *pytest_args: str, **env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "BOOK_SITE_HTML": str(site), "BOOK_SITE_SCREENSHOTS": str(screenshots), **env}
    return subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "tools" / "test_site_pages.py"),
                           "-p", "no:cacheprovider", "-v", *pytest_args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_each_page_of_a_site_is_a_test_that_fails_with_the_pages_report(tmp_path):
    """``tools/test_site_pages.py`` on the fixture pages: a broken page's test fails, saying why; a clean one's
    passes; the links between the pages are a test of their own."""
    done = _run_page_tests(FIXTURES, tmp_path, "-k", "index.html or target.html or broken-image or links")
    out = done.stdout
    assert done.returncode == 1, out[-3000:] + done.stderr[-2000:]
    assert "test_page[chromium-index.html] PASSED" in out, out[-3000:]
    assert "test_page[chromium-target.html] PASSED" in out, out[-3000:]
    assert "test_page[chromium-broken-image.html] FAILED" in out, out[-3000:]
    assert "broken-image.html: <img src='missing.png'> did not load" in out, out[-3000:]
    assert "test_links_and_anchors_between_the_pages[chromium] FAILED" in out, out[-3000:]
    assert "target.html has no element with id 'not-there'" in out, out[-3000:]
    assert (tmp_path / "index.png").is_file() and (tmp_path / "broken-image.png").is_file()


def test_the_page_tests_pass_when_every_page_they_open_is_clean(tmp_path):
    done = _run_page_tests(FIXTURES, tmp_path, "-k", "index.html or target.html")
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]


def test_no_site_fails_the_page_tests(tmp_path):
    done = _run_page_tests(tmp_path / "no-site", tmp_path / "shots", "-rs")
    assert done.returncode == 1 and "no built site in" in done.stdout, done.stdout[-3000:]
    assert "test_page[chromium-index.html] ERROR" in done.stdout, done.stdout[-3000:]
    assert "skipped" not in done.stdout and "SKIPPED" not in done.stdout, done.stdout[-3000:]


def test_a_chromium_that_does_not_start_fails_the_page_tests_and_skips_none(tmp_path):
    done = _run_page_tests(FIXTURES, tmp_path, "-k", "index.html", "-rs", CHROMIUM=str(tmp_path / "no-chromium"))
    out = done.stdout
    assert done.returncode == 1 and "ERROR" in out and str(tmp_path / "no-chromium") in out, out[-3000:]
    assert "skipped" not in out and "SKIPPED" not in out, out[-3000:]
