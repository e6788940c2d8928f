"""Exercise: where the flexible model catches up in the bias toy (the book's ``vitbias.toy``).

Check your version: ``python -m exercises.grade FILE.py toy_crossing_rows``.
"""


def toy_crossing_rows(n, sigma, beta):
    """The number of training rows ``N`` at which the full linear map catches up with the convolution.

    The toy of the bias chapter: inputs of length ``n``, noise of standard
    deviation ``sigma`` on every target. The full ``n x n`` map, fitted by
    least squares on ``N`` rows (``N > n + 1``), has an expected excess test
    error of ``sigma^2 n / (N - n - 1)`` per output. The convolution's
    assumption is wrong by a drift ``beta``: however many rows it sees, its
    excess error stays at ``beta^2`` per output (neglect its own, much smaller
    estimation error). Return the ``N`` (a float, not rounded) at which the
    two excess errors are equal. ``beta`` is non-zero.
    """
    raise NotImplementedError
