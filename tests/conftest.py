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
"""

import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "code"))

from tools.booktools import REFERENCE, drift_of_values, read_glue_log  # noqa: E402
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
    drifted = glue_drift(Path(str(item.parent.path)))
    report = outcome.get_result()
    if drifted and report.passed:
        report.outcome = "failed"
        report.longrepr = "glued values outside their tolerances:\n" + "\n".join(drifted)
