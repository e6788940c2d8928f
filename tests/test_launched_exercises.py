"""The exercise page and the lab as a reader launches them.

The exercise page shows each reference solution folded; the notebook that
``make notebooks`` writes from it carries the exercises' stubs instead, no
line of any solution, and ends in the grader, which runs in a fresh
environment that has only the published wheel. The lab is written too, and
its first cell installs everything its cells import.
"""

from __future__ import annotations

import ast
import shutil

import jupytext
import nbformat
import pytest

from exercises import EXERCISES
from tests.test_notebooks import KERNEL, fresh, run_in  # noqa: F401  (fresh is a fixture)
from tools import notebooks

PAGE = notebooks.ROOT / "book" / "exercises.md"
LAB = notebooks.ROOT / "book" / "lab.md"


def tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def solution_lines(name: str) -> list[str]:
    """The statements of a reference solution's body: lines a stub never holds."""
    source = notebooks.solution_source(name)
    lines = [line.strip() for line in source.splitlines()]
    return [line for line in lines if len(line) > 12 and not line.startswith(("def ", '"""', "#"))]


def test_the_page_shows_every_reference_solution_once_folded():
    cells = [cell for cell in jupytext.read(PAGE).cells if notebooks.SOLUTION_TAG in tags(cell)]
    shown = [(name, cell) for cell in cells for name in notebooks.defined_exercises(cell.source)]
    assert [name for name, _ in shown] == list(EXERCISES)
    for name, cell in shown:
        assert "hide-input" in tags(cell), f"the solution of {name} is not folded"
        assert cell.source == notebooks.solution_source(name), (
            f"the page's solution of {name} is not exercises/solutions/{name}.py")


def test_plain_exercise_markdown_numbers_the_exercise_and_folds_its_hint_in_details():
    source = ("## 3. A title\n\n````{exercise}\n:label: ex-a\n\nWrite `f`.\n\n"
              ":::{admonition} Hint\n:class: tip dropdown\nUse $x$.\n:::\n````\n\n"
              "````{solution-start} ex-a\n:class: dropdown\n````")
    plain = notebooks.plain_exercise_markdown(source, iter([3]))
    assert plain == ("## 3. A title\n\n**Exercise 3.**\n\nWrite `f`.\n\n"
                     "<details>\n<summary><b>Hint</b></summary>\n\nUse $x$.\n\n</details>")


def test_plain_exercise_markdown_keeps_an_open_admonition_readable_and_other_directives_as_they_are():
    source = ("````{exercise}\n:label: ex-b\n:nonumber:\n\nWrite `g`.\n\n"
              ":::{admonition} Note\n:class: note\nA remark.\n:::\n````\n\n"
              ":::{admonition} Outside\n:class: tip dropdown\nLeft alone.\n:::")
    plain = notebooks.plain_exercise_markdown(source, iter([]))
    assert plain == ("**Exercise.**\n\nWrite `g`.\n\n**Note.**\n\nA remark.\n\n"
                     ":::{admonition} Outside\n:class: tip dropdown\nLeft alone.\n:::")


def test_plain_exercises_numbers_across_cells_drops_emptied_cells_and_leaves_the_rest_alone():
    nb = nbformat.v4.new_notebook()
    exercise = ("````{{exercise}}\n:label: ex-{0}\n\nStatement {0}.\n````\n\n"
                "````{{solution-start}} ex-{0}\n:class: dropdown\n````")
    other = ":::{admonition} Hint\n:class: tip dropdown\nA chapter's own admonition.\n:::\n\n\n\nText."
    nb.cells = [nbformat.v4.new_markdown_cell(exercise.format("a")),
                nbformat.v4.new_code_cell("x = 1"),
                nbformat.v4.new_markdown_cell("````{solution-end}\n````"),
                nbformat.v4.new_markdown_cell(exercise.format("b")),
                nbformat.v4.new_code_cell("y = 2"),
                nbformat.v4.new_markdown_cell("````{solution-end}\n````\n\n## Next"),
                nbformat.v4.new_markdown_cell(other)]
    assert notebooks.plain_exercises(nb) == 2
    assert [cell.source for cell in nb.cells] == ["**Exercise 1.**\n\nStatement a.", "x = 1",
                                                  "**Exercise 2.**\n\nStatement b.", "y = 2", "## Next", other]


def test_the_launched_notebook_carries_the_stubs_no_solution_and_ends_in_the_grader(tmp_path):
    path = notebooks.convert(PAGE, tmp_path)
    nb = nbformat.read(path, as_version=4)
    text = path.read_text()
    assert not any(notebooks.SOLUTION_TAG in tags(cell) for cell in nb.cells)
    for name in EXERCISES:
        leaked = [line for line in solution_lines(name) if line in text]
        assert not leaked, f"the notebook holds lines of the solution of {name}: {leaked}"
    assert solution_lines("grid_local_mask")  # the check above has lines to look for
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    defined = [name for cell in code for name in notebooks.defined_exercises(cell.source)]
    assert defined == list(EXERCISES)
    for name in EXERCISES:
        assert sum(notebooks.stub_source(name) in cell.source for cell in code) == 1, name
    last = nb.cells[-1]
    assert last.cell_type == "code" and notebooks.GRADER_TAG in tags(last)
    assert last.source.strip() == "grade(globals())"
    assert "exercises.solutions" not in text


