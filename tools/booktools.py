"""The book's plumbing: chapters, their dependencies, glued values, references.

Used by the Makefile and the tests:

    python -m tools.booktools invalidate        # before a build: forget stale chapters
    python -m tools.booktools train             # then: train the runs the chapters to execute will read
    python -m tools.booktools execute           # then: execute them side by side into the execution cache
    python -m tools.booktools record            # after a build: remember what it was made from
    python -m tools.booktools check CHAPTER     # execute one chapter, compare with the reference
    python -m tools.booktools reference [--profile quick] [CHAPTER ...]
    python -m tools.booktools noise [--other-kernels FOLDER [--train]] [--chapter NAME]
                                                # one run's sd from the run cache(s)
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import sys
import time
from pathlib import Path

from vitbias.book import TOLERANCE_SUFFIX
from vitbias.profile import current_profile

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
BUILD = ROOT / "_build"
EXECUTED = BUILD / "jupyter_execute" / "book"
REFERENCE = ROOT / "tests" / "reference"
PACKAGE = ROOT / "code" / "vitbias"


def module_file(name: str, root: Path = PACKAGE) -> Path | None:
    """The source file of the module ``name`` (dotted, relative to the package at ``root``)."""
    if not name:
        return root / "__init__.py"
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _with_parent_packages(name: str, root: Path = PACKAGE) -> set[str]:
    """``a.b.c`` with ``a`` and ``a.b`` when they are packages: importing it runs their ``__init__``."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)
            if module_file(".".join(parts[:i]), root) is not None}


def _imported_base(node: ast.ImportFrom, current: str | None, root: Path) -> str | None:
    """The dotted name, inside the package, that ``from BASE import ...`` reads; ``None`` when outside."""
    if node.level == 0:
        module = node.module or ""
        if module != root.name and not module.startswith(root.name + "."):
            return None
        return module.split(".", 1)[1] if "." in module else ""
    if current is None:
        return None
    parts = current.split(".") if current else []
    if module_file(current, root) is None or module_file(current, root).name != "__init__.py":
        parts = parts[:-1]  # a module's relative imports start from its package
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def imported_modules(source: str, current: str | None = None, root: Path = PACKAGE) -> set[str]:
    """The modules of the package at ``root`` (vitbias) a piece of source imports, as dotted
    names (``figures.toy``), wherever the import stands (inside a function too).

    ``current``: the dotted name of the module the source belongs to (``""``
    for the package's ``__init__``), which resolves its relative imports
    (``None`` for a chapter's cells).
    """
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(root.name + "."):
                    found |= _with_parent_packages(alias.name.split(".", 1)[1], root)
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        base = _imported_base(node, current, root)
        if base is None:
            continue
        for alias in node.names:
            candidate = f"{base}.{alias.name}" if base else alias.name
            target = candidate if module_file(candidate, root) else base  # a module, or a name in one
            if target:
                found |= _with_parent_packages(target, root)
    return found


def package_dependencies(modules) -> list[str]:
    """``modules`` and every vitbias module they import, transitively, sorted."""
    seen, todo = set(), list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += imported_modules(module_file(name).read_text(encoding="utf-8"), current=name)
    return sorted(seen)


def chapter_dependencies(chapter: Path) -> list[str]:
    """The vitbias modules a chapter's code cells import, with theirs, transitively."""
    import jupytext

    found = set()
    for cell in jupytext.read(chapter).cells:
        if cell.cell_type == "code":
            code = "\n".join(line for line in cell.source.splitlines()
                             if not line.lstrip().startswith(("%", "!")))
            found |= imported_modules(code)
    return package_dependencies(found)


EXERCISES = ROOT / "exercises"


def imports_exercises(chapter: Path) -> bool:
    """Whether a chapter's code cells import the reader's exercises (``exercises``, its grader)."""
    import jupytext

    for cell in jupytext.read(chapter).cells:
        if cell.cell_type != "code":
            continue
        code = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(code)):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            if any(name == "exercises" or name.startswith("exercises.") for name in names):
                return True
    return False


