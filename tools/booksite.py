"""The published site: launch buttons, MathJax and plotly.js from ``_static/``, no Thebe, the package's wheel.

A Sphinx extension, loaded by ``_config.yml`` (``sphinx.local_extensions``).

- **Launch buttons.** When the environment variable ``BOOK_REPOSITORY_URL``
  names the book's GitHub repository (``https://github.com/OWNER/NAME``), every
  notebook chapter gets a launch menu with Colab and Binder. Both open the
  chapter's ``.ipynb`` in ``notebooks/`` of that repository, on the branch
  ``BOOK_BRANCH`` (default ``main``): ``make notebooks`` writes those files and
  the publishing step commits them. Without the variable there is no button.
- **Offline.** MathJax 3 comes from the pinned package
  ``sphinx-mathjax-offline`` and is served from ``_static/mathjax/``; Thebe,
  which Jupyter Book always loads and which would fetch its library from a
  CDN, is switched off (the launch buttons take its place).
- **Interactive figures.** plotly.js, from the pinned ``plotly`` package, is
  copied to ``_static/plotly/plotly.min.js`` and loaded once by each page
  that holds an interactive figure (a ``<div class="vitbias-plotly">``, which
  ``vitbias.figures.interactive`` writes); other pages do not load it.
- **One figure on screen, the other in print.** A figure cell tagged
  ``interactive-twin`` holds the static version of the interactive figure
  that follows it (the image a notebook and a printed page show). On the web
  the interactive figure takes its place: it becomes a figure with the static
  one's id (so that cross-references land on it), number, caption and alt
  text (a description read by screen readers), and the static figure is
  kept under the id ``<name>-print`` for print only; ``_static/vitbias.css``
  hides each in the other medium. An interactive figure without a static
  twin keeps, for screen readers, the sentence it shows until it is drawn
  (which drawing removes) as its text alternative. The sliders and buttons
  plotly.js draws inside a figure take no keyboard focus (its toolbar does),
  so a figure with a slider has two buttons of its own after it, "Previous
  step" and "Next step", which step the slider and say the step aloud
  (``vitbias.figures.interactive``); the site test presses them.
- **Citation lists.** Docutils marks each entry of a list of citations with
  the role ``doc-biblioentry``, deprecated in DPUB-ARIA 1.1: assistive
  technology no longer counts it as an item of its list (axe-core: the list
  holds children it may not). Each entry is a ``listitem`` instead.
- **The wheel.** The ``vitbias`` wheel that ``make wheel`` builds in
  ``_build/wheel/`` is published under ``_static/``, for the launched
  notebooks' install cell when no repository is set.
"""

from __future__ import annotations

import html
import os
import re
import shutil
from importlib import metadata
from pathlib import Path
from urllib.parse import quote

REPOSITORY_VARIABLE = "BOOK_REPOSITORY_URL"
BRANCH_VARIABLE = "BOOK_BRANCH"
DEFAULT_BRANCH = "main"
NOTEBOOKS = "notebooks"
WHEEL_DIR = "_build/wheel"
COLAB = "https://colab.research.google.com"
BINDER = "https://mybinder.org"
MATHJAX_PACKAGE = "sphinx-mathjax-offline"
MATHJAX_SCRIPT = "mathjax/tex-mml-chtml.js"
PLOTLY_PACKAGE = "plotly"
PLOTLY_SCRIPT = "plotly/plotly.min.js"
# The class of the <div> an interactive figure is drawn into (vitbias.figures.interactive.MARKER).
WIDGET_MARKER = "vitbias-plotly"
# The cell tag of a static figure whose interactive twin follows it, and the classes of the two on the page.
TWIN_TAG = "interactive-twin"
PRINT_FIGURE = "vitbias-print-figure"
INTERACTIVE_FIGURE = "vitbias-interactive-figure"
ALT_CLASS = "vitbias-alt"
PRINT_SUFFIX = "-print"
_WIDGET_DIV = re.compile(rf'<div class="{WIDGET_MARKER}" id="([A-Za-z0-9-]+)"[^>]*>')
# The sentence an interactive figure shows until plotly.js draws it (vitbias.figures.interactive).
_FALLBACK = re.compile(rf'<p class="{WIDGET_MARKER}-fallback">(.*?)</p>', re.S)
_TAG = re.compile(r"<[^>]*>")
# An entry of a list of citations as docutils writes it: <div class="citation" id="..." role="doc-biblioentry">.
_CITATION = re.compile(r'(<div class="citation"[^>]*) role="doc-biblioentry"')

