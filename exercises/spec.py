"""What a check is made of: the cases, known mistakes and comparisons of one exercise.

:mod:`exercises.checks` builds one :class:`Check` per exercise from these
pieces and :mod:`exercises.grade` runs them: the grader imports the checks,
and the checks import only this module, so the two form no import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Case:
    """One call of an exercise: its arguments, and how the report shows them.

    ``shown`` maps each input's name to a short text (shapes and parameters,
    not the numbers), in the order the report lists them.
    """

    label: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    shown: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Mistake:
    """A known wrong version of an exercise and the hint a reader who made it needs."""

    function: Callable
    hint: str


@dataclass(frozen=True)
class Check:
    """How one exercise is graded.

    ``cases(rng)`` yields the cases (random ones drawn from ``rng``, then the
    fixed edge cases); ``compare(found, expected)`` returns ``None`` when the
    reader's value matches the reference's, else a sentence saying what
    differs; ``explain(found, expected)`` may return a hint of its own
    (before the known mistakes are tried); ``hint`` is the fallback.
    """

    reference: Callable
    cases: Callable[[np.random.Generator], Iterable[Case]]
    compare: Callable[[object, object], str | None]
    hint: str
    mistakes: tuple[Mistake, ...] = ()
    explain: Callable[[object, object], str | None] | None = None


def as_array(value) -> np.ndarray:
    """A NumPy array from a NumPy array, a torch tensor or a number (a list, a tuple)."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)