def chapter_key(chapter: Path, profile_name: str | None = None) -> str:
    """A hash of what decides a chapter's numbers besides its cells: the vitbias
    modules it depends on, the exercises and their grader when it imports them
    (their tests excepted), the pinned environment and the profile.

    The execution cache already keys on the cells themselves.
    """
    digest = hashlib.sha256()
    digest.update((PACKAGE / "__init__.py").read_bytes())  # runs before any vitbias module
    for name in chapter_dependencies(chapter):
        digest.update(name.encode())
        digest.update(module_file(name).read_bytes())
    if imports_exercises(chapter):
        for path in sorted(EXERCISES.rglob("*.py")):
            if "tests" not in path.relative_to(EXERCISES).parts:
                digest.update(str(path.relative_to(EXERCISES)).encode())
                digest.update(path.read_bytes())
    digest.update((ROOT / "requirements.txt").read_bytes())
    return f"{digest.hexdigest()[:16]}-{profile_name or current_profile()}"


CHAPTER_KEYS = BUILD / ".chapter-keys.json"


def chapter_keys(profile_name: str | None = None) -> dict[str, str]:
    return {c.stem: chapter_key(c, profile_name) for c in notebook_chapters()}


def recorded_keys() -> dict[str, str]:
    return json.loads(CHAPTER_KEYS.read_text()) if CHAPTER_KEYS.exists() else {}


def stale_chapters(profile_name: str | None = None) -> list[str]:
    """Chapters whose dependencies changed since the last build (every chapter when there was none)."""
    old = recorded_keys()
    return [stem for stem, key in chapter_keys(profile_name).items() if old.get(stem) != key]


def invalidate(profile_name: str | None = None) -> list[str]:
    """Make the next build re-execute exactly the stale chapters.

    Their records leave the execution cache, and their sources are touched so
    that Sphinx reads them again (it re-reads only files newer than its
    environment).
    """
    stale = stale_chapters(profile_name)
    cache_folder = BUILD / ".jupyter_cache"
    if stale and cache_folder.exists():
        from jupyter_cache import get_cache

        cache = get_cache(str(cache_folder))
        for record in cache.list_cache_records():
            # By name, wherever it was executed: the cache matches a notebook by its cells, so an
            # execution made in another checkout (a cache restored from elsewhere) would be read too.
            if Path(record.uri).stem in stale:
                cache.remove_cache(record.pk)
    for stem in stale:
        os.utime(BOOK / f"{stem}.md")
    return stale


def cached_chapters() -> set[str]:
    """The chapters the execution cache holds an execution of, as their cells now read (after
    :func:`invalidate`: the fresh ones); the build executes every other."""
    executed = {c.stem for c in notebook_chapters()}
    return executed - {c.stem for c in unexecuted_chapters()}


def train_runs(chapters=None) -> tuple[int, float]:
    """Train, before the build, the missing runs of ``chapters`` (default: those the build will execute).

    Every chapter would train its own missing runs anyway; trained here, all of
    them share one pool (:func:`vitbias.runs.run_many`, longest first), so the
    cores are not left idle at the end of each chapter's list. Teachers come
    first, so that no two workers train the same teacher. Returns ``(runs
    trained, wall seconds)``.
    """
    from vitbias import chapters as planned
    from vitbias import profile, runs

    budget = profile.budget()
    if chapters is None:
        cached = cached_chapters()
        chapters = [c for c in planned.PLANNED if c not in cached]
    configs = [c for chapter in chapters for c in planned.chapter_runs(chapter, budget).values()]
    teachers = [c["train"]["teacher"] for c in configs if c["train"].get("teacher") is not None]
    folder = runs.runs_folder()
    missing = {runs.run_key(c) for c in teachers + configs
               if not (folder / runs.run_key(c) / "metrics.json").is_file()}
    start = time.perf_counter()
    for batch in (teachers, configs):
        runs.run_many(batch, folder)
    return len(missing), time.perf_counter() - start


EXECUTION_TIMEOUT = 3600  # seconds per chapter, as _config.yml gives the build (execute: timeout)
CHAPTER_SECONDS = BUILD / ".chapter-seconds.json"


def chapter_notebook(chapter: Path):
    """The notebook of a MyST chapter as the build reads it (myst-nb's reader, which the execution
    cache also uses), so that its hash matches the one the build looks up."""
    from myst_nb.core.read import myst_nb_reader_plugin

    return myst_nb_reader_plugin(str(chapter))


def unexecuted_chapters(cache_folder: Path | None = None) -> list[Path]:
    """The notebook chapters the execution cache holds no execution of, as their cells now read."""
    from jupyter_cache import get_cache

    cache = get_cache(str(cache_folder or BUILD / ".jupyter_cache"))
    missing = []
    for chapter in notebook_chapters():
        try:
            cache.match_cache_notebook(chapter_notebook(chapter))
        except KeyError:
            missing.append(chapter)
    return missing


