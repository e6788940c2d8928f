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
- **The wheel.** The ``vitbias`` wheel that ``make wheel`` builds in
  ``_build/wheel/`` is published under ``_static/``, for the launched
  notebooks' install cell when no repository is set.
"""

from __future__ import annotations

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
    app.connect("build-finished", _copy_plotly)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
