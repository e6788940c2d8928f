"""What a chapter found: the numbers its prose glues, each with its tolerance, and its claims.

A chapter's analysis lives in :mod:`vitbias.chapters`: its section functions
add every number the prose shows to an :class:`Evidence`, which the page
glues in one cell (:func:`vitbias.book.glue_evidence`) and whose claims the
page asserts, one line each, next to the sentences they back. Each kind
of number carries the tolerance the drift check applies to it:

- exact math: the default, 1e-9 relative (:meth:`Evidence.number`);
- rounding noise, a quantity that *is* the difference of two float32 paths:
  a bound (:meth:`Evidence.rounding`);
- a Monte Carlo estimate: a band given with ``rel`` or ``abs`` and ``why``,
  the reason for its size (:meth:`Evidence.number`);
- a trained number, a mean over seeds: the band :func:`band`, ``BAND_SDS``
  standard deviations of the mean from one run's measured sd; a build whose
  seeds spread wider than that measurement is refused
  (:meth:`Evidence.trained`);
- a sentence chosen by trained outcomes: shown, never compared, because
  another CPU trains other models, as new seeds would
  (:meth:`Evidence.verdict`; :meth:`Evidence.compared` chooses it by Welch's
  or the paired t test, :meth:`Evidence.equivalent` by an equivalence test);
- a wall-clock time: shown, never compared (:meth:`Evidence.timing`).

The functions below return the glued entries, ``(name, value)`` pairs with
a value's tolerance stored under ``name + TOLERANCE_SUFFIX``; they are the
one policy that :mod:`vitbias.book`'s ``glue_*`` functions and
:class:`Evidence` share. Values are plain Python ``int``, ``float`` or
``str``: NumPy 2 scalars print as ``np.float64(...)`` and would break format
specifications and notebook comparisons.
"""

from __future__ import annotations

import numbers

import numpy as np

from .recorded import KindSD, record_glued, recording

EXACT = 1e-9
TOLERANCE_SUFFIX = ".tol"
# Two independent builds' means of n seeds differ by more than 4.7 standard
# deviations of one mean, sqrt(2) sd of their difference, with probability about 1e-3.
BAND_SDS = 4.7
SPREAD_FALSE_ALARM = 1e-3  # how often n honest seeds may spread past the guard of trained()
NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
VERDICT_WHY = ("a sentence chosen in the build from trained results; the numbers it is chosen from are "
               "checked within their bands, the choice itself is not, since another CPU's training may land "
               "on the other side of a threshold as a new seed would")

Entries = list  # [(name, value), ...]: a glued value and, for a number, its tolerance


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


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name or any(ch.isspace() for ch in name) or name.endswith(TOLERANCE_SUFFIX):
        raise ValueError(f"invalid glue name {name!r}")


def number(name: str, value, *, rel: float = EXACT, abs: float = 0.0, why: str = "") -> Entries:
    """A value and the tolerance the drift check applies to it: it passes when
    ``|found - expected| <= abs + rel * |expected|``. Any tolerance other than the exact-math default
    needs ``why``, one line on what may legitimately move the number. Strings must match exactly."""
    _check_name(name)
    if rel < 0 or abs < 0:
        raise ValueError(f"tolerances must be non-negative, got rel={rel}, abs={abs}")
    if (rel, abs) != (EXACT, 0.0) and not why.strip():
        raise ValueError(f"{name}: a tolerance other than the exact-math default "
                         f"(rel={EXACT:g}) needs a reason (why=...)")
    value = plain(value)
    if isinstance(value, str):
        return [(name, value)]
    tolerance = {"rel": float(rel), "abs": float(abs)}
    if why.strip():
        tolerance["why"] = " ".join(why.split())
    return [(name, value), (name + TOLERANCE_SUFFIX, tolerance)]


def rounding(name: str, value, bound: float, *, why: str) -> Entries:
    """A quantity that *is* rounding noise, checked as ``0 <= value <= bound`` (``ValueError``
    beyond): another CPU sums in another order and lands elsewhere below the bound, which is also the
    drift check's tolerance."""
    value = plain(value)
    if isinstance(value, str) or not 0 <= value <= bound:
        raise ValueError(f"{name}: rounding noise {value!r} is not within [0, {bound:g}]")
    return number(name, value, rel=0.0, abs=bound, why=why)