_GITHUB = re.compile(r"^https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$")


def github_parts(url: str) -> tuple[str, str]:
    """``(owner, name)`` of a GitHub repository URL, else ``ValueError``.

    Colab opens notebooks from GitHub only, so the launch buttons need one.
    """
    match = _GITHUB.match(url.strip())
    if not match:
        raise ValueError(
            f"{REPOSITORY_VARIABLE} must be a GitHub repository URL such as "
            f"https://github.com/OWNER/NAME (Colab opens notebooks from GitHub only); got {url!r}")
    return match.group(1), match.group(2)


def repository_settings(environ=None) -> tuple[str, str]:
    """``(repository URL, branch)`` from the environment; the URL is ``""`` when unset."""
    environ = os.environ if environ is None else environ
    url = environ.get(REPOSITORY_VARIABLE, "").strip().rstrip("/")
    branch = environ.get(BRANCH_VARIABLE, "").strip() or DEFAULT_BRANCH
    if url:
        owner, name = github_parts(url)
        url = f"https://github.com/{owner}/{name}"
    return url, branch


def notebook_path(chapter: str) -> str:
    """Where a chapter's notebook lies in the repository: ``notebooks/<chapter>.ipynb``."""
    return f"{NOTEBOOKS}/{Path(chapter).stem}.ipynb"


def launch_urls(repository: str, branch: str, chapter: str) -> dict[str, str]:
    """The Colab and Binder addresses that open ``chapter``'s notebook."""
    owner, name = github_parts(repository)
    path = notebook_path(chapter)
    return {
        "Colab": f"{COLAB}/github/{owner}/{name}/blob/{branch}/{path}",
        "Binder": f"{BINDER}/v2/gh/{owner}/{name}/{quote(branch, safe='')}?urlpath=lab/tree/{path}",
    }


def mathjax_static_dir() -> Path:
    """The folder of the pinned MathJax package that holds ``mathjax/``."""
    try:
        dist = metadata.distribution(MATHJAX_PACKAGE)
    except metadata.PackageNotFoundError:
        dist = None
    folder = Path(dist.locate_file("sphinx-mathjax-offline/static")) if dist else None
    if folder is None or not (folder / MATHJAX_SCRIPT).is_file():
        raise RuntimeError(
            f"MathJax is served from _static/ and comes from the pinned package {MATHJAX_PACKAGE} "
            f"(requirements.txt), which is not installed here: run `make env`")
    return folder


def plotly_script() -> Path:
    """plotly.js as the pinned ``plotly`` package ships it (``package_data/plotly.min.js``)."""
    try:
        dist = metadata.distribution(PLOTLY_PACKAGE)
    except metadata.PackageNotFoundError:
        dist = None
    script = Path(dist.locate_file("plotly/package_data/plotly.min.js")) if dist else None
    if script is None or not script.is_file():
        raise RuntimeError(
            f"the interactive figures load plotly.js from _static/, copied from the pinned package "
            f"{PLOTLY_PACKAGE} (requirements.txt), which is not installed here: run `make env`")
    return script


def _switch_off_thebe(app) -> None:
    """Drop what sphinx-thebe adds to every page: a script that loads Thebe from unpkg."""
    for listeners in app.events.listeners.values():
        for listener in list(listeners):
            if getattr(listener.handler, "__module__", "").startswith("sphinx_thebe"):
                app.disconnect(listener.id)
    app.registry.css_files[:] = [(name, attrs) for name, attrs in app.registry.css_files
                                 if name != "sphinx-thebe.css"]


