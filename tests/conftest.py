"""Test set-up: import vitbias from this checkout, and collect only the
reference notebooks of the active profile."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "code"))

from tests.booktools import REFERENCE, profile  # noqa: E402

collect_ignore_glob = [
    str(folder / "notebooks" / "*.ipynb")
    for folder in REFERENCE.iterdir()
    if folder.is_dir() and folder.name != profile()
] if REFERENCE.exists() else []