def _execute_into_cache(chapter: str, cache_folder: str, threads: int) -> tuple[str, float, str | None]:
    """A worker's task: execute ``chapter`` from ``book/`` and store it in the execution cache as the
    build would (myst-nb's cache mode): ``(chapter, seconds, traceback or None)``."""
    os.environ["OMP_NUM_THREADS"] = str(threads)  # the kernel inherits it
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.executors.utils import single_nb_execution

    nb = chapter_notebook(Path(chapter))
    result = single_nb_execution(nb, cwd=str(Path(chapter).parent), timeout=EXECUTION_TIMEOUT,
                                 allow_errors=False, meta_override=True)
    if result.err is not None:
        return chapter, result.time, result.exc_string or repr(result.err)
    get_cache(cache_folder).cache_notebook_bundle(
        CacheBundleIn(nb, chapter, data={"execution_seconds": result.time}), check_validity=False, overwrite=True)
    return chapter, result.time, None


def execute_chapters(workers: int | None = None, cache_folder: Path | None = None) -> tuple[list[str], list[str]]:
    """Execute, side by side, the chapters the build would execute one after another, into its cache.

    The build (myst-nb in cache mode) executes each chapter it finds no
    execution of, one at a time; executed here first, in ``workers`` processes
    (default: one per core), each kernel on ``cores / workers`` threads, the
    build then reads every chapter from the cache. Longest first by the last
    build's times, when known. Returns ``(executed, failed)`` chapter names;
    a failure's traceback is printed, and the build would fail on it too.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from vitbias.runs import default_workers

    cache_folder = cache_folder or BUILD / ".jupyter_cache"
    todo = unexecuted_chapters(cache_folder)
    if not todo:
        return [], []
    known = json.loads(CHAPTER_SECONDS.read_text()) if CHAPTER_SECONDS.exists() else {}
    todo.sort(key=lambda chapter: -known.get(chapter.stem, float("inf")))
    workers = min(default_workers() if workers is None else workers, len(todo))
    if workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    threads = max(1, len(os.sched_getaffinity(0)) // workers) if hasattr(os, "sched_getaffinity") else 1
    executed, failed = [], []
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        jobs = [pool.submit(_execute_into_cache, str(c), str(cache_folder), threads) for c in todo]
        for job in jobs:
            chapter, seconds, error = job.result()
            name = Path(chapter).stem
            if error is None:
                executed.append(name)
                print(f"{name}: executed in {seconds:,.0f} s")
            else:
                failed.append(name)
                print(f"{name}: failed after {seconds:,.0f} s\n{error}", file=sys.stderr)
    return executed, failed


def record_chapter_seconds(cache_folder: Path | None = None) -> None:
    """Remember each chapter's execution time from the cache, to order the next build's executions."""
    cache_folder = cache_folder or BUILD / ".jupyter_cache"
    if not cache_folder.exists():
        return
    from jupyter_cache import get_cache

    seconds = {Path(r.uri).stem: (r.data or {}).get("execution_seconds")
               for r in get_cache(str(cache_folder)).list_cache_records() if Path(r.uri).parent == BOOK}
    CHAPTER_SECONDS.write_text(json.dumps({k: v for k, v in seconds.items() if v is not None},
                                          indent=1, sort_keys=True) + "\n")


def record_keys(profile_name: str | None = None) -> None:
    CHAPTER_KEYS.parent.mkdir(parents=True, exist_ok=True)
    CHAPTER_KEYS.write_text(json.dumps(chapter_keys(profile_name), indent=1, sort_keys=True) + "\n")


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


def drift_of_values(chapter_stem: str, glued) -> list[str]:
    """Drift messages for ``glued``, ``(name, value)`` pairs of a chapter, against its manifest."""
    values_path, _ = reference_paths(Path(chapter_stem + ".md"))
    reference = json.loads(values_path.read_text())["values"] if values_path.exists() else {}
    problems = []
    for name, value in glued:
        if name.endswith(TOLERANCE_SUFFIX):
            continue
        if name not in reference:
            problems.append(f"{name}: glued but not in the reference (run `make reference`)")
        else:
            message = drift(name, reference[name], value)
            if message:
                problems.append(message)
    return problems


def drift_of_outputs(chapter_stem: str, outputs) -> list[str]:
    """Drift messages for the glued values among a notebook's ``outputs``, against the chapter's manifest."""
    return drift_of_values(chapter_stem, [g for g in map(glued_value, outputs) if g is not None])


def read_glue_log(path: Path) -> list[tuple[str, object]]:
    """The ``(name, value)`` pairs :func:`vitbias.book.glue` wrote to a glue log (``VITBIAS_GLUE_LOG``)."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(entry["name"], ast.literal_eval(entry["value"])) for entry in map(json.loads, filter(None, lines))]


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
            entry.update({k: tol[k] for k in ("rel", "abs", "unchecked", "why") if k in tol})
        elif tolerances.get(name, {}).get("unchecked"):  # a verdict (vitbias.book.glue_verdict)
            entry.update({"unchecked": True, "why": tolerances[name].get("why", "")})
        glued[name] = entry
    return glued


