"""The book's plumbing: chapters, glued values, references, the cache key.

Used by the tests and by ``make reference``:

    python -m tests.booktools reference [--profile quick]
    python -m tests.booktools cache-key
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
BUILD = ROOT / "_build"
EXECUTED = BUILD / "jupyter_execute" / "book"
REFERENCE = ROOT / "tests" / "reference"
TOLERANCE_SUFFIX = ".tol"


def profile() -> str:
    return os.environ.get("VITBIAS_PROFILE", "quick").strip() or "quick"


def cache_key(profile_name: str | None = None) -> str:
    """A hash of everything besides cell sources that decides a number."""
    digest = hashlib.sha256()
    sources = sorted((ROOT / "code").rglob("*.py"), key=lambda p: p.relative_to(ROOT).as_posix())
    for path in sources + [ROOT / "requirements.txt"]:
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return f"{digest.hexdigest()[:16]}-{profile_name or profile()}"


def is_notebook(path: Path) -> bool:
    """A chapter is a notebook when its front matter names a kernel."""
    text = path.read_text(encoding="utf-8")
    return text.startswith("---") and "kernelspec:" in text.split("\n---", 1)[0]


def chapters() -> list[Path]:
    """Every page of the book, in file-name order."""
    return sorted(BOOK.glob("*.md"))


def notebook_chapters() -> list[Path]:
    return [p for p in chapters() if is_notebook(p)]


def code_hash(chapter: Path) -> str:
    """A hash of a chapter's code cells (sources and tags), blind to its prose.

    The reference records it, so a prose edit leaves the reference current and
    an edit of any code cell makes it stale.
    """
    import jupytext

    cells = [[cell.source, sorted(cell.metadata.get("tags", []))]
             for cell in jupytext.read(chapter).cells if cell.cell_type == "code"]
    return hashlib.sha256(json.dumps(cells).encode()).hexdigest()


def is_glue_output(output: dict) -> bool:
    """Whether a notebook output is a glued value (``myst_nb.glue`` marks it ``scrapbook``)."""
    return "scrapbook" in output.get("metadata", {})


def glued_value(output: dict):
    """``(name, value)`` of a glue output of an executed notebook, ``None`` for any other output."""
    if not is_glue_output(output):
        return None
    meta = output["metadata"]["scrapbook"]
    data = output.get("data", {})
    text = data.get(meta.get("mime_prefix", "") + "text/plain", data.get("text/plain"))
    return meta["name"], ast.literal_eval(text)


def drift_of_outputs(chapter_stem: str, outputs) -> list[str]:
    """Drift messages for the glued values among ``outputs``, against the chapter's manifest."""
    values_path, _ = reference_paths(Path(chapter_stem + ".md"))
    reference = json.loads(values_path.read_text())["values"] if values_path.exists() else {}
    problems = []
    for output in outputs:
        glued = glued_value(output)
        if glued is None or glued[0].endswith(TOLERANCE_SUFFIX):
            continue
        name, value = glued
        if name not in reference:
            problems.append(f"{name}: glued but not in the reference (run `make reference`)")
        else:
            message = drift(name, reference[name], value)
            if message:
                problems.append(message)
    return problems


def strip_for_reference(nb):
    """``nb`` without what the reference need not store: glued values and images.

    Glued values are checked by the manifest with their tolerances, and nbval
    never compares images, so a figure keeps only its text (``<Figure ...>``).
    """
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.metadata.pop("execution", None)
        cell.outputs = [o for o in cell.get("outputs", []) if not is_glue_output(o)]
        for output in cell.outputs:
            for mime in [m for m in output.get("data", {}) if m.startswith("image/")]:
                del output["data"][mime]
    return nb


