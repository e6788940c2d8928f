"""The bias trade-off toy: what a true (or nearly true) assumption is worth.

Rows ``x`` of ``n`` independent standard normal numbers, indexed circularly.
The target at position ``t`` is a local slope with a slowly drifting gain,

    y_t = (x_{t-1} - x_{t+1}) (1 + beta g_t) + sigma eps_t,   g_t = cos(2 pi t / n).

Two linear models are fit by least squares from ``N`` rows:

- the *convolution*: ``k`` weights shared by every position (a circular
  ``k``-tap filter), whose class misses the drift;
- the *full map*: an arbitrary ``n x n`` matrix, whose class contains the truth.

Test errors are computed exactly for each fitted model (no test sample is
drawn): for ``x ~ N(0, I)`` and a fitted linear map ``W``, the expected squared
error averaged over the ``n`` outputs is ``sigma^2 + ||W - M||_F^2 / n``, with
``M`` the true map.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .geometry import circulant, kernel_offsets, shift

# ---------------------------------------------------------------------------
# An inductive bias picks the answer: three points, a line and a cubic.
# ---------------------------------------------------------------------------

def line_through(xs, ys) -> np.polynomial.Polynomial:
    """The least-squares line ``y = a + b x`` through the points ``(xs, ys)``."""
    xs, ys = _points(xs, ys, at_least=2)
    return np.polynomial.Polynomial.fit(xs, ys, deg=1).convert()


def polynomial_through(xs, ys, extra: float) -> np.polynomial.Polynomial:
    """The interpolating polynomial plus ``extra * prod_i (x - x_i)``.

    Every such polynomial passes through all the points, whatever ``extra``
    is: the data cannot choose among them, an assumption must.
    """
    xs, ys = _points(xs, ys, at_least=1)
    if len(np.unique(xs)) != len(xs):
        raise ValueError(f"the x values must be distinct, got {xs.tolist()}")
    interpolant = np.polynomial.Polynomial.fit(xs, ys, deg=len(xs) - 1).convert()
    vanishing = np.polynomial.Polynomial.fromroots(xs)
    return interpolant + float(extra) * vanishing


def _points(xs, ys, at_least):
    xs = np.asarray(xs, dtype=float)
    ys = np.asarray(ys, dtype=float)
    if xs.ndim != 1 or xs.shape != ys.shape:
        raise ValueError(f"xs and ys must be 1-D of equal length, got {xs.shape} and {ys.shape}")
    if len(xs) < at_least:
        raise ValueError(f"need at least {at_least} points, got {len(xs)}")
    return xs, ys


# ---------------------------------------------------------------------------
# The toy and its exact pieces.
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Toy:
    """The toy's constants: row length ``n``, taps ``k``, drift ``beta``, noise ``sigma``."""

    n: int = 32
    k: int = 3
    beta: float = 0.3
    sigma: float = 0.5

    def __post_init__(self):
        if not (isinstance(self.n, (int, np.integer)) and self.n >= 3):
            raise ValueError(f"n must be an integer >= 3, got {self.n!r}")
        if not (isinstance(self.k, (int, np.integer)) and self.k >= 1 and self.k % 2 == 1):
            raise ValueError(f"k must be a positive odd integer, got {self.k!r}")
        if self.k > self.n:
            raise ValueError(f"the kernel (k={self.k}) cannot be longer than the row (n={self.n})")
        if not (np.isfinite(self.beta) and self.beta >= 0):
            raise ValueError(f"beta must be finite and >= 0, got {self.beta!r}")
        if not (np.isfinite(self.sigma) and self.sigma >= 0):
            raise ValueError(f"sigma must be finite and >= 0, got {self.sigma!r}")


def gain(toy: Toy) -> np.ndarray:
    """The position-dependent gain ``1 + beta cos(2 pi t / n)``, shape ``(n,)``."""
    t = np.arange(toy.n)
    return 1.0 + toy.beta * np.cos(2 * np.pi * t / toy.n)


