"""The chapters as notebooks that run where they land (Colab, Binder, a laptop).

``python -m tools.notebooks`` (``make notebooks``) writes one ``.ipynb`` per
notebook chapter into ``notebooks/``, converted from the MyST source with
jupytext, unexecuted. The exercise page's solution cells (tag ``solution``) are replaced by
the exercises' stubs, so that the reader's notebook ends in a grader with
nothing solved for them. Each notebook's first cell installs what the machine lacks and
nothing else: the book's package ``vitbias`` and ``myst-nb`` (whose ``glue``
records the numbers the prose quotes), each only when it does not import.
Colab has NumPy, PyTorch, timm, Matplotlib and scikit-learn, which
``vitbias`` asks for with loose lower bounds, so pip leaves them alone.

The exercise page's MyST markup for its exercises (sphinx-exercise's
``{exercise}`` and gated ``{solution-start}``/``{solution-end}`` directives,
and each exercise's hint, a folded ``{admonition}``) would show as raw fences in
Jupyter: the notebook has plain Markdown instead, a bold "Exercise N." before each
statement and each hint in a ``<details>`` element, folded as on the page.

``vitbias`` comes from the repository named by ``BOOK_REPOSITORY_URL`` (at
``BOOK_BRANCH``) when it is set, else from the wheel that ``make wheel`` builds
and the site publishes under ``_static/``: the cell then looks for that wheel
next to the notebook and says where to get it when it is missing.

``python -m tools.notebooks --wheel DIR`` builds the wheel into ``DIR``
instead, from a copy of the sources, so that no build files are left in the
checkout.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
OUT = ROOT / "notebooks"
INSTALL_TAG = "install"
# A cell of the exercise page tagged ``solution`` holds a reference solution (or checks
# them): the launched notebook carries the exercise's stub in its place, or nothing.
# The page's last cell, tagged ``grader``, grades whatever the reader's cells define.
SOLUTION_TAG = "solution"
GRADER_TAG = "grader"
# The page's exercise markup (sphinx-exercise), which the launched notebook rewrites as plain Markdown.
EXERCISE_FENCE = re.compile(r"^(`{3,}|:{3,})\{(exercise|solution-start|solution-end|admonition)\}\s*(.*)$")
DIRECTIVE_OPTION = re.compile(r"^:([\w-]+):\s*(.*)$")
# A markdown cell with any of it (an admonition alone is a chapter's own, left as it is).
EXERCISE_MARKUP = re.compile(r"^\s*(`{3,}|:{3,})\{(exercise|solution-start|solution-end)\}", re.M)
EXERCISES = ROOT / "exercises"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.booksite import repository_settings  # noqa: E402


def package_version() -> str:
    """The ``version`` of ``[project]`` in pyproject.toml."""
    project = (ROOT / "pyproject.toml").read_text().split("[project]", 1)[1].split("\n[", 1)[0]
    return re.search(r'^version\s*=\s*"([^"]+)"', project, re.M).group(1)


def wheel_name() -> str:
    """The file name of the ``vitbias`` wheel (pure Python, any platform)."""
    return f"vitbias-{package_version()}-py3-none-any.whl"


def pinned(package: str) -> str:
    """``package==version`` as requirements.txt pins it."""
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        name, _, version = line.split("#", 1)[0].strip().partition("==")
        if re.sub(r"[-_.]+", "-", name).lower() == package and version:
            return f"{name}=={version}"
    raise ValueError(f"requirements.txt does not pin {package}")


def notebook_chapters() -> list[Path]:
    """Every chapter whose front matter names a kernel, in file-name order."""
    chapters = []
    for path in sorted(BOOK.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if text.startswith("---") and "kernelspec:" in text.split("\n---", 1)[0]:
            chapters.append(path)
    return chapters


def exercise_names() -> tuple[str, ...]:
    """The exercises, in the book's order (``exercises.EXERCISES``)."""
    from exercises import EXERCISES as names

    return names


def _function_source(path: Path, name: str) -> str:
    text = path.read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment(text, node)
    raise ValueError(f"{path.relative_to(ROOT)} defines no function {name}")


