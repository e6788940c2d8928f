"""One run's standard deviation, measured from the run cache: what the book's bands are made of.

A trained number moves from one build to the next as a run of another seed
would: another CPU sums in another order, and a long training amplifies the
difference (:func:`vitbias.book.glue_trained`). So the band of a trained mean
is a multiple of one run's standard deviation, and that standard deviation is
measured, not guessed: over the seeds of each group of runs that differ only
by their seed, pooled with the same runs trained on the other set of CPU
kernels when a second run cache holds them (``ATEN_CPU_CAPABILITY=default``
against the build's own). A kind of number (the CNN's test accuracy, the
TinyViT's, a training accuracy) takes the largest standard deviation over its
groups, rounded up to :data:`STEP`.

A difference of two runs of one seed (the same images and initial weights,
one thing changed) is a kind of its own, whose group holds each seed's pair
of runs, ``(before, after)``: the sd of the seeds' differences, not one made
of the two runs' sds as if they shared nothing, since runs of one seed may
move together (:func:`run_configs`, :func:`cached_metric`).

``python -m tools.booktools noise`` measures the chapters' kinds (their ``noise_groups``) from the run
cache (and, with ``--other-kernels``, a second one) and writes them to the
generated module ``noise_measured`` (:func:`module_source`); a chapter reads
them with :func:`one_run_sd`.

A number a chapter computes from its trained models (a shape bias, an
attention distance) is not in the run cache. Its kind is measured from the
chapter itself, with ``noise --glued``: the chapter is executed once per run
cache (the other kernel set's with its kernels), and while
``$VITBIAS_NOISE_RECORD`` names a file, every :func:`vitbias.book.glue_trained`
whose one-run sd came straight from :func:`one_run_sd` writes its seeds'
values there under that sd's kind (:func:`record_glued`). The kind's sd is
the largest over its glued numbers of the sd of their seeds, pooled over the
kernel sets (:func:`measure_glued`). So no sd is typed into a chapter.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np

from . import profile as _profile
from . import runs as _runs
from .recorded import RECORD_VARIABLE, KindSD, read_recorded, record_glued, recording  # noqa: F401

MEASURED_MODULE = Path(__file__).with_name("noise_measured.py")
STEP = 0.005  # sds are rounded up to this, and never below it: a test accuracy on 2,000 images resolves 0.0005
FINEST = STEP / 50  # the finest sd of a glued kind (rounded_up_to_scale)
PLACEHOLDER_SD = 1.0  # a kind not measured yet, while recording: wide enough that no band refuses the build
GLUED = "glued values"  # the source of a kind measured from a chapter's glued numbers


def measure_glued(chapter: str, recorded: list[list[dict]], skip=()) -> dict[str, dict]:
    """Per kind of ``chapter`` recorded while it executed once per run cache (``recorded``: one list of
    :func:`read_recorded` lines per cache, the build's first): the rounded sd, the raw one, the glued
    number it comes from, how many values it pooled and over how many kernel sets. A number's seeds are
    pooled over the caches; only numbers with two or more seeds in every cache count (one run's value
    on two kernel sets says nothing of the seeds). ``skip``: kinds measured from the run cache."""
    if not recorded or not recorded[0]:
        raise ValueError(f"nothing was recorded while {chapter!r} executed: does it glue with noise.one_run_sd?")
    by_kind: dict[str, dict[str, list[list[float]]]] = {}
    for lines in recorded:
        seen: dict[tuple, list[float]] = {}
        for line in lines:
            if line["chapter"] == chapter and line["kind"] not in skip:
                seen[line["kind"], line["name"]] = line["values"]  # a cell run twice keeps its last values
        for (kind, name), values in seen.items():
            by_kind.setdefault(kind, {}).setdefault(name, []).append(values)
    measured = {}
    for kind, names in sorted(by_kind.items()):
        groups = {name: sum(per_cache, []) for name, per_cache in names.items()
                  if len(per_cache) == len(recorded) and all(len(v) >= 2 for v in per_cache)}
        if not groups:
            raise ValueError(f"{chapter!r}: no glued number of kind {kind!r} has two or more seeds in every "
                             "run cache: its sd cannot be measured")
        sd, where = largest_sd(groups)
        measured[kind] = {"sd": rounded_up_to_scale(sd), "measured": round(sd, 6), "largest_in": where,
                          "runs": sum(len(v) for v in groups.values()), "kernel_sets": len(recorded),
                          "from": GLUED}
    return measured


def rounded_up(sd: float) -> float:
    """``sd`` rounded up to a multiple of :data:`STEP`, at least one step."""
    if not (sd >= 0 and math.isfinite(sd)):
        raise ValueError(f"a standard deviation must be finite and non-negative, got {sd!r}")
    return round(max(1, math.ceil(sd / STEP - 1e-9)) * STEP, 6)


def rounded_up_to_scale(sd: float) -> float:
    """``sd`` rounded up to :data:`STEP` (:func:`rounded_up`), or, below one step, to one significant
    figure and never below :data:`FINEST`: a glued number may be far smaller than an accuracy (a relative
    error of 0.002), and a band made of a whole step would be wider than the number itself; below
    ``FINEST``, what differs is float rounding, of which no band is made."""
    if not (sd >= 0 and math.isfinite(sd)):
        raise ValueError(f"a standard deviation must be finite and non-negative, got {sd!r}")
    if sd >= STEP:
        return rounded_up(sd)
    if sd <= FINEST:
        return FINEST
    scale = 10.0 ** math.floor(math.log10(sd))
    return float(f"{math.ceil(sd / scale - 1e-9) * scale:.1g}")


def largest_sd(groups: dict) -> tuple[float, object]:
    """``(sd, group)``: the largest sample standard deviation (``ddof=1``) over ``groups``, and which.

    ``groups`` maps a name to the values of runs that differ only by seed (and
    kernel set); every group needs at least two values.
    """
    if not groups:
        raise ValueError("no groups of runs to measure a standard deviation from")
    found = []
    for name, values in groups.items():
        values = np.asarray(values, dtype=float)
        if values.ndim != 1 or len(values) < 2 or not np.all(np.isfinite(values)):
            raise ValueError(f"group {name!r} needs two or more finite values, got {values!r}")
        found.append((float(values.std(ddof=1)), name))
    return max(found, key=lambda pair: pair[0])


def seed_runs(entry) -> tuple[dict, ...]:
    """The runs of one seed of a group: ``(config,)``, or a difference's ``(before, after)``; anything
    else is refused."""
    runs = entry if isinstance(entry, tuple) else (entry,)
    if len(runs) not in (1, 2) or not all(isinstance(config, dict) for config in runs):
        raise ValueError(f"a seed of a group is a run's config or a pair (before, after) of them, got {entry!r}")
    return runs


def run_configs(configs) -> list[dict]:
    """Every run of a group's seeds (``configs``: a config or a pair of them per seed, :func:`seed_runs`)."""
    return [config for entry in configs for config in seed_runs(entry)]


def cached_metric(entry, folders, metric: str) -> list[float]:
    """The ``metric`` of one seed's run (``entry``, a config) in each of ``folders`` that holds it, or of
    a pair ``(before, after)`` the difference ``after - before`` in each folder that holds both."""
    values = []
    for folder in folders:
        paths = [Path(folder) / _runs.run_key(config) / "metrics.json" for config in seed_runs(entry)]
        if all(path.is_file() for path in paths):
            found = [float(json.loads(path.read_text())[metric]) for path in paths]
            values.append(found[-1] - found[0] if len(found) == 2 else found[0])
    return values


def group_values(groups: dict, folders, metric: str) -> dict:
    """``groups`` (name -> its seeds: a configuration or a pair of them each, :func:`seed_runs`) as name
    -> the ``metric`` (a pair's difference) of every seed of the group found in ``folders``: seeds times
    run caches. A seed missing from the first folder (the build's own cache) raises ``ValueError``: the
    measurement would be of fewer seeds."""
    folders = list(folders)
    found = {}
    for name, configs in groups.items():
        values = []
        for entry in configs:
            got = cached_metric(entry, folders, metric)
            if not got or not all((Path(folders[0]) / _runs.run_key(c)).is_dir() for c in seed_runs(entry)):
                raise ValueError(f"the run cache {folders[0]} lacks a seed of {name!r}: build the book first")
            values += got
        found[name] = values
    return found


def metric_of(kind: str) -> str:
    """The metric a kind of run-cache number reads: ``"train"`` and ``"train, ..."`` are training
    accuracies, any other kind a test accuracy."""
    return "train_accuracy" if kind == "train" or kind.startswith("train, ") else "test_accuracy"


def measure(everything: dict[str, dict], folders, kinds=None) -> dict[str, dict]:
    """Per kind of a chapter's groups (``everything``: kind -> group name -> the configurations of its
    seeds, a chapter's ``noise_groups(budget)``, :func:`vitbias.chapters.noise_groups`; only ``kinds``
    when given): the rounded sd, the raw one, the group it comes from, how many runs it pooled and from
    how many kernel sets (``folders``: the build's run cache first, then any other kernel set's)."""
    unknown = sorted(set(kinds or ()) - set(everything))
    if unknown:
        raise ValueError(f"no kinds {unknown} among the chapter's groups: expected among {tuple(everything)}")
    measured = {}
    for kind, groups in everything.items():
        if kinds is not None and kind not in kinds:
            continue
        values = group_values(groups, folders, metric_of(kind))
        sd, where = largest_sd(values)
        keys = [_runs.run_key(c) for configs in groups.values() for c in run_configs(configs)]
        sets = sum(1 for folder in folders if any((Path(folder) / key).is_dir() for key in keys))
        measured[kind] = {"sd": rounded_up(sd), "measured": round(sd, 6), "largest_in": " / ".join(map(str, where)),
                          "runs": sum(len(v) for v in values.values()), "kernel_sets": sets}
    return measured


RUN_PLACES = ("recipe default", "recipe switched", "half steps")  # runs read off the learning curves
CHANGES = ("recipe change",)  # differences of a seed's two runs: (before, after)


def accuracy_kind(model: str, where) -> str:
    """The crossover chapter's kind of ``model``'s test accuracy (``"cnn"``, ``"vit"``) at ``where``: a
    training-set size (every world trained there, ``"vit, 800 images"``), runs read apart from the
    curves (:data:`RUN_PLACES`: the recipe's comparison, with its own seeds, under the default recipe and
    switched; the half steps) or a change between a seed's two runs (:data:`CHANGES`: ``"recipe
    change"``, from the default recipe to the switched one). Another chapter that reads the crossover's
    runs takes its sd by this name."""
    if model not in _profile.STEP_MODELS:
        raise ValueError(f"model must be one of {_profile.STEP_MODELS}, got {model!r}")
    if isinstance(where, (int, np.integer)) and not isinstance(where, bool) and where >= 1:
        return f"{model}, {int(where):,} images"
    if where in RUN_PLACES + CHANGES:
        return f"{model}, {where}"
    raise ValueError(f"where must be a training-set size or one of {RUN_PLACES + CHANGES}, got {where!r}")


def module_source(measured: dict) -> str:
    """The source of the generated module ``noise_measured``: ``MEASURED``, profile -> chapter -> its
    record (``kinds``: kind -> the entry of :func:`measure`; ``kernel_sets``: how many)."""
    body = json.dumps(measured, indent=4, sort_keys=True)
    return ('"""One run\'s standard deviation per profile, chapter and kind, measured from the run cache.\n\n'
            'Generated by ``python -m tools.booktools noise`` (:mod:`vitbias.noise`); do not edit by hand."""\n\n'
            f"MEASURED = {body}\n")


def measured_table() -> dict:
    """``noise_measured.MEASURED``, or ``{}`` before anything was measured."""
    try:
        from .noise_measured import MEASURED
    except ImportError:
        return {}
    return MEASURED


def one_run_sd(chapter: str, kind: str, profile_name: str | None = None) -> KindSD:
    """One run's measured sd of ``kind`` in ``chapter`` (``noise_measured``), for the current profile;
    while recording (:func:`recording`), a kind not measured yet gets :data:`PLACEHOLDER_SD`.

    A profile with no measurement of its own takes the quick profile's, with a
    warning: its runs are other runs, and their spread should be measured.
    """
    profile_name = profile_name or _profile.current_profile()
    table = measured_table()
    if profile_name not in table or chapter not in table[profile_name]:
        if "quick" not in table or chapter not in table["quick"]:
            if recording():
                return KindSD(PLACEHOLDER_SD, chapter, kind)
            raise ValueError(f"no measured noise for {chapter!r}: run `python -m tools.booktools noise`")
        warnings.warn(f"no measured noise for the {profile_name} profile's {chapter!r}: using the quick profile's",
                      stacklevel=2)
        profile_name = "quick"
    record = table[profile_name][chapter]
    kinds = record["kinds"]
    if kind not in kinds:
        if recording():
            return KindSD(PLACEHOLDER_SD, chapter, kind)
        raise ValueError(f"no measured noise of kind {kind!r} in {chapter!r}: expected one of {tuple(kinds)}")
    sets = int(kinds[kind].get("kernel_sets", record["kernel_sets"]))
    return KindSD(float(kinds[kind]["sd"]), chapter, kind, sets)