def true_map(toy: Toy) -> np.ndarray:
    """The matrix ``M`` with ``y = x M + noise``, shape ``(n, n)``.

    Column ``t`` holds ``+gain_t`` in row ``t-1`` and ``-gain_t`` in row ``t+1``
    (indices mod ``n``).
    """
    n = toy.n
    t = np.arange(n)
    M = np.zeros((n, n))
    g = gain(toy)
    M[(t - 1) % n, t] += g
    M[(t + 1) % n, t] -= g
    return M


def sample_rows(toy: Toy, rng: np.random.Generator, reps: int, N: int):
    """Training sets ``X, Y`` of shape ``(reps, N, n)`` drawn from the toy."""
    if reps < 1 or N < 1:
        raise ValueError(f"reps and N must be positive, got reps={reps}, N={N}")
    X = rng.standard_normal((reps, N, toy.n))
    Y = X @ true_map(toy) + toy.sigma * rng.standard_normal((reps, N, toy.n))
    return X, Y


def fit_conv(X: np.ndarray, Y: np.ndarray, k: int = 3) -> np.ndarray:
    """Least-squares shared ``k``-tap kernel for ``Y ~ conv(X)``, shape ``(reps, k)``.

    ``X, Y``: ``(reps, N, n)``. Every row and position is one equation, so the
    fit uses ``N n`` equations for ``k`` unknowns. The normal equations are
    built from circular shifts of ``X``, never from an ``(N n, k)`` design matrix.
    """
    X, Y = _check_xy(X, Y)
    if k % 2 != 1 or k > X.shape[-1]:
        raise ValueError(f"k must be odd and at most n={X.shape[-1]}, got {k}")
    # Feature j at position t is x_{t + Delta_j} with Delta_j = j - a: X shifted by -Delta_j.
    shifted = np.stack([shift(X, -delta) for delta in kernel_offsets(k, 1)[:, 0]], axis=1)  # (reps, k, N, n)
    gram = np.einsum("rinm,rjnm->rij", shifted, shifted)
    rhs = np.einsum("rinm,rnm->ri", shifted, Y)
    return np.linalg.solve(gram, rhs[..., None])[..., 0]


