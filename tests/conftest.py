"""Test set-up: import vitbias from this checkout, collect only the reference
notebooks of the active profile, and compare glued values in one way only.

nbval compares a cell's outputs as text. A glued value is instead compared
with the committed manifest, within the tolerance its cell declared, exactly
as ``test_book.py`` compares the build's: text comparison would turn float
rounding on another CPU into a failure that the tolerance was written to
allow. So the kernels nbval starts get ``VITBIAS_GLUE_LOG``: there
:func:`vitbias.book.glue` writes each value to that file instead of
displaying it (the reference notebooks store no glued values either), nbval
compares every other output (printed tables, integers, strings, shapes) as
text, and after each cell the hook below checks the values the cell glued
against the manifest. Since ``make test`` runs nbval on other PyTorch kernels
than the build, the glued values are checked on two numeric paths.

Each drift check of a pytest run (``test_book.py``'s, and this hook's) leaves what
it found in ``_build/.drift-parts/``, one file per chapter and check, since the
tests run in several processes; the end of the run merges them into the drift
report, ``_build/reports/drift.md`` (:func:`tools.booktools.write_drift_report`).
"""

import atexit
import json
import os
import re
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "code"))

from tools.booktools import (  # noqa: E402
    BUILD,
    REFERENCE,
    ROOT,
    chapter_findings,
    drift_of_values,
    read_glue_log,
    write_drift_report,
)
from vitbias.book import GLUE_LOG_VARIABLE  # noqa: E402
from vitbias.profile import current_profile  # noqa: E402

# Chapters that already compute every number on both sets of PyTorch CPU kernels themselves: the
# fingerprints page trains each fingerprint in its own kernel and again in a subprocess on the other
# set, and every output it shows is glued or marked nbval-ignore-output. nbval's re-execution on the
# other kernels would repeat exactly those two computations (about two minutes of one core), so its
# reference notebook is not collected; the build's glued values are still compared with the manifest
# (test_book.py). tests/test_book_plumbing.py checks that each chapter named here still does both.
CHECKS_BOTH_KERNELS_ITSELF = ("fingerprints",)

collect_ignore_glob = [
    str(folder / "notebooks" / "*.ipynb")
    for folder in REFERENCE.iterdir()
    if folder.is_dir() and folder.name != current_profile()
] if REFERENCE.exists() else []
collect_ignore_glob += [str(REFERENCE / current_profile() / "notebooks" / f"{chapter}.ipynb")
                        for chapter in CHECKS_BOTH_KERNELS_ITSELF]

# One log per test process: a process runs one notebook at a time, its cells in order.
GLUE_LOG = Path(tempfile.mkdtemp(prefix="vitbias-glue-")) / "glued.jsonl"
atexit.register(shutil.rmtree, GLUE_LOG.parent, ignore_errors=True)


def is_notebook_cell(item) -> bool:
    """Whether ``item`` is a cell of a notebook nbval re-executes."""
    from nbval.plugin import IPyNbCell

    return isinstance(item, IPyNbCell)


def glue_drift(notebook: Path, log: Path | None = None) -> list[str]:
    """Drift messages for the values the last cell of ``notebook`` glued; empties the log."""
    log = GLUE_LOG if log is None else log
    glued = read_glue_log(log)
    log.unlink(missing_ok=True)
    return drift_of_values(notebook.stem, glued)


