"""Solution: the pairs a local attention window opens, counted in closed form."""


def allowed_pairs(H_p, W_p, radius, n_prefix=1):
    def along(length):
        reach = min(radius, length - 1)
        return length + 2 * sum(length - d for d in range(1, reach + 1))

    tokens = n_prefix + H_p * W_p
    return along(H_p) * along(W_p) + n_prefix * (2 * tokens - n_prefix)