def _config_inited(app, config) -> None:
    from sphinx.errors import ExtensionError

    try:
        config.book_repository_url, config.book_branch = repository_settings()
        static = mathjax_static_dir()
        plotly_script()
    except (ValueError, RuntimeError) as error:
        raise ExtensionError(str(error)) from error
    config.mathjax_path = MATHJAX_SCRIPT
    config.html_static_path = [*config.html_static_path, str(static)]
    wheels = Path(app.confdir) / WHEEL_DIR
    if wheels.is_dir():
        config.html_static_path.append(str(wheels))
    _switch_off_thebe(app)


def _is_notebook(app, pagename: str) -> bool:
    return "kernelspec" in app.env.metadata.get(pagename, {})


def _add_launch_buttons(app, pagename, templatename, context, doctree) -> None:
    repository = app.config.book_repository_url
    if not repository or doctree is None or not _is_notebook(app, pagename):
        return
    urls = launch_urls(repository, app.config.book_branch, pagename)
    icons = {"Colab": "_static/images/logo_colab.png", "Binder": "_static/images/logo_binder.svg"}
    buttons = [{"type": "link", "text": where, "tooltip": f"Launch this chapter on {where}",
                "icon": icons[where], "url": url, "label": f"launch-{where.lower()}-button"}
               for where, url in urls.items()]
    context.setdefault("header_buttons", []).insert(0, {
        "type": "group", "tooltip": "Run this chapter as a notebook", "icon": "fas fa-rocket",
        "buttons": buttons, "label": "launch-buttons"})


def _load_plotly_where_needed(app, pagename, templatename, context, doctree) -> None:
    """Add ``_static/plotly/plotly.min.js`` to this page only, when it holds an interactive figure."""
    if f'class="{WIDGET_MARKER}"' in context.get("body", ""):
        app.add_js_file(PLOTLY_SCRIPT)


def _is_widget(node) -> bool:
    from docutils import nodes

    return (isinstance(node, nodes.raw) and "html" in node.get("format", "").split()
            and _WIDGET_DIV.search(node.astext()) is not None)


def _has_output(cell) -> bool:
    from docutils import nodes

    return any("cell_output" in c.get("classes", []) for c in cell.findall(nodes.container))


def pair_interactive_twins(doctree, fignumbers: dict | None = None) -> list[str]:
    """Give each tagged static figure's number, caption and alt text to the interactive figure after it.

    The static figure of a cell tagged :data:`TWIN_TAG` keeps its image and
    caption under the id ``<id>-print`` and the class :data:`PRINT_FIGURE`;
    the first interactive figure after it (a raw HTML ``<div class="vitbias-plotly">``)
    becomes a figure of class :data:`INTERACTIVE_FIGURE` with the static
    figure's id, its caption and, for screen readers, its alt text.
    ``fignumbers`` (the page's ``{"figure": {id: number}}``) gains the print
    id, so that the printed figure keeps its number. A tagged cell without
    outputs (not executed) is left alone. Returns the ids paired;
    raises ``ValueError`` for a tagged cell without exactly one figure, or
    without an interactive figure of its own after it.
    """
    from docutils import nodes

    order = list(doctree.findall(lambda n: _is_widget(n) or (
        isinstance(n, nodes.container) and f"tag_{TWIN_TAG}" in n.get("classes", []))))
    paired = []
    for i, cell in enumerate(order):
        if _is_widget(cell) or not _has_output(cell):
            continue   # a cell not executed (a build without execution) has nothing to pair
        figures = list(cell.findall(nodes.figure))
        if len(figures) != 1 or not figures[0]["ids"]:
            raise ValueError(f"a cell tagged {TWIN_TAG} must show one figure with a name; this one shows "
                             f"{len(figures)}")
        static = figures[0]
        figure_id = static["ids"][0]
        following = order[i + 1] if i + 1 < len(order) else None
        if following is None or not _is_widget(following):
            raise ValueError(f"figure {figure_id} is tagged {TWIN_TAG}, but no interactive figure follows it "
                             "before the next such figure or the end of the page")
        images = list(static.findall(nodes.image))
        alt = images[0].get("alt", "") if images else ""
        captions = list(static.findall(nodes.caption))
        source = following.astext()
        widget_id = _WIDGET_DIV.search(source).group(1)
        figure = nodes.figure("", ids=[figure_id], classes=[INTERACTIVE_FIGURE])
        if static.get("align"):
            figure["align"] = static["align"]
        following.parent.replace(following, figure)   # not replace_self, which gives it the raw node's classes
        figure += following
        if alt:
            figure += _alt_text(widget_id, alt)
        if captions:
            figure += captions[0].deepcopy()
        static["ids"] = [figure_id + PRINT_SUFFIX]
        static["classes"].append(PRINT_FIGURE)
        numbers = (fignumbers or {}).get("figure", {})
        if figure_id in numbers:
            numbers[figure_id + PRINT_SUFFIX] = numbers[figure_id]
        paired.append(figure_id)
    return paired


