"""Numbers into prose: glue with a declared tolerance, and the build record.

Every number a reader sees in the prose goes through :func:`glue`. It stores
the value in the executed notebook (through ``myst_nb.glue``) together with
the tolerance the drift check applies to it:

- exact math: the default, 1e-9 relative;
- rounding noise (two float32 paths that should agree): a bound, with
  :func:`glue_rounding`;
- a Monte Carlo estimate or a trained accuracy: a band, given as ``rel`` or
  ``abs`` by the cell that computes it, with ``why``, the reason for its size;
- a sentence chosen by trained outcomes ("the CNN keeps more ..."): with
  :func:`glue_verdict`, shown and recorded but not compared, because another
  CPU trains other models, as new seeds would, and may land on the other side
  of a threshold while every number stays within its band.

The policy for each kind of number lives in :mod:`vitbias.evidence`, which
these functions apply: :func:`glue_trained` glues a mean over seeds with the
band :func:`band` (``BAND_SDS`` standard deviations of the mean, from one
run's measured standard deviation) and refuses a build whose seeds spread
wider than that measurement; :func:`glue_compared` glues the words a
comparison of two trained samples chooses by Welch's t test
(:func:`vitbias.scaling.resolved`); :func:`glue_equivalent` the words for an
equality a theorem guarantees, chosen by an equivalence test
(:func:`vitbias.scaling.equivalent`). A measured chapter computes all of its
numbers in :mod:`vitbias.chapters` into an :class:`~vitbias.evidence.Evidence`
and glues it in one cell with :func:`glue_evidence`.

Values are plain Python ``int``, ``float`` or ``str``: NumPy scalars are
converted (:func:`vitbias.evidence.plain`), because NumPy 2 scalars print as
``np.float64(...)`` and break both format specifications and notebook
comparisons.
"""

from __future__ import annotations

import json
import os
import platform

import numpy as np

from . import evidence as _evidence
from .evidence import (  # noqa: F401
    BAND_SDS,
    EXACT,
    NUMBER_WORDS,
    SPREAD_FALSE_ALARM,
    TOLERANCE_SUFFIX,
    VERDICT_WHY,
    Evidence,
    band,
    compare,
    compared_numbers,
    counted,
    plain,
    sentence,
    spread_limit,
)

# While the tests re-execute a reference notebook, its glued values go to the file this
# variable names, so that nbval compares printed outputs as text and the tests compare
# the glued values with the manifest, within their tolerances (tests/conftest.py).
GLUE_LOG_VARIABLE = "VITBIAS_GLUE_LOG"


def _store(name: str, value) -> None:
    """Store a glued value: in the notebook (``myst_nb.glue``, nothing displayed), or, when
    ``VITBIAS_GLUE_LOG`` names a file, as one line ``{"name": ..., "value": repr(value)}`` there."""
    log = os.environ.get(GLUE_LOG_VARIABLE)
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"name": name, "value": repr(value)}) + "\n")
        return
    from myst_nb import glue as _myst_glue

    _myst_glue(name, value, display=False)


def _store_all(entries) -> None:
    for name, value in entries:
        _store(name, value)


def glue_evidence(found: Evidence) -> None:
    """Glue everything a chapter's ``measure`` found (:class:`vitbias.evidence.Evidence`), in order.

    Returns nothing, so that the one cell that glues a chapter's evidence shows
    no value that nbval would compare as text.
    """
    if not isinstance(found, Evidence):
        raise ValueError(f"glue_evidence takes the Evidence of a chapter, got {type(found).__name__}")
    _store_all(found.entries.items())


def glue(name: str, value, *, rel: float = EXACT, abs: float = 0.0, why: str = ""):
    """Glue ``value`` under ``name`` for ``{glue:text}`` and the drift check.

    ``rel`` and ``abs`` declare how far a rebuild may move the value before
    the drift check fails: it passes when
    ``|found - expected| <= abs + rel * |expected|``. Any tolerance other than
    the exact-math default needs ``why``, one line on what may legitimately
    move the number (float rounding across CPUs, Monte Carlo or training
    noise, and how the size was measured); the drift check prints it when the
    value moves further. Strings must match exactly.

    Returns nothing: a hidden cell that ends in ``glue(...)`` must not print a
    second copy of the value, which nbval would compare as text, digit by
    digit, whatever the tolerance.
    """
    _store_all(_evidence.number(name, value, rel=rel, abs=abs, why=why))


def glue_rounding(name: str, value, bound: float, *, why: str):
    """Glue a quantity that *is* rounding noise, checked as ``0 <= value <= bound``.

    The largest difference between two float32 paths, or an error at float64
    resolution, has no reproducible value, only a bound: another CPU sums in
    another order and lands elsewhere below it. So the build fails when the
    value exceeds ``bound`` (``ValueError``), and the drift check's tolerance
    is the bound itself.
    """
    _store_all(_evidence.rounding(name, value, bound, why=why))


