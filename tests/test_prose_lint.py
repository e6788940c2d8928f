"""The prose lint itself: it must catch what it is for, and only that."""

from tools.prose_lint import (
    CODE_LINE_LIMIT,
    joined_verdicts,
    lint,
    long_code_lines,
    short_answer_problems,
    typed_numbers,
)

PAGE = """---
kernelspec:
  name: python3
---
# A page

The value is {glue:text}`x:.2f` and the share {glue:text}`y:.1f` %.
Inline math $\\beta = 0.3$ and code `0.5` are not prose.

```{code-cell} ipython3
print(0.25)
```

$$
\\sigma = 0.5
$$

```{note}
A note typed 0.79 by hand.
```

A wrong sentence with 12.5 rows and 40 % of the cost.
ViT-B/16 has 12 layers; see {cite}`paper2021`.
"""


def test_lint_flags_typed_decimals_and_percentages_with_their_lines():
    found = [(line, number) for line, number, _ in typed_numbers(PAGE)]
    assert found == [(19, "0.79"), (22, "12.5"), (22, "40 %")]


def test_lint_ignores_glued_values_math_code_and_integers():
    clean = "\n".join(line for line in PAGE.split("\n") if "typed" not in line and "wrong" not in line)
    assert typed_numbers(clean) == []


def test_a_section_number_names_a_place_in_a_paper_and_is_not_a_typed_value():
    page = "As its section 4.1 says, and Section 4.5 too; but 4.1 points is a typed value.\n"
    assert [(line, number) for line, number, _ in typed_numbers(page)] == [(1, "4.1")]


def test_lint_flags_counts_typed_as_words_or_tied_to_a_unit():
    page = ("A 100-step attack on JFT-4B (about four billion images).\n"
            "DeiT trained for hundreds of epochs, at grid distance 8 or more.\n"
            "A 3 by 3 kernel, ViT-B/16, {glue:text}`steps`-step runs and a few thousand images pass.\n")
    found = [(line, number) for line, number, _ in typed_numbers(page)]
    assert found == [(1, "100-step"), (1, "four billion"), (2, "hundreds of epochs"), (2, "8 or more")]


LONG = "result = some_function(" + ", ".join(f"argument_{i}" for i in range(9)) + ")"
WRAPPED = ("result = some_function(\n    " + ", ".join(f"argument_{i}" for i in range(5)) + ",\n    "
           + ", ".join(f"argument_{i}" for i in range(5, 9)) + ")")


def page_with_cells(*cells: str) -> str:
    return "---\nkernelspec:\n  name: python3\n---\n# A page\n\n" + "\n\n".join(cells) + "\n"


def test_a_long_line_in_a_visible_code_cell_fails_with_its_line_and_length():
    assert len(LONG) > CODE_LINE_LIMIT
    page = page_with_cells(f"```{{code-cell}} ipython3\nimport numpy as np\n{LONG}\n```",
                           f"```{{code-cell}} ipython3\n:tags: [nbval-ignore-output]\n\n{LONG}\n```")
    assert long_code_lines(page) == [(9, len(LONG), LONG), (15, len(LONG), LONG)]


def test_a_long_line_fails_in_a_folded_cell_the_reader_can_open():
    page = page_with_cells(f"```{{code-cell}} ipython3\n:tags: [hide-input]\n\n{LONG}\n```")
    assert long_code_lines(page) == [(10, len(LONG), LONG)]


def test_a_long_line_passes_in_a_removed_cell_and_in_prose_and_wrapped_lines_pass():
    page = page_with_cells(f"```{{code-cell}} ipython3\n:tags: [remove-cell]\n{LONG}\n```",
                           f"```{{code-cell}} ipython3\n---\ntags: [remove-input]\nmystnb:\n  figure:\n"
                           f"    caption: A figure.\n---\n{LONG}\n```",
                           f"```{{code-cell}} ipython3\n{WRAPPED}\n```",
                           f"Prose may run as long as it likes: {LONG}.")
    assert long_code_lines(page) == []


def test_code_blocks_outside_cells_count_and_directives_are_read_inside(tmp_path):
    command = "python -m exercises.grade my_solutions.py" + " " * 40 + "# every exercise the file defines"
    page = page_with_cells(f"```bash\n{command}\n```",
                           f"````{{admonition}} A note\nProse, then code:\n\n```python\n{LONG}\n```\n````",
                           f"```{{list-table}} A table\n* - {LONG}\n```")
    assert [(line, length) for line, length, _ in long_code_lines(page)] == [(8, len(command)), (15, len(LONG))]
    path = tmp_path / "page.md"
    path.write_text(page)
    (first, second) = lint(path)
    assert f"page.md:8: code line of {len(command)} characters" in first and "page.md:15:" in second