def timing(name: str, value, *, why: str) -> Entries:
    """A wall-clock measurement: shown, recorded as unchecked, never compared with a reference."""
    _check_name(name)
    if not why.strip():
        raise ValueError(f"{name}: an unchecked timing needs a reason (why=...)")
    value = plain(value)
    if isinstance(value, str):
        raise ValueError(f"{name}: a timing is a number, got {value!r}")
    return [(name, value), (name + TOLERANCE_SUFFIX, {"unchecked": True, "why": " ".join(why.split())})]


def verdict(name: str, text: str) -> Entries:
    """A sentence chosen from trained (seed-like) results: shown and recorded, never compared."""
    if not isinstance(text, str):
        raise ValueError(f"{name}: a verdict is a sentence, got {type(text).__name__}")
    _check_name(name)
    return [(name, text), (name + TOLERANCE_SUFFIX, {"unchecked": True, "why": VERDICT_WHY})]


def spread_limit(one_run_sd: float, n: int, measured_from: int | None = None) -> float:
    """The widest sample sd (``ddof=1``) that ``n`` runs of one-run sd ``one_run_sd`` reach with
    probability :data:`SPREAD_FALSE_ALARM`.

    For an sd known exactly (``measured_from=None``): ``one_run_sd * sqrt(chi2_{n-1}(1 - p) / (n - 1))``,
    since ``(n - 1) s^2 / sd^2`` is chi-square with ``n - 1`` degrees of freedom for normal runs (for
    three seeds, 2.63 times the sd). For an sd that is itself a sample sd of ``measured_from`` runs,
    the ratio of the two sample variances is F-distributed with ``(n - 1, measured_from - 1)`` degrees
    of freedom: ``one_run_sd * sqrt(F(1 - p))`` (for three seeds against six measured runs, 6.09 times
    the sd). A measurement of six runs can come out at half the true sd, and another CPU's three seeds
    at twice it: the chi-square limit would refuse such honest builds far more often than ``p``.
    """
    from scipy import stats

    if not (isinstance(n, (int, np.integer)) and n >= 2):
        raise ValueError(f"a spread needs n >= 2 runs, got {n!r}")
    if measured_from is None:
        return float(one_run_sd * np.sqrt(stats.chi2.ppf(1 - SPREAD_FALSE_ALARM, n - 1) / (n - 1)))
    if not (isinstance(measured_from, (int, np.integer)) and measured_from >= 2):
        raise ValueError(f"a measured sd comes from two or more runs, got measured_from={measured_from!r}")
    return float(one_run_sd * np.sqrt(stats.f.ppf(1 - SPREAD_FALSE_ALARM, n - 1, measured_from - 1)))


def band(one_run_sd: float, n: int = 1) -> float:
    """The drift band of a mean of ``n`` runs: ``BAND_SDS * one_run_sd / sqrt(n)``, rounded up to 1e-3."""
    if not (one_run_sd > 0 and np.isfinite(one_run_sd)):
        raise ValueError(f"one run's standard deviation must be positive and finite, got {one_run_sd!r}")
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return float(np.ceil(1000 * BAND_SDS * one_run_sd / np.sqrt(n)) / 1000)


def measured_runs(one_run_sd: float, n: int) -> int | None:
    """How many runs ``one_run_sd`` was measured from, for ``n`` seeds: the same seeds on each of the
    kernel sets of a measured sd (:class:`vitbias.recorded.KindSD`, read from the noise measurement);
    ``None`` for a plain float, an sd taken as known."""
    return n * one_run_sd.kernel_sets if isinstance(one_run_sd, KindSD) else None


def _seed_values(name: str, samples, one_run_sd: float) -> np.ndarray:
    """``samples`` (one value per seed) as an array, recorded under ``one_run_sd``'s kind while the noise
    command records, else refused when they spread wider than :func:`spread_limit` allows for the runs
    the sd was measured from (:func:`measured_runs`)."""
    values = np.atleast_1d(np.asarray(samples, dtype=float))
    if values.ndim != 1 or not len(values) or not np.all(np.isfinite(values)):
        raise ValueError(f"{name}: samples must be a non-empty 1-D array of finite values, got {samples!r}")
    record_glued(name, values, one_run_sd)
    measuring = recording() is not None
    n = len(values)
    if not measuring and n > 1 and values.std(ddof=1) > spread_limit(one_run_sd, n, measured_runs(one_run_sd, n)):
        raise ValueError(f"{name}: the seeds spread with sd {values.std(ddof=1):.3g}, more than "
                         f"{n} runs of the one-run sd {one_run_sd:g}"
                         + (f", measured from {measured_runs(one_run_sd, n)} runs," if isinstance(one_run_sd, KindSD)
                            else "") + f" reach once in {1 / SPREAD_FALSE_ALARM:,.0f} builds: measure the spread again")
    return values