def read_glue(path: Path) -> dict[str, dict]:
    """``{name: {"value": v, "rel": r, "abs": a}}`` from a build's ``.glue.json``."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    values, tolerances = {}, {}
    for name, output in raw.items():
        value = ast.literal_eval(output["data"]["text/plain"])
        if name.endswith(TOLERANCE_SUFFIX):
            tolerances[name[: -len(TOLERANCE_SUFFIX)]] = value
        else:
            values[name] = value
    glued = {}
    for name, value in values.items():
        entry = {"value": value}
        if not isinstance(value, str):
            tol = tolerances.get(name, {"rel": 0.0, "abs": 0.0})
            entry.update(rel=tol["rel"], abs=tol["abs"])
            if tol.get("why"):
                entry["why"] = tol["why"]
        glued[name] = entry
    return glued


def drift(name: str, expected: dict, found) -> str | None:
    """A message when ``found`` is outside ``expected``'s tolerance, else None."""
    want = expected["value"]
    if isinstance(want, str) or isinstance(found, str):
        if want != found:
            return f"{name}: expected {want!r}, found {found!r} (strings must match exactly)"
        return None
    bound = expected["abs"] + expected["rel"] * abs(want)
    if abs(found - want) > bound:
        why = expected.get("why") or "exact math"
        return (f"{name}: expected {want!r}, found {found!r} "
                f"(|difference| {abs(found - want):.3g} > tolerance {bound:.3g}: {why})")
    return None


def reference_paths(chapter: Path, profile_name: str | None = None):
    folder = REFERENCE / (profile_name or profile())
    return folder / f"{chapter.stem}.json", folder / "notebooks" / f"{chapter.stem}.ipynb"


def execute_chapter(chapter: Path, timeout: int = 900):
    """Execute a MyST chapter as a fresh notebook, from the ``book/`` folder."""
    import jupytext
    from nbclient import NotebookClient

    nb = jupytext.read(chapter)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(BOOK)}}).execute()
    return nb


def reference_notebook(chapter: Path):
    """The chapter executed afresh, without images and glued values, stamped with its code hash.

    Executed again rather than copied from the build: the build's stored
    notebooks are normalised by myst-nb (trailing newlines of printed text are
    dropped), and nbval compares printed text exactly.
    """
    nb = strip_for_reference(execute_chapter(chapter))
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                   "vitbias": {"source": f"book/{chapter.name}", "code_sha256": code_hash(chapter)}}
    return nb


def write_reference(profile_name: str, only: list[str] | None = None) -> None:
    """Rewrite the glued-value references and reference notebooks of a profile.

    ``only``: chapter names (file stems) to rewrite; all chapters when empty.
    """
    import nbformat

    selected = [c for c in notebook_chapters() if not only or c.stem in only]
    unknown = set(only or []) - {c.stem for c in selected}
    if unknown:
        raise SystemExit(f"no notebook chapter named {sorted(unknown)} in book/")
    for chapter in selected:
        glue_path = EXECUTED / f"{chapter.stem}.glue.json"
        values_path, notebook_path = reference_paths(chapter, profile_name)
        values_path.parent.mkdir(parents=True, exist_ok=True)
        notebook_path.parent.mkdir(parents=True, exist_ok=True)
        glued = read_glue(glue_path) if glue_path.exists() else {}
        values_path.write_text(json.dumps(
            {"code_sha256": code_hash(chapter), "values": glued},
            indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"{values_path.relative_to(ROOT)}: {len(glued)} glued values")
        nbformat.write(reference_notebook(chapter), notebook_path)
        print(f"{notebook_path.relative_to(ROOT)}: written")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ref = sub.add_parser("reference", help="rewrite the committed reference")
    ref.add_argument("--profile", default=profile())
    ref.add_argument("chapters", nargs="*", help="chapter names (default: all)")
    sub.add_parser("cache-key", help="print the execution-cache key")
    args = parser.parse_args(argv)
    if args.command == "cache-key":
        print(cache_key())
    else:
        if (BUILD / ".cache-key").read_text().strip() != cache_key(args.profile):
            print("the build is stale; run `make book` first", file=sys.stderr)
            return 1
        write_reference(args.profile, args.chapters)
    return 0


if __name__ == "__main__":
    sys.exit(main())
