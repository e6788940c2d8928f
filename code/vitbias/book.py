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

The policy for trained numbers lives here, not in the chapters:
:func:`glue_trained` glues a mean over seeds with the band :func:`band`
(``BAND_SDS`` standard deviations of the mean, from one run's measured
standard deviation) and refuses a build whose seeds spread wider than that
measurement; :func:`glue_compared` glues the words a comparison of two
trained samples chooses by Welch's t test (:func:`vitbias.scaling.resolved`);
:func:`glue_equivalent` the words for an equality a theorem guarantees,
chosen by an equivalence test (:func:`vitbias.scaling.equivalent`).

Values are plain Python ``int``, ``float`` or ``str``: NumPy scalars are
converted here, because NumPy 2 scalars print as ``np.float64(...)`` and break
both format specifications and notebook comparisons.
"""

from __future__ import annotations

import json
import numbers
import os
import platform

import numpy as np

EXACT = 1e-9
TOLERANCE_SUFFIX = ".tol"
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


def plain(value):
    """``value`` as a plain Python int, float or str, else ``ValueError``."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"glue a number or a string, not a boolean ({value!r})")
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if not np.isfinite(value):
            raise ValueError(f"refusing to glue a non-finite number ({value!r})")
        return value
    if isinstance(value, np.ndarray) and value.shape == ():
        return plain(value.item())
    raise ValueError(
        f"glue takes an int, a float or a str; got {type(value).__name__}"
    )


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
    if not name or any(ch.isspace() for ch in name) or name.endswith(TOLERANCE_SUFFIX):
        raise ValueError(f"invalid glue name {name!r}")
    if rel < 0 or abs < 0:
        raise ValueError(f"tolerances must be non-negative, got rel={rel}, abs={abs}")
    if (rel, abs) != (EXACT, 0.0) and not why.strip():
        raise ValueError(f"{name}: a tolerance other than the exact-math default "
                         f"(rel={EXACT:g}) needs a reason (why=...)")
    value = plain(value)
    _store(name, value)
    if not isinstance(value, str):
        tolerance = {"rel": float(rel), "abs": float(abs)}
        if why.strip():
            tolerance["why"] = " ".join(why.split())
        _store(name + TOLERANCE_SUFFIX, tolerance)


def glue_rounding(name: str, value, bound: float, *, why: str):
    """Glue a quantity that *is* rounding noise, checked as ``0 <= value <= bound``.

    The largest difference between two float32 paths, or an error at float64
    resolution, has no reproducible value, only a bound: another CPU sums in
    another order and lands elsewhere below it. So the build fails when the
    value exceeds ``bound`` (``ValueError``), and the drift check's tolerance
    is the bound itself.
    """
    value = plain(value)
    if isinstance(value, str) or not 0 <= value <= bound:
        raise ValueError(f"{name}: rounding noise {value!r} is not within [0, {bound:g}]")
    glue(name, value, rel=0.0, abs=bound, why=why)


def glue_timing(name: str, value, *, why: str):
    """Glue a wall-clock measurement: shown on the page, never compared with a reference.

    A time depends on the machine and on what else it runs, so it has no
    reproducible value to drift from; the manifest records it as unchecked.
    Whatever the prose claims about timings (an ordering, say) must be
    asserted in the chapter instead.
    """
    if not why.strip():
        raise ValueError(f"{name}: an unchecked timing needs a reason (why=...)")
    value = plain(value)
    if isinstance(value, str):
        raise ValueError(f"{name}: a timing is a number, got {value!r}")
    _store(name, value)
    _store(name + TOLERANCE_SUFFIX, {"unchecked": True, "why": " ".join(why.split())})


VERDICT_WHY = ("a sentence chosen in the build from trained results; the numbers it is chosen from are "
               "checked within their bands, the choice itself is not, since another CPU's training may land "
               "on the other side of a threshold as a new seed would")


def glue_verdict(name: str, text: str):
    """Glue a sentence that the cell chose from trained (seed-like) results: shown, never compared.

    The cell that chooses it must compute it from the same numbers the page
    shows, so the sentence agrees with them in every build. A sentence that
    does not depend on training (a dataset's name, a profile's setting) goes
    through :func:`glue`, which compares strings exactly.
    """
    if not isinstance(text, str):
        raise ValueError(f"{name}: a verdict is a sentence, got {type(text).__name__}")
    if not name or any(ch.isspace() for ch in name) or name.endswith(TOLERANCE_SUFFIX):
        raise ValueError(f"invalid glue name {name!r}")
    _store(name, text)
    _store(name + TOLERANCE_SUFFIX, {"unchecked": True, "why": VERDICT_WHY})


NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def counted(names, noun: str, predicate: str) -> str:
    """A clause that counts ``names`` and names them: ``"two routes are above X (a, b)"``,
    ``"one route is above X (a)"``, ``"no route is above X"``.

    ``noun`` is singular (``"route"``); ``predicate`` follows the verb (``"above the plain ViT"``).
    """
    names = list(names)
    if not noun or not predicate:
        raise ValueError("a clause needs a noun and a predicate")
    if any(not isinstance(n, str) or not n for n in names):
        raise ValueError(f"names must be non-empty strings, got {names!r}")
    if len(names) >= len(NUMBER_WORDS):
        raise ValueError(f"at most {len(NUMBER_WORDS) - 1} names, got {len(names)}")
    plural = len(names) > 1
    clause = f"{NUMBER_WORDS[len(names)]} {noun}{'s' if plural else ''} {'are' if plural else 'is'} {predicate}"
    return clause + (f" ({', '.join(names)})" if names else "")


def sentence(*clauses: str) -> str:
    """Clauses joined into one sentence: ``"A, b and c."``, its first letter capitalised."""
    if not clauses or any(not isinstance(c, str) or not c.strip() for c in clauses):
        raise ValueError(f"a sentence needs non-empty clauses, got {clauses!r}")
    joined = clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + " and " + clauses[-1]
    return joined[0].upper() + joined[1:] + "."


# Two independent builds' means of n seeds differ by more than 4.7 standard
# deviations of one mean, sqrt(2) sd of their difference, with probability about 1e-3.
BAND_SDS = 4.7
SPREAD_FALSE_ALARM = 1e-3  # how often n honest seeds may spread past the guard of glue_trained


def spread_limit(one_run_sd: float, n: int) -> float:
    """The widest sample sd (``ddof=1``) that ``n`` runs of one-run sd ``one_run_sd`` reach with
    probability :data:`SPREAD_FALSE_ALARM`: ``one_run_sd * sqrt(chi2_{n-1}(1 - p) / (n - 1))``, since
    ``(n - 1) s^2 / sd^2`` is chi-square with ``n - 1`` degrees of freedom for normal runs (for three
    seeds, 2.63 times the sd: a fixed 1.5 would refuse one honest build in ten)."""
    from scipy import stats

    if not (isinstance(n, (int, np.integer)) and n >= 2):
        raise ValueError(f"a spread needs n >= 2 runs, got {n!r}")
    return float(one_run_sd * np.sqrt(stats.chi2.ppf(1 - SPREAD_FALSE_ALARM, n - 1) / (n - 1)))


def band(one_run_sd: float, n: int = 1) -> float:
    """The drift band of a mean of ``n`` runs: ``BAND_SDS * one_run_sd / sqrt(n)``, rounded up to 1e-3."""
    if not (one_run_sd > 0 and np.isfinite(one_run_sd)):
        raise ValueError(f"one run's standard deviation must be positive and finite, got {one_run_sd!r}")
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return float(np.ceil(1000 * BAND_SDS * one_run_sd / np.sqrt(n)) / 1000)


def glue_trained(name: str, samples, one_run_sd: float, *, what: str) -> float:
    """Glue the mean of a trained quantity over seeds with its band; returns the mean.

    ``samples``: one value per seed (or a single run); ``one_run_sd``: the
    standard deviation of one run, measured over seeds and CPU kernel sets
    (another CPU sums in another order, and a run then moves as a run of
    another seed would); ``what``: what the number is, for the drift report.
    The band is :func:`band` of the mean. A build whose own seeds spread wider
    than honest seeds would but once in a thousand builds (:func:`spread_limit`)
    is refused (``ValueError``): its band was measured on a narrower spread and
    no longer holds. While the noise command records (:func:`vitbias.recorded.record_glued`),
    the values are recorded under ``one_run_sd``'s kind, and no spread is refused:
    it is what is being measured.
    """
    from .recorded import record_glued, recording

    values = np.atleast_1d(np.asarray(samples, dtype=float))
    if values.ndim != 1 or not len(values) or not np.all(np.isfinite(values)):
        raise ValueError(f"{name}: samples must be a non-empty 1-D array of finite values, got {samples!r}")
    record_glued(name, values, one_run_sd)
    measuring = recording() is not None  # the spread is what the noise command measures
    if not measuring and len(values) > 1 and values.std(ddof=1) > spread_limit(one_run_sd, len(values)):
        raise ValueError(f"{name}: the seeds spread with sd {values.std(ddof=1):.3g}, more than "
                         f"{len(values)} runs of the measured one-run sd {one_run_sd} reach once in "
                         f"{1 / SPREAD_FALSE_ALARM:,.0f} builds: measure the spread again")
    n = len(values)
    why = (f"{' '.join(what.split())}: {'a mean over ' + str(n) + ' seeds' if n > 1 else 'one run'}; another "
           f"CPU's summation order moves a training as a new seed would: {BAND_SDS} sd of the "
           f"{'mean' if n > 1 else 'run'}, one run's sd {one_run_sd:g} measured over seeds and kernel sets")
    glue(name, float(values.mean()), abs=band(one_run_sd, n), why=why)
    return float(values.mean())


