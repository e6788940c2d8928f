"""The fingerprints chapter: short trainings of every kind of run, on two kernel sets, and how far a
small change of the recipe moves them."""

from __future__ import annotations

from .. import fingerprint
from ..evidence import Evidence

FINGERPRINT = ("a short training, the same on every CPU up to rounding: the bound is more than ten times "
               "the largest difference measured between PyTorch's native and generic CPU kernels")
SMALL = ("how far a small change of the recipe moves a fingerprint, in bounds; rounding moves it by a "
         "fraction of one")


def measure(budget, ours: dict, other: dict, moved: dict) -> Evidence:
    """The chapter's evidence.

    ``ours`` and ``other``: :func:`vitbias.fingerprint.fingerprints` on this
    build's kernels and on the other set (kind -> entry -> value); ``moved``:
    ``(kind, change) -> `` how far the change moves the kind's fingerprint, in
    bounds, for the changes ``"weight decay x 0.8"`` and ``"learning rate x 0.95"``
    of the kinds ``"cnn"`` and ``"vit"``.
    """
    wanted = {(kind, change) for kind in ("cnn", "vit")
              for change in ("weight decay x 0.8", "learning rate x 0.95")}
    if not wanted <= set(moved):
        raise ValueError(f"moved must hold {sorted(wanted)}, got {sorted(moved)}")
    found = Evidence("fingerprints")
    for kind, values in ours.items():
        for entry, value in values.items():
            found.number(f"fp_{kind}_{entry}", value, rel=0.0, abs=fingerprint.BOUND, why=FINGERPRINT)
    found.number("fp_n_kinds", len(ours))
    # The longest step budget of any run: the shared cap, or a model's own under which it fits its set.
    found.number("fp_chapter_max_steps",
                 max(budget.steps(budget.train_sizes[-1], model) for model in (None, "cnn", "vit")))
    found.number("fp_train_size", fingerprint.TRAIN_SIZE)
    found.number("fp_steps_batchnorm", fingerprint.STEPS["batchnorm"])
    found.number("fp_steps_plain", fingerprint.STEPS["plain"])
    found.number("fp_n_logits", fingerprint.LOGITS)
    found.number("fp_test_images", fingerprint.TEST_IMAGES)
    found.number("fp_bound", fingerprint.BOUND)
    found.rounding("fp_kernel_gap", fingerprint.largest_difference(ours, other), fingerprint.BOUND,
                   why="the same short trainings on the two sets of CPU kernels: rounding only")
    found.number("fp_wd_cnn_bounds", moved["cnn", "weight decay x 0.8"], rel=0.2, why=SMALL)
    found.number("fp_wd_vit_bounds", moved["vit", "weight decay x 0.8"], rel=0.2, why=SMALL)
    found.number("fp_lr_min_bounds", min(moved["cnn", "learning rate x 0.95"],
                                         moved["vit", "learning rate x 0.95"]), rel=0.2, why=SMALL)
    found.claim("every change moves a fingerprint by more than twice the bound", min(moved.values()) > 2)
    return found