def stub_source(name: str) -> str:
    """The stub of exercise ``name`` (``exercises/<name>.py``): signature, specification, no body."""
    return _function_source(EXERCISES / f"{name}.py", name)


def solution_source(name: str) -> str:
    """The reference solution of ``name`` as the exercise page shows it.

    The file ``exercises/solutions/<name>.py`` less its docstring and imports:
    its helpers and the function, which the page's first cell supplies with
    NumPy and PyTorch (and a helper of an earlier exercise with its solution).
    """
    text = (EXERCISES / "solutions" / f"{name}.py").read_text(encoding="utf-8")
    body = [node for node in ast.parse(text).body
            if not isinstance(node, (ast.Import, ast.ImportFrom))
            and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
    return "\n\n\n".join(ast.get_source_segment(text, node) for node in body)


def defined_exercises(source: str) -> list[str]:
    """The exercises that a cell's top-level ``def`` statements define, in order."""
    names = set(exercise_names())
    return [node.name for node in ast.parse(source).body
            if isinstance(node, ast.FunctionDef) and node.name in names]


def strip_solutions(nb) -> int:
    """Put each exercise's stub in place of its solution cell; drop the other solution cells.

    Returns the number of stubs. A notebook with solution cells must end in
    its grader cell (tag ``grader``), so that the reader's last cell checks
    their versions; else ``ValueError``.
    """
    import nbformat

    cells, stubs = [], 0
    for cell in nb.cells:
        tags = list(cell.get("metadata", {}).get("tags", []))
        if SOLUTION_TAG not in tags:
            cells.append(cell)
            continue
        names = defined_exercises(cell.source) if cell.cell_type == "code" else []
        if names:
            source = "# Your version: replace `raise NotImplementedError` by the body, then run the last cell.\n\n"
            source += "\n\n\n".join(stub_source(name) for name in names)
            kept = [tag for tag in tags if tag not in (SOLUTION_TAG, "hide-input", "hide-cell", "remove-input")]
            cells.append(nbformat.v4.new_code_cell(source, metadata={"tags": kept + ["exercise"]}))
            stubs += len(names)
    if len(cells) != len(nb.cells) or stubs:
        code = [cell for cell in cells if cell.cell_type == "code"]
        if not code or code[-1] is not cells[-1] or GRADER_TAG not in code[-1].metadata.get("tags", []):
            raise ValueError(f"a notebook with solution cells must end in a cell tagged {GRADER_TAG!r}")
    nb.cells = cells
    return stubs


def plain_exercise_markdown(source: str, numbers) -> str:
    """A markdown cell's exercise markup as plain Markdown; ``numbers`` yields the exercises' numbers.

    An ``{exercise}`` fence becomes a bold "Exercise N." line before its body (N
    from ``numbers``, in the page's order, as sphinx-exercise numbers them; no
    number with ``:nonumber:``), an ``{admonition}`` inside an exercise becomes
    its title in bold before its body, in a ``<details>`` element when its class
    has ``dropdown``, and the ``{solution-start}`` and ``{solution-end}`` fences
    disappear. Any other line is left as it is.
    """
    lines, out = source.split("\n"), []
    open_fences = []  # (marker, kind, folded) of the directives we are inside
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        i += 1
        match = EXERCISE_FENCE.match(stripped)
        in_exercise = any(kind == "exercise" for _, kind, _ in open_fences)
        if match and (match.group(2) != "admonition" or in_exercise):
            marker, kind, title = match.groups()
            options = {}
            while i < len(lines) and DIRECTIVE_OPTION.match(lines[i].strip()):
                key, value = DIRECTIVE_OPTION.match(lines[i].strip()).groups()
                options[key] = value
                i += 1
            folded = kind == "admonition" and "dropdown" in options.get("class", "").split()
            if kind == "exercise":
                out.append("**Exercise.**" if "nonumber" in options else f"**Exercise {next(numbers)}.**")
            elif folded:
                out += ["<details>", f"<summary><b>{title}</b></summary>", ""]
            elif kind == "admonition":
                out += [f"**{title}.**", ""]
            open_fences.append((marker, kind, folded))
            continue
        if open_fences and stripped == open_fences[-1][0]:
            _, kind, folded = open_fences.pop()
            if folded:
                out += ["", "</details>"]
            continue
        out.append(lines[i - 1])
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out))
    return text.strip("\n")


