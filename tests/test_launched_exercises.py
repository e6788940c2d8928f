"""The exercise page and the lab as a reader launches them.

The exercise page shows each exercise in sphinx-exercise's ``{exercise}``
directive and each reference solution folded, in a gated solution
(``{solution-start}`` with ``:class: dropdown``, ``{solution-end}``); the
notebook that ``make notebooks`` writes from it carries the exercises' stubs
instead, no line of any solution, no MyST directive fence, and ends in the
grader, which runs in a fresh environment that has only the published wheel.
The lab is written too, and its first cell installs everything its cells import.
"""

from __future__ import annotations

import ast
import re
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


# A directive's opening fence in a markdown cell (``{exercise}``, ``{solution-start}``, ``:::{admonition}``).
DIRECTIVE_FENCE = re.compile(r"^\s*(`{3,}|:{3,})\s*\{", re.M)


def exercise_labels(page_cells) -> list[str]:
    """The ``:label:`` of every ``{exercise}`` of the page, in order."""
    text = "\n".join(cell.source for cell in page_cells if cell.cell_type == "markdown")
    return re.findall(r"^`{3,}\{exercise\}\n:label: (\S+)$", text, re.M)


def gated_solution(page_cells, k) -> str | None:
    """The label of the exercise whose folded gated solution holds cell ``k`` alone, else None."""
    before, after = page_cells[k - 1], page_cells[k + 1]
    if before.cell_type != "markdown" or after.cell_type != "markdown":
        return None
    start = re.search(r"(?:^|\n)(`{3,})\{solution-start\} (\S+)\n:class: dropdown\n\1$", before.source.rstrip())
    end = re.match(r"^(`{3,})\{solution-end\}\n\1$", after.source.split("\n\n", 1)[0])
    return start.group(2) if start and end else None


def test_the_page_shows_every_reference_solution_once_folded():
    page_cells = jupytext.read(PAGE).cells
    labels = exercise_labels(page_cells)
    shown = [(name, k) for k, cell in enumerate(page_cells) if notebooks.SOLUTION_TAG in tags(cell)
             for name in notebooks.defined_exercises(cell.source)]
    assert [name for name, _ in shown] == list(EXERCISES)
    assert len(labels) == len(set(labels)) == len(EXERCISES)
    for (name, k), label in zip(shown, labels):
        assert gated_solution(page_cells, k) == label, (
            f"the solution of {name} is not alone in a folded solution of exercise {label}")
        assert page_cells[k].source == notebooks.solution_source(name), (
            f"the page's solution of {name} is not exercises/solutions/{name}.py")


def test_every_exercise_of_the_page_keeps_its_numbered_section_and_folded_hint():
    page_cells = jupytext.read(PAGE).cells
    text = "\n".join(cell.source for cell in page_cells if cell.cell_type == "markdown")
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    numbered = [section for section in sections if re.match(r"\d+\. ", section)]
    assert [int(section.split(".", 1)[0]) for section in numbered] == list(range(1, len(EXERCISES) + 1))
    for section in numbered:
        assert len(re.findall(r"^`{3,}\{exercise\}$", section, re.M)) == 1, f"section {section[:40]!r}"
    bodies = re.findall(r"^(`{3,})\{exercise\}\n(.*?)^\1$", text, re.M | re.S)
    assert len(bodies) == len(EXERCISES)
    for _, body in bodies:
        assert ":::{admonition} Hint\n:class: tip dropdown\n" in body, body[:200]


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


def test_the_launched_notebook_shows_no_directive_fence_and_numbers_each_exercise_before_its_stub(tmp_path):
    nb = nbformat.read(notebooks.convert(PAGE, tmp_path), as_version=4)
    markdown = [cell.source for cell in nb.cells if cell.cell_type == "markdown"]
    assert not [fence for source in markdown for fence in DIRECTIVE_FENCE.findall(source)]
    assert not any(word in source for source in markdown
                   for word in ("{exercise}", "{solution-start}", "{solution-end}", "{admonition}", ":label:"))
    numbered = [(int(number), k) for k, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
                for number in re.findall(r"^\*\*Exercise (\d+)\.\*\*$", cell.source, re.M)]
    assert [number for number, _ in numbered] == list(range(1, len(EXERCISES) + 1))
    for (number, k), name in zip(numbered, EXERCISES):
        stub = next(cell for cell in nb.cells[k + 1:] if cell.cell_type == "code" and "exercise" in tags(cell))
        assert notebooks.defined_exercises(stub.source) == [name], f"exercise {number} is not followed by its stub"
    hints = [source for source in markdown if "<summary><b>Hint</b></summary>" in source]
    assert len(hints) == len(EXERCISES)
    assert all(source.count("<details>") == source.count("</details>") == 1 for source in hints)
    assert "## 1. The equivariance error" in markdown[1] and "keep the smallest gap." in markdown[1]


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