def summed(name: str, samples, one_run_sd: float, *, what: str) -> tuple[float, Entries]:
    """The sum of a trained quantity over seeds (a count over the seeds' models), and its entries: a sum
    of ``n`` runs moves ``n`` times as far as their mean, so its band is ``n`` times :func:`band`'s. The
    samples are recorded and checked as :func:`trained`'s. A sum of whole counts is glued as an integer,
    and its band is at least one: seeds that agreed on every count may still differ by one on another
    CPU, which no sd measured from them can show."""
    values = _seed_values(name, samples, one_run_sd)
    n, total, width = len(values), float(values.sum()), len(values) * band(one_run_sd, len(values))
    if np.all(values == np.round(values)):
        total, width = int(round(total)), max(width, 1.0)
    why = (f"{' '.join(what.split())}: a sum over {n} seeds; another CPU's summation order moves a training as "
           f"a new seed would: {n} times {BAND_SDS} sd of their mean, one run's sd {one_run_sd:g} measured over "
           "seeds and kernel sets" + (", and at least one for a count" if isinstance(total, int) else ""))
    return total, number(name, total, abs=width, why=why)


def trained(name: str, samples, one_run_sd: float, *, what: str) -> tuple[float, Entries]:
    """The mean of a trained quantity over seeds, and its entries with the band :func:`band`.

    ``samples``: one value per seed (or a single run); ``one_run_sd``: one
    run's sd, measured over seeds and CPU kernel sets; ``what``: what the
    number is, for the drift report. A build whose seeds spread wider than
    honest seeds would but once in a thousand builds (:func:`spread_limit`) is
    refused (``ValueError``). While the noise command records
    (:func:`vitbias.recorded.record_glued`), the values are recorded under
    ``one_run_sd``'s kind, and no spread is refused: it is what is measured.
    """
    values = _seed_values(name, samples, one_run_sd)
    n = len(values)
    why = (f"{' '.join(what.split())}: {'a mean over ' + str(n) + ' seeds' if n > 1 else 'one run'}; another "
           f"CPU's summation order moves a training as a new seed would: {BAND_SDS} sd of the "
           f"{'mean' if n > 1 else 'run'}, one run's sd {one_run_sd:g} measured over seeds and kernel sets")
    mean = float(values.mean())
    return mean, number(name, mean, abs=band(one_run_sd, n), why=why)


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


def compared(name: str, first, second, *, more: str, less: str, same: str,
             paired: bool = False) -> tuple[str, Entries]:
    """The outcome of :func:`compare` and the verdict entries of the words it chooses.

    Each of the three words may carry the numbers of :func:`compared_numbers`
    as format fields, so that "too close to tell" says how close:
    ``same="{apart:.2f} apart, less than {seeds} seeds resolve ({resolvable:.2f})"``.
    """
    outcome = compare(first, second, paired=paired)
    words = {"more": more, "less": less, "same": same}[outcome]
    found = compared_numbers(first, second, paired=paired)
    try:
        text = words.format_map(found)
    except (KeyError, IndexError, ValueError) as error:
        raise ValueError(f"{name}: {words!r} has a field other than {tuple(found)} ({error})") from None
    return outcome, verdict(name, text)


def equivalent(name: str, first, second, margin: float, *, contrast: float, equal: str, unresolved: str,
               paired: bool = False) -> tuple[bool, Entries]:
    """Whether an equality a theorem guarantees is shown, and the verdict entries of its words.

    ``equal`` when the two samples' means are shown to agree within
    ``margin`` (:func:`vitbias.scaling.equivalent`, two one-sided Welch tests
    at 5 %, or paired t tests with ``paired``), else ``unresolved``: too few
    seeds to show it. Never a verdict of difference. Both texts may hold
    ``{shown}``, the smallest margin these samples show
    (:func:`vitbias.scaling.smallest_equivalence_margin`). ``margin`` is set
    by the science: at most half of ``contrast``, the effect the page sets the
    equality against, else ``ValueError``.
    """
    from .scaling import equivalent as shown_equivalent
    from .scaling import smallest_equivalence_margin

    if not (contrast > 0 and np.isfinite(contrast)):
        raise ValueError(f"{name}: the contrasted effect must be positive and finite, got {contrast!r}")
    if margin > contrast / 2:
        raise ValueError(f"{name}: an equivalence margin of {margin:.3g} is wider than half the effect it is "
                         f"contrasted with ({contrast:.3g}): it could not tell the two apart")
    shown = shown_equivalent(first, second, margin, paired=paired)
    fields = {"shown": smallest_equivalence_margin(first, second, paired=paired)}
    return shown, verdict(name, (equal if shown else unresolved).format(**fields))


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


