"""Solution: one encoder block's multiply-adds."""


def block_macs(tokens, d, mlp_ratio=4.0):
    hidden = int(d * mlp_ratio)
    # Q, K, V and the output, each (N, d) x (d, d)
    projections = 4 * tokens * d * d
    # (N, d) x (d, h) and (N, h) x (h, d)
    mlp = 2 * tokens * d * hidden
    # Q K^T and the weights times V, each N^2 d
    attention = 2 * tokens * tokens * d
    return projections + mlp, attention