def fit_full(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Least-squares full map ``W`` for ``Y ~ X W``, shape ``(reps, n, n)``.

    ``n`` separate regressions with ``n`` coefficients and ``N`` equations each;
    the expected error is finite only when ``N > n + 1``.
    """
    X, Y = _check_xy(X, Y)
    N, n = X.shape[-2:]
    if N <= n + 1:
        raise ValueError(f"the full map needs N > n + 1 = {n + 1} rows, got N={N}")
    gram = np.einsum("rna,rnb->rab", X, X)
    rhs = np.einsum("rna,rnb->rab", X, Y)
    return np.linalg.solve(gram, rhs)


def _check_xy(X, Y):
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    if X.ndim != 3 or X.shape != Y.shape:
        raise ValueError(f"X and Y must both be (reps, N, n), got {X.shape} and {Y.shape}")
    return X, Y


def test_error(W: np.ndarray, toy: Toy) -> np.ndarray:
    """Expected test error per output of the linear map(s) ``W`` (``(..., n, n)``).

    For ``x ~ N(0, I)``: ``sigma^2 + ||W - M||_F^2 / n``.
    """
    excess = np.sum((np.asarray(W) - true_map(toy)) ** 2, axis=(-2, -1)) / toy.n
    return toy.sigma**2 + excess


# ---------------------------------------------------------------------------
# The predicted curves (approximation + estimation error) and the crossover.
# ---------------------------------------------------------------------------

def approximation_error_conv(toy: Toy) -> float:
    """What the best shared kernel misses, averaged over positions: ``beta^2``.

    The drift term ``beta g_t (x_{t-1} - x_{t+1})`` has variance ``2 beta^2 g_t^2``,
    and the mean of ``g_t^2`` over a period is 1/2.
    """
    g = gain(toy) - 1.0
    return float(np.mean(2 * g**2))


def least_squares_excess(sigma: float, p: int, N) -> np.ndarray:
    """Expected excess test error of least squares: ``sigma^2 p / (N - p - 1)``.

    ``p`` Gaussian regressors, no intercept, ``N > p + 1`` equations.
    """
    N = np.asarray(N, dtype=float)
    if sigma < 0:
        raise ValueError(f"sigma must be >= 0, got {sigma}")
    if np.any(N <= p + 1):
        raise ValueError(f"the excess is finite only for N > p + 1 = {p + 1}, got N={N.min():g}")
    return sigma**2 * p / (N - p - 1)


def predicted_full_error(toy: Toy, N) -> np.ndarray:
    """Test error of the full map: ``sigma^2 + sigma^2 n / (N - n - 1)``."""
    return toy.sigma**2 + least_squares_excess(toy.sigma, toy.n, N)


def predicted_conv_error(toy: Toy, N) -> np.ndarray:
    """Test error of the convolution: ``sigma^2 + beta^2 + sigma_eff^2 k / (N n)``.

    The drift the kernel cannot represent acts like extra noise,
    ``sigma_eff^2 = sigma^2 + beta^2``; each row gives ``n`` equations. The last
    term is the usual approximation to the estimation error for large ``N n``.
    """
    N = np.asarray(N, dtype=float)
    if np.any(N < 1):
        raise ValueError("N must be at least 1")
    approx = approximation_error_conv(toy)
    return toy.sigma**2 + approx + (toy.sigma**2 + approx) * toy.k / (N * toy.n)


def crossover_rows(toy: Toy) -> float:
    """Rows at which the full map catches up: ``N* = n + 1 + sigma^2 n / beta^2``.

    Solves ``sigma^2 n / (N - n - 1) = beta^2``, neglecting the convolution's
    own small estimation error.
    """
    if toy.beta == 0:
        raise ValueError("with beta = 0 the convolution is exactly right and never loses: no crossover")
    return toy.n + 1 + toy.sigma**2 * toy.n / toy.beta**2


def rows_to_match(toy: Toy, N_conv) -> np.ndarray:
    """Rows the full map needs to match a *correct* convolution fit on ``N_conv`` rows.

    With ``beta = 0`` both errors are pure estimation error; setting
    ``sigma^2 n / (M - n - 1) = sigma^2 k / (N n)`` gives ``M = n + 1 + N n^2 / k``,
    so shared weights are worth about ``n^2 / k`` times the data.
    """
    N_conv = np.asarray(N_conv, dtype=float)
    if np.any(N_conv <= 0):
        raise ValueError("N_conv must be positive")
    return toy.n + 1 + N_conv * toy.n**2 / toy.k


# ---------------------------------------------------------------------------
# The Monte Carlo experiment.
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ToySimulation:
    """Simulated test errors: ``full`` and ``conv`` have shape ``(len(N), reps)``."""

    toy: Toy
    N: np.ndarray
    full: np.ndarray
    conv: np.ndarray

    @property
    def full_mean(self) -> np.ndarray:
        return self.full.mean(axis=1)

    @property
    def conv_mean(self) -> np.ndarray:
        return self.conv.mean(axis=1)

    def standard_error(self, which: str) -> np.ndarray:
        errors = {"full": self.full, "conv": self.conv}[which]
        return errors.std(axis=1, ddof=1) / np.sqrt(errors.shape[1])

    def crossover_spread(self, near: float) -> float:
        """Rows by which Monte Carlo error alone can move a crossing near ``near``.

        The standard error of the difference of the two curves on the grid
        step around ``near`` (the larger of its two ends), divided by the
        difference's slope in error per row on that step.
        """
        i = int(np.searchsorted(self.N, near))
        if not 0 < i < len(self.N):
            raise ValueError(f"near = {near!r} must lie inside the grid, [{self.N[0]}, {self.N[-1]}]")
        diff_se = np.hypot(self.standard_error("full"), self.standard_error("conv"))[i - 1 : i + 1].max()
        slope = np.abs(np.diff(self.full_mean - self.conv_mean)[i - 1] / np.diff(self.N)[i - 1])
        return float(diff_se / slope)

    def deviation_from_prediction(self) -> float:
        """The largest distance of a simulated mean from its predicted curve, in standard errors.

        Over both models and every ``N``: :func:`predicted_full_error` (exact in
        expectation) and :func:`predicted_conv_error` (the large-``N`` approximation).
        """
        full = np.abs(self.full_mean - predicted_full_error(self.toy, self.N)) / self.standard_error("full")
        conv = np.abs(self.conv_mean - predicted_conv_error(self.toy, self.N)) / self.standard_error("conv")
        return float(max(np.max(full), np.max(conv)))


def log_spaced_rows(toy: Toy, largest: int = 4000, count: int = 24) -> np.ndarray:
    """Integer row counts, log-spaced from just above ``n + 1`` to ``largest``."""
    smallest = toy.n + 3
    if largest <= smallest or count < 2:
        raise ValueError(f"need largest > {smallest} and count >= 2, got {largest}, {count}")
    return np.unique(np.round(np.geomspace(smallest, largest, count)).astype(int))


def simulate(toy: Toy, N_grid, reps: int = 64, seed: int = 0, chunk: int = 16) -> ToySimulation:
    """Fit both models ``reps`` times at every ``N`` of ``N_grid``; exact test errors.

    One batched solve per ``N`` (and per chunk of repetitions, to bound memory).
    Each ``N`` draws from its own stream of ``SeedSequence(seed)``, so the
    result for one ``N`` does not depend on the rest of the grid.
    """
    N_grid = np.asarray(N_grid, dtype=int)
    if N_grid.ndim != 1 or N_grid.size == 0:
        raise ValueError("N_grid must be a non-empty 1-D sequence of row counts")
    if np.any(N_grid <= toy.n + 1):
        raise ValueError(f"every N must exceed n + 1 = {toy.n + 1}, got min {N_grid.min()}")
    if reps < 2:
        raise ValueError(f"reps must be at least 2, got {reps}")
    full = np.empty((N_grid.size, reps))
    conv = np.empty((N_grid.size, reps))
    for i, N in enumerate(N_grid):
        rng = np.random.default_rng([seed, int(N)])
        for start in range(0, reps, chunk):
            stop = min(start + chunk, reps)
            X, Y = sample_rows(toy, rng, stop - start, int(N))
            full[i, start:stop] = test_error(fit_full(X, Y), toy)
            conv[i, start:stop] = test_error(circulant(fit_conv(X, Y, toy.k), toy.n), toy)
    return ToySimulation(toy=toy, N=N_grid, full=full, conv=conv)


def crossing_point(N, upper, lower) -> float:
    """Where ``upper - lower`` first changes sign, interpolated linearly in ``log N``."""
    N = np.asarray(N, dtype=float)
    diff = np.asarray(upper, dtype=float) - np.asarray(lower, dtype=float)
    if N.shape != diff.shape or N.ndim != 1:
        raise ValueError("N and the two curves must be 1-D of equal length")
    sign_change = np.nonzero((diff[:-1] > 0) & (diff[1:] <= 0))[0]
    if sign_change.size == 0:
        raise ValueError("the curves do not cross on this grid")
    i = sign_change[0]
    logN = np.log(N[i : i + 2])
    frac = diff[i] / (diff[i] - diff[i + 1])
    return float(np.exp(logN[0] + frac * (logN[1] - logN[0])))


# ---------------------------------------------------------------------------
# The crossing against the drift: the more wrong the assumption, the sooner.
# ---------------------------------------------------------------------------

def crossover_rows_for(toy: Toy, betas) -> np.ndarray:
    """The formula's crossing for each drift: ``N*(beta) = n + 1 + sigma^2 n / beta^2``.

    :func:`crossover_rows` with the toy's ``n`` and ``sigma`` and each
    ``beta`` of ``betas`` (1-D, every one finite and > 0) in turn; shape
    ``(len(betas),)``. It falls as ``beta`` grows, towards ``n + 1``.
    """
    betas = _drifts(betas)
    return toy.n + 1 + toy.sigma**2 * toy.n / betas**2


def _drifts(betas) -> np.ndarray:
    try:
        betas = np.asarray(betas, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"betas must be numbers, got {betas!r}") from error
    if betas.ndim != 1 or betas.size == 0:
        raise ValueError(f"betas must be a non-empty 1-D sequence, got shape {betas.shape}")
    if not np.all(np.isfinite(betas) & (betas > 0)):
        raise ValueError(f"every beta must be finite and > 0 (beta = 0 never crosses), got {betas.tolist()}")
    return betas


def rows_around(toy: Toy, centre: float, factor: float = 2.0, count: int = 11) -> np.ndarray:
    """Integer row counts log-spaced from ``centre / factor`` to ``centre * factor``.

    The lower end is raised to ``n + 3`` when it would fall below (the full
    map needs ``N > n + 1``, and its error has infinite variance just above).
    Shape ``(<= count,)``: rounding may merge neighbours.
    """
    if not (np.isfinite(centre) and centre > 0 and factor > 1 and count >= 2):
        raise ValueError(f"need centre > 0, factor > 1 and count >= 2, got {centre}, {factor}, {count}")
    smallest = max(toy.n + 3.0, centre / factor)
    largest = max(centre * factor, smallest + count)
    return np.unique(np.round(np.geomspace(smallest, largest, count)).astype(int))


@dataclass(frozen=True)
class CrossingSweep:
    """The crossing for each drift, by formula and by simulation; all shape ``(len(betas),)``.

    ``formula``: :func:`crossover_rows_for`, ``N* = n + 1 + sigma^2 n / beta^2``;
    ``simulated``: :func:`crossing_point` of the simulated mean errors;
    ``spread``: :meth:`ToySimulation.crossover_spread` at the formula's crossing,
    the rows by which Monte Carlo error alone can move the simulated one.
    """

    toy: Toy
    betas: np.ndarray
    formula: np.ndarray
    simulated: np.ndarray
    spread: np.ndarray
    reps: int

    def deviation(self) -> np.ndarray:
        """``|simulated - formula| / spread`` for each drift, shape ``(len(betas),)``."""
        return np.abs(self.simulated - self.formula) / self.spread


def simulate_crossings(toy: Toy, betas, reps: int = 64, count: int = 11, factor: float = 2.0,
                       seed: int = 0) -> CrossingSweep:
    """Simulate the crossing for each drift of ``betas`` (1-D, each > 0).

    For the ``i``-th drift: the toy with that ``beta``, :func:`simulate` with
    ``reps`` training sets (seed ``seed + i``) on :func:`rows_around` its
    formula crossing ``N* = n + 1 + sigma^2 n / beta^2`` (``count`` values of
    ``N`` within ``factor`` of it), then :func:`crossing_point` of the mean
    errors and :meth:`ToySimulation.crossover_spread` at ``N*``.
    """
    betas = _drifts(betas)
    formula = crossover_rows_for(toy, betas)
    simulated, spread = np.empty_like(formula), np.empty_like(formula)
    for i, (beta, n_star) in enumerate(zip(betas, formula)):
        drifted = Toy(n=toy.n, k=toy.k, beta=float(beta), sigma=toy.sigma)
        sim = simulate(drifted, rows_around(drifted, n_star, factor, count), reps=reps, seed=seed + i)
        simulated[i] = crossing_point(sim.N, sim.full_mean, sim.conv_mean)
        spread[i] = sim.crossover_spread(near=n_star)
    return CrossingSweep(toy=toy, betas=betas, formula=formula, simulated=simulated, spread=spread, reps=reps)