def test_strip_solutions_puts_the_stub_in_place_and_drops_the_other_solution_cells():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("statement"),
                nbformat.v4.new_code_cell("def helper():\n    return 1\n\n\ndef block_macs(tokens, d, mlp_ratio=4.0):\n"
                                          "    return helper(), 2\n", metadata={"tags": ["hide-input", "solution"]}),
                nbformat.v4.new_code_cell("assert block_macs(1, 1) == (1, 2)", metadata={"tags": ["solution"]}),
                nbformat.v4.new_code_cell("grade(globals())", metadata={"tags": ["grader"]})]
    assert notebooks.strip_solutions(nb) == 1
    assert len(nb.cells) == 3
    stub = nb.cells[1]
    assert notebooks.stub_source("block_macs") in stub.source and "helper" not in stub.source
    assert "raise NotImplementedError" in stub.source and tags(stub) == ["exercise"]
    assert nb.cells[-1].source == "grade(globals())"


@pytest.mark.parametrize("order", ["grader not last", "no grader"])
def test_strip_solutions_refuses_a_notebook_that_does_not_end_in_its_grader(order):
    solution = nbformat.v4.new_code_cell("def grid_local_mask(H_p, W_p, radius, n_prefix=1):\n    return None",
                                         metadata={"tags": ["solution"]})
    grader = nbformat.v4.new_code_cell("grade(globals())", metadata={"tags": ["grader"]})
    nb = nbformat.v4.new_notebook()
    nb.cells = [solution, grader, nbformat.v4.new_code_cell("1 + 1")] if order == "grader not last" else [solution]
    with pytest.raises(ValueError, match="must end in a cell tagged 'grader'"):
        notebooks.strip_solutions(nb)


def test_a_notebook_without_solutions_is_left_alone():
    nb = jupytext.read(LAB)
    before = [cell.source for cell in nb.cells]
    assert notebooks.strip_solutions(nb) == 0
    assert [cell.source for cell in nb.cells] == before


def execute(venv, notebook, work, executed):
    runner = (
        "import nbformat\n"
        "from nbclient import NotebookClient\n"
        f"nb = nbformat.read({str(notebook)!r}, as_version=4)\n"
        f"NotebookClient(nb, kernel_name={KERNEL!r}, timeout=600,\n"
        f"               resources={{'metadata': {{'path': {str(work)!r}}}}}).execute()\n"
        f"nbformat.write(nb, {str(executed)!r})\n"
    )
    return run_in(venv, runner, cwd=work)


def test_the_launched_exercises_install_the_grader_and_grade_the_stubs(fresh, tmp_path):  # noqa: F811
    work = tmp_path / "work"
    notebook = notebooks.convert(PAGE, work)
    wheel = notebooks.build_wheel(tmp_path / "wheel")
    shutil.copy2(wheel, work / wheel.name)
    executed = work / "executed.ipynb"
    done = execute(fresh, notebook, work, executed)
    assert done.returncode == 0, f"the exercise notebook failed in the fresh environment:\n{done.stderr[-6000:]}"
    report = "".join(o.get("text", "") for o in nbformat.read(executed, as_version=4).cells[-1].outputs)
    for name in EXERCISES:
        assert f"{name}: FAIL" in report and "not implemented yet" in report, report
    assert f"0 of {len(EXERCISES)} exercises pass" in report, report
    solutions = run_in(fresh, "import exercises.solutions")
    assert solutions.returncode != 0, "the wheel ships the reference solutions"


def test_make_notebooks_writes_the_lab_and_its_first_cell_installs_what_it_imports(fresh, tmp_path):  # noqa: F811
    assert LAB in notebooks.notebook_chapters()
    work = tmp_path / "work"
    nb = nbformat.read(notebooks.convert(LAB, work), as_version=4)
    assert tags(nb.cells[0]) == [notebooks.INSTALL_TAG]
    wheel = notebooks.build_wheel(tmp_path / "wheel")
    shutil.copy2(wheel, work / wheel.name)
    imports = [ast.get_source_segment(cell.source, node) for cell in nb.cells[1:] if cell.cell_type == "code"
               for node in ast.parse(cell.source).body if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert any("vitbias" in line for line in imports) and any("lab" in line for line in imports)
    missing = run_in(fresh, "\n".join(imports), cwd=work)
    assert missing.returncode != 0  # before the install cell, vitbias is missing
    installed = run_in(fresh, nb.cells[0].source + "\n" + "\n".join(imports), cwd=work)
    assert installed.returncode == 0, f"the lab's imports fail after its install cell:\n{installed.stderr[-4000:]}"


def test_the_exercise_page_is_executed_again_when_an_exercise_or_the_grader_changes(tmp_path, monkeypatch):
    from tools import booktools

    assert booktools.imports_exercises(PAGE) and not booktools.imports_exercises(LAB)
    copy = tmp_path / "exercises"
    shutil.copytree(booktools.EXERCISES, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(booktools, "EXERCISES", copy)
    before = {path: booktools.chapter_key(path) for path in (PAGE, LAB)}
    (copy / "tests" / "test_grade.py").write_text("# the grader's own tests do not change the page\n")
    assert booktools.chapter_key(PAGE) == before[PAGE]
    with (copy / "checks.py").open("a") as checks:
        checks.write("\n# a change to the grader\n")
    assert booktools.chapter_key(PAGE) != before[PAGE]
    assert booktools.chapter_key(LAB) == before[LAB]
