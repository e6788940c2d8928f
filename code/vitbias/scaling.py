"""Error against data: power-law fits of learning curves, and where two curves cross.

Over a range of training-set sizes ``N`` a learning curve's test error is
often close to a power law, ``err(N) = a N^(-b)``: a straight line of slope
``-b`` on log-log axes. :func:`power_law` fits that line by least squares on
``(log N, log err)``; the exponent ``b`` says how fast more data pays. A model
whose assumptions are wrong for the task approaches a floor instead (the bias
of the toy chapter), and its fitted exponent shrinks as the floor is reached.

An error of zero has no logarithm: points at or below the test set's
resolution (one error in the whole set) are left out of a fit and reported.

:func:`crossing` solves ``a_1 N^(-b_1) = a_2 N^(-b_2)`` for the size where two
fitted laws meet; :func:`measured_crossing` finds where two measured curves
change order, interpolating linearly in ``log N`` between the bracketing sizes,
and :func:`overtaking` where one passes the other for good, with
:func:`overtaking_spread` saying how far that moves over seeds (a bootstrap).
:func:`ladder_winners` reads the crossover chapter's ladder of worlds at one
size, with the ViT's side supplied by the theorem instead of by training.

Two trained samples are compared by the test their design calls for: Welch's
t test (:func:`resolved`) when they share nothing, the paired t test
(:func:`paired_t`, :func:`resolved_paired`) when value ``i`` of each comes from
the same seed (the same training set, initial weights or test images), and the
exact sign-flip test (:func:`sign_flip_p`), which assumes no normality, to say
what a handful of seeds can resolve at all.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np


class PowerLaw(NamedTuple):
    """``err(N) = scale * N ** -exponent``, fitted on the sizes in ``used``."""

    exponent: float
    scale: float
    used: tuple[int, ...]

    def __call__(self, n):
        return self.scale * np.asarray(n, dtype=float) ** -self.exponent


def _curve(sizes, values, name: str):
    sizes = np.asarray(sizes, dtype=float)
    values = np.asarray(values, dtype=float)
    if sizes.ndim != 1 or sizes.shape != values.shape or len(sizes) < 2:
        raise ValueError(f"sizes and {name} must be 1-D of equal length >= 2, got shapes "
                         f"{sizes.shape} and {values.shape}")
    if not (np.all(sizes > 0) and np.all(np.diff(sizes) > 0)):
        raise ValueError(f"sizes must be positive and increasing, got {sizes.tolist()}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite")
    return sizes, values


def power_law(sizes, errors, resolution: float = 0.0) -> PowerLaw:
    """The least-squares line through ``(log N, log err)`` over the errors above ``resolution``.

    ``errors`` are test error rates in [0, 1] at the increasing ``sizes``;
    ``resolution`` is the smallest error the test set can show (``1 / test
    size``): errors below it (zeros) are left out. ``ValueError`` when fewer
    than two points remain.
    """
    sizes, errors = _curve(sizes, errors, "errors")
    if np.any(errors < 0) or np.any(errors > 1):
        raise ValueError(f"errors must lie in [0, 1], got {errors.tolist()}")
    keep = errors >= max(resolution, np.finfo(float).tiny)
    if keep.sum() < 2:
        raise ValueError(f"a power law needs two errors at or above {resolution}, got {errors.tolist()}")
    slope, intercept = np.polyfit(np.log(sizes[keep]), np.log(errors[keep]), 1)
    return PowerLaw(float(-slope), float(math.exp(intercept)), tuple(int(n) for n in sizes[keep]))


def crossing(first: PowerLaw, second: PowerLaw) -> float:
    """The size where two fitted laws give the same error; ``inf`` if they never meet for ``N > 0``.

    ``log N* = (log a_1 - log a_2) / (b_1 - b_2)``. Equal exponents never meet
    (unless the laws are equal, which is refused as having no single crossing).
    """
    if first.exponent == second.exponent:
        if first.scale == second.scale:
            raise ValueError("the two laws are the same: they meet everywhere")
        return math.inf
    return math.exp((math.log(first.scale) - math.log(second.scale)) / (first.exponent - second.exponent))


def measured_crossing(sizes, first, second) -> float | None:
    """The first size at which ``first - second`` changes sign, interpolated in ``log N``; else ``None``.

    A zero difference at a measured size is a crossing at that size.
    """
    sizes, first = _curve(sizes, first, "first")
    _, second = _curve(sizes, second, "second")
    gap = first - second
    for i in range(len(sizes)):
        if gap[i] == 0:
            return float(sizes[i])
        if i and np.sign(gap[i]) != np.sign(gap[i - 1]):
            t = gap[i - 1] / (gap[i - 1] - gap[i])
            return float(math.exp(math.log(sizes[i - 1]) + t * (math.log(sizes[i]) - math.log(sizes[i - 1]))))
    return None


WHERE = ("before", "inside", "beyond")


def overtaking(sizes, first, second) -> tuple[str, float | None]:
    """Where curve ``second`` passes curve ``first`` for good: ``(where, size)``.

    ``"inside"`` with the size of the last change of order, interpolated in
    ``log N`` (:func:`measured_crossing` on the bracketing sizes), when
    ``second`` ends above ``first`` after being at or below it; ``"before"``
    (size ``None``) when ``second`` is above at every size; ``"beyond"`` when
    it is not above at the largest size.
    """
    sizes, first = _curve(sizes, first, "first")
    _, second = _curve(sizes, second, "second")
    above = second > first
    if not above[-1]:
        return "beyond", None
    if above.all():
        return "before", None
    i = int(np.flatnonzero(~above)[-1])        # the last size at which second is not above
    return "inside", measured_crossing(sizes[i:i + 2], first[i:i + 2], second[i:i + 2])


class Overtaking(NamedTuple):
    """:func:`overtaking` on the seed means, and how it moves over seeds (a bootstrap).

    ``where`` and ``size`` are the means'; ``shares`` maps each of
    :data:`WHERE` to the fraction of bootstrap draws that end there; ``low``
    and ``high`` are the 2.5 and 97.5 percentiles of the size over the draws
    that cross inside (``nan`` when none does).
    """

    where: str
    size: float | None
    shares: dict
    low: float
    high: float


def overtaking_spread(sizes, first, second, draws: int = 2000, seed: int = 0) -> Overtaking:
    """:func:`overtaking` of two curves of seeds ``(len(sizes), seeds)``, with a bootstrap over seeds.

    Each draw resamples, with replacement, the seeds at every size of each
    curve independently (a seed's runs at two sizes are separate trainings)
    and takes :func:`overtaking` of the resampled means.
    """
    first, second = (np.asarray(values, dtype=float) for values in (first, second))
    if first.ndim != 2 or second.ndim != 2 or len(first) != len(sizes) or len(second) != len(sizes):
        raise ValueError(f"need curves of shape (sizes, seeds) with {len(sizes)} sizes, got {first.shape} "
                         f"and {second.shape}")
    if min(first.shape[1], second.shape[1]) < 2:
        raise ValueError("a bootstrap over seeds needs at least two seeds per curve")
    if not (isinstance(draws, (int, np.integer)) and draws > 0):
        raise ValueError(f"draws must be a positive integer, got {draws!r}")
    rng = np.random.default_rng(seed)

    def resampled_means(values):
        pick = rng.integers(0, values.shape[1], size=(draws, *values.shape))          # (draws, sizes, seeds)
        return np.take_along_axis(np.broadcast_to(values, pick.shape), pick, axis=2).mean(axis=2)

    a, b = resampled_means(first), resampled_means(second)
    found = [overtaking(sizes, a[i], b[i]) for i in range(draws)]
    crossed = np.array([n for where, n in found if where == "inside"])
    low, high = np.percentile(crossed, [2.5, 97.5]) if len(crossed) else (math.nan, math.nan)
    shares = {where: sum(w == where for w, _ in found) / draws for where in WHERE}
    return Overtaking(*overtaking(sizes, first.mean(axis=1), second.mean(axis=1)), shares, float(low), float(high))


def ladder_winners(cnn, vit_plain) -> list[str]:
    """The worlds of the ladder in which the ViT beats the CNN, from the CNN's accuracies alone.

    ``cnn`` maps each world of the crossover chapter's ladder, in its order,
    to the CNN's test accuracy there (one size, a mean over seeds);
    ``vit_plain`` is the ViT's accuracy at that size on the plain images. Every
    world of the ladder is absorbed (:func:`vitbias.permute.absorb`): the ViT
    trained in it is the ViT trained on the plain images, permuted, so its
    accuracy in every world is ``vit_plain``. Returns the worlds, in ladder
    order, where that is above the CNN's accuracy (a tie is no win).
    """
    if not isinstance(cnn, dict) or not cnn:
        raise ValueError(f"cnn must map the ladder's worlds to the CNN's accuracies, got {cnn!r}")
    values = np.array([*cnn.values(), vit_plain], dtype=float)
    if not np.all(np.isfinite(values)):
        raise ValueError("the accuracies must be finite")
    return [world for world, accuracy in cnn.items() if vit_plain > accuracy]


def _samples(first, second):
    first = np.atleast_1d(np.asarray(first, dtype=float))
    second = np.atleast_1d(np.asarray(second, dtype=float))
    if first.ndim != 1 or second.ndim != 1 or len(first) < 2 or not (len(second) == 1 or len(second) >= 2):
        raise ValueError(f"need a sample of at least two values and a sample or a single value, got "
                         f"shapes {first.shape} and {second.shape}")
    if not (np.all(np.isfinite(first)) and np.all(np.isfinite(second))):
        raise ValueError("the samples must be finite")
    return first, second


def _welch(first: np.ndarray, second: np.ndarray) -> tuple[float, float, float]:
    """``(difference of means, its standard error, degrees of freedom)``: Welch-Satterthwaite.

    A single ``second`` is a known value: the one-sample case, ``n_1 - 1``
    degrees of freedom.
    """
    v1 = first.var(ddof=1) / len(first)
    v2 = second.var(ddof=1) / len(second) if len(second) > 1 else 0.0
    se = math.sqrt(v1 + v2)
    if v1 + v2 == 0:
        df = float(len(first) - 1 + max(len(second) - 1, 0))
    elif len(second) == 1:
        df = float(len(first) - 1)
    else:
        df = (v1 + v2) ** 2 / (v1 ** 2 / (len(first) - 1) + v2 ** 2 / (len(second) - 1))
    return float(first.mean() - second.mean()), se, df


def resolved(first, second, alpha: float = 0.05) -> bool:
    """Whether two samples' means differ: Welch's t test, two-sided at level ``alpha`` (5 %).

    ``first`` is one value per seed (at least two); ``second`` is another such
    sample, or a single known value, which makes it a one-sample t test.
    Welch's test does not assume equal variances; with three seeds a side it
    has 2 to 4 degrees of freedom, so a difference needs about 2.8 to 4.3
    standard errors to count (where a z test would take 2). Two samples
    without spread differ exactly when their means do. Used to choose between
    "differs" and "within the seeds' spread" in the prose; an equality a
    theorem guarantees is tested with :func:`equivalent` instead, never as a
    difference that failed to show.
    """
    from scipy import stats

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    first, second = _samples(first, second)
    difference, se, df = _welch(first, second)
    if se == 0:
        return difference != 0
    return bool(2 * stats.t.sf(abs(difference) / se, df) < alpha)


def equivalent(first, second, margin: float, alpha: float = 0.05, *, paired: bool = False) -> bool:
    """Whether two samples' means agree within ``margin``: two one-sided tests (TOST) at ``alpha``.

    Equivalence is shown when the ``1 - 2 alpha`` confidence interval of the
    difference of means lies inside ``(-margin, margin)`` (Schuirmann 1987).
    A failure to resolve a difference (:func:`resolved`) is not evidence of
    equality; this is. ``margin`` is chosen by the caller from the measured
    spread, before looking at the difference. The tests are Welch's t tests;
    ``second`` may then be a single known value, as in :func:`resolved`. With
    ``paired`` (value ``i`` of each from the same seed) they are one-sample t
    tests of the differences ``first_i - second_i``, ``n - 1`` degrees of freedom.
    """
    if not (margin > 0 and math.isfinite(margin)):
        raise ValueError(f"margin must be positive and finite, got {margin}")
    return bool(smallest_equivalence_margin(first, second, alpha, paired=paired) < margin)


def smallest_equivalence_margin(first, second, alpha: float = 0.05, *, paired: bool = False) -> float:
    """The margin beyond which :func:`equivalent` shows these samples to agree: ``|difference| +
    t_{1 - alpha, df} se``, the far end of the ``1 - 2 alpha`` interval of the difference of means.

    Any margin larger than this is shown; none smaller. With few seeds it is
    what the seeds can say about an equality: "they agree within this, and
    these seeds cannot show a tighter agreement".
    """
    from scipy import stats

    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must lie in (0, 0.5), got {alpha}")
    if paired:
        d = _pairs(first, second)
        difference, se, df = float(d.mean()), float(d.std(ddof=1)) / math.sqrt(len(d)), len(d) - 1
    else:
        first, second = _samples(first, second)
        difference, se, df = _welch(first, second)
    half_width = 0.0 if se == 0 else float(stats.t.ppf(1 - alpha, df)) * se
    return float(abs(difference) + half_width)


def _pairs(first, second) -> np.ndarray:
    """The paired differences ``first - second``, ``(n,)``: two samples of one value per seed each."""
    first = np.asarray(first, dtype=float)
    second = np.asarray(second, dtype=float)
    if first.ndim != 1 or first.shape != second.shape or len(first) < 2:
        raise ValueError(f"a paired comparison needs two samples of the same length, at least two values each; "
                         f"got shapes {first.shape} and {second.shape}")
    if not (np.all(np.isfinite(first)) and np.all(np.isfinite(second))):
        raise ValueError("the samples must be finite")
    return first - second


def paired_t(first, second) -> tuple[float, float]:
    """``(mean difference, two-sided p)`` of the paired t test (``scipy.stats.ttest_rel``).

    Value ``i`` of ``first`` and of ``second`` come from the same seed, so the
    test is a one-sample t test of the differences ``d_i = first_i - second_i``
    against zero: ``t = mean(d) / (sd(d) / sqrt(n))``, ``n - 1`` degrees of
    freedom. What the seeds share (a hard training set, a lucky start) cancels
    in ``d_i``, which is why pairing resolves what Welch's test on the same
    numbers cannot. Differences without spread give ``p = 0`` when their mean is
    not zero and ``p = 1`` when it is.
    """
    from scipy import stats

    d = _pairs(first, second)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0:
        return mean, float(mean == 0)
    t = mean / (sd / math.sqrt(len(d)))
    return mean, float(2 * stats.t.sf(abs(t), len(d) - 1))


def resolved_paired(first, second, alpha: float = 0.05) -> bool:
    """Whether two paired samples' means differ: the paired t test (:func:`paired_t`), two-sided at ``alpha``."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    return paired_t(first, second)[1] < alpha


def smallest_resolved_difference(first, second, alpha: float = 0.05, *, paired: bool = False) -> float:
    """The smallest difference of means that the test of :func:`resolved` (or, with ``paired``,
    :func:`resolved_paired`) would resolve at ``alpha`` with these samples' spread: ``t_{1 - alpha/2, df} se``.

    Shifting one sample by a constant moves the difference and leaves the
    standard error and the degrees of freedom as they are, so the two samples
    differ by the test exactly when their means are farther apart than this.
    It is the number a sentence "within the seeds' spread" stands for; ``0``
    for samples without spread.
    """
    from scipy import stats

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if paired:
        d = _pairs(first, second)
        se, df = float(d.std(ddof=1)) / math.sqrt(len(d)), len(d) - 1
    else:
        _, se, df = _welch(*_samples(first, second))
    return float(stats.t.isf(alpha / 2, df) * se)


def sign_flip_p(first, second) -> float:
    """The exact two-sided p of the sign-flip permutation test on the paired differences.

    Under the null hypothesis each difference ``d_i = first_i - second_i`` is
    as likely to carry either sign, so the ``2^n`` sign assignments are equally
    likely; ``p`` is the share of them whose mean is at least as far from zero
    as the observed one. It assumes no distribution, and its smallest value is
    ``2 / 2^n``: 0.25 with three seeds, 0.0625 with five, so that three seeds
    can never resolve a difference at 5 % this way, however consistent.
    """
    d = _pairs(first, second)
    if len(d) > 20:
        raise ValueError(f"the exact test enumerates 2^n sign assignments; n = {len(d)} is too many")
    signs = 1 - 2 * ((np.arange(2 ** len(d))[:, None] >> np.arange(len(d))) & 1)  # (2^n, n) of +-1
    means = np.abs((signs * d).mean(axis=1))
    observed = abs(d.mean())
    return float(np.mean(means >= observed - 1e-12 * max(1.0, observed)))


def smallest_sign_flip_p(n: int) -> float:
    """The smallest two-sided p the exact sign-flip test can give with ``n`` pairs: ``2 / 2^n``."""
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return 2.0 / 2 ** n
