"""What the workflows in ``.github/workflows/`` run besides ``make``.

    python -m tools.ci annotations [DRIFT_JSON]   # the drift report's findings as GitHub annotations
    python -m tools.ci drifted [DRIFT_JSON]       # the chapters the drift report names, one a line
    python -m tools.ci notebooks FOLDER           # FOLDER holds one notebook per chapter of _toc.yml

``DRIFT_JSON`` is the drift report's JSON twin (default
``_build/reports/drift.json``, written by :func:`tools.booktools.write_drift_report`).
The notebooks check reads ``BOOK_REPOSITORY_URL`` and ``BOOK_BRANCH`` as
``make notebooks`` does, and fails unless each chapter's notebook installs
``vitbias`` from that branch. Standard library and PyYAML only, no ``vitbias``,
so that a job can run it on the system's Python.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRIFT_DATA = ROOT / "_build" / "reports" / "drift.json"
TOC = ROOT / "_toc.yml"


def _escaped(text: str, property_value: bool = False) -> str:
    """``text`` as a workflow command carries it: ``%``, line breaks (and, in a property, ``:`` and ``,``)
    escaped."""
    text = str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def annotation(file: str, title: str, message: str, line: int | None = None) -> str:
    """A ``::error`` workflow command: GitHub shows ``message`` on ``file`` (at ``line``) in the run and the diff."""
    where = f"file={_escaped(file, True)}" + (f",line={line}" if line else "")
    return f"::error {where},title={_escaped(title, True)}::{_escaped(message)}"


def line_of(path: Path, text: str) -> int | None:
    """The first line (from 1) of ``path`` that holds ``text``, stripped; ``None`` when none does."""
    if not text.strip() or not path.is_file():
        return None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if text.strip() in line:
            return number
    return None


def value_message(row: dict) -> str:
    """What a drift report's row says: reference, found, difference, tolerance and reason."""
    parts = [f"reference {row['reference']}" if row.get("reference") else "",
             f"found {row['found']}" if row.get("found") else ""]
    bound = (f"|difference| {row['difference']} > tolerance {row['tolerance']}" if row.get("difference")
             else f"tolerance {row['tolerance']}" if row.get("tolerance") else "")
    said = ", ".join(part for part in parts if part)
    return f"{said} ({bound + ': ' if bound else ''}{row.get('reason', '')})".strip()


def annotations(checks: list[dict], root: Path = ROOT) -> list[str]:
    """``::error`` commands for the drift report's findings: each drifted value on its line of the chapter's
    reference file, each failed cell on the chapter's source (``book/<chapter>.md``) where its code starts."""
    commands = []
    for check in checks:
        reference = check["reference"]
        for row in check.get("values", []):
            line = line_of(root / reference, json.dumps(row["name"]) + ": {")
            commands.append(annotation(reference, f"{check['chapter']}: {row['name']} drifted ({check['check']})",
                                       value_message(row), line))
        for cell in check.get("cells", []):
            source = f"book/{check['chapter']}.md"
            first = next((line for line in cell.get("source", "").splitlines() if line.strip()), "")
            commands.append(annotation(source, f"{check['chapter']}: {cell['cell']} failed ({check['check']})",
                                       cell["error"], line_of(root / source, first)))
    return commands


def drifted_chapters(checks: list[dict]) -> list[str]:
    """The chapters the drift report names, once each, in order."""
    return sorted({check["chapter"] for check in checks})


def toc_files(toc: Path = TOC) -> list[str]:
    """Every ``file`` of the table of contents (its root, chapters, parts and sections), in order."""
    import yaml

    found = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if key in node:
                    found.append(str(node[key]))
            for value in node.values():
                if isinstance(value, (list, dict)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(yaml.safe_load(toc.read_text(encoding="utf-8")))
    return found


def install_cell(notebook: Path) -> str:
    """The source of a notebook's first cell (the one that installs ``vitbias``)."""
    cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    source = cells[0].get("source", "") if cells else ""
    return "".join(source) if isinstance(source, list) else source


def notebook_problems(folder: Path, environ=None, toc: Path = TOC) -> tuple[list[str], list[str]]:
    """``(problems, notes)`` of the notebooks in ``folder`` as the launch buttons will open them.

    A problem: a notebook chapter of the table of contents without its
    ``<chapter>.ipynb``, or one whose first cell does not install ``vitbias``
    from ``BOOK_REPOSITORY_URL`` at ``BOOK_BRANCH`` (when the URL is set). A
    note: a notebook of no chapter in the table of contents.
    """
    from tools.booksite import repository_settings
    from tools.notebooks import notebook_chapters

    repository, branch = repository_settings(environ)
    notebooks = {path.stem for path in notebook_chapters()}
    chapters = [Path(file).stem for file in toc_files(toc) if Path(file).stem in notebooks]
    problems = []
    for chapter in chapters:
        path = folder / f"{chapter}.ipynb"
        if not path.is_file():
            problems.append(f"{path}: missing (the chapter {chapter} is in {toc.name})")
        elif repository and f"git+{repository}@{branch}" not in install_cell(path):
            problems.append(f"{path}: its first cell does not install vitbias from {repository} at {branch}")
    notes = [f"{path}: no chapter of {toc.name}" for path in sorted(folder.glob("*.ipynb"))
             if path.stem not in chapters]
    if not chapters:
        problems.append(f"{toc.name} lists no notebook chapter")
    return problems, notes


def _read_checks(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, what in (("annotations", "the drift report's findings as ::error commands"),
                       ("drifted", "the chapters the drift report names")):
        command = sub.add_parser(name, help=what)
        command.add_argument("report", nargs="?", type=Path, default=DRIFT_DATA)
    check = sub.add_parser("notebooks", help="check that FOLDER holds one notebook per chapter of _toc.yml")
    check.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.command in ("annotations", "drifted"):
        lines = (annotations if args.command == "annotations" else drifted_chapters)(_read_checks(args.report))
        if lines:
            print("\n".join(lines))
    else:
        problems, notes = notebook_problems(args.folder)
        for note in notes:
            print(f"::warning::{_escaped(note)}")
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
        print(f"{args.folder}: one notebook per chapter of {TOC.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
