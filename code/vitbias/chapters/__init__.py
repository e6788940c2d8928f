"""The chapters' analyses: one module per chapter, named after its page.

Each module's ``measure`` computes every number its page's prose glues, with
its tolerance, and the claims the page asserts, into a
:class:`vitbias.evidence.Evidence`. The page keeps its prose, its teaching
cells and figures, one cell that glues the evidence
(:func:`vitbias.book.glue_evidence`), and one-line asserts of the claims next
to the sentences they back. Being code, the analysis is unit-tested on made-up
inputs (``tests/test_chapters_<name>.py``) where a hidden cell was not.
"""