class Evidence:
    """What one chapter measured: its glued entries in order, and its named claims.

    Each method validates and computes at once (a bad value or a spread too
    wide raises ``ValueError`` inside the chapter's analysis, where it is) and
    keeps the entries for :func:`vitbias.book.glue_evidence`. A name is glued
    once. ``evidence["name"]`` is a glued value; ``evidence.outcomes["name"]``
    what a comparison or an equivalence test found; ``evidence.claims`` the
    claims of the prose, each ``True`` when the measurement backs it, for the
    page to assert next to its sentence.
    """

    def __init__(self, chapter: str):
        if not isinstance(chapter, str) or not chapter:
            raise ValueError(f"evidence belongs to a chapter, got {chapter!r}")
        self.chapter = chapter
        self.entries: dict[str, object] = {}
        self.outcomes: dict[str, object] = {}
        self.claims: dict[str, bool] = {}

    def _add(self, entries: Entries) -> None:
        for name, _ in entries:
            if name in self.entries:
                raise ValueError(f"{self.chapter}: {name!r} is glued twice")
        self.entries.update(entries)

    def __getitem__(self, name: str):
        if name not in self.entries or name.endswith(TOLERANCE_SUFFIX):
            raise KeyError(f"{self.chapter} glues no {name!r}")
        return self.entries[name]

    def __contains__(self, name: str) -> bool:
        return name in self.entries and not name.endswith(TOLERANCE_SUFFIX)

    def names(self) -> list[str]:
        """The glued names, in the order they were measured."""
        return [name for name in self.entries if not name.endswith(TOLERANCE_SUFFIX)]

    def number(self, name: str, value, *, rel: float = EXACT, abs: float = 0.0, why: str = "") -> None:
        """A number (or a string compared exactly): :func:`number`."""
        self._add(number(name, value, rel=rel, abs=abs, why=why))

    def rounding(self, name: str, value, bound: float, *, why: str) -> None:
        """Rounding noise, at most ``bound``: :func:`rounding`."""
        self._add(rounding(name, value, bound, why=why))

    def timing(self, name: str, value, *, why: str) -> None:
        """A wall-clock time, never compared: :func:`timing`."""
        self._add(timing(name, value, why=why))

    def verdict(self, name: str, text: str) -> None:
        """A sentence chosen from trained results, never compared: :func:`verdict`."""
        self._add(verdict(name, text))

    def trained(self, name: str, samples, one_run_sd: float, *, what: str) -> float:
        """A mean over seeds with its band (:func:`trained`); returns the mean."""
        mean, entries = trained(name, samples, one_run_sd, what=what)
        self._add(entries)
        return mean

    def summed(self, name: str, samples, one_run_sd: float, *, what: str) -> float:
        """A sum over seeds with its band (:func:`summed`); returns the sum."""
        total, entries = summed(name, samples, one_run_sd, what=what)
        self._add(entries)
        return total

    def compared(self, name: str, first, second, *, more: str, less: str, same: str,
                 paired: bool = False) -> str:
        """The words a comparison of two trained samples chooses (:func:`compared`); returns and keeps
        its outcome, ``"more"``, ``"less"`` or ``"same"``."""
        outcome, entries = compared(name, first, second, more=more, less=less, same=same, paired=paired)
        self._add(entries)
        self.outcomes[name] = outcome
        return outcome

    def equivalent(self, name: str, first, second, margin: float, *, contrast: float, equal: str,
                   unresolved: str, paired: bool = False) -> bool:
        """The words of an equivalence test (:func:`equivalent`); returns and keeps whether it is shown."""
        shown, entries = equivalent(name, first, second, margin, contrast=contrast, equal=equal,
                                    unresolved=unresolved, paired=paired)
        self._add(entries)
        self.outcomes[name] = shown
        return shown

    def claim(self, name: str, holds) -> None:
        """Keep a claim of the prose and whether the measurement backs it."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a claim needs a name, got {name!r}")
        if name in self.claims:
            raise ValueError(f"{self.chapter}: the claim {name!r} is made twice")
        self.claims[name] = bool(holds)