@pytest.fixture(scope="module")
def one_thread():
    """PyTorch on one thread for a module's tests, its thread count restored after them."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    """A notebook's kernel starts in the set-up of its first cell: it inherits the glue log."""
    if not is_notebook_cell(item):
        yield
        return
    before = os.environ.get(GLUE_LOG_VARIABLE)
    os.environ[GLUE_LOG_VARIABLE] = str(GLUE_LOG)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(GLUE_LOG_VARIABLE, None)
        else:
            os.environ[GLUE_LOG_VARIABLE] = before


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A cell whose glued values drifted outside their tolerances fails, naming them."""
    outcome = yield
    if call.when != "call" or not is_notebook_cell(item):
        return
    notebook = Path(str(item.parent.path))
    glued = dict(read_glue_log(GLUE_LOG))
    drifted = glue_drift(notebook)
    report = outcome.get_result()
    failed = failed_assert(item, report)
    if drifted or failed:
        save_drift_part({"chapter": notebook.stem, "check": "make test: nbval on the other kernels",
                         "values": chapter_findings(notebook.stem, glued, complete=False),
                         "cells": [failed] if failed else []})
    if drifted and report.passed:
        report.outcome = "failed"
        report.longrepr = "glued values outside their tolerances:\n" + "\n".join(drifted)


DRIFT_PARTS = BUILD / ".drift-parts"
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def failed_assert(item, report) -> dict | None:
    """The notebook cell ``item`` as the drift report names it, when an ``assert`` of it failed."""
    if report.passed:
        return None
    text = _COLOUR.sub("", str(report.longrepr))
    errors = [line.strip() for line in text.splitlines() if "AssertionError" in line]
    if not errors:
        return None
    notebook = Path(str(item.parent.path))
    where = notebook.relative_to(ROOT) if notebook.is_relative_to(ROOT) else notebook
    return {"cell": f"cell {item.cell_num} of `{where.as_posix()}`", "error": errors[-1],
            "source": item.cell.source}


def save_drift_part(check: dict, folder: Path | None = None) -> Path:
    """Leave one drift check's findings (an entry of ``write_drift_report``'s list) for the end of the run."""
    folder = folder or DRIFT_PARTS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{check['chapter']}.{uuid.uuid4().hex}.json"
    path.write_text(json.dumps(check), encoding="utf-8")
    return path


def merged_drift_parts(folder: Path | None = None) -> list[dict]:
    """The findings left in ``folder``, one entry per chapter and check (a notebook's cells merged)."""
    merged = {}
    for path in sorted((folder or DRIFT_PARTS).glob("*.json")):
        part = json.loads(path.read_text(encoding="utf-8"))
        entry = merged.setdefault((part["chapter"], part["check"]), {**part, "values": [], "cells": []})
        entry["values"] += part.get("values", [])
        entry["cells"] += part.get("cells", [])
    return list(merged.values())


def is_controller(config) -> bool:
    """Whether this process leads the pytest run (pytest-xdist's workers have ``workerinput``)."""
    return not hasattr(config, "workerinput")


def pytest_configure(config):
    """A pytest run starts with no findings left by an earlier one."""
    if is_controller(config):
        shutil.rmtree(DRIFT_PARTS, ignore_errors=True)


def pytest_sessionfinish(session):
    """The drift report, from what this run's drift checks found; a run that had none leaves the
    report alone, one whose checks found nothing removes it."""
    if is_controller(session.config) and DRIFT_PARTS.is_dir():
        write_drift_report(merged_drift_parts())
        shutil.rmtree(DRIFT_PARTS, ignore_errors=True)


# nbval's kernels talk to pytest over TCP ports that jupyter_client picks as free and the kernel binds
# a moment later; with one pytest worker per core starting kernels side by side, a port picked by
# two workers makes one kernel die before it answers ("Kernel died before replying to kernel_info"),
# and with it every cell of its notebook. So each kernel gets IPC sockets in a folder of its own
# (no port to share), its stderr goes to a file instead of /dev/null, and a kernel that dies while
# starting is started again, at most KERNEL_STARTS times; the last failure says what the kernel printed.
KERNEL_STARTS = 3


def start_kernel_on_own_sockets(startup_timeout=60, kernel_name="python", **kwargs):
    """nbval's ``start_new_kernel`` over IPC sockets of the kernel's own; returns ``(manager, client)``."""
    from jupyter_client.manager import KernelManager
    from nbval.kernel import NbvalKernelspecManager

    kwargs.pop("stderr", None)
    failures = []
    for _ in range(KERNEL_STARTS):
        folder = Path(tempfile.mkdtemp(prefix="vitbias-kernel-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)   # its sockets and log, once the tests end
        km = KernelManager(kernel_name=kernel_name, kernel_spec_manager=NbvalKernelspecManager(),
                           transport="ipc", ip=str(folder / "socket"))
        log = folder / "stderr.txt"
        with open(log, "w") as stderr:
            km.start_kernel(stderr=stderr, **kwargs)
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=startup_timeout)
        except RuntimeError as error:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
            failures.append(f"{error}; the kernel printed:\n{log.read_text(errors='replace')[-2000:]}")
            continue
        return km, kc
    raise RuntimeError(f"the notebook kernel died {KERNEL_STARTS} times while starting:\n" + "\n".join(failures))


def pytest_sessionstart(session):
    """nbval's kernels start on sockets of their own (see ``start_kernel_on_own_sockets``)."""
    import nbval.kernel

    nbval.kernel.start_new_kernel = start_kernel_on_own_sockets