def drift(name: str, expected: dict, found) -> str | None:
    """A message when ``found`` is outside ``expected``'s tolerance, else None."""
    want = expected["value"]
    if expected.get("unchecked"):  # a wall-clock time or a verdict: shown, never compared
        return None
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


# The drift report: what the drift checks found, for a maintainer who reads it without the log.
# `make test` (tests/test_book.py, and nbval through tests/conftest.py) and `make chapter` write it;
# CI shows it on the run's page and annotates the reference files from its JSON twin (tools/ci.py).
REPORTS = BUILD / "reports"
DRIFT_REPORT = REPORTS / "drift.md"


def drift_finding(name: str, expected: dict | None, found=None, glued: bool = True) -> dict | None:
    """One row of the drift report, ``None`` when ``found`` is within ``expected``'s tolerance.

    The row holds the value's ``name``, what the ``reference`` holds, what the
    check ``found``, their ``difference``, the ``tolerance`` and the ``reason``
    declared for it, all as text. ``expected`` is the value's entry in the
    chapter's manifest, ``None`` when the manifest lacks it; ``glued=False``
    when the chapter no longer glues it.
    """
    row = {"name": name, "reference": "", "found": "", "difference": "", "tolerance": "", "reason": ""}
    if expected is None:
        return {**row, "found": repr(found), "reason": "glued but not in the reference (run `make reference`)"}
    row["reference"] = repr(expected["value"])
    if not glued:
        return {**row, "reason": "in the reference but no longer glued"}
    if drift(name, expected, found) is None:
        return None
    row["found"] = repr(found)
    want = expected["value"]
    if isinstance(want, str) or isinstance(found, str):
        return {**row, "tolerance": "exact", "reason": "strings must match exactly"}
    bound = expected["abs"] + expected["rel"] * abs(want)
    return {**row, "difference": f"{abs(found - want):.3g}", "tolerance": f"{bound:.3g}",
            "reason": expected.get("why") or "exact math"}


def chapter_findings(chapter_stem: str, glued: dict, complete: bool = True) -> list[dict]:
    """The drift report's rows for ``glued`` (``{name: value}``) of a chapter, against its manifest.

    A row for each value outside its tolerance or missing from the manifest
    and, when ``glued`` is all the chapter glues (``complete``), for each value
    of the manifest it no longer glues. Tolerance entries are skipped.
    """
    values_path, _ = reference_paths(Path(chapter_stem + ".md"))
    reference = json.loads(values_path.read_text())["values"] if values_path.exists() else {}
    rows = [drift_finding(name, reference.get(name), value) for name, value in sorted(glued.items())
            if not name.endswith(TOLERANCE_SUFFIX)]
    if complete:
        rows += [drift_finding(name, reference[name], glued=False) for name in sorted(set(reference) - set(glued))]
    return [row for row in rows if row]


def _table_text(text: str) -> str:
    """``text`` as one cell of a Markdown table: on one line, its pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code_block(source: str) -> list[str]:
    """``source`` as a fenced Python block, its fence longer than any run of backticks inside."""
    import re

    fence = "`" * max([3] + [len(run) + 1 for run in re.findall(r"`+", source)])
    return [fence + "python", *source.rstrip().split("\n"), fence]


def drift_markdown(checks: list[dict]) -> str:
    """The drift report as Markdown: per chapter and check, a table of the drifted values and the
    cells that failed, an assert's among them (see :func:`write_drift_report` for ``checks``)."""
    lines = ["# Drift report", "",
             "A number below is no longer the one that was reviewed. If you did not mean to change it, the "
             "change you made (to code, data, a library pin) moved it: find out why. If you did, run `make "
             "reference`, read the diff of `tests/reference/` and commit it with the change (README, \"When a "
             "number drifts\"). A failed assert means the data no longer support a sentence of the prose: "
             "rewrite the prose, not the assert."]
    for check in checks:
        lines += ["", f"## {check['chapter']} ({check['check']})", "",
                  f"Reference: `{check.get('reference') or reference_file(check['chapter'])}`"]
        if check.get("values"):
            lines += ["", "| value | reference | found | difference | tolerance | reason |",
                      "| --- | ---: | ---: | ---: | ---: | --- |"]
            lines += [f"| `{row['name']}` | " + " | ".join(_table_text(row[key]) for key in
                      ("reference", "found", "difference", "tolerance", "reason")) + " |" for row in check["values"]]
        if check.get("cells"):
            lines += ["", "Cells that failed:"]
            for cell in check["cells"]:
                lines += ["", f"- {cell['cell']}: `{_table_text(cell['error'])}`", ""]
                lines += ["  " + line if line else "" for line in _code_block(cell.get("source", ""))]
    return "\n".join(lines) + "\n"


