"""Collect only the reference notebooks of the active profile."""

from tests.booktools import REFERENCE, profile

collect_ignore_glob = [
    str(folder / "notebooks" / "*.ipynb")
    for folder in REFERENCE.iterdir()
    if folder.is_dir() and folder.name != profile()
] if REFERENCE.exists() else []
