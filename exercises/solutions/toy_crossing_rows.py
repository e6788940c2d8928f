"""Solution: the bias toy's crossing."""


def toy_crossing_rows(n, sigma, beta):
    # sigma^2 n / (N - n - 1) = beta^2, solved for N
    return n + 1 + sigma**2 * n / beta**2
