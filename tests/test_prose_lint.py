"""The prose lint itself: it must catch what it is for, and only that."""

from tests.prose_lint import typed_numbers

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


def test_lint_flags_counts_typed_as_words_or_tied_to_a_unit():
    page = ("A 100-step attack on JFT-4B (about four billion images).\n"
            "DeiT trained for hundreds of epochs, at grid distance 8 or more.\n"
            "A 3 by 3 kernel, ViT-B/16, {glue:text}`steps`-step runs and a few thousand images pass.\n")
    found = [(line, number) for line, number, _ in typed_numbers(page)]
    assert found == [(1, "100-step"), (1, "four billion"), (2, "hundreds of epochs"), (2, "8 or more")]
