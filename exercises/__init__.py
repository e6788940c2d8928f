"""The reader's exercises: one file per function, and a grader that checks them.

Each file holds one function of the book with its signature, its
specification in the docstring and ``raise NotImplementedError`` for a body.
Write your version (in that file, a copy, or a notebook), then check it::

    python -m exercises.grade my_solutions.py                 # every exercise the file defines
    python -m exercises.grade my_solutions.py attention_rollout grid_local_mask

or from Python (a notebook: ``grade(globals())``)::

    from exercises.grade import grade
    grade({"attention_rollout": attention_rollout})

The grader compares your function with the book's (``vitbias``) on cases
drawn afresh at every run, plus fixed edge cases, and prints the seed so that
a failure can be replayed with ``--seed``.
"""

# The exercises in the book's order: the source's six, the lesson's three, two derivations and a prediction.
EXERCISES = (
    "equivariance_error",
    "which_shifts_commute",
    "mean_attention_distance",
    "attention_rollout",
    "conv_via_attention",
    "grid_local_mask",
    "embed_linear",
    "block_macs",
    "parameter_counts",
    "toy_crossing_rows",
    "allowed_pairs",
    "ladder_winners",
)
