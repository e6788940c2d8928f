"""Test set-up: import vitbias from this checkout, collect only the reference
notebooks of the active profile, and leave glued values to the manifest.

nbval compares a cell's outputs as text. A glued value is compared by
``test_book.py`` against the committed manifest with the tolerance its cell
declares, so nbval must not compare it a second time, exactly: that would
turn float rounding on another CPU into a failure the tolerance was written
to allow. Every other output (printed tables, integers, strings, shapes) is
still compared by nbval.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "code"))

from tests.booktools import REFERENCE, is_glue_output, profile  # noqa: E402

collect_ignore_glob = [
    str(folder / "notebooks" / "*.ipynb")
    for folder in REFERENCE.iterdir()
    if folder.is_dir() and folder.name != profile()
] if REFERENCE.exists() else []


def _leave_glue_to_the_manifest():
    from nbval.plugin import IPyNbCell

    compare = IPyNbCell.compare_outputs
    if getattr(compare, "leaves_glue_to_the_manifest", False):
        return

    def compare_outputs(self, test, ref, skip_compare=None):
        return compare(self, [o for o in test if not is_glue_output(o)],
                       [o for o in ref if not is_glue_output(o)], skip_compare)

    compare_outputs.leaves_glue_to_the_manifest = True
    IPyNbCell.compare_outputs = compare_outputs


_leave_glue_to_the_manifest()