def test_the_statement_of_an_exercise_and_its_hint_are_prose():
    page = page_with_cells("````{exercise}\n:label: ex-a\n\nA statement typed 0.79 by hand.\n\n"
                           ":::{admonition} Hint\n:class: tip dropdown\nA hint typed 40 % by hand.\n:::\n````",
                           "After the exercise, 12.5 rows.")
    found = [(line, number) for line, number, _ in typed_numbers(page)]
    assert found == [(10, "0.79"), (14, "40 %"), (18, "12.5")]


def gated_solution(classes: str, code: str) -> list[str]:
    start = "````{solution-start} ex-a\n" + (f":class: {classes}\n" if classes else "") + "````"
    return [start, f"```{{code-cell}} ipython3\n:tags: [solution]\n\n{code}\n```", "````{solution-end}\n````"]


def test_a_folded_solution_holds_the_narrower_boxs_width_and_an_open_one_or_code_after_it_the_pages():
    from tools.prose_lint import FOLDED_LINE_LIMIT

    fits_folded = "x = " + "1" * (FOLDED_LINE_LIMIT - 4)
    assert long_code_lines(page_with_cells(*gated_solution("dropdown", fits_folded))) == []
    folded = page_with_cells(*gated_solution("dropdown", fits_folded + "1"))
    assert [length for _, length, _ in long_code_lines(folded)] == [FOLDED_LINE_LIMIT + 1]
    assert len(LONG) > FOLDED_LINE_LIMIT
    opened = page_with_cells(*gated_solution("", LONG))
    assert [length for _, length, _ in long_code_lines(opened)] == [len(LONG)]
    after = page_with_cells(*gated_solution("dropdown", "x = 1"), f"```{{code-cell}} ipython3\n{LONG}\n```")
    assert [length for _, length, _ in long_code_lines(after)] == [len(LONG)]


SHORT = """---
kernelspec:
  name: python3
---
# A page

```{admonition} The short answer
:class: tip
**Why?** Because. The gap is {glue:text}`gap:.2f` ({ref}`sec-gap`).
```

```{code-cell} ipython3
print(1)
```
"""


def test_a_teaching_chapter_opens_with_a_short_answer_that_glues_a_number_and_links_to_it(tmp_path):
    page = tmp_path / "patches.md"
    page.write_text(SHORT)
    assert short_answer_problems(SHORT) == [] and lint(page) == []
    for broken, problem in ((SHORT.replace("{glue:text}`gap:.2f`", "large"), "glues no number"),
                            (SHORT.replace("{ref}`sec-gap`", "below"), "links"),
                            (SHORT.replace("The short answer", "In short"), "no admonition"),
                            ("# A page\n\n```{code-cell} ipython3\nx\n```\n" + SHORT.split("# A page")[1],
                             "no admonition")):
        page.write_text(broken)
        assert any(problem in line for line in lint(page)), broken
    other = tmp_path / "status.md"  # not a teaching chapter
    other.write_text("# Status\n")
    assert lint(other) == []


VERDICT_CELL = """```{code-cell} ipython3
glue_verdict("above_text", "none")
outcome = glue_compared(f"route_{slug}_text", a, b, more="above", less="below", same="level with")
glue("count", 3)
```
"""


def test_a_glued_verdict_after_or_before_a_colon_is_a_fragment_and_flagged_with_its_line():
    page = VERDICT_CELL + ("The routes above the plain ViT: {glue:text}`above_text`; below\n"
                           "it; {glue:text}`route_stem_text`. It is {glue:text}`route_gated_text`: so.\n"
                           "Counted: {glue:text}`count`, and it is {glue:text}`route_stem_text` the CNN.\n")
    assert joined_verdicts(page) == [(6, "above_text"), (7, "route_gated_text"), (7, "route_stem_text")]


def test_a_verdict_inside_a_whole_sentence_passes():
    page = VERDICT_CELL + "The stem is {glue:text}`route_stem_text` the plain ViT, so {glue:text}`above_text`.\n"
    assert joined_verdicts(page) == []


def test_the_seeds_spread_named_twice_in_one_sections_prose_is_reported_and_once_per_section_is_not():
    from tools.prose_lint import repeated_in_sections

    page = """<section id="a"><h1>Alpha</h1><p>Within the seeds’ spread.</p>
      <div class="cell"><pre>within the seeds' spread</pre><p>the seeds' spread</p></div>
      <section id="b"><h2>Beta#</h2><p>Within the seeds' spread, and</p><ul><li>again the seeds’ spread.</li></ul>
      </section><section id="c"><h2>Gamma</h2><p>The seeds' spread once.</p></section></section>"""
    assert repeated_in_sections(page) == [("Beta", 2)]
    assert repeated_in_sections(page, most=2) == []