def compare(first, second, *, paired: bool = False) -> str:
    """``"more"``, ``"less"`` or ``"same"``: how the mean of ``first`` stands to ``second``'s.

    Welch's t test (:func:`vitbias.scaling.resolved`) for samples that share
    nothing; with ``paired``, when value ``i`` of each comes from the same seed,
    the paired t test (:func:`vitbias.scaling.resolved_paired`). ``"same"``
    means *not resolved* at 5 %, not shown equal.
    """
    from .scaling import resolved, resolved_paired

    if not (resolved_paired if paired else resolved)(first, second):
        return "same"
    return "more" if np.mean(first) > np.mean(second) else "less"


def compared_numbers(first, second, *, paired: bool = False) -> dict:
    """The numbers a sentence about two trained samples may carry: ``apart``, how far their means
    are apart; ``resolvable``, the smallest difference the test of :func:`compare` resolves with
    these samples' spread (:func:`vitbias.scaling.smallest_resolved_difference`); ``seeds``, how
    many seeds the first sample has, in words (``"three"``)."""
    from .scaling import smallest_resolved_difference

    seeds = len(np.atleast_1d(np.asarray(first, dtype=float)))
    return {"apart": float(abs(np.mean(first) - np.mean(second))),
            "resolvable": smallest_resolved_difference(first, second, paired=paired),
            "seeds": NUMBER_WORDS[seeds] if seeds < len(NUMBER_WORDS) else f"{seeds:,}"}


def glue_compared(name: str, first, second, *, more: str, less: str, same: str, paired: bool = False) -> str:
    """Glue the words that :func:`compare` chooses for two trained samples; returns its outcome.

    The words go into a sentence of the prose (``{glue:text}`name```): the
    prose says what is measured, and the build chooses which of the three
    measured outcomes it is. ``paired``: the samples share their seeds (:func:`compare`).
    Each of the three may carry the numbers of :func:`compared_numbers` as
    format fields, so that "too close to tell" says how close:
    ``same="{apart:.2f} apart, less than {seeds} seeds resolve ({resolvable:.2f})"``.
    """
    outcome = compare(first, second, paired=paired)
    words = {"more": more, "less": less, "same": same}[outcome]
    numbers = compared_numbers(first, second, paired=paired)
    try:
        text = words.format_map(numbers)
    except (KeyError, IndexError, ValueError) as error:
        raise ValueError(f"{name}: {words!r} has a field other than {tuple(numbers)} ({error})") from None
    glue_verdict(name, text)
    return outcome


def glue_equivalent(name: str, first, second, margin: float, *, contrast: float, equal: str, unresolved: str,
                    paired: bool = False) -> bool:
    """Glue the words for an equality a theorem guarantees, chosen by an equivalence test; returns it.

    ``equal`` when the two samples' means are shown to agree within
    ``margin`` (:func:`vitbias.scaling.equivalent`, two one-sided Welch tests
    at 5 %, or paired t tests with ``paired``, when the samples share their
    seeds), else ``unresolved``: too few seeds to show it. Never a verdict of
    difference. Both texts may hold ``{shown}``, the smallest margin these
    samples show (:func:`vitbias.scaling.smallest_equivalence_margin`).

    ``margin`` is set by the science, not by the drift band: it must be at most
    half of ``contrast``, the effect the page sets the equality against (an
    equality "within" more than half that effect could not tell the two
    apart), else ``ValueError``.
    """
    from .scaling import equivalent, smallest_equivalence_margin

    if not (contrast > 0 and np.isfinite(contrast)):
        raise ValueError(f"{name}: the contrasted effect must be positive and finite, got {contrast!r}")
    if margin > contrast / 2:
        raise ValueError(f"{name}: an equivalence margin of {margin:.3g} is wider than half the effect it is "
                         f"contrasted with ({contrast:.3g}): it could not tell the two apart")
    shown = equivalent(first, second, margin, paired=paired)
    fields = {"shown": smallest_equivalence_margin(first, second, paired=paired)}
    glue_verdict(name, (equal if shown else unresolved).format(**fields))
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
