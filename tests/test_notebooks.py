"""The chapters as notebooks run where they land.

``make notebooks`` writes one notebook per chapter whose first cell installs
``vitbias`` (and myst-nb) when they are missing. Here one light chapter is
converted and run as a reader would run it: in a fresh virtual environment
that cannot import ``vitbias``, next to the wheel that the site publishes.
The fresh environment sees the build environment's other packages (PyTorch,
NumPy, ...) through a view of its site-packages that leaves ``vitbias`` out,
so nothing is downloaded; its own site-packages receives the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest

from tools import booksite, notebooks

ROOT = notebooks.ROOT
# A chapter that trains nothing and runs in seconds (NumPy least squares and one figure).
CHAPTER = ROOT / "book" / "bias-toy.md"
KERNEL = "vitbias-fresh"


def clean_environment(venv: Path) -> dict[str, str]:
    """The environment of a reader's machine: no PYTHONPATH to this checkout's code/."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "JUPYTER_PATH", "BOOK_REPOSITORY_URL")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_NO_INDEX"] = "1"  # everything the install cell needs is here: it must download nothing
    return env


def is_vitbias(name: str) -> bool:
    name = name.lower()
    return name.startswith(("vitbias", "__editable__.vitbias", "__editable___vitbias"))


@pytest.fixture
def fresh(tmp_path_factory):
    """A new virtual environment without vitbias, with a kernel of its own (for each test)."""
    tmp = tmp_path_factory.mktemp("fresh")
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    view = tmp / "view"
    view.mkdir()
    for entry in site.iterdir():
        if not is_vitbias(entry.name) and entry.suffix != ".pth":
            (view / entry.name).symlink_to(entry)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    fresh_site = Path(subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, env=clean_environment(venv)).stdout.strip())
    (fresh_site / "build-environment.pth").write_text(f"{view}\n")
    kernel = venv / "share" / "jupyter" / "kernels" / KERNEL
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "fresh environment", "language": "python"}))
    return venv


def run_in(venv: Path, code: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([venv / "bin" / "python", "-c", code], capture_output=True, text=True,
                          env=clean_environment(venv), cwd=cwd or venv, timeout=600)


def test_the_fresh_environment_cannot_import_vitbias_but_has_the_rest(fresh):
    missing = run_in(fresh, "import vitbias")
    assert missing.returncode != 0 and "No module named 'vitbias'" in missing.stderr, (
        "the fresh environment imports vitbias before the install cell ran:\n" + missing.stdout + missing.stderr)
    present = run_in(fresh, "import numpy, matplotlib, pip, ipykernel, myst_nb")
    assert present.returncode == 0, present.stderr


def test_the_install_cell_installs_the_wheel_and_the_chapter_runs(fresh, tmp_path):
    work = tmp_path / "work"
    notebook = notebooks.convert(CHAPTER, work)
    wheel = notebooks.build_wheel(tmp_path / "wheel")
    shutil.copy2(wheel, work / wheel.name)
    nb = nbformat.read(notebook, as_version=4)
    assert nb.cells[0].metadata.get("tags") == [notebooks.INSTALL_TAG]
    assert wheel.name in nb.cells[0].source

    executed = work / "executed.ipynb"
    runner = (
        "import nbformat, sys\n"
        "from nbclient import NotebookClient\n"
        f"nb = nbformat.read({str(notebook)!r}, as_version=4)\n"
        f"NotebookClient(nb, kernel_name={KERNEL!r}, timeout=600,\n"
        f"               resources={{'metadata': {{'path': {str(work)!r}}}}}).execute()\n"
        f"nbformat.write(nb, {str(executed)!r})\n"
    )
    done = run_in(fresh, runner, cwd=work)
    assert done.returncode == 0, f"{notebook.name} failed in the fresh environment:\n{done.stderr[-6000:]}"

    installed = run_in(fresh, "import vitbias, os; print(os.path.realpath(vitbias.__file__))")
    assert installed.returncode == 0, installed.stderr
    assert Path(installed.stdout.strip()).is_relative_to(fresh.resolve()), (
        f"vitbias was imported from {installed.stdout.strip()}, not from the wheel installed in {fresh}")
    result = nbformat.read(executed, as_version=4)
    errors = [o for c in result.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    printed = "".join(o.get("text", "") for c in result.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "at x = 3 the line predicts" in printed


def test_without_the_wheel_the_install_cell_says_where_to_get_it(fresh, tmp_path):
    cell = notebooks.install_source()
    done = run_in(fresh, cell, cwd=tmp_path)
    assert done.returncode != 0
    assert f"{notebooks.wheel_name()} is not in" in done.stderr and "_static/" in done.stderr, done.stderr


def test_with_a_repository_the_install_cell_installs_from_it():
    cell = notebooks.install_source("https://github.com/placeholder-owner/placeholder-book", "pages")
    assert '"vitbias @ git+https://github.com/placeholder-owner/placeholder-book@pages"' in cell
    assert ".whl" not in cell
    compile(cell, "install-cell", "exec")


def test_the_install_cell_asks_only_for_what_colab_lacks():
    for cell in (notebooks.install_source(), notebooks.install_source("https://github.com/o/r", "main")):
        needed = cell.split("needed = ", 1)[1].split("\n", 1)[0]
        myst_nb = notebooks.pinned("myst-nb")
        assert needed == '{"vitbias": VITBIAS, "myst_nb": "' + myst_nb + '"}', needed
        assert "find_spec(module) is None" in cell  # each only when it does not import


def test_make_notebooks_writes_one_notebook_per_chapter_with_the_chapters_cells(tmp_path):
    import jupytext

    for chapter in notebooks.notebook_chapters():
        written = nbformat.read(notebooks.convert(chapter, tmp_path), as_version=4)
        nbformat.validate(written)
        source = jupytext.read(chapter)
        notebooks.strip_solutions(source)  # the exercise page's solutions become stubs
        notebooks.plain_exercises(source)  # and its exercise markup plain Markdown
        assert [c.source for c in written.cells[1:]] == [c.source for c in source.cells], chapter.name
        assert written.metadata["kernelspec"]["name"] == "python3"
    assert sorted(p.stem for p in tmp_path.glob("*.ipynb")) == sorted(
        c.stem for c in notebooks.notebook_chapters())


def test_binder_installs_the_pinned_requirements_and_the_package():
    requirements = (ROOT / "binder" / "requirements.txt").read_text().split()
    assert "../requirements.txt" in requirements, "binder/requirements.txt must install the pinned requirements"
    post_build = ROOT / "binder" / "postBuild"
    assert os.access(post_build, os.X_OK), "binder/postBuild must be executable"
    assert "pip install --no-deps ." in post_build.read_text()
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    assert runtime == "python-{}.{}".format(*sys.version_info[:2]), "Binder's Python is not the build's"
    assert booksite.NOTEBOOKS == "notebooks"
