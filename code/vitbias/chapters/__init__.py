"""The chapters' analyses: one module per chapter, named after its page.

Each module has one public function per section of its page, which adds that
section's glued numbers, with their tolerances, and its named claims to a
:class:`vitbias.evidence.Evidence`, taking what the section's visible cells
computed; ``measure`` composes the sections for the tests. The page makes the
evidence at the top, hands each section its result in a hidden cell right
after the cell that computed it, asserts the section's claims there, one line
each, next to the sentences they back, and glues the whole evidence in one cell
(:func:`vitbias.book.glue_evidence`). Each experiment so runs once, in the cell
the reader sees. Being code, the analysis is unit-tested on made-up inputs
(``tests/test_chapters_<name>.py``) where a hidden cell was not.

Each chapter that trains also plans its runs here: ``planned_runs(budget)``
returns a dict from the key the page indexes its runs by to the run's
configuration (:func:`vitbias.runs.experiment`; the pieces several chapters
share, the worlds, routes and grids, are :mod:`vitbias.plan`'s). Runs shared
between chapters (the priors chapter's plain ViT is the crossover chapter's)
have the same configuration, hence the same cache entry, and are trained once.
A chapter whose bands come from its own runs groups them by kind of number in
``noise_groups(budget)``, which ``python -m tools.booktools noise`` measures
(:func:`vitbias.noise.measure`).
"""

from __future__ import annotations

import importlib

# The chapters that train runs, and those of them whose one-run sds are measured from their own runs.
PLANNED = ("crossover", "locality", "priors", "robustness", "symmetry", "lab")
NOISY = ("crossover", "symmetry", "priors", "robustness")


def _module(chapter: str, among: tuple[str, ...], what: str):
    if chapter not in among:
        raise ValueError(f"no {what} for {chapter!r}: expected one of {among}")
    return importlib.import_module(f"{__name__}.{chapter}")


def chapter_runs(chapter: str, budget) -> dict:
    """The runs of ``chapter`` (one of :data:`PLANNED`): its module's ``planned_runs(budget)``."""
    return _module(chapter, PLANNED, "runs are planned").planned_runs(budget)


def noise_groups(chapter: str, budget) -> dict[str, dict]:
    """``chapter``'s runs (one of :data:`NOISY`) grouped by kind of number, each group the seeds of one
    configuration: its module's ``noise_groups(budget)``."""
    return _module(chapter, NOISY, "noise measurement").noise_groups(budget)
