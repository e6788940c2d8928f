"""Glued numbers recorded under the kind of their one-run sd, for the noise command to measure.

:func:`vitbias.noise.one_run_sd` returns a :class:`KindSD`, a float that
names its chapter and kind. While ``$VITBIAS_NOISE_RECORD`` names a file,
:func:`vitbias.book.glue_trained` appends there the seeds' values of every
number whose sd is such a float (:func:`record_glued`), and ``python -m
tools.booktools noise --glued`` measures each kind's spread from what a
chapter recorded (:func:`vitbias.noise.measure_glued`). Kept apart from
:mod:`vitbias.noise`, which reads the run cache, so that gluing a number
does not make a chapter depend on training.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

RECORD_VARIABLE = "VITBIAS_NOISE_RECORD"


class KindSD(float):
    """One run's sd that remembers the chapter and kind it was measured for, so that a recording
    execution files each glued number under its kind, and over how many kernel sets it was measured
    (``kernel_sets``: the same seeds on each), so that a build's spread is tested against a measured sd,
    not a known one (:func:`vitbias.evidence.spread_limit`). Arithmetic on it gives a plain float: the
    sd of a difference or a sum is not one run's sd of any kind, and is not recorded."""

    chapter: str
    kind: str
    kernel_sets: int

    def __new__(cls, value: float, chapter: str, kind: str, kernel_sets: int = 2) -> KindSD:
        if not (isinstance(kernel_sets, int) and kernel_sets >= 1):
            raise ValueError(f"kernel_sets must be a positive integer, got {kernel_sets!r}")
        sd = super().__new__(cls, value)
        sd.chapter, sd.kind, sd.kernel_sets = chapter, kind, kernel_sets
        return sd


def recording() -> Path | None:
    """The file glued numbers are recorded to (``$VITBIAS_NOISE_RECORD``), or ``None``."""
    chosen = os.environ.get(RECORD_VARIABLE, "").strip()
    return Path(chosen) if chosen else None


def record_glued(name: str, values, one_run_sd) -> bool:
    """While recording, append glued number ``name``'s seed values under ``one_run_sd``'s chapter and
    kind (one JSON line); returns whether it was recorded (an sd that names no kind is not)."""
    path = recording()
    if path is None or not isinstance(one_run_sd, KindSD):
        return False
    values = np.atleast_1d(np.asarray(values, dtype=float))
    line = {"chapter": one_run_sd.chapter, "kind": one_run_sd.kind, "name": name, "values": values.tolist()}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
    return True


def read_recorded(path: Path) -> list[dict]:
    """The lines :func:`record_glued` wrote to ``path`` (none when it does not exist)."""
    path = Path(path)
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