def glue_timing(name: str, value, *, why: str):
    """Glue a wall-clock measurement: shown on the page, never compared with a reference.

    A time depends on the machine and on what else it runs, so it has no
    reproducible value to drift from; the manifest records it as unchecked.
    Whatever the prose claims about timings (an ordering, say) must be
    asserted in the chapter instead.
    """
    _store_all(_evidence.timing(name, value, why=why))


def glue_verdict(name: str, text: str):
    """Glue a sentence that the cell chose from trained (seed-like) results: shown, never compared.

    The cell that chooses it must compute it from the same numbers the page
    shows, so the sentence agrees with them in every build. A sentence that
    does not depend on training (a dataset's name, a profile's setting) goes
    through :func:`glue`, which compares strings exactly.
    """
    _store_all(_evidence.verdict(name, text))


def glue_trained(name: str, samples, one_run_sd: float, *, what: str) -> float:
    """Glue the mean of a trained quantity over seeds with its band; returns the mean.

    The policy is :func:`vitbias.evidence.trained`: the band is ``BAND_SDS``
    standard deviations of the mean from one run's measured sd, and a build
    whose seeds spread wider than that measurement allows is refused.
    """
    mean, entries = _evidence.trained(name, samples, one_run_sd, what=what)
    _store_all(entries)
    return mean


def glue_compared(name: str, first, second, *, more: str, less: str, same: str, paired: bool = False) -> str:
    """Glue the words that :func:`compare` chooses for two trained samples; returns its outcome
    (:func:`vitbias.evidence.compared`). The prose says what is measured, and the build chooses which
    of the three measured outcomes it is."""
    outcome, entries = _evidence.compared(name, first, second, more=more, less=less, same=same,
                                          paired=paired)
    _store_all(entries)
    return outcome


def glue_equivalent(name: str, first, second, margin: float, *, contrast: float, equal: str, unresolved: str,
                    paired: bool = False) -> bool:
    """Glue the words for an equality a theorem guarantees, chosen by an equivalence test; returns it
    (:func:`vitbias.evidence.equivalent`: the margin at most half the contrasted effect)."""
    shown, entries = _evidence.equivalent(name, first, second, margin, contrast=contrast, equal=equal,
                                          unresolved=unresolved, paired=paired)
    _store_all(entries)
    return shown


def spread_table(rows: dict, sizes) -> str:
    """A Markdown table of trained quantities against training-set size: the mean over seeds and their range.

    ``rows`` maps a quantity's name to ``{size: samples}`` (one value per
    seed); ``sizes`` orders the columns. Each cell reads ``mean (min to
    max)``, to two decimals. Shown for the spread; the glued means are what the
    drift check compares.
    """
    sizes = list(sizes)
    if not sizes or not rows:
        raise ValueError("a spread table needs at least one quantity and one size")
    lines = ["| | " + " | ".join(f"{n:,} images" for n in sizes) + " |", "|---" * (len(sizes) + 1) + "|"]
    for name, by_size in rows.items():
        missing = [n for n in sizes if n not in by_size]
        if missing:
            raise ValueError(f"{name!r} has no samples for the sizes {missing}")
        cells = []
        for n in sizes:
            values = np.atleast_1d(np.asarray(by_size[n], dtype=float))
            if values.ndim != 1 or not len(values) or not np.all(np.isfinite(values)):
                raise ValueError(f"{name!r} at {n}: samples must be a non-empty 1-D array of finite values")
            cells.append(f"{values.mean():.2f} ({values.min():.2f} to {values.max():.2f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def build_record() -> dict[str, str]:
    """How this build was made: profile, device and library versions."""
    import matplotlib
    import timm
    import torch

    from .profile import current_profile, device_name

    record = {
        "profile": current_profile(),
        "device": device_name(),
        "Python": platform.python_version(),
        "NumPy": np.__version__,
        "PyTorch": torch.__version__,
        "timm": timm.__version__,
        "Matplotlib": matplotlib.__version__,
        "machine": f"{platform.system()} {platform.machine()}",
        # ATEN_CPU_CAPABILITY picks PyTorch's CPU kernels; `make test` re-runs
        # the reference notebooks on another set than the build's.
        "CPU kernels": torch.backends.cpu.get_cpu_capability(),
    }
    if record["device"] == "cuda":
        record["GPU"] = torch.cuda.get_device_name(0)
    return record


def build_note():
    """One line for the foot of a chapter: the profile, device and versions it ran with.

    Returned as Markdown for display; the full record and every chapter's run
    time are on the page "How this build was made".
    """
    from IPython.display import Markdown

    r = build_record()
    device = r.get("GPU", r["device"].upper() if r["device"] == "cpu" else r["device"])
    return Markdown(
        f"*This page was executed in the `{r['profile']}` profile on the {device}, with "
        f"Python {r['Python']}, PyTorch {r['PyTorch']}, timm {r['timm']} and NumPy {r['NumPy']}. "
        "The page \"How this build was made\" lists every chapter's run time.*"
    )
