"""Test set-up: import vitbias from this checkout, collect only the reference
notebooks of the active profile, and compare glued values in one way only.

nbval compares a cell's outputs as text. A glued value is instead compared
with the committed manifest, within the tolerance its cell declared, exactly
as ``test_book.py`` compares the build's: text comparison would turn float
rounding on another CPU into a failure that the tolerance was written to
allow. Every other output (printed tables, integers, strings, shapes) is
still compared by nbval as text. Since ``make test`` runs nbval on other
PyTorch kernels than the build, the glued values are checked on two numeric
paths.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "code"))

from tools.booktools import REFERENCE, drift_of_outputs, is_glue_output  # noqa: E402
from vitbias.profile import current_profile  # noqa: E402

collect_ignore_glob = [
    str(folder / "notebooks" / "*.ipynb")
    for folder in REFERENCE.iterdir()
    if folder.is_dir() and folder.name != current_profile()
] if REFERENCE.exists() else []


def _compare_glue_with_the_manifest():
    from nbval.plugin import IPyNbCell

    compare = IPyNbCell.compare_outputs
    if getattr(compare, "compares_glue_with_the_manifest", False):
        return

    def compare_outputs(self, test, ref, skip_compare=None):
        same = compare(self, [o for o in test if not is_glue_output(o)],
                       [o for o in ref if not is_glue_output(o)], skip_compare)
        drifted = drift_of_outputs(Path(str(self.parent.path)).stem, test)
        if drifted:
            self.comparison_traceback = getattr(self, "comparison_traceback", []) + drifted
        return same and not drifted

    compare_outputs.compares_glue_with_the_manifest = True
    IPyNbCell.compare_outputs = compare_outputs


_compare_glue_with_the_manifest()
