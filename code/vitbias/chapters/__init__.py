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
"""