def _alt_text(widget_id: str, alt: str):
    """The text alternative of an interactive figure: a paragraph only screen readers read (``_static/vitbias.css``)."""
    from docutils import nodes

    return nodes.raw("", f'<p class="{ALT_CLASS}" id="{widget_id}-alt">{html.escape(alt)}</p>', format="html")


def describe_lone_figures(doctree) -> list[str]:
    """Give each interactive figure without a static twin its fallback sentence as its text alternative.

    plotly.js draws over the sentence the figure shows until it is drawn; kept
    after the figure, for screen readers only, it says what the figure shows to
    a reader who cannot see it or cannot explore it with a mouse. Returns the
    ids of the figures described. Run after :func:`pair_interactive_twins`,
    whose figures have the static one's alt text.
    """
    described = []
    for widget in list(doctree.findall(_is_widget)):
        source, parent = widget.astext(), widget.parent
        fallback = _FALLBACK.search(source)
        sentence = " ".join(html.unescape(_TAG.sub("", fallback.group(1))).split()) if fallback else ""
        if not sentence or INTERACTIVE_FIGURE in parent.get("classes", []):
            continue
        widget_id = _WIDGET_DIV.search(source).group(1)
        parent.insert(parent.index(widget) + 1, _alt_text(widget_id, sentence))
        described.append(widget_id)
    return described


def _pair_on_the_web(app, doctree, docname) -> None:
    from sphinx.errors import ExtensionError

    if app.builder.format != "html":
        return   # a PDF shows the static figure, as a notebook does
    try:
        pair_interactive_twins(doctree, app.env.toc_fignumbers.get(docname))
    except ValueError as error:
        raise ExtensionError(f"{docname}: {error}") from error
    describe_lone_figures(doctree)


def list_citations_as_items(body: str) -> str:
    """A page's HTML with each entry of a citation list a ``listitem`` (docutils writes a deprecated role)."""
    return _CITATION.sub(r'\1 role="listitem"', body)


def _citation_items(app, pagename, templatename, context, doctree) -> None:
    if "body" in context:
        context["body"] = list_citations_as_items(context["body"])


def _copy_plotly(app, exception) -> None:
    """Put plotly.js under ``_static/`` of an HTML build (once; it is the same file every time)."""
    if exception is not None or app.builder.format != "html":
        return
    source, target = plotly_script(), Path(app.outdir) / "_static" / PLOTLY_SCRIPT
    if not target.is_file() or target.stat().st_size != source.stat().st_size:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def setup(app):
    # Read from the environment; rebuild="html" rewrites every page when they change.
    app.add_config_value("book_repository_url", "", "html", types=[str])
    app.add_config_value("book_branch", DEFAULT_BRANCH, "html", types=[str])
    app.connect("config-inited", _config_inited, priority=900)
    # After the theme has made the page's header buttons (its handlers run at 501).
    app.connect("html-page-context", _add_launch_buttons, priority=510)
    app.connect("html-page-context", _load_plotly_where_needed)
    app.connect("html-page-context", _citation_items)
    app.connect("doctree-resolved", _pair_on_the_web)
    app.connect("build-finished", _copy_plotly)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