def reference_file(chapter_stem: str) -> str:
    """The chapter's manifest, relative to the checkout (``tests/reference/<profile>/<chapter>.json``)."""
    path = reference_paths(Path(chapter_stem + ".md"))[0]
    return (path.relative_to(ROOT) if path.is_relative_to(ROOT) else path).as_posix()


def write_drift_report(checks: list[dict], path: Path | None = None) -> Path | None:
    """Write what the drift checks found to ``path`` (default ``_build/reports/drift.md``), and the
    same as JSON beside it (``drift.json``, which CI turns into annotations); returns ``path``.

    ``checks``: one entry per chapter and check, ``{"chapter": stem, "check":
    what ran it, "values": rows of chapter_findings, "cells": [{"cell":
    where, "error": its last line, "source": its code}]}``. An entry that found
    nothing is left out; when none found anything, a previous report is
    removed and ``None`` returned, so the report never outlives its drift.
    """
    path = path or DRIFT_REPORT
    found = [{**check, "reference": check.get("reference") or reference_file(check["chapter"])}
             for check in checks if check.get("values") or check.get("cells")]
    data = path.with_suffix(".json")
    if not found:
        path.unlink(missing_ok=True)
        data.unlink(missing_ok=True)
        return None
    found.sort(key=lambda check: (check["chapter"], check["check"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(drift_markdown(found), encoding="utf-8")
    data.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    return path


def failed_cell(chapter: Path, error) -> dict:
    """The cell of ``chapter`` whose execution raised ``error`` (nbclient's ``CellExecutionError``,
    whose message quotes the cell), as the drift report names it: where, the error, the source."""
    import jupytext

    message = str(error)
    code = [cell for cell in jupytext.read(chapter).cells if cell.cell_type == "code"]
    quoted = [(number, cell) for number, cell in enumerate(code, 1)
              if cell.source.strip() and cell.source.strip() in message]
    number, cell = max(quoted, key=lambda pair: len(pair[1].source), default=(None, None))
    where = f"code cell {number} of `book/{chapter.name}`" if cell is not None else f"`book/{chapter.name}`"
    ename, evalue = getattr(error, "ename", type(error).__name__), getattr(error, "evalue", "")
    return {"cell": where, "error": f"{ename}: {evalue}" if evalue else ename,
            "source": cell.source if cell is not None else ""}


def reference_paths(chapter: Path, profile_name: str | None = None):
    folder = REFERENCE / (profile_name or current_profile())
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


def check_chapter(stem: str) -> list[str]:
    """Execute one chapter afresh; the drift of its glued values against the reference.

    What drifted, or the cell that failed, also goes to the drift report (:func:`write_drift_report`).
    """
    from nbclient.exceptions import CellExecutionError

    from tools.prose_lint import lint

    chapter = BOOK / f"{stem}.md"
    if not chapter.exists():
        raise SystemExit(f"no chapter book/{stem}.md")
    problems = lint(chapter)
    try:
        nb = execute_chapter(chapter)
    except CellExecutionError as error:
        write_drift_report([{"chapter": stem, "check": "make chapter", "cells": [failed_cell(chapter, error)]}])
        raise
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    problems += drift_of_outputs(stem, outputs)
    glued = dict(g for g in map(glued_value, outputs) if g is not None)
    write_drift_report([{"chapter": stem, "check": "make chapter", "values": chapter_findings(stem, glued)}])
    values_path, _ = reference_paths(chapter)
    if values_path.exists():
        reference = set(json.loads(values_path.read_text())["values"])
        glued = {g[0] for g in map(glued_value, outputs) if g and not g[0].endswith(TOLERANCE_SUFFIX)}
        problems += [f"{name}: in the reference but no longer glued" for name in sorted(reference - glued)]
    return problems


# The runs trained again on the other kernel set for the noise measurement, by chapter: the crossover
# chapter's learning curves of both models on the plain images and its runs of the recipe's comparison,
# which its changes pair (its other worlds' groups count their seeds only; its one half-step run is not
# measured), and every run of the symmetry chapter.
OTHER_KERNEL_RUNS = {
    "crossover": ("from vitbias import chapters, profile, runs\n"
                  "wanted = chapters.chapter_runs('crossover', profile.budget())\n"
                  "runs.run_many([c for k, c in wanted.items() if isinstance(k, tuple) and k[0] != 'pretraining' "
                  "and k[1] != 'half steps' and (len(k) < 4 or k[3] == 'plain')])\n"),
    "symmetry": ("from vitbias import chapters, profile, runs\n"
                 "runs.run_many(list(chapters.chapter_runs('symmetry', profile.budget()).values()))\n"),
    "priors": ("from vitbias import chapters, profile, runs\n"
               "kinds = chapters.noise_groups('priors', profile.budget())\n"
               "runs.run_many([c for kind in ('routes', 'finer grid') for g in kinds[kind].values() for c in g])\n"),
    "robustness": ("from vitbias import chapters, profile, runs\n"
                   "kinds = chapters.noise_groups('robustness', profile.budget())\n"
                   "runs.run_many([c for g in kinds['train'].values() for c in g])\n"),
}


def other_kernels_env(env=None) -> dict:
    """``env`` (default: this process's) switched to the other set of PyTorch CPU kernels: the generic
    ones (``ATEN_CPU_CAPABILITY=default``), or the native ones when it names the generic ones."""
    env = dict(os.environ if env is None else env)
    if env.get("ATEN_CPU_CAPABILITY") == "default":
        env.pop("ATEN_CPU_CAPABILITY")
    else:
        env["ATEN_CPU_CAPABILITY"] = "default"
    return env


# With --kind: the runs of those kinds of the chapter's groups (vitbias.chapters.noise_groups).
KIND_RUNS = ("from vitbias import chapters, noise, profile, runs\n"
             "kinds = chapters.noise_groups({chapter!r}, profile.budget())\n"
             "runs.run_many([c for kind in {kinds!r} for g in kinds[kind].values() for c in noise.run_configs(g)])\n")


def train_on_other_kernels(folder: Path, chapters=None, kinds=None) -> None:
    """Train the runs of :data:`OTHER_KERNEL_RUNS` of ``chapters`` (default: all), or with ``kinds``
    only the runs of those kinds (:data:`KIND_RUNS`), into the run cache ``folder`` on the other
    kernel set."""
    import subprocess

    chapters = tuple(OTHER_KERNEL_RUNS) if chapters is None else tuple(chapters)
    unknown = [c for c in chapters if c not in OTHER_KERNEL_RUNS]
    if unknown:
        raise ValueError(f"no other-kernel runs for {unknown}: expected among {tuple(OTHER_KERNEL_RUNS)}")
    env = other_kernels_env() | {"VITBIAS_RUNS": str(folder), "PYTHONPATH": str(ROOT / "code")}
    for chapter in chapters:
        script = OTHER_KERNEL_RUNS[chapter] if kinds is None else \
            KIND_RUNS.format(chapter=chapter, kinds=tuple(kinds))
        subprocess.run([sys.executable, "-c", script], env=env, check=True, cwd=ROOT)


def write_noise(profile_name: str, other_kernels=(), module: Path | None = None, chapters=None,
                kinds=None) -> dict:
    """Measure ``chapters``' one-run sds (default: every chapter of ``vitbias.chapters.NOISY``;
    with ``kinds``, only those kinds, keeping the chapters' other kinds as measured before; the kinds
    of glued numbers, :func:`write_glued_noise`'s, are always kept) from the run cache (and
    ``other_kernels``, caches of the same runs on the other kernel set) and write them, beside the
    other chapters' and profiles' measurements, into the generated module ``vitbias.noise_measured``;
    returns chapter -> this profile's record. A record's ``kernel_sets``
    is the fewest over its kinds."""
    from vitbias import chapters as measured_chapters
    from vitbias import noise, profile, runs

    module = module or noise.MEASURED_MODULE
    folders = [runs.runs_folder(), *map(Path, other_kernels)]
    for folder in folders[1:]:
        if not folder.is_dir():
            raise ValueError(f"no run cache at {folder}")
    chapters = measured_chapters.NOISY if chapters is None else tuple(chapters)
    budget = profile.budget(profile_name)
    table = dict(noise.measured_table())
    records = {}
    for chapter in chapters:
        before = table.get(profile_name, {}).get(chapter, {"kinds": {}, "kernel_sets": len(folders)})
        kept = {kind: {"kernel_sets": before["kernel_sets"], **entry} for kind, entry in before["kinds"].items()
                if (kinds is not None and kind not in kinds) or entry.get("from") == noise.GLUED}
        measured = {**kept, **noise.measure(measured_chapters.noise_groups(chapter, budget), folders, kinds)}
        records[chapter] = {"kinds": dict(sorted(measured.items())),
                            "kernel_sets": min(entry["kernel_sets"] for entry in measured.values())}
    table[profile_name] = {**table.get(profile_name, {}), **records}
    module.write_text(noise.module_source(table))
    return records


def record_chapter(chapter: str, folder: Path, other_kernels: bool, record: Path) -> list[dict]:
    """Execute ``book/<chapter>.md`` on the run cache ``folder`` (training what it lacks there), on the
    other CPU kernel set when ``other_kernels``, recording its glued numbers to ``record``
    (:func:`vitbias.noise.record_glued`); returns what was recorded."""
    from vitbias import noise

    saved = dict(os.environ)
    env = other_kernels_env() if other_kernels else dict(os.environ)
    env |= {"VITBIAS_RUNS": str(folder), noise.RECORD_VARIABLE: str(record)}
    record.unlink(missing_ok=True)
    try:
        os.environ.clear()
        os.environ.update(env)  # the kernel inherits this process's environment
        execute_chapter(BOOK / f"{chapter}.md")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return noise.read_recorded(record)


def write_glued_noise(profile_name: str, chapter: str, other_kernels=(), module: Path | None = None) -> dict:
    """Measure ``chapter``'s kinds of glued numbers (:func:`vitbias.noise.measure_glued`): execute it
    once on the build's run cache and once on each of ``other_kernels`` (with the other kernel set),
    and write the kinds into ``vitbias.noise_measured`` beside the chapter's kinds measured from the
    run cache, which are kept; returns the chapter's record."""
    import tempfile

    from vitbias import chapters, noise, profile, runs

    module = module or noise.MEASURED_MODULE
    if not (BOOK / f"{chapter}.md").is_file():
        raise ValueError(f"no chapter book/{chapter}.md")
    folders = [runs.runs_folder(), *map(Path, other_kernels)]
    for folder in folders[1:]:
        if not folder.is_dir():
            raise ValueError(f"no run cache at {folder}")
    from_cache = set(chapters.noise_groups(chapter, profile.budget(profile_name))) if chapter in chapters.NOISY \
        else set()
    with tempfile.TemporaryDirectory() as scratch:
        recorded = [record_chapter(chapter, folder, i > 0, Path(scratch) / f"record-{i}.jsonl")
                    for i, folder in enumerate(folders)]
    measured = noise.measure_glued(chapter, recorded, skip=from_cache)
    table = dict(noise.measured_table())
    before = table.get(profile_name, {}).get(chapter, {"kinds": {}})
    kept = {kind: {"kernel_sets": before.get("kernel_sets", 1), **entry}
            for kind, entry in before["kinds"].items() if kind not in measured}
    kinds = dict(sorted({**kept, **measured}.items()))
    record = {"kinds": kinds, "kernel_sets": min(entry["kernel_sets"] for entry in kinds.values())}
    table[profile_name] = {**table.get(profile_name, {}), chapter: record}
    module.write_text(noise.module_source(table))
    return record


def ladder_table(folders) -> list[str]:
    """The crossover's ladder in each run cache of ``folders`` (the build's first, then another kernel
    set's): per rung, where the seed means put the TinyViT's crossing and the bootstrap's shares
    before / inside / beyond, in each cache, and whether the place agrees and is decided
    (:data:`vitbias.chapters.crossover.DECIDED`) in all of them. Raises ``ValueError`` when a cache lacks
    a run of the ladder."""
    from vitbias import profile, scaling
    from vitbias.chapters import crossover

    budget = profile.budget()
    places = []
    for folder in folders:
        found = crossover.ladder_places(budget, folder)
        if found is None:
            raise ValueError(f"the run cache {folder} lacks a run of the crossover's ladder: train it first")
        places.append(found)
    lines = ["rung | " + " | ".join(str(f) for f in folders) + " | same place, decided everywhere"]
    for world in places[0]:
        cells = [f"{p[world].where}" + (f" ({p[world].size:,.0f} images)" if p[world].where == "inside" else "")
                 + " " + "/".join(f"{p[world].shares[w]:.0%}" for w in scaling.WHERE) for p in places]
        same = len({p[world].where for p in places}) == 1
        decided = all(max(p[world].shares.values()) >= crossover.DECIDED for p in places)
        lines.append(f"{world} | " + " | ".join(cells) + f" | {'yes' if same and decided else 'no'}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    ref = sub.add_parser("reference", help="rewrite the committed reference")
    ref.add_argument("--profile", default=current_profile())
    ref.add_argument("chapters", nargs="*", help="chapter names (default: all)")
    sub.add_parser("invalidate", help="forget the executions of chapters whose dependencies changed")
    sub.add_parser("record", help="record what the build was made from")
    sub.add_parser("train", help="train the missing runs of the chapters the build will execute")
    sub.add_parser("execute", help="execute the chapters the build would execute, side by side, into its cache")
    ladder = sub.add_parser("ladder", help="where the crossover's crossings fall in the run cache and in other "
                                           "kernel sets' caches, rung by rung")
    ladder.add_argument("--other-kernels", action="append", default=[],
                        help="a run cache of the same runs trained on the other CPU kernel set (repeatable)")
    check = sub.add_parser("check", help="execute one chapter and compare it with the reference")
    check.add_argument("chapter")
    noise = sub.add_parser("noise", help="measure one run's sd per kind from the run cache into vitbias.noise_measured")
    noise.add_argument("--other-kernels", action="append", default=[],
                       help="a run cache of the same runs trained on the other CPU kernel set (repeatable)")
    noise.add_argument("--train", action="store_true",
                       help="first train the measured chapters' runs into each --other-kernels cache")
    noise.add_argument("--chapter", action="append", dest="chapters",
                       help="measure this chapter only, keeping the others' measurements (repeatable)")
    noise.add_argument("--kind", action="append", dest="kinds",
                       help="measure (and with --train, train) this kind only, keeping the chapter's others")
    noise.add_argument("--glued", action="store_true",
                       help="measure the --chapter's kinds of glued numbers instead, by executing it once per "
                            "run cache (training what the other kernel set's cache lacks)")
    args = parser.parse_args(argv)
    if args.command == "invalidate":
        stale = invalidate()
        if stale:
            print("re-executing (code, environment or profile changed):", " ".join(stale))
    elif args.command == "train":
        trained, seconds = train_runs()
        if trained:
            print(f"trained {trained} runs in {seconds:,.0f} s")
    elif args.command == "execute":
        start = time.perf_counter()
        executed, failed = execute_chapters()
        if executed or failed:
            print(f"executed {len(executed)} chapters in {time.perf_counter() - start:,.0f} s")
        return 1 if failed else 0
    elif args.command == "record":
        record_keys()
        record_chapter_seconds()
    elif args.command == "noise" and args.glued:
        if not args.chapters:
            parser.error("noise --glued needs --chapter")
        for chapter in args.chapters:
            record = write_glued_noise(current_profile(), chapter, args.other_kernels)
            for kind, entry in record["kinds"].items():
                if entry.get("from") == "glued values":
                    print(f"{chapter} {kind}: sd {entry['sd']} (measured {entry['measured']}, largest in "
                          f"{entry['largest_in']}, {entry['runs']} values over {entry['kernel_sets']} kernel set(s))")
    elif args.command == "noise":
        for folder in args.other_kernels if args.train else ():
            train_on_other_kernels(Path(folder), args.chapters, args.kinds)
        measured = write_noise(current_profile(), args.other_kernels, chapters=args.chapters, kinds=args.kinds)
        for chapter, record in measured.items():
            for kind, entry in record["kinds"].items():
                print(f"{chapter} {kind}: sd {entry['sd']} (measured {entry['measured']}, largest in "
                      f"{entry['largest_in']}, {entry['runs']} runs over {entry['kernel_sets']} kernel set(s))")
    elif args.command == "ladder":
        from vitbias import runs

        print("\n".join(ladder_table([runs.runs_folder(), *map(Path, args.other_kernels)])))
    elif args.command == "check":
        problems = check_chapter(args.chapter)
        print("\n".join(problems) or f"{args.chapter}: executed; every glued value within its tolerance")
        return 1 if problems else 0
    else:
        if stale_chapters(args.profile):
            print("the build is stale; run `make book` first", file=sys.stderr)
            return 1
        write_reference(args.profile, args.chapters)
    return 0


if __name__ == "__main__":
    sys.exit(main())
