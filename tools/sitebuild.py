"""The book's HTML without executing a chapter: pages with no cell outputs, in seconds.

What the site is made of (launch buttons, scripts, stylesheets, the
bibliography) does not depend on cell outputs, so the tests of the site build
it this way into a folder of their own, with the book's own ``_config.yml``
less execution. Warnings are not errors here: with no outputs, every glued
number is missing.

    python -m tools.sitebuild DEST [--repository URL] [--branch NAME]

writes ``DEST/_build/html`` and prints its path.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
VARIABLES = ("BOOK_REPOSITORY_URL", "BOOK_BRANCH")


def config_without_execution(dest: Path) -> Path:
    """``dest/_config.yml``: the book's configuration, chapters not executed."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["execute"] = {**config.get("execute", {}), "execute_notebooks": "off"}
    # Paths in the configuration are read relative to the file: make them absolute.
    sphinx = config.setdefault("sphinx", {})
    sphinx["local_extensions"] = {name: str((ROOT / path).resolve())
                                  for name, path in sphinx.get("local_extensions", {}).items()}
    config["bibtex_bibfiles"] = [str(ROOT / path) for path in config.get("bibtex_bibfiles", [])]
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / "_config.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def build(dest: Path, repository: str = "", branch: str = "", timeout: float = 900) -> Path:
    """Build the book into ``dest/_build/html`` without executing it; returns that folder.

    ``repository`` and ``branch`` become ``BOOK_REPOSITORY_URL`` and
    ``BOOK_BRANCH`` for this build; empty means unset, whatever the caller's
    environment holds.
    """
    dest = Path(dest).resolve()
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    if repository:
        env["BOOK_REPOSITORY_URL"] = repository
    if branch:
        env["BOOK_BRANCH"] = branch
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    command = [str(jupyter_book), "build", str(ROOT), "--builder", "html", "--all", "-q",
               "--config", str(config_without_execution(dest)), "--path-output", str(dest)]
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    html = dest / "_build" / "html"
    if done.returncode != 0 or not (html / "index.html").is_file():
        raise RuntimeError(f"the build without execution failed ({' '.join(command)}):\n"
                           f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}")
    return html


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--repository", default="", help="BOOK_REPOSITORY_URL for this build")
    parser.add_argument("--branch", default="", help="BOOK_BRANCH for this build")
    args = parser.parse_args(argv)
    print(build(args.dest, args.repository, args.branch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