def plain_exercises(nb) -> int:
    """Rewrite the exercise markup of ``nb``'s markdown cells (:func:`plain_exercise_markdown`).

    A markdown cell left empty (one that held only a solution's fences) is
    dropped. Returns the number of numbered exercises.
    """
    from itertools import count

    numbers, cells = count(1), []
    for cell in nb.cells:
        if cell.cell_type == "markdown" and EXERCISE_MARKUP.search(cell.source):
            cell.source = plain_exercise_markdown(cell.source, numbers)
            if not cell.source.strip():
                continue
        cells.append(cell)
    nb.cells = cells
    return next(numbers) - 1


def install_source(repository: str = "", branch: str = "main") -> str:
    """The first cell of every launched notebook."""
    lines = [
        "# Installs what this notebook needs and the machine lacks, and nothing else: the",
        "# book's package vitbias, and myst-nb, whose glue() records the numbers the prose",
        "# quotes. On Binder, or where both are installed already, it does nothing.",
        "import importlib.util",
        "import subprocess",
        "import sys",
    ]
    if repository:
        lines += [
            "",
            f'VITBIAS = "vitbias @ git+{repository}@{branch}"',
        ]
    else:
        lines += [
            "from pathlib import Path",
            "",
            "# The wheel is published in the _static/ folder of the book's site; put it next",
            "# to this notebook (on Colab: the Files panel, Upload).",
            f'VITBIAS = "{wheel_name()}"',
            'if importlib.util.find_spec("vitbias") is None and not Path(VITBIAS).is_file():',
            "    raise FileNotFoundError(",
            '        f"{VITBIAS} is not in {Path.cwd()}: download it from the _static/ folder "',
            '        "of the book\'s site and put it next to this notebook")',
        ]
    lines += [
        f'needed = {{"vitbias": VITBIAS, "myst_nb": "{pinned("myst-nb")}"}}',
        "missing = [spec for module, spec in needed.items() if importlib.util.find_spec(module) is None]",
        "if missing:",
        '    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *missing], check=True)',
    ]
    return "\n".join(lines)


def convert(chapter: Path, out_dir: Path, repository: str = "", branch: str = "main") -> Path:
    """Write ``out_dir/<chapter>.ipynb``: the install cell, then the chapter's cells."""
    import jupytext
    import nbformat

    nb = jupytext.read(chapter)
    strip_solutions(nb)
    plain_exercises(nb)
    cell = nbformat.v4.new_code_cell(install_source(repository, branch), metadata={"tags": [INSTALL_TAG]})
    nb.cells.insert(0, cell)
    nb.metadata.pop("jupytext", None)
    for number, each in enumerate(nb.cells):  # fixed ids: a rerun writes the same file
        each["id"] = f"cell-{number}"
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{chapter.stem}.ipynb"
    nbformat.write(nb, target)
    return target


def build_wheel(out_dir: Path) -> Path:
    """Build the ``vitbias`` wheel into ``out_dir`` from a copy of the sources."""
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / wheel_name()
    target.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "src"
        source.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(ROOT / name, source / name)
        for folder in ("code", "exercises"):
            shutil.copytree(ROOT / folder, source / folder,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                        "--wheel-dir", str(out_dir), str(source)], check=True)
    if not target.is_file():
        raise RuntimeError(f"pip built no {target.name} in {out_dir}")
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the notebooks (default: notebooks/)")
    parser.add_argument("--wheel", type=Path, metavar="DIR", help="build the vitbias wheel into DIR instead")
    args = parser.parse_args(argv)
    if args.wheel:
        print(build_wheel(args.wheel))
        return 0
    repository, branch = repository_settings()
    for chapter in notebook_chapters():
        print(convert(chapter, args.out, repository, branch))
    where = f"{repository} at {branch}" if repository else f"the wheel {wheel_name()} next to each notebook"
    print(f"The notebooks install vitbias from {where}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
